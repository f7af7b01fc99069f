"""The worker's own refusals (408, 413, 414, 431, 400) carry an ``X-Request-ID`` as the app's
answers do (openapi.yaml, header ``RequestId``): the client's once the worker has read the
headers and the id is usable, else a new one made as the app makes one; the problem body
and the worker's log line carry the same id.

The first tests check the framer alone (no process); the rest send raw bytes to one real
gunicorn server (deploy/gunicorn.conf.py, service.gunicorn_worker) for the module.
"""

from __future__ import annotations

import http.client
import json
import socket
import uuid
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import pytest

from service.gunicorn_worker import Limits, Rejection, RequestFramer
from service.http.observability import REQUEST_ID_PATTERN
from service.settings import MAX_BODY_BYTES
from tests.ops.servers import Backend, wait_for

READ_SECONDS = 1.0  # REQUEST_READ_SECONDS of the server under test: the 408s come soon
MAX_BODY = MAX_BODY_BYTES.read({})  # the default: the server under test does not set it
MOVES = "/v1/games/penguin/moves"
LIMITS = Limits(max_body_bytes=1000, max_request_line=4094, max_field_bytes=8190, max_fields=100)
CLIENT_ID = "client-id_1.2:3@x/y+z="  # every kind of character REQUEST_ID_PATTERN allows


def is_new_id(rid: str) -> bool:
    """The form of an id the service makes itself: a version-4 UUID in lower-case hex."""
    return len(rid) == 32 and rid == uuid.UUID(rid).hex and uuid.UUID(rid).version == 4


# --- the framer alone -----------------------------------------------------------------------

def framer_after(data: bytes) -> RequestFramer:
    """A framer fed ``data``, whether or not it refused it."""
    framer = RequestFramer(LIMITS)
    with suppress(Rejection):
        framer.feed(data)
    return framer


def test_the_framer_gives_the_client_id_only_from_headers_it_read() -> None:
    head = f"POST / HTTP/1.1\r\nX-Request-ID: {CLIENT_ID}\r\n".encode()
    assert framer_after(head).client_request_id() is None  # the head is not whole yet
    assert framer_after(head + b"Content-Length: 10\r\n\r\n").client_request_id() == CLIENT_ID
    assert framer_after(head + b"Content-Length: x\r\n\r\n").client_request_id() == CLIENT_ID  # refused after
    assert framer_after(head + b"x-request-id:  b \r\n\r\n").client_request_id() == f"{CLIENT_ID},b"  # as gunicorn
    assert framer_after(b"\r\n" + head + b"\r\n").client_request_id() == CLIENT_ID  # leading empty lines
    assert framer_after(head + b"bad line\r\n\r\n").client_request_id() is None  # refused for its fields
    assert framer_after(head + b"X: y\r\n" * 100 + b"\r\n").client_request_id() is None
    assert framer_after(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").client_request_id() is None


# --- the server -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    backend = Backend("ids", tmp_path_factory.mktemp("ids"), workers=1, threads=4,
                      env={"REQUEST_READ_SECONDS": str(READ_SECONDS), "LOG_LEVEL": "debug"})
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

    @property
    def request_id(self) -> str:
        return self.headers["x-request-id"]


