"""Real servers on loopback for the ops tests: gunicorn as `make run` starts it, and HAProxy
with deploy/haproxy.cfg (and its errorfiles) in front of them; ``Recorder``, a minimal server
that shows what the balancer passes on; raw exchanges, byte for byte, from a chosen
loopback address (HAProxy limits each client address).

Shared by the load-balancer, fault, HAProxy-rule and HAProxy-edge tests, the abuse suite
and bench/solve_contention_bench.py; the names here are imported by them, so keep them stable. Everything binds 127.0.0.1 on a free port,
runs in its own session (so a whole server can be signalled or killed as one group), and
is stopped by the caller (``Backend.kill``, ``Balancer.stop``, or ``cluster``).
"""

from __future__ import annotations

import csv
import http.client
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pytest

from service.gunicorn_worker import worker_refusal

REPO = Path(__file__).resolve().parents[2]
HAPROXY_CFG = REPO / "deploy" / "haproxy.cfg"
HAPROXY_ERRORS = REPO / "deploy" / "haproxy-errors"  # its errorfiles, named relative to it
GUNICORN_CFG = "deploy/gunicorn.conf.py"
needs_the_service_worker = pytest.mark.skipif(
    worker_refusal() is not None,
    reason="service.gunicorn_worker does not run on the installed gunicorn (make test-compat): gthread serves",
)
DRAIN_SECONDS = 3.0  # HAProxy needs 2 failed checks 500 ms apart; leave room for a busy CPU

# The API's POST endpoints under /v1/games/<game>/.
POST_ENDPOINTS = ("deals", "moves", "legal-moves", "validate", "solve", "hint")

# Spellings of /metrics a client may try on the public side. Several of them reach the
# metrics when sent to gunicorn directly (//metrics, /%6Detrics, /%2Fmetrics, absolute
# URIs); paths are case-sensitive in the app, so /METRICS is its 404 either way.
METRICS_SPELLINGS = (
    "/metrics", "//metrics", "///metrics", "/%6Detrics", "/%6detrics", "/%6D%65%74%72%69%63%73",
    "/metric%73", "/./metrics", "/%2E/metrics", "/x/../metrics", "/x/%2E%2E/metrics", "/../metrics",
    "/%2e%2e/metrics", "/v1//../metrics", "/v1/../metrics", "/x/./../metrics", "/METRICS", "/metrics?x",
    "/metrics?x=1", "/metrics/", "/metrics//", "/metrics/.", "/metrics#x", "/%2Fmetrics", "/%2fmetrics",
    "/%2F%2E%2Fmetrics", "/.%2Fmetrics", "/x/..%2Fmetrics", "/%252Fmetrics", "/metrics%00", "/metrics;x",
    "/\\metrics", "http://x/metrics", "http://x//metrics", "http://x/%6Detrics",
)


def install_debian_tools() -> None:
    """HAProxy and wrk, installed from Debian if missing (fails loudly if that fails)."""
    subprocess.run(["bash", str(REPO / "deploy" / "install-test-deps.sh")], check=True, timeout=900)


def free_port() -> int:
    """A loopback port free at the time of asking."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_get(port: int, path: str, timeout: float = 5.0) -> tuple[int, bytes]:
    """GET ``path`` from 127.0.0.1:``port`` on a fresh connection: status and body."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def stop_gracefully(proc: subprocess.Popen[bytes], wait: float) -> None:
    """SIGTERM a server started in its own session, and SIGKILL its whole session if it
    has not stopped within ``wait`` seconds."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(wait)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


def wait_for(what: str, check: Callable[[], bool], timeout: float, interval: float = 0.1) -> float:
    """Poll ``check`` until true; the seconds it took. Fails the test after ``timeout``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        try:
            if check():
                return time.monotonic() - start
        except OSError:
            pass
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def child_pids(pid: int) -> list[int]:
    """The live child processes of ``pid`` (a gunicorn master's: its workers)."""
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            children.append(int(entry.name))
    return sorted(children)


