"""The gunicorn worker's edge (service.gunicorn_worker): every answer it or gunicorn's parser
gives is problem+json with a ``code`` and an ``X-Request-ID``, never gunicorn's HTML page;
README's request limits hold to the byte; every such answer is counted in
``http_requests_total``; and a worker whose master was killed stops taking connections at
once while it still answers the requests it has.

The first tests check the framer and the parser's settings alone (no process); the rest send
raw bytes to real gunicorn servers (deploy/gunicorn.conf.py) on loopback.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from gunicorn.config import Config
from gunicorn.http import errors as parse_errors
from gunicorn.http.errors import LimitRequestHeaders
from gunicorn.http.message import Request
from gunicorn.http.unreader import IterUnreader

from service.gunicorn_worker import (
    MAX_HEAD_BYTES,
    PARSER_REFUSAL_NAMES,
    PARSER_REFUSALS,
    Limits,
    ParserConfig,
    Rejection,
    RequestFramer,
    WholeRequestWorker,
)
from service.http.observability import REQUEST_ID_PATTERN, WORKER_ENDPOINT
from tests.ops.servers import Backend, http_get, needs_the_service_worker, wait_for

# README's limits ("Errors" table: 414 and 431), which are gunicorn's defaults.
REQUEST_LINE_BYTES = 4094
FIELD_BYTES = 8190
FIELDS = 100
LIMITS = Limits(max_body_bytes=1000, max_request_line=REQUEST_LINE_BYTES, max_field_bytes=FIELD_BYTES,
                max_fields=FIELDS)
READ_SECONDS = 1.0  # REQUEST_READ_SECONDS of the server under test: its 408 comes soon
CLIENT_ID = "edge-client-1"
KILLED_MASTER_SECONDS = 0.5  # a killed master's workers refuse new connections within this


# --- requests built to a size -------------------------------------------------------------------

def request(line: str = "GET /healthz HTTP/1.1", *fields: str, body: bytes = b"") -> bytes:
    """A request: its line, ``Host`` and the client's ``X-Request-ID``, then ``fields``."""
    head = [line, "Host: t", f"X-Request-ID: {CLIENT_ID}", *fields]
    return "".join(f"{f}\r\n" for f in head).encode("latin-1") + b"\r\n" + body


def line_of(size: int) -> str:
    """A request line of ``size`` bytes (without its CRLF) to /healthz."""
    start, end = "GET /healthz?", " HTTP/1.1"
    return start + "a" * (size - len(start) - len(end)) + end


def field_of(size: int, name: str = "X-Pad") -> str:
    """A header field line of ``size`` bytes (without its CRLF)."""
    return f"{name}: " + "y" * (size - len(name) - 2)


def fields_of(count: int) -> list[str]:
    """Fields that make the request's count ``count`` (Host and X-Request-ID included)."""
    return [f"X-F{i}: {i}" for i in range(count - 2)]


def head_of(size: int) -> bytes:
    """A request head of exactly ``size`` bytes, its final empty line included, every field
    within the limits."""
    fixed = len(request())
    rest = size - fixed
    fields: list[str] = []
    while rest > 0:
        line = min(rest - 2, FIELD_BYTES)  # each field costs its line and its CRLF
        fields.append(field_of(line, f"X-P{len(fields)}"))
        rest -= line + 2
    head = request("GET /healthz HTTP/1.1", *fields)
    assert len(head) == size, (len(head), size)
    return head


# --- the framer and the parser alone ------------------------------------------------------------

def outcome(data: bytes) -> int | None:
    """The framer's refusal status for ``data``, or None if it takes it as a whole request."""
    framer = RequestFramer(LIMITS)
    try:
        end = framer.feed(data)
    except Rejection as rejection:
        return rejection.status
    assert end == len(data), "a whole request"
    return None