def refused(server: Backend, data: bytes) -> Answer:
    """Send ``data`` and read the answer to the end: the worker closes after a refusal (a
    request it does not refuse would wait here for the socket's timeout, and fail)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=READ_SECONDS + 5) as sock:
        sock.sendall(data)
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    assert len(headers) == len(lines)  # no header twice
    return Answer(int(status_line.split()[1]), headers, body)


def post_head(*fields: str, path: str = MOVES) -> bytes:
    return "".join(f"{f}\r\n" for f in (f"POST {path} HTTP/1.1", "Host: t", *fields)).encode() + b"\r\n"


WITH_ID = f"X-Request-ID: {CLIENT_ID}"
CHUNKED = "Transfer-Encoding: chunked"

# (what is sent, status, problem code, the id expected: the client's, or None for a new one)
REFUSALS: dict[str, tuple[bytes, int, str, str | None]] = {
    "408-in-head": (f"GET /healthz HTTP/1.1\r\nHost: t\r\n{WITH_ID}\r\n".encode(), 408, "request-timeout", None),
    "408-in-body": (post_head(WITH_ID, "Content-Length: 10") + b"{}", 408, "request-timeout", CLIENT_ID),
    "413-length": (post_head(WITH_ID, f"Content-Length: {MAX_BODY + 1}"), 413, "body-too-large", CLIENT_ID),
    "413-chunks": (post_head(WITH_ID, CHUNKED) + b"%x\r\n" % (MAX_BODY + 1), 413, "body-too-large", CLIENT_ID),
    "414": (b"GET /" + b"a" * 5000 + f" HTTP/1.1\r\n{WITH_ID}\r\n\r\n".encode(), 414, "request-line-too-long", None),
    "431-fields": (post_head(WITH_ID, *["X: y"] * 100), 431, "headers-too-large", None),
    "431-field": (post_head(WITH_ID, "X: " + "y" * 9000), 431, "headers-too-large", None),
    "431-head": (post_head(WITH_ID, *[f"X{i}: " + "y" * 8000 for i in range(5)]), 431, "headers-too-large", None),
    "400-chunk-size": (post_head(WITH_ID, CHUNKED) + b"zz\r\n", 400, "malformed-request", CLIENT_ID),
    "400-chunk-crlf": (post_head(WITH_ID, CHUNKED) + b"2\r\n{}XX", 400, "malformed-request", CLIENT_ID),
    "400-trailer-lf": (post_head(WITH_ID, CHUNKED) + b"0\r\nX: 1\n\r\n", 400, "malformed-request", CLIENT_ID),
    "400-length": (post_head(WITH_ID, "Content-Length: -1"), 400, "malformed-request", CLIENT_ID),
    "400-both": (post_head(WITH_ID, CHUNKED, "Content-Length: 2"), 400, "malformed-request", CLIENT_ID),
    "400-gzip": (post_head(WITH_ID, "Transfer-Encoding: gzip"), 400, "malformed-request", CLIENT_ID),
    "400-bare-lf": (f"GET / HTTP/1.1\n{WITH_ID}\n\n".encode(), 400, "malformed-request", None),
    "400-header-line": (post_head(WITH_ID, "no colon"), 400, "malformed-request", None),
    # A client id the app would not echo is not echoed by the worker either.
    "400-id-with-space": (post_head("X-Request-ID: a b", "Content-Length: x"), 400, "malformed-request", None),
    "400-id-too-long": (post_head("X-Request-ID: " + "a" * 129, "Content-Length: x"), 400, "malformed-request", None),
    "400-id-twice": (post_head(WITH_ID, WITH_ID, "Content-Length: x"), 400, "malformed-request", None),
    "400-no-id": (post_head("Content-Length: x"), 400, "malformed-request", None),
}


def logged_ids(server: Backend) -> dict[str, dict[str, Any]]:
    """The worker's log lines of its refusals, by request id."""
    lines = (json.loads(line) for line in server.error_log.read_text().splitlines() if line.startswith("{"))
    return {line["request_id"]: line for line in lines if str(line.get("message", "")).startswith("answered ")}


@pytest.mark.slow
@pytest.mark.parametrize("case", REFUSALS)
def test_each_refusal_of_the_worker_carries_a_request_id(server: Backend, case: str) -> None:
    sent, status, code, client_id = REFUSALS[case]
    answer = refused(server, sent)
    assert answer.status == status
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.headers["connection"] == "close"
    rid = answer.request_id
    assert REQUEST_ID_PATTERN.fullmatch(rid)
    if client_id is None:
        assert is_new_id(rid), rid
    else:
        assert rid == client_id
    problem = json.loads(answer.body)
    assert (problem["status"], problem["code"], problem["request_id"]) == (status, code, rid)
    wait_for("the refusal's log line", lambda: rid in logged_ids(server), timeout=5)
    line = logged_ids(server)[rid]
    assert line["logger"] == "gunicorn.error" and f" {status} {code} " in line["message"] and rid in line["message"]


@pytest.mark.slow
def test_new_ids_are_the_apps_form_and_never_repeat(server: Backend) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("GET", "/healthz")
        app_id = conn.getresponse().getheader("X-Request-ID")
    finally:
        conn.close()
    assert app_id is not None and is_new_id(app_id)  # the app's own: the form the worker's must have
    ids = {refused(server, post_head("Content-Length: x")).request_id for _ in range(20)}
    assert len(ids) == 20 and all(is_new_id(rid) for rid in ids)