def connections_by_worker(master_pid: int, port: int) -> dict[int, int]:
    """Established TCP connections to ``port`` that each live worker of ``master_pid``
    holds (accepted; those still in the listen backlog belong to no worker), by pid; read
    from /proc (Linux), so the server is not asked and does no work for it."""
    established: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with suppress(FileNotFoundError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()  # sl local_address rem_address st ... inode
                if fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    established.add(f"socket:[{fields[9]}]")
    counts = {}
    for worker in child_pids(master_pid):
        held = 0
        with suppress(FileNotFoundError):  # a worker that exited meanwhile holds nothing
            for fd in Path(f"/proc/{worker}/fd").iterdir():
                with suppress(OSError):
                    held += os.readlink(fd) in established
        counts[worker] = held
    return counts


def faulty_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """A WSGI app that fails the server under it (``tests.ops.servers:faulty_app``):
    ``/fail-mid-answer`` starts its answer, then raises; ``/close-socket`` closes the
    connection's socket under the server, then answers; any other path answers 200."""
    path = environ.get("PATH_INFO", "")
    if path == "/fail-mid-answer":
        return _fail_mid_answer(start_response)
    if path == "/close-socket":
        environ["gunicorn.socket"].close()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


def _fail_mid_answer(start_response: Callable[..., Any]) -> Iterator[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "100")])
    yield b"the first of 100 bytes"
    raise RuntimeError("the app failed mid-answer")


class Server(Protocol):
    """What the balancer needs of a server: a name for its server line, and a loopback port."""

    name: str
    port: int


class Backend:
    """One gunicorn server (master and workers) on a loopback port, as `make run` starts it
    (deploy/gunicorn.conf.py), with its runtime files and logs under ``workdir/name``."""

    def __init__(
        self,
        name: str,
        workdir: Path,
        *,
        workers: int = 2,
        threads: int = 4,
        drain_seconds: float = DRAIN_SECONDS,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.port = free_port()
        self.dir = workdir / name
        self.dir.mkdir()
        self.workers = workers
        self.threads = threads
        self.drain_seconds = drain_seconds
        self.extra_env = dict(env or {})
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def access_log(self) -> Path:
        return self.dir / "access.log"

    @property
    def error_log(self) -> Path:
        return self.dir / "error.log"

    @property
    def pid(self) -> int:
        """The master's pid (also the process group of the whole server)."""
        assert self.proc is not None
        return self.proc.pid

    def start(self, ready_timeout: float = 30.0) -> None:
        """Start gunicorn and wait until its /readyz answers 200."""
        env = {
            **os.environ,
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "WEB_CONCURRENCY": str(self.workers),
            "GUNICORN_THREADS": str(self.threads),
            "GUNICORN_DRAIN_SECONDS": str(self.drain_seconds),
            "PROMETHEUS_MULTIPROC_DIR": str(self.dir / "metrics"),
            "DRAIN_FILE": str(self.dir / "draining"),
            "LOG_LEVEL": "info",
            "TMPDIR": str(self.dir),  # gunicorn's run directory: nothing left in /tmp after a SIGKILL
            **self.extra_env,
        }
        with open(self.access_log, "ab") as out, open(self.error_log, "ab") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "-c", GUNICORN_CFG, "service.wsgi:app"],
                cwd=REPO, env=env, stdout=out, stderr=err, start_new_session=True,
            )
        wait_for(f"{self.name} to be ready", lambda: http_get(self.port, "/readyz")[0] == 200, ready_timeout)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def worker_pids(self) -> list[int]:
        """The master's live workers."""
        return child_pids(self.pid) if self.running() else []

    def terminate(self) -> None:
        """SIGTERM to the master: the graceful stop (drain, then finish in-flight requests)."""
        self.send_signal(signal.SIGTERM)

    def send_signal(self, sig: int) -> None:
        """A signal to the master only."""
        assert self.proc is not None
        self.proc.send_signal(sig)

    def signal_group(self, sig: int) -> None:
        """A signal to every process of the server (master, workers, their children)."""
        os.killpg(self.pid, sig)

    def wait(self, timeout: float) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout)

    def metric(self, name: str, **labels: str) -> float:
        """A metric of this server, summed over its workers, read from its /metrics."""
        status, body = http_get(self.port, "/metrics")
        assert status == 200
        want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        for line in body.decode().splitlines():
            if line.startswith(f"{name}{{{want}}} "):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    def kill(self) -> None:
        """Teardown: a second SIGTERM skips the drain; then the whole session for good.
        A stopped (SIGSTOP) server is continued first so that it can stop."""
        if self.proc is None:
            return
        if self.running():
            with suppress(ProcessLookupError):
                self.signal_group(signal.SIGCONT)
            self.proc.send_signal(signal.SIGTERM)
            time.sleep(0.2)
            self.proc.send_signal(signal.SIGTERM)
            with suppress(subprocess.TimeoutExpired):
                self.proc.wait(15)
        with suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # its own session: anything left of it
        if self.proc.poll() is None:
            self.proc.wait(5)