def test_the_framer_refuses_malformed_header_fields_as_soon_as_the_head_is_read() -> None:
    assert outcome(request("GET / HTTP/1.1", "X: a\x00b")) == 400  # a NUL
    assert outcome(request("GET / HTTP/1.1", "X: a\x01b")) == 400  # a control character
    assert outcome(request("GET / HTTP/1.1", "X: a\x7fb")) == 400  # DEL
    assert outcome(request("GET / HTTP/1.1", "X: a\rb")) == 400  # a lone CR
    assert outcome(request("GET / HTTP/1.1", "Bad Name: v")) == 400  # a space in a name
    assert outcome(request("GET / HTTP/1.1", "B(d: v")) == 400  # not a token
    assert outcome(request("POST / HTTP/1.1", "Content-Length: 2", "Content-Length: 2", body=b"{}")) == 400
    assert outcome(request("GET / HTTP/1.1", "X: a\tb \xe9")) is None  # HTAB and obs-text are fine


def test_the_framer_holds_readmes_limits_to_the_byte() -> None:
    assert outcome(request(line_of(REQUEST_LINE_BYTES))) is None
    assert outcome(request(line_of(REQUEST_LINE_BYTES + 1))) == 414
    assert outcome(request("GET / HTTP/1.1", field_of(FIELD_BYTES))) is None
    assert outcome(request("GET / HTTP/1.1", field_of(FIELD_BYTES + 1))) == 431
    assert outcome(request("GET / HTTP/1.1", *fields_of(FIELDS))) is None
    assert outcome(request("GET / HTTP/1.1", *fields_of(FIELDS + 1))) == 431
    assert outcome(head_of(MAX_HEAD_BYTES)) is None
    assert outcome(head_of(MAX_HEAD_BYTES + 1)) == 431


def parse(cfg: object, data: bytes) -> Request:
    return Request(cfg, IterUnreader([data]), ("127.0.0.1", 1))


def test_gunicorns_parser_takes_every_field_the_framer_takes() -> None:
    """gunicorn 27.0.1 counts a field's CRLF in limit_request_field_size: with its own
    settings it refuses a field line of 8189 or 8190 bytes (HTML 431 before this worker's
    fix), with the worker's ParserConfig it takes them."""
    cfg = Config()
    widest = request("GET / HTTP/1.1", field_of(FIELD_BYTES))
    parse(ParserConfig(cfg, FIELD_BYTES), widest)  # no error
    with pytest.raises(LimitRequestHeaders):
        parse(cfg, widest)


def test_every_gunicorn_parser_error_has_an_answer() -> None:
    """Each exception of gunicorn.http.errors its handle_error answers as a client error has
    a status here (27.0.1 has all those named)."""
    assert len(PARSER_REFUSALS) == len(PARSER_REFUSAL_NAMES)
    refused = {kind for kind, _, _ in PARSER_REFUSALS}
    for name in ("InvalidRequestLine", "InvalidRequestMethod", "InvalidHTTPVersion", "InvalidHeader",
                 "InvalidHeaderName", "LimitRequestLine", "LimitRequestHeaders", "InvalidProxyLine",
                 "ForbiddenProxyRequest", "InvalidSchemeHeaders", "UnsupportedTransferCoding", "ObsoleteFolding",
                 "ExpectationFailed", "InvalidH2CPreface", "InvalidChunkSize", "ChunkMissingTerminator",
                 "InvalidChunkExtension"):
        assert getattr(parse_errors, name) in refused, name


CODES = {400: "malformed-request", 403: "http-error", 414: "request-line-too-long", 417: "http-error",
         431: "headers-too-large", 500: "internal-error"}


