"""Hostile bodies get a 4xx problem+json with their own code on every POST endpoint, never a
500 or a hang: JSON nested past the bound, numbers past the bound, duplicate keys, NaN,
a Content-Encoding, chunked bodies over the limit, bodies the server cannot deliver.

Replayed against the app through the test client, and (slow) against a real gunicorn on
loopback as `make run` starts it, with raw sockets for the chunk encodings. There the
gunicorn worker (service/gunicorn_worker.py) may answer a bad chunk encoding before the
app sees it; either way the answer is a 4xx.
"""

from __future__ import annotations

import gzip
import http.client
import io
import json
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path
from typing import NamedTuple

import pytest
import webargs.core
from flask.testing import FlaskClient
from gunicorn.http.errors import ChunkMissingTerminator, InvalidChunkSize, NoMoreData

from service.http import body as body_module
from service.http.body import BODY_IDLE_SECONDS, MAX_JSON_DEPTH, MAX_NUMBER_CHARS, json_depth_exceeds
from service.http.problems import PROBLEM_JSON, ApiError, ProblemCode
from service.settings import MAX_BODY_BYTES as MAX_BODY_BYTES_SETTING
from tests.ops.servers import POST_ENDPOINTS, Backend

GAME = "penguin"
MAX_BODY_BYTES = MAX_BODY_BYTES_SETTING.read({})  # the default, which the tests' settings keep
JSON = {"Content-Type": "application/json"}


class Hostile(NamedTuple):
    """A body and its headers, and the status and code it must be answered with."""

    body: bytes
    headers: dict[str, str]
    status: int
    code: ProblemCode


def nested(depth: int) -> bytes:
    return b'{"state": ' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


def json_case(body: bytes, code: ProblemCode) -> Hostile:
    return Hostile(body, JSON, 400, code)


HOSTILE: dict[str, Hostile] = {
    "nested 10,000 deep": json_case(nested(10_000), ProblemCode.JSON_TOO_DEEP),
    "objects nested 5,000 deep": json_case(b'{"a":' * 5000 + b"1" + b"}" * 5000, ProblemCode.JSON_TOO_DEEP),
    "nested one past the bound": json_case(nested(MAX_JSON_DEPTH + 1), ProblemCode.JSON_TOO_DEEP),
    "unclosed brackets 10,000 deep": json_case(b"[" * 10_000, ProblemCode.JSON_TOO_DEEP),
    "integer of 5,000 digits": json_case(b'{"deal": ' + b"9" * 5000 + b"}", ProblemCode.NUMBER_TOO_LONG),
    "integer one past the bound": json_case(
        b'{"state": {"deal": ' + b"1" * (MAX_NUMBER_CHARS + 1) + b"}}", ProblemCode.NUMBER_TOO_LONG
    ),
    "float of 5,000 digits": json_case(b'{"limits": {"max_seconds": 0.' + b"1" * 5000 + b"}}", ProblemCode.NUMBER_TOO_LONG),
    "duplicate key": json_case(b'{"deal": -5, "deal": 2}', ProblemCode.DUPLICATE_KEY),
    "duplicate key deep inside": json_case(
        b'{"state": {"piles": {"tableau": [[], []], "tableau": []}}}', ProblemCode.DUPLICATE_KEY
    ),
    "NaN": json_case(b'{"limits": {"max_seconds": NaN}}', ProblemCode.MALFORMED_JSON),
    "unterminated string of escaped quotes": json_case(b'"' + b'\\"' * 30_000, ProblemCode.MALFORMED_JSON),
    "gzip": Hostile(gzip.compress(b'{"deal": 2}'), {**JSON, "Content-Encoding": "gzip"}, 415,
                    ProblemCode.UNSUPPORTED_CONTENT_ENCODING),
    "marked gzip, sent plain": Hostile(b'{"deal": 2}', {**JSON, "Content-Encoding": "gzip"}, 415,
                                       ProblemCode.UNSUPPORTED_CONTENT_ENCODING),
    "br": Hostile(b'{"deal": 2}', {**JSON, "Content-Encoding": "br"}, 415, ProblemCode.UNSUPPORTED_CONTENT_ENCODING),
    "identity, then gzip": Hostile(b'{"deal": 2}', {**JSON, "Content-Encoding": "identity, gzip"}, 415,
                                   ProblemCode.UNSUPPORTED_CONTENT_ENCODING),
}