class Balancer:
    """HAProxy with deploy/haproxy.cfg (or ``config``), its DNS server template swapped for
    the loopback ``backends``; the public port is ``port``, the stats one ``stats_port``.
    ``env`` sets the config's variables (its limits per client address...) over its
    defaults; ``wait_up`` False starts it without waiting for the servers to be up."""

    def __init__(
        self,
        backends: Sequence[Server],
        workdir: Path,
        config: Path = HAPROXY_CFG,
        env: Mapping[str, str] | None = None,
        wait_up: bool = True,
    ) -> None:
        self.port = free_port()
        self.stats_port = free_port()
        self.log = workdir / "haproxy.log"
        servers = "".join(f"    server {b.name} 127.0.0.1:{b.port} check\n" for b in backends)
        cfg, n = re.subn(r"^\s*server-template .*\n", servers, config.read_text(), flags=re.M)
        assert n == 1, "the HAProxy config should declare its servers with one server-template line"
        self.cfg = workdir / "haproxy.cfg"
        self.cfg.write_text(cfg)
        errors = workdir / HAPROXY_ERRORS.name  # the errorfiles, where the config names them
        if not errors.exists():
            errors.symlink_to(HAPROXY_ERRORS, target_is_directory=True)
        full_env = {**os.environ, **(env or {}), "HAPROXY_BIND": f"127.0.0.1:{self.port}",
                    "HAPROXY_STATS_BIND": f"127.0.0.1:{self.stats_port}"}
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(["haproxy", "-db", "-f", str(self.cfg)], env=full_env, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        names = [b.name for b in backends]
        if wait_up:
            wait_for("HAProxy to see every server up", lambda: all(self.state(n) == "UP" for n in names), 20)
        else:
            wait_for("HAProxy to listen", lambda: http_get(self.stats_port, "/stats;csv")[0] == 200, 20)

    def _stats(self) -> list[dict[str, str]]:
        status, body = http_get(self.stats_port, "/stats;csv")
        assert status == 200
        return list(csv.DictReader(io.StringIO(body.decode().lstrip("# "))))

    def state(self, server: str) -> str:
        """The server's state in HAProxy's stats (UP, DOWN, or a transition like 'UP 1/2')."""
        return next(r["status"] for r in self._stats() if r["pxname"] == "api" and r["svname"] == server)

    def failed_checks(self, server: str) -> int:
        """Health checks of the server that failed since HAProxy started."""
        return int(next(r["chkfail"] for r in self._stats() if r["pxname"] == "api" and r["svname"] == server) or 0)

    def counters(self) -> dict[str, int]:
        """Requests retried and redispatched by HAProxy, for the record."""
        row = next(r for r in self._stats() if r["pxname"] == "api" and r["svname"] == "BACKEND")
        return {"retries": int(row["wretr"] or 0), "redispatches": int(row["wredis"] or 0)}

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@contextmanager
def cluster(
    workdir: Path,
    count: int = 2,
    *,
    workers: int = 2,
    threads: int = 4,
    drain_seconds: float = DRAIN_SECONDS,
    env: Mapping[str, str] | None = None,
) -> Iterator[tuple[list[Backend], Balancer]]:
    """``count`` gunicorn servers named api1, api2, ... (each as ``Backend`` with these
    options) behind one HAProxy; all stopped on exit."""
    backends = [
        Backend(f"api{i + 1}", workdir, workers=workers, threads=threads, drain_seconds=drain_seconds, env=env)
        for i in range(count)
    ]
    balancer = None
    try:
        for b in backends:
            b.start()
        balancer = Balancer(backends, workdir)
        yield backends, balancer
    finally:
        if balancer is not None:
            balancer.stop()
        for b in backends:
            b.kill()


# --- a server that records what reaches it -----------------------------------------------------


@dataclass
class Arrival:
    """One request as a server saw it: when its first and last bytes came, and whether the
    connection was closed on it before it was answered."""

    path: str
    first_byte: float
    whole: float
    body: bytes
    closed_unanswered: float | None = None


@dataclass
class Recorder:
    """A minimal HTTP/1.1 server on loopback: answers /readyz, answers every other request
    ``{"server": name}`` unless its path ends with one of ``hang`` (then it waits, without
    answering, until the peer closes) or with a key of ``answers`` (then it sends those
    bytes as they are, and closes). Records every request but the health checks."""

    name: str
    hang: tuple[str, ...] = ()
    answers: Mapping[str, bytes] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    arrivals: list[Arrival] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", self.port), backlog=256)
        self.stopping = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while not self.stopping:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(30)
            try:
                data = conn.recv(65536)
                first = time.monotonic()
                while b"\r\n\r\n" not in data:
                    more = conn.recv(65536)
                    if not more:
                        return
                    data += more
                head, _, body = data.partition(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1]
                length = next((int(x.split(":", 1)[1]) for x in lines[1:] if x.lower().startswith("content-length:")), 0)
                while len(body) < length:
                    more = conn.recv(65536)
                    if not more:
                        return
                    body += more
                if path == "/readyz":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
                    return
                arrival = Arrival(path, first, time.monotonic(), body)
                with self.lock:
                    self.arrivals.append(arrival)
                if path.endswith(self.hang):
                    try:
                        while conn.recv(65536):
                            pass
                    except ConnectionResetError:
                        pass
                    arrival.closed_unanswered = time.monotonic()
                    return
                answer = next((raw for suffix, raw in self.answers.items() if path.endswith(suffix)), None)
                if answer is not None:
                    conn.sendall(answer)
                    return
                payload = json.dumps({"server": self.name}).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload))
            except OSError:
                return

    def seen(self, path: str) -> list[Arrival]:
        with self.lock:
            return [a for a in self.arrivals if a.path == path]

    def stop(self) -> None:
        self.stopping = True
        self.listener.close()