@needs_the_service_worker
def test_handle_error_answers_problem_json_for_each_parser_error_and_500_for_the_rest() -> None:
    """The worker's handle_error, in-process, on a socket pair: each refusal of gunicorn's
    parser with its status and code, the client's request id (the framer read the fields);
    an error that is not the client's (any other, or a bad header the app sent) 500."""
    worker = WholeRequestWorker(1, os.getpid(), [], None, 30, Config(), logging.getLogger("test"))
    worker.configure(max_body_bytes=1000, read_seconds=5.0)
    worker.init_answers()
    sent = request("GET /healthz HTTP/1.1")
    worker.serving.conn = SimpleNamespace(request=sent, head_end=len(sent), answered=False)
    cases = [(kind, status) for kind, status, _ in PARSER_REFUSALS]
    cases += [(RuntimeError, 500), (parse_errors.InvalidResponseHeader, 500), (parse_errors.ConfigurationProblem, 500)]
    try:
        for kind, status in cases:
            ours, theirs = socket.socketpair()
            with ours, theirs:
                try:
                    raise kind.__new__(kind)  # the answer does not depend on the exception's arguments
                except Exception as error:  # as gthread's handle calls it
                    worker.handle_error(None, ours, ("127.0.0.1", 1), error)
                ours.close()
                got = b""
                while chunk := theirs.recv(65536):
                    got += chunk
            head, _, body = got.partition(b"\r\n\r\n")
            assert head.startswith(f"HTTP/1.1 {status} ".encode()), (kind, head)
            assert b"Content-Type: application/problem+json" in head and b"<html" not in got
            assert f"X-Request-ID: {CLIENT_ID}".encode() in head
            problem = json.loads(body)
            assert (problem["status"], problem["code"], problem["request_id"]) == (status, CODES[status], CLIENT_ID)
        # An error after the answer was written (gthread's keep-alive drain) adds nothing to it.
        worker.serving.conn.answered = True
        ours, theirs = socket.socketpair()
        with ours, theirs:
            try:
                raise parse_errors.InvalidChunkSize(b"zz")
            except Exception as error:
                worker.handle_error(None, ours, ("127.0.0.1", 1), error)
            ours.shutdown(socket.SHUT_WR)
            assert theirs.recv(65536) == b""
    finally:
        worker.tmp.close()