OVER_THE_LIMIT = b'{"deal": 2, "pad": "' + b"x" * MAX_BODY_BYTES + b'"}'


def assert_problem(status: int, content_type: str, body: bytes, want_status: int, want_code: ProblemCode | None) -> None:
    """A problem+json answer with this status (and code: None where the gunicorn worker
    may answer before the app, with a code of its own)."""
    assert status == want_status, body[:300]
    assert content_type.split(";")[0] == PROBLEM_JSON
    problem = json.loads(body)
    assert problem["status"] == want_status
    if want_code is not None:
        assert problem["code"] == want_code.value, problem
        assert problem.get("request_id")  # the app answered


# --- the app, through the test client -------------------------------------------------


@pytest.mark.parametrize("endpoint", POST_ENDPOINTS)
@pytest.mark.parametrize("case", HOSTILE, ids=str)
def test_hostile_bodies_get_their_own_4xx(client: FlaskClient, endpoint: str, case: str) -> None:
    hostile = HOSTILE[case]
    r = client.post(f"/v1/games/{GAME}/{endpoint}", data=hostile.body, headers=hostile.headers)
    assert_problem(r.status_code, r.content_type, r.data, hostile.status, hostile.code)


@pytest.mark.parametrize("endpoint", POST_ENDPOINTS)
def test_a_chunked_body_over_the_limit_is_refused_not_cut(client: FlaskClient, endpoint: str) -> None:
    r = client.post(
        f"/v1/games/{GAME}/{endpoint}", input_stream=io.BytesIO(OVER_THE_LIMIT),
        headers={**JSON, "Transfer-Encoding": "chunked"},
    )
    assert_problem(r.status_code, r.content_type, r.data, 413, ProblemCode.BODY_TOO_LARGE)


def test_a_chunked_body_within_the_limit_is_read_whole(client: FlaskClient) -> None:
    r = client.post(
        f"/v1/games/{GAME}/deals", input_stream=io.BytesIO(b'{"deal": 2}'),
        headers={**JSON, "Transfer-Encoding": "chunked"},
    )
    assert r.status_code == 200
    assert r.get_json()["deal"] == "2"