# --- raw exchanges -----------------------------------------------------------------------------

# A second loopback address (all of 127.0.0.0/8 is loopback on Linux): a client connecting
# from it is another client address to HAProxy's limits per address.
OTHER_SOURCE = "127.0.0.2"


@dataclass
class RawAnswer:
    """An answer read off the socket as sent: status, headers (names lower-cased), body."""

    status: int
    headers: dict[str, str]
    body: bytes

    def problem(self) -> dict[str, Any]:
        """The body as a problem+json object (fails unless it is one)."""
        assert self.headers.get("content-type") == "application/problem+json", (self.status, self.headers, self.body[:200])
        problem = json.loads(self.body)
        assert isinstance(problem, dict) and problem["status"] == self.status, problem
        return problem


def parse_answer(data: bytes) -> RawAnswer:
    """One HTTP/1.1 answer (with a Content-Length, or up to the close)."""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        body = body[: int(headers["content-length"])]
    return RawAnswer(int(lines[0].split(" ", 2)[1]), headers, body)


def connect(port: int, timeout: float = 5.0, source: str | None = None) -> socket.socket:
    """A connection to 127.0.0.1:``port``, from loopback address ``source`` if given."""
    return socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                    source_address=(source, 0) if source else None)


def read_answer(s: socket.socket) -> RawAnswer:
    """The answer on ``s``, read until its Content-Length is in or the peer closes."""
    data = b""
    while True:
        head_end = data.find(b"\r\n\r\n")
        if head_end >= 0:
            length = re.search(rb"(?im)^content-length:\s*(\d+)", data[:head_end])
            if length and len(data) >= head_end + 4 + int(length[1]):
                break
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    if not data:
        raise ConnectionError("closed without an answer")
    return parse_answer(data)


def raw_exchange(port: int, request: bytes, timeout: float = 5.0, source: str | None = None) -> RawAnswer:
    """Send ``request`` byte for byte on a new connection and read its answer."""
    with connect(port, timeout, source) as s:
        s.sendall(request)
        return read_answer(s)