# --- a real server ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    backend = Backend("edge", tmp_path_factory.mktemp("edge"), workers=2, threads=4,
                      env={"REQUEST_READ_SECONDS": str(READ_SECONDS)})
    try:
        backend.start()
        yield backend
    finally:
        backend.kill()


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def exchange(server: Backend, data: bytes, timeout: float = READ_SECONDS + 5) -> Answer:
    """Send ``data`` with ``Connection: close`` semantics: read until the server closes, or
    until one whole answer came (a kept-alive connection)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
        sock.sendall(data)
        got = b""
        while True:
            head, sep, rest = got.partition(b"\r\n\r\n")
            if sep:
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), None)
                if length is not None and len(rest) >= length:
                    break
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    return Answer(int(status_line.split()[1]), headers, body)


POST = "POST /v1/games/penguin/moves HTTP/1.1"
JSON = "Content-Type: application/json"

# (what is sent, status, code, whether the client's request id is echoed): every case found
# by hand, and a case of each gunicorn parser error the framer leaves to it.
REFUSALS: dict[str, tuple[bytes, int, str, bool]] = {
    "nul-in-value": (request("GET /healthz HTTP/1.1", "X: a\x00b"), 400, "malformed-request", False),
    "control-in-value": (request("GET /healthz HTTP/1.1", "X: a\x1bb"), 400, "malformed-request", False),
    "space-in-name": (request("GET /healthz HTTP/1.1", "Bad Name: v"), 400, "malformed-request", False),
    "folded-line": (request("GET /healthz HTTP/1.1", "X: a", " b"), 400, "malformed-request", False),
    "content-type-twice": (request(POST, JSON, JSON, "Content-Length: 2", body=b"{}"), 400, "malformed-request", True),
    "host-twice": (request("GET /healthz HTTP/1.1", "Host: u"), 400, "malformed-request", True),
    "same-length-twice": (request(POST, JSON, "Content-Length: 2", "Content-Length: 2", body=b"{}"), 400,
                          "malformed-request", True),
    "http-2.0": (request("GET /healthz HTTP/2.0"), 400, "malformed-request", True),
    "h2c-preface": (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, "malformed-request", False),
    "http-0.9": (b"GET /healthz\r\n\r\n", 400, "malformed-request", False),
    "http-0.9-with-fields": (request("GET /healthz"), 400, "malformed-request", True),
    "lower-case-method": (request("get /healthz HTTP/1.1"), 400, "malformed-request", True),
    "method-too-long": (request("GETGETGETGETGETGETGET /healthz HTTP/1.1"), 400, "malformed-request", True),
    "method-not-a-token": (request("G(T /healthz HTTP/1.1"), 400, "malformed-request", True),
    "version-garbled": (request("GET /healthz HTTP/1.1x"), 400, "malformed-request", True),
    "version-lower-case": (request("GET /healthz http/1.1"), 400, "malformed-request", True),
    "target-with-del": (request("GET /health\x7fz HTTP/1.1"), 400, "malformed-request", True),
    "target-not-ascii": (request("GET /h\xe9 HTTP/1.1"), 400, "malformed-request", True),
    "target-empty": (request("GET  HTTP/1.1"), 400, "malformed-request", True),
    "asterisk-with-get": (request("GET * HTTP/1.1"), 400, "malformed-request", True),
    "authority-form": (request("GET example.com:80 HTTP/1.1"), 400, "malformed-request", True),
    "two-spaces": (request("GET /healthz  HTTP/1.1"), 400, "malformed-request", True),
    "scheme-headers-disagree": (request("GET /healthz HTTP/1.1", "X-Forwarded-Proto: https", "X-Forwarded-Ssl: off"),
                                400, "malformed-request", True),
    "expect-unknown": (request("GET /healthz HTTP/1.1", "Expect: fancy"), 417, "http-error", True),
    "chunked-http-1.0": (request("POST /v1/games/penguin/moves HTTP/1.0", "Transfer-Encoding: chunked"), 400,
                         "malformed-request", True),
    "request-line-4095": (request(line_of(REQUEST_LINE_BYTES + 1)), 414, "request-line-too-long", False),
    "field-8191": (request("GET /healthz HTTP/1.1", field_of(FIELD_BYTES + 1)), 431, "headers-too-large", False),
    "fields-101": (request("GET /healthz HTTP/1.1", *fields_of(FIELDS + 1)), 431, "headers-too-large", False),
    "head-32769": (head_of(MAX_HEAD_BYTES + 1), 431, "headers-too-large", False),
}


def assert_problem(answer: Answer, status: int, code: str, client_id: bool) -> None:
    assert answer.status == status, answer
    assert answer.headers["content-type"] == "application/problem+json", answer
    assert answer.headers["connection"] == "close"
    rid = answer.headers["x-request-id"]
    assert REQUEST_ID_PATTERN.fullmatch(rid)
    assert (rid == CLIENT_ID) is client_id, rid
    problem = json.loads(answer.body)
    assert (problem["status"], problem["code"], problem["request_id"]) == (status, code, rid)
    assert problem["title"] and problem["detail"]


@pytest.mark.slow
@pytest.mark.parametrize("case", REFUSALS)
def test_every_refusal_is_problem_json_with_a_code_and_a_request_id(server: Backend, case: str) -> None:
    sent, status, code, client_id = REFUSALS[case]
    assert_problem(exchange(server, sent), status, code, client_id)


# Just within each of README's limits: answered by the app (GET /healthz: 200).
WITHIN_LIMITS: dict[str, bytes] = {
    "request-line-4094": request(line_of(REQUEST_LINE_BYTES)),
    "field-8190": request("GET /healthz HTTP/1.1", field_of(FIELD_BYTES)),
    "field-8189": request("GET /healthz HTTP/1.1", field_of(FIELD_BYTES - 1)),
    "fields-100": request("GET /healthz HTTP/1.1", *fields_of(FIELDS)),
    "head-32768": head_of(MAX_HEAD_BYTES),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", WITHIN_LIMITS)
def test_a_request_just_within_each_limit_is_served(server: Backend, case: str) -> None:
    answer = exchange(server, WITHIN_LIMITS[case])
    assert answer.status == 200, answer
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["x-request-id"] == CLIENT_ID


def worker_count(server: Backend, method: str, status: int) -> float:
    return server.metric("http_requests_total", method=method, endpoint=WORKER_ENDPOINT, status=str(status))


@pytest.mark.slow
def test_every_answer_of_the_worker_is_counted_in_the_metrics(server: Backend) -> None:
    sends: list[tuple[bytes, str, int]] = [
        (request(POST, "Content-Length: x"), "POST", 400),  # the framer's framing 400
        (request("GET /healthz HTTP/1.1", "X: \x00"), "GET", 400),  # the framer's field 400
        (request("get /healthz HTTP/1.1"), "other", 400),  # gunicorn's parser (a method off the label set)
        (request("GET /healthz HTTP/2.0"), "GET", 400),  # gunicorn's parser
        (request(POST, JSON, "Content-Length: 99999999"), "POST", 413),
        (request(line_of(REQUEST_LINE_BYTES + 1)), "GET", 414),
        (request("GET /healthz HTTP/1.1", "Expect: fancy"), "GET", 417),
        (request("GET /healthz HTTP/1.1", field_of(FIELD_BYTES + 1)), "GET", 431),
        (request(POST, JSON, "Content-Length: 10", body=b"{}"), "POST", 408),  # its body never whole
    ]
    expected: dict[tuple[str, int], int] = {}
    for _, method, status in sends:
        expected[method, status] = expected.get((method, status), 0) + 1
    before = {key: worker_count(server, *key) for key in expected}
    for sent, _, status in sends:
        assert exchange(server, sent).status == status
    after = {key: worker_count(server, *key) for key in expected}
    assert {key: after[key] - before[key] for key in expected} == expected
    # The app's own requests are not counted under the worker's endpoint.
    assert worker_count(server, "GET", 200) == 0


# --- a killed master ----------------------------------------------------------------------------

def solve_body(server: Backend, seconds: float) -> bytes:
    """A Forty Thieves solve (deal 3) that searches about ``seconds``."""
    conn_answer = exchange(server, request("POST /v1/games/forty-thieves/deals HTTP/1.1", JSON,
                                           "Content-Length: 11", body=b'{"deal": 3}'))
    assert conn_answer.status == 200, conn_answer
    state = json.loads(conn_answer.body)["state"]
    body = json.dumps({"state": state, "limits": {"max_seconds": seconds}}).encode()
    return request("POST /v1/games/forty-thieves/solve HTTP/1.1", JSON, f"Content-Length: {len(body)}", body=body)


def new_connection(port: int) -> str:
    """What becomes of a new connection that asks for /healthz: ``refused`` (by the kernel:
    nothing listens), ``served``, ``closed`` (accepted by the kernel, then closed unanswered)
    or ``hung`` (nothing within a second)."""
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=1.0)
    except ConnectionRefusedError:
        return "refused"
    with sock:
        try:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            got = sock.recv(1024)
        except (ConnectionResetError, BrokenPipeError):
            return "closed"
        except TimeoutError:
            return "hung"
    return "served" if got.startswith(b"HTTP/1.1 200") else "closed"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is not alive
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.slow
def test_a_killed_masters_workers_stop_taking_connections_at_once(tmp_path_factory: pytest.TempPathFactory) -> None:
    backend = Backend("orphans", tmp_path_factory.mktemp("orphans"), workers=2, threads=4)
    try:
        backend.start()
        solve = solve_body(backend, 2.0)
        workers = backend.worker_pids()
        assert len(workers) == 2
        answered: list[tuple[float, Answer]] = []

        def solve_in_flight() -> None:
            answer = exchange(backend, solve, timeout=15)
            answered.append((time.monotonic(), answer))

        in_flight = threading.Thread(target=solve_in_flight)
        in_flight.start()
        time.sleep(0.5)  # the solve is under way in a worker's thread
        os.kill(backend.pid, signal.SIGKILL)  # the master alone
        killed = time.monotonic()
        outcomes = []
        while time.monotonic() < killed + KILLED_MASTER_SECONDS:
            outcomes.append((round(time.monotonic() - killed, 3), new_connection(backend.port)))
            time.sleep(0.02)
        # Until then a new connection is served (the workers do not know yet), refused or
        # closed, never left hanging; from then on every one is refused by the kernel.
        assert all(outcome != "hung" for _, outcome in outcomes), outcomes
        assert [new_connection(backend.port) for _ in range(5)] == ["refused"] * 5, outcomes
        in_flight.join(15)
        assert answered, "the solve under way when the master died was not answered"
        at, answer = answered[0]
        assert answer.status == 200 and at > killed, answer  # answered, after the kill
        wait_for("the orphaned workers to exit", lambda: not any(alive(pid) for pid in workers), 15)
        print(f"\nnew connections after the kill (s, refused): {outcomes}")
    finally:
        backend.kill()  # its whole session: the orphaned workers too, if still there


@pytest.mark.slow
def test_the_app_still_answers_after_the_refusals(server: Backend) -> None:
    status, body = http_get(server.port, "/healthz")
    assert status == 200 and b"ok" in body