class FailingStream:
    """``wsgi.input`` of a server that fails while the app reads it (as gunicorn does on a
    bad chunk encoding)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def read(self, size: int = -1) -> bytes:
        raise self.error


@pytest.mark.parametrize("endpoint", POST_ENDPOINTS)
@pytest.mark.parametrize(
    "error", [InvalidChunkSize(b"zz"), ChunkMissingTerminator(b"xx"), NoMoreData(), TimeoutError("timed out")],
    ids=lambda e: type(e).__name__,
)
def test_a_body_the_server_cannot_deliver_is_a_400(client: FlaskClient, endpoint: str, error: Exception) -> None:
    r = client.post(
        f"/v1/games/{GAME}/{endpoint}", headers={**JSON, "Transfer-Encoding": "chunked"},
        environ_overrides={"wsgi.input": FailingStream(error)},
    )
    assert_problem(r.status_code, r.content_type, r.data, 400, ProblemCode.UNREADABLE_BODY)


def test_a_body_shorter_than_its_content_length_is_a_400(client: FlaskClient) -> None:
    r = client.post(
        f"/v1/games/{GAME}/deals", headers=JSON,
        environ_overrides={"wsgi.input": io.BytesIO(b'{"deal": 2}'), "CONTENT_LENGTH": "100"},
    )
    assert_problem(r.status_code, r.content_type, r.data, 400, ProblemCode.UNREADABLE_BODY)


def test_the_bounds_leave_legitimate_bodies_alone(client: FlaskClient) -> None:
    """Depth and length exactly at the bounds parse: what answers is the schema (400
    invalid-body), not the parser; identity is an encoding like none."""
    at_depth = client.post(f"/v1/games/{GAME}/legal-moves", data=nested(MAX_JSON_DEPTH), headers=JSON)
    assert at_depth.get_json()["code"] == ProblemCode.INVALID_BODY
    long_deal = b'{"deal": ' + b"1" * MAX_NUMBER_CHARS + b"}"
    at_length = client.post(f"/v1/games/{GAME}/deals", data=long_deal, headers=JSON)
    assert at_length.get_json()["code"] == ProblemCode.INVALID_BODY
    plain = client.post(f"/v1/games/{GAME}/deals", data=b'{"deal": 2}', headers={**JSON, "Content-Encoding": "identity"})
    assert plain.status_code == 200
    same_key_in_two_objects = client.post(
        f"/v1/games/{GAME}/deals", data=b'{"deal": 2, "options": {}}', headers=JSON
    )
    assert same_key_in_two_objects.status_code == 200


def test_the_depth_check_reads_strings_and_escapes() -> None:
    assert not json_depth_exceeds(b'["' + b"[" * 100 + b'"]', MAX_JSON_DEPTH)
    assert not json_depth_exceeds(b'["\\"' + b"[" * 100 + b'"]', MAX_JSON_DEPTH)
    assert json_depth_exceeds(b'["\\\\"' + b", [" * 100, MAX_JSON_DEPTH)  # the string ends at \\"
    assert json_depth_exceeds(b'{"a": "]]]]", "b": ' + b"[" * 40, MAX_JSON_DEPTH)


def test_the_depth_check_is_fast_on_the_largest_body() -> None:
    worst = b"[]" * (MAX_BODY_BYTES // 2)
    start = time.perf_counter()
    assert not json_depth_exceeds(worst, MAX_JSON_DEPTH)
    assert time.perf_counter() - start < 0.5


def many_keys_then_the_first_again(size: int) -> bytes:
    """An object of as many short keys as ``size`` bytes hold, its first key again last."""
    keys: list[bytes] = []
    used = len(b'{"k0":0}')
    while used + len(b',"k%d":0' % len(keys)) <= size:
        used += len(b',"k%d":0' % len(keys))
        keys.append(b'"k%d":0' % len(keys))
    return b"{" + b",".join([*keys, b'"k0":0']) + b"}"


def fastest(parse: Callable[[bytes], object], data: bytes, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        with suppress(ApiError):
            parse(data)
        best = min(best, time.perf_counter() - start)
    return best


def test_a_duplicate_key_among_thousands_is_refused_about_as_fast_as_json_parses_the_body() -> None:
    """The duplicate-key check is linear: an object filling the largest body with short
    keys costs a few times a plain json.loads of it, not hundreds (a quadratic check held
    the GIL about 0.3 s on it)."""
    data = many_keys_then_the_first_again(MAX_BODY_BYTES)
    assert len(data) <= MAX_BODY_BYTES and data.count(b":") > 6000
    with pytest.raises(ApiError) as refused:
        body_module.parse_json(data)
    assert refused.value.code is ProblemCode.DUPLICATE_KEY
    ratio = fastest(body_module.parse_json, data) / fastest(json.loads, data)
    assert ratio < 25, f"the strict parse took {ratio:.0f} times json.loads"


# --- a real gunicorn on loopback --------------------------------------------------------


# The worker deploy/gunicorn.conf.py names (which reads whole requests before the app runs
# and answers bad framing itself), and gunicorn's plain gthread worker, where the app's own
# reading of the body is the only defence, as under any other server.
WORKERS = {"configured worker": "", "plain gthread": "--worker-class gthread"}


@pytest.fixture(scope="module", params=WORKERS, ids=str)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    backend = Backend(
        "hostile", Path(tmp_path_factory.mktemp("hostile")), workers=1, threads=len(POST_ENDPOINTS) + 2,
        env={"GUNICORN_CMD_ARGS": WORKERS[request.param]},
    )
    backend.start()
    try:
        yield backend
    finally:
        backend.kill()


def post(port: int, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("POST", path, body=body, headers=headers)
        r = conn.getresponse()
        return r.status, r.getheader("Content-Type", ""), r.read()
    finally:
        conn.close()


def raw_exchange(port: int, head: bytes, body: bytes, timeout: float) -> tuple[int, str, bytes]:
    """Send a request as raw bytes and read the answer until the server closes or the
    answer is whole: status, content type, body. Fails on a timeout (a hang)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        with suppress(BrokenPipeError, ConnectionResetError):  # answered before reading it all
            sock.sendall(head + body)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, response.getheader("Content-Type", ""), response.read()


