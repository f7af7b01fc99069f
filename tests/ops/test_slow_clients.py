"""Slow and malformed clients against the server `make run` starts (gunicorn with
deploy/gunicorn.conf.py: 2 workers x 4 threads, service.gunicorn_worker), on loopback.

The worker reads each request whole in its main loop before a thread takes it, so
hundreds of half-sent requests hold no thread; it refuses bad framing at once. The first
tests check its framer alone (no process); the rest start one server for the module.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import resource
import selectors
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from gunicorn.config import Config

from service.gunicorn_worker import MAX_HEAD_BYTES, Limits, Rejection, RequestFramer, WholeRequestWorker
from service.settings import MAX_BODY_BYTES
from tests.ops.servers import child_pids, http_get, needs_the_service_worker, stop_gracefully

REPO = Path(__file__).resolve().parents[2]
READ_SECONDS = 2.0  # REQUEST_READ_SECONDS of the server under test (default 5): short tests
MAX_BODY = MAX_BODY_BYTES.read({})  # the default: the server under test does not set it
MOVES = "/v1/games/penguin/moves"
DEALS = "/v1/games/penguin/deals"
LIMITS = Limits(max_body_bytes=1000, max_request_line=4094, max_field_bytes=8190, max_fields=100)


# --- the framer alone -----------------------------------------------------------------------

def frame(data: bytes, *, byte_by_byte: bool = False) -> int | None:
    framer = RequestFramer(LIMITS)
    if not byte_by_byte:
        return framer.feed(data)
    end = None
    for i in range(len(data)):
        end = framer.feed(data[i:i + 1])
        if end is not None:
            return end
    return end


def refusal(data: bytes) -> int:
    with pytest.raises(Rejection) as refused:
        frame(data)
    return refused.value.status


CHUNKED = b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"


@needs_the_service_worker
@pytest.mark.parametrize("byte_by_byte", [False, True])
def test_the_framer_finds_the_end_of_each_kind_of_request(byte_by_byte: bool) -> None:
    get = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    post = b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
    chunked = CHUNKED + b"3\r\nhel\r\n2;ext=1\r\nlo\r\n0\r\n\r\n"
    trailers = CHUNKED + b"5\r\nhello\r\n0\r\nX-Sum: 1\r\n\r\n"
    for request in (get, post, chunked, trailers):
        assert frame(request + b"GET /next", byte_by_byte=byte_by_byte) == len(request)
        assert frame(request[:-1], byte_by_byte=byte_by_byte) is None
    framer = RequestFramer(LIMITS)  # empty lines before a request are dropped
    assert framer.feed(b"\r\n\r\n") is None and not framer.started
    assert framer.feed(b"\r") is None
    assert framer.feed(b"\n" + get) == len(get) and framer.buf == get


@needs_the_service_worker
def test_the_framer_refuses_bad_framing_as_soon_as_it_shows() -> None:
    assert refusal(CHUNKED + b"zz") == 400  # no CRLF needed to see it
    assert refusal(CHUNKED + b"ffffffffffffffffffff") == 413
    assert refusal(CHUNKED + b"3e9\r\n") == 413  # 1001 > 1000
    assert refusal(CHUNKED + b"1f4\r\n" + b"x" * 500 + b"\r\n1f5\r\n") == 413  # the sum
    assert refusal(CHUNKED + b"3\r\nabcXY") == 400  # no CRLF after the data
    assert refusal(CHUNKED + b"\r\n") == 400  # no size
    assert refusal(CHUNKED + b"3;bad ext\r\n") == 400
    assert refusal(b"POST / HTTP/1.1\r\nContent-Length: 1001\r\n\r\n") == 413
    assert refusal(b"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n") == 413
    assert refusal(b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n") == 400
    assert refusal(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n") == 400
    assert refusal(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n") == 400
    assert refusal(b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n") == 400
    assert refusal(b"GET / HTTP/1.1\nHost: x\n\n") == 400  # bare LF
    assert refusal(b"GET /" + b"a" * 5000) == 414
    assert refusal(b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 101 + b"\r\n") == 431
    assert refusal(b"GET / HTTP/1.1\r\nX: " + b"y" * 9000 + b"\r\n\r\n") == 431
    assert refusal(b"GET / HTTP/1.1\r\n" + (b"X: " + b"y" * 8000 + b"\r\n") * 5) == 431  # over MAX_HEAD_BYTES


# Chunked bodies, valid and not, whose framing must not depend on how their bytes arrive.
CHUNKED_BODIES = [
    b"2 ;a=b\r\nhi\r\n0\r\n\r\n",  # whitespace before an extension
    b"2\t ;a=b\r\nhi\r\n0 ;z\r\n\r\n",
    b"2;a=b;c=\"d e\"\r\nhi\r\n0\r\n\r\n",
    b"002\r\nhi\r\nA\r\n0123456789\r\n0\r\n\r\n",
    b"5\r\nhello\r\n0\r\nX-Sum: 1\r\nY: 2\r\n\r\n",
    b"2 \r\nhi\r\n0\r\n\r\n",  # whitespace without an extension: refused
    b" 2\r\nhi\r\n0\r\n\r\n",
    b"2 3\r\nhi\r\n0\r\n\r\n",
    b"2;a b\r\nhi\r\n0\r\n\r\n",
    b" ;a=b\r\nhi\r\n0\r\n\r\n",
    b"3e8\r\n" + b"x" * 1000 + b"\r\n1 ;x\r\ny\r\n0\r\n\r\n",  # one byte over the limit
]


def outcome(pieces: list[bytes]) -> int | str | None:
    """Where the framer says the request ends, or the status it refuses it with."""
    framer = RequestFramer(LIMITS)
    end = None
    try:
        for piece in pieces:
            end = framer.feed(piece)
    except Rejection as refused:
        return f"refused {refused.status}"
    return end


@needs_the_service_worker
@pytest.mark.parametrize("body", CHUNKED_BODIES, ids=lambda body: repr(body[:24]))
def test_the_framer_frames_a_chunked_body_alike_however_its_bytes_arrive(body: bytes) -> None:
    request = CHUNKED + body
    whole = outcome([request])
    assert whole is not None
    for cut in range(len(CHUNKED), len(request)):
        assert outcome([request[:cut], request[cut:]]) == whole, f"cut after {request[:cut][-12:]!r}"
    assert outcome([request[i:i + 1] for i in range(len(request))]) == whole


@needs_the_service_worker
def test_the_framer_refuses_bad_trailers() -> None:
    assert refusal(CHUNKED + b"0\r\nX-Sum: 1\n\r\n") == 400
    assert refusal(CHUNKED + b"0\r\n\n") == 400
    assert frame(CHUNKED + b"0\r\nX-Sum: 1\r\n") is None


@needs_the_service_worker
def test_a_request_fed_a_byte_at_a_time_costs_linear_time() -> None:
    """Each byte is searched once: a client that sends its head or a chunk-size line a
    byte at a time cannot make the main loop rescan what it already read."""
    head = b"GET / HTTP/1.1\r\n" + b"X-Pad: " + b"y" * 8000 + b"\r\n"
    head = head + head[16:] * 3
    start = time.process_time()
    assert frame(head + b"\r\n", byte_by_byte=True) == len(head) + 2
    zeros = RequestFramer(LIMITS)
    zeros.feed(CHUNKED)
    for _ in range(8000):
        assert zeros.feed(b"0") is None
    assert time.process_time() - start < 2.0  # about 0.3 s here; a rescan per byte would be quadratic


@needs_the_service_worker
def test_the_framer_bounds_its_buffer() -> None:
    framer = RequestFramer(LIMITS)
    assert framer.room() == MAX_HEAD_BYTES
    framer.feed(CHUNKED)
    assert framer.room() <= LIMITS.max_body_bytes + 16 * 1024
    with pytest.raises(Rejection) as refused:
        framer.feed(b"1\r\nx\r\n" * 4000)  # 4,000 data bytes would be over the limit anyway
    assert refused.value.status == 413
    tiny_chunks = RequestFramer(Limits(max_body_bytes=100_000, max_request_line=0, max_field_bytes=8190, max_fields=100))
    tiny_chunks.feed(CHUNKED)
    with pytest.raises(Rejection) as refused:
        tiny_chunks.feed(b"1\r\nx\r\n" * 30_000)  # 30 KB of data in 180 KB of framing
    assert refused.value.status == 413


@needs_the_service_worker
@pytest.mark.parametrize(("setting", "value"), [
    ("certfile", "server.pem"), ("http2_cleartext", "upgrade"), ("http2_cleartext", "prior-knowledge"),
    ("http2_cleartext", "both"),
])
def test_the_worker_refuses_tls_and_cleartext_http2(setting: str, value: str) -> None:
    """It reads plain HTTP/1.x requests only: gunicorn refuses to start it with TLS or h2c."""
    log = logging.getLogger("test")
    WholeRequestWorker.check_config(Config(), log)  # gunicorn's defaults: plain HTTP/1.x
    cfg = Config()
    cfg.set(setting, value)
    with pytest.raises(RuntimeError, match=r"HTTP/1\.x"):
        WholeRequestWorker.check_config(cfg, log)


# --- the server -----------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    port: int
    proc: subprocess.Popen[bytes]

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=5)


@contextmanager
def running_server(
    tmp: Path, workers: int = 2, open_files: int | None = None, app: str = "service.wsgi:app",
) -> Iterator[Server]:
    """gunicorn as `make run` starts it (``workers`` x 4 threads), with REQUEST_READ_SECONDS
    short; ``open_files``: its file descriptor limit; ``app``: the WSGI app it serves."""
    port = free_port()
    env = {
        **os.environ, "PORT": str(port), "HOST": "127.0.0.1", "WEB_CONCURRENCY": str(workers), "GUNICORN_THREADS": "4",
        "REQUEST_READ_SECONDS": str(READ_SECONDS), "GUNICORN_DRAIN_SECONDS": "0", "LOG_LEVEL": "warning",
        "TMPDIR": str(tmp),
    }
    for name in ("PROMETHEUS_MULTIPROC_DIR", "DRAIN_FILE", "MAX_BODY_BYTES", "GUNICORN_CMD_ARGS"):
        env.pop(name, None)

    def limit_files() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    with (tmp / "gunicorn.log").open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", app],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=limit_files,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    if get(port, "/healthz")[0] == 200:
                        break
                except OSError:
                    pass
                assert proc.poll() is None and time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.1)
            yield Server(port, proc)
        finally:
            stop_gracefully(proc, 15)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("run")) as started:
        yield started


def get(port: int, path: str, timeout: float = 1.0) -> tuple[int, bytes]:
    """A GET that must answer within a second unless told otherwise."""
    return http_get(port, path, timeout)


def post(port: int, path: str, body: Any, timeout: float = 1.0) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        conn.close()


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def problem(self) -> dict[str, Any]:
        assert self.headers["content-type"] == "application/problem+json"
        problem: dict[str, Any] = json.loads(self.body)
        assert problem["status"] == self.status
        return problem


class Reader:
    """HTTP/1.1 answers read off a raw socket, in order (Content-Length bodies)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.buf = sock, b""

    def _fill(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("the server closed the connection")
        self.buf += data

    def answer(self) -> Answer:
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
        length = int(headers.get("content-length", "0"))
        while len(self.buf) < length:
            self._fill()
        body, self.buf = self.buf[:length], self.buf[length:]
        return Answer(int(status_line.split()[1]), headers, body)

    def closed(self) -> bool:
        """True once the server has closed (EOF, or a reset after it answered)."""
        try:
            return self.sock.recv(65536) == b""
        except ConnectionResetError:
            return True


def exchange(server: Server, data: bytes) -> tuple[Answer, float]:
    """Send ``data``, read one answer; with the seconds it took."""
    with server.connect() as sock:
        start = time.monotonic()
        sock.sendall(data)
        answer = Reader(sock).answer()
        return answer, time.monotonic() - start


@pytest.fixture(scope="module")
def move(server: Server) -> dict[str, Any]:
    """A body for POST /moves: deal 1 and its first legal move."""
    status, dealt = post(server.port, DEALS, {"deal": 1}, timeout=5)
    assert status == 200
    return {"state": dealt["state"], "move": dealt["legal_moves"][0]}


def chunked_post(path: str, chunks: list[bytes], extra: bytes = b"") -> bytes:
    body = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"
    return (f"POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n").encode() + extra + b"\r\n" + body


# --- slow clients ---------------------------------------------------------------------------

SLOW_CONNECTIONS = 200
ABUSE_SECONDS = 10.0


def half_request(kind: int, moves_body: bytes) -> bytes:
    """Half a request line, half the headers, or the headers and half a body."""
    head = f"POST {MOVES} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {len(moves_body)}\r\n\r\n"
    whole = head.encode() + moves_body
    cut = (len(f"POST {MOVES}") // 2, len(head) // 2, len(head) + len(moves_body) // 2)[kind % 3]
    return whole[:cut]


@pytest.mark.slow
def test_hundreds_of_half_sent_requests_hold_no_thread(server: Server, move: dict[str, Any]) -> None:
    """200 connections that each sent a third of the kinds of half a request (reopened as
    the server times them out) leave /healthz and POST /moves answering within 1 s."""
    moves_body = json.dumps(move).encode()
    selector = selectors.DefaultSelector()

    def open_slow(kind: int) -> None:
        sock = server.connect()
        sock.sendall(half_request(kind, moves_body))
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ, kind)

    for kind in range(SLOW_CONNECTIONS):
        open_slow(kind)
    slowest, probes, reopened = 0.0, 0, 0
    timed_out: list[int] = []
    end = time.monotonic() + ABUSE_SECONDS
    try:
        while time.monotonic() < end:
            for key, _ in selector.select(0):  # answered (408) or closed: open another
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    data = sock.recv(65536)
                except OSError:
                    data = b""
                if data.startswith(b"HTTP/1.1 "):
                    timed_out.append(int(data.split()[1]))
                selector.unregister(sock)
                sock.close()
                open_slow(key.data)
                reopened += 1
            assert len(selector.get_map()) == SLOW_CONNECTIONS
            start = time.monotonic()
            assert get(server.port, "/healthz")[0] == 200
            status, answer = post(server.port, MOVES, move)
            assert status == 200 and answer["status"] == "playing"
            slowest = max(slowest, time.monotonic() - start)
            probes += 1
            time.sleep(0.1)
    finally:
        for key in list(selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        selector.close()
    assert probes >= 20 and slowest < 1.0, (probes, slowest)
    # The server timed them out (REQUEST_READ_SECONDS) with 408, at least once each.
    assert reopened >= SLOW_CONNECTIONS and set(timed_out) == {408}, (reopened, set(timed_out))


@pytest.mark.slow
@pytest.mark.parametrize("kind", [0, 1, 2], ids=["request-line", "headers", "body"])
def test_a_half_sent_request_is_answered_408_after_the_deadline(server: Server, move: dict[str, Any], kind: int) -> None:
    answer, took = exchange(server, half_request(kind, json.dumps(move).encode()))
    assert answer.status == 408 and answer.problem()["code"] == "request-timeout"
    assert answer.headers["connection"] == "close"
    assert READ_SECONDS - 0.1 < took < READ_SECONDS + 1.0


@pytest.mark.slow
def test_a_connection_that_sends_nothing_is_closed_silently(server: Server) -> None:
    with server.connect() as sock:
        start = time.monotonic()
        assert Reader(sock).closed()
        assert READ_SECONDS - 0.1 < time.monotonic() - start < READ_SECONDS + 1.0


# --- framing and bodies ---------------------------------------------------------------------

@pytest.mark.slow
def test_a_chunked_body_plays_like_a_plain_one(server: Server, move: dict[str, Any]) -> None:
    body = json.dumps(move).encode()
    chunks = [body[i:i + 700] for i in range(0, len(body), 700)]
    answer, _ = exchange(server, chunked_post(MOVES, chunks))
    assert answer.status == 200
    assert json.loads(answer.body) == post(server.port, MOVES, move)[1]


@pytest.mark.slow
@pytest.mark.parametrize(("sent", "status", "code"), [
    (b"zz\r\n", 400, "malformed-request"),
    (b"zz", 400, "malformed-request"),  # refused before the line ends
    (b"ffffffffffffffffffff", 413, "body-too-large"),  # at once, nothing more sent
    (b"5\r\n{}{}{XX", 400, "malformed-request"),  # chunk data not followed by CRLF
    (b"%x\r\n" % (MAX_BODY + 1), 413, "body-too-large"),
    (b"8000\r\n" + b" " * 0x8000 + b"\r\n8001\r\n", 413, "body-too-large"),  # the sum over MAX_BODY_BYTES
])
def test_bad_chunked_bodies_are_answered_at_once(server: Server, sent: bytes, status: int, code: str) -> None:
    head = chunked_post(MOVES, [])[: -len(b"0\r\n\r\n")]
    answer, took = exchange(server, head + sent)
    assert (answer.status, answer.problem()["code"]) == (status, code)
    assert took < 1.0
    assert answer.headers["connection"] == "close"


@pytest.mark.slow
def test_a_content_length_over_the_limit_is_refused_before_the_body(server: Server) -> None:
    head = f"POST {MOVES} HTTP/1.1\r\nHost: t\r\nContent-Length: {MAX_BODY + 1}\r\nExpect: 100-continue\r\n\r\n"
    answer, took = exchange(server, head.encode())
    assert (answer.status, answer.problem()["code"], took < 1.0) == (413, "body-too-large", True)


@pytest.mark.slow
def test_the_client_that_expects_100_continue_gets_it_once_then_its_answer(server: Server, move: dict[str, Any]) -> None:
    body = json.dumps(move).encode()
    head = f"POST {MOVES} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\nExpect: 100-continue\r\n\r\n"
    with server.connect() as sock:
        sock.sendall(head.encode())
        reader = Reader(sock)
        assert reader.answer().status == 100
        sock.sendall(body)
        assert reader.answer().status == 200
        assert reader.buf == b""


# --- keep-alive and pipelining --------------------------------------------------------------

@pytest.mark.slow
def test_keep_alive_serves_several_requests_on_one_connection(server: Server, move: dict[str, Any]) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=2)
    try:
        ports = set()
        for _ in range(5):
            conn.request("POST", MOVES, json.dumps(move), {"Content-Type": "application/json"})
            answer = conn.getresponse()
            assert answer.status == 200 and answer.getheader("Connection") == "keep-alive"
            answer.read()
            assert conn.sock is not None
            ports.add(conn.sock.getsockname()[1])
            conn.request("GET", "/healthz")
            assert conn.getresponse().read() and len(ports) == 1
    finally:
        conn.close()


@pytest.mark.slow
def test_pipelined_requests_are_answered_in_order(server: Server, move: dict[str, Any]) -> None:
    body = json.dumps(move).encode()
    requests = b"".join(
        f"POST {MOVES} HTTP/1.1\r\nHost: t\r\nX-Request-ID: pipelined-{i}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n".encode() + body
        for i in range(3)
    ) + chunked_post(MOVES, [body], b"X-Request-ID: pipelined-3\r\n") + b"GET /healthz HTTP/1.1\r\nHost: t\r\nX-Request-ID: pipelined-4\r\n\r\n"
    with server.connect() as sock:
        sock.sendall(requests)
        reader = Reader(sock)
        answers = [reader.answer() for _ in range(5)]
    assert [a.status for a in answers] == [200] * 5
    assert [a.headers["x-request-id"] for a in answers] == [f"pipelined-{i}" for i in range(5)]


@pytest.mark.slow
def test_a_request_after_a_refused_one_on_the_same_connection_is_not_served(server: Server) -> None:
    """The worker's own answers close the connection: what follows is never read as a request."""
    with server.connect() as sock:
        sock.sendall(chunked_post(MOVES, [])[:-5] + b"zz\r\n\r\nGET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        reader = Reader(sock)
        assert reader.answer().status == 400
        assert reader.buf == b"" and reader.closed()


@pytest.mark.slow
def test_past_its_connection_bound_a_worker_makes_new_connections_wait(tmp_path: Path) -> None:
    """One worker with 256 file descriptors holds at most 192 connections (256 less its
    spares), whatever GUNICORN_WORKER_CONNECTIONS says: 250 half-sent requests leave the
    rest in the listen backlog, never a failed accept; they are served once the slow ones
    are timed out."""
    with running_server(tmp_path, workers=1, open_files=256) as limited:
        slow = []
        try:
            for kind in range(250):
                sock = limited.connect()
                sock.sendall(half_request(kind, b"{}"))
                slow.append(sock)
            start = time.monotonic()
            assert get(limited.port, "/healthz", timeout=READ_SECONDS + 3)[0] == 200
            assert time.monotonic() - start < READ_SECONDS + 3
        finally:
            for sock in slow:
                sock.close()
        assert limited.proc.poll() is None
    log = (tmp_path / "gunicorn.log").read_text()
    assert log.count("worker_connections lowered to 192") == 1, "no worker booted twice (none died)"
    assert "Traceback" not in log


def test_an_app_that_fails_mid_answer_costs_its_connection_not_the_worker(tmp_path: Path) -> None:
    """gthread closes the socket of an app that failed after starting its answer (or that
    had its socket closed under it); the worker then closes that connection only: its other
    connections are still answered, by the same process."""
    with running_server(tmp_path, workers=1, app="tests.ops.servers:faulty_app") as server:
        (worker,) = child_pids(server.proc.pid)
        kept = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        kept.request("GET", "/before")
        assert kept.getresponse().read() == b"ok"  # and kept alive, idle in the worker
        for path in ("/fail-mid-answer", "/close-socket") * 3:
            with server.connect() as s:
                s.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
                with suppress(ConnectionResetError):
                    while s.recv(65536):
                        pass  # until the worker closes it
        kept.request("GET", "/after")
        assert kept.getresponse().read() == b"ok"
        kept.close()
        assert get(server.port, "/healthz") == (200, b"ok")
        assert child_pids(server.proc.pid) == [worker]
        log = (tmp_path / "gunicorn.log").read_text()
        assert "failed for" not in log, "the closed socket should be seen, not fail the main loop"
