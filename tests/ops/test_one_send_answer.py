"""An answer's head and body leave the worker in one send (service.gunicorn_worker's
:class:`OneSendAnswer`): a server stopped or killed between gunicorn's two writes would
leave the balancer a head with no body, which it can neither finish nor retry.

The tests run gunicorn's own request handling (gthread's ``handle_request`` and its
``Response``) on a socket that records each send, with and without the worker's wrapping.
"""

from __future__ import annotations

import io
import logging
from collections import deque
from typing import Any

import pytest
from gunicorn.config import Config
from gunicorn.http.message import Request
from gunicorn.http.unreader import IterUnreader
from gunicorn.workers.gthread import ThreadWorker

from service.gunicorn_worker import OneSendAnswer, WholeRequestWorker

BODY = b'{"ok": true}'


class RecordingSocket:
    """Each ``sendall`` kept as one item, as the kernel would take it in one call."""

    def __init__(self) -> None:
        self.sends: list[bytes] = []
        self.closed = False

    def sendall(self, data: bytes) -> None:
        self.sends.append(bytes(data))

    def send(self, data: bytes) -> int:
        self.sendall(data)
        return len(data)

    def sendfile(self, file: Any, offset: int = 0, count: int | None = None) -> int:
        data = file.read() if count is None else file.read(count)
        self.sends.append(b"<file>" + data)
        return len(data)

    def fileno(self) -> int:
        return -1 if self.closed else 3

    def setblocking(self, flag: bool) -> None:
        pass

    def shutdown(self, how: int) -> None:
        pass

    def close(self) -> None:
        self.closed = True


class Conn:
    """What gthread's ``handle_request`` reads of a connection."""

    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.client = ("127.0.0.1", 40000)
        self.server = ("127.0.0.1", 8000)
        self.continue_sent = False


def app(status: str, headers: list[tuple[str, str]], chunks: list[bytes]) -> Any:
    def wsgi(environ: dict[str, Any], start_response: Any) -> Any:
        start_response(status, headers)
        return chunks
    return wsgi


def worker_with(wsgi: Any, cls: type[ThreadWorker]) -> ThreadWorker:
    """A worker with only what ``handle_request`` uses (no process, no sockets)."""
    worker = cls.__new__(cls)
    cfg = Config()
    worker.cfg, worker.wsgi, worker.log = cfg, wsgi, logging.getLogger("test-one-send")
    worker.nr, worker.max_requests, worker.alive = 0, 1000, True
    worker.keepalived_conns, worker.max_keepalived = deque(), 100
    worker.log.access = lambda *args: None  # type: ignore[attr-defined]
    return worker


def handle(cls: type[ThreadWorker], wsgi: Any, method: str = "GET") -> list[bytes]:
    """The sends of one request handled by ``cls``'s ``handle_request``."""
    worker = worker_with(wsgi, cls)
    sock = RecordingSocket()
    conn = Conn(sock)
    req = Request(worker.cfg, IterUnreader([f"{method} /x HTTP/1.1\r\nHost: a\r\n\r\n".encode()]),
                  conn.client, 1)
    worker.handle_request(req, conn)
    assert conn.sock is sock, "the connection keeps its own socket after the request"
    return sock.sends


def test_gunicorn_alone_sends_the_head_and_the_body_apart() -> None:
    """Why the wrapping exists: without it the same answer takes two sends."""
    sends = handle(ThreadWorker, app("200 OK", [("Content-Length", str(len(BODY)))], [BODY]))
    assert len(sends) == 2 and sends[1] == BODY


@pytest.mark.parametrize("chunks", [[BODY], [b'{"ok"', b": true}"]], ids=["one-item", "two-items"])
def test_the_head_and_the_first_body_bytes_leave_in_one_send(chunks: list[bytes]) -> None:
    sends = handle(WholeRequestWorker, app("200 OK", [("Content-Length", str(len(BODY)))], chunks))
    assert sends[0].startswith(b"HTTP/1.1 200 OK\r\n") and sends[0].endswith(b"\r\n\r\n" + chunks[0])
    assert b"".join(sends).endswith(b"\r\n\r\n" + BODY)
    assert len(sends) == len(chunks)


def test_an_answer_with_no_body_still_sends_its_head() -> None:
    sends = handle(WholeRequestWorker, app("204 No Content", [], []))
    assert len(sends) == 1 and sends[0].startswith(b"HTTP/1.1 204 No Content\r\n")
    head = handle(WholeRequestWorker, app("200 OK", [("Content-Length", "12")], [BODY]), method="HEAD")
    assert len(head) == 1 and head[0].endswith(b"\r\n\r\n")


def test_a_chunked_answer_sends_its_head_with_its_first_chunk() -> None:
    sends = handle(WholeRequestWorker, app("200 OK", [], [BODY, b"more"]))
    assert len(sends) == 3 and b"Transfer-Encoding: chunked" in sends[0]
    assert sends[0].endswith(b"\r\n\r\n" + b"%X" % len(BODY) + b"\r\n" + BODY + b"\r\n")
    assert sends[2] == b"0\r\n\r\n"


def test_a_file_follows_the_head_it_belongs_to() -> None:
    answer = OneSendAnswer(RecordingSocket())  # type: ignore[arg-type]
    answer.sendall(b"HEAD\r\n\r\n")
    answer.sendfile(io.BytesIO(b"file"), 0, 4)
    assert answer.sock.sends == [b"HEAD\r\n\r\n", b"<file>file"]  # type: ignore[attr-defined]


def test_an_app_that_fails_before_its_body_sends_nothing() -> None:
    """The held head is dropped with the connection: the balancer sees no answer at all,
    which it may retry, rather than a head with no body."""

    def failing(environ: dict[str, Any], start_response: Any) -> Any:
        start_response("200 OK", [("Content-Length", "12")])

        def body() -> Any:
            yield from ()
            raise RuntimeError("failed mid-answer")
        return body()

    worker = worker_with(failing, WholeRequestWorker)
    sock = RecordingSocket()
    req = Request(worker.cfg, IterUnreader([b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n"]), ("127.0.0.1", 1), 1)
    with pytest.raises((RuntimeError, StopIteration)):
        worker.handle_request(req, Conn(sock))
    assert sock.sends == []