def chunked(data: bytes, size: int = 8192) -> bytes:
    pieces = [b"%x\r\n%s\r\n" % (len(data[i : i + size]), data[i : i + size]) for i in range(0, len(data), size)]
    return b"".join(pieces) + b"0\r\n\r\n"


def chunked_head(port: int, endpoint: str) -> bytes:
    return (
        f"POST /v1/games/{GAME}/{endpoint} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode()


@pytest.mark.slow
def test_hostile_bodies_get_their_own_4xx_from_gunicorn(server: Backend) -> None:
    for endpoint in POST_ENDPOINTS:
        for case, hostile in HOSTILE.items():
            status, content_type, body = post(server.port, f"/v1/games/{GAME}/{endpoint}", hostile.body, hostile.headers)
            try:
                assert_problem(status, content_type, body, hostile.status, hostile.code)
            except AssertionError as e:
                raise AssertionError(f"{case} on {endpoint}: {e}") from e


@pytest.mark.slow
@pytest.mark.parametrize("endpoint", POST_ENDPOINTS)
def test_a_chunked_body_over_the_limit_gets_a_413_from_gunicorn(server: Backend, endpoint: str) -> None:
    head = chunked_head(server.port, endpoint)
    assert_problem(*raw_exchange(server.port, head, chunked(OVER_THE_LIMIT), timeout=10), 413, None)
    within = raw_exchange(server.port, head, chunked(b'{"deal": 2}'), timeout=10)
    assert within[0] != 413 and within[0] < 500


@pytest.mark.slow
@pytest.mark.parametrize("size_line", [b"zz", b"ffffffffffffffffffff"], ids=bytes.decode)
def test_a_bad_chunk_size_gets_a_4xx_from_gunicorn_not_a_hang(server: Backend, size_line: bytes) -> None:
    """Sent to every endpoint at once (the plain worker's answer to a chunk size that
    promises more than ever comes waits out the app's idle bound, BODY_IDLE_SECONDS)."""
    started = time.monotonic()

    def exchange(endpoint: str) -> tuple[int, str, bytes]:
        head = chunked_head(server.port, endpoint)
        return raw_exchange(server.port, head, size_line + b'\r\n{"deal": 2}\r\n0\r\n\r\n', timeout=BODY_IDLE_SECONDS + 5)

    with ThreadPoolExecutor(len(POST_ENDPOINTS)) as pool:
        answers = dict(zip(POST_ENDPOINTS, pool.map(exchange, POST_ENDPOINTS), strict=True))
    for endpoint, (status, content_type, body) in answers.items():
        assert 400 <= status < 500, (endpoint, status, body[:200])
        assert content_type.split(";")[0] == PROBLEM_JSON, endpoint
    assert time.monotonic() - started < BODY_IDLE_SECONDS + 3


@pytest.mark.parametrize("endpoint", POST_ENDPOINTS)
def test_every_endpoint_reads_the_body_parsed_once_strictly(client: FlaskClient, endpoint: str) -> None:
    """The API's views read the JSON that read_request_body parsed (service.http.body's
    Blueprint): parsed once, by body.parse_json, and never by webargs (whose own JSON loading
    is made to fail here, so a view of a plain flask-smorest Blueprint fails this test)."""
    parsed: list[bytes] = []
    webargs_parsed: list[object] = []
    real_parse = body_module.parse_json

    def counting_parse(data: bytes) -> object:
        parsed.append(data)
        return real_parse(data)

    def webargs_parse(*args: object, **kwargs: object) -> object:
        webargs_parsed.append(args)
        raise AssertionError("webargs parsed a request body itself")

    sent = b'{"deal": 2}' if endpoint == "deals" else b'{"state": {}}'
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(body_module, "parse_json", counting_parse)
        mp.setattr(webargs.core, "parse_json", webargs_parse)
        r = client.post(f"/v1/games/{GAME}/{endpoint}", data=sent, headers=JSON)
    assert not webargs_parsed
    assert parsed == [sent]
    if endpoint == "deals":
        assert r.status_code == 200 and r.get_json()["deal"] == "2"
    else:  # the schema read the parsed value: it lacks the state's fields
        assert_problem(r.status_code, r.content_type, r.data, 400, ProblemCode.INVALID_BODY)
