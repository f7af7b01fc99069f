"""Faults behind HAProxy: what a server's death or stop costs the /moves requests in flight.

Two gunicorn servers (deploy/gunicorn.conf.py, 2 workers x 4 threads each) behind
deploy/haproxy.cfg on loopback, under a steady /moves load of a few clients. One server
meets each fault in turn, and is brought back before the next:
- SIGTERM (the graceful stop: drain, then exit), then restarted;
- SIGKILL of the whole server (master and workers), then restarted;
- SIGKILL of one worker (the master starts another);
- SIGSTOP of the whole server for 10 s, then SIGCONT.
No /moves request may fail, and none may take over 2 s: HAProxy retries a request whose
connection failed or dropped, or that a server has not answered within 1 s, on the other
server. The fault table (fault, requests, failed, slowest ms, and how many requests
HAProxy retried) is printed for CI's log.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from service.http import create_app
from tests.app_settings import settings_for_tests
from tests.ops.servers import Backend, Balancer, cluster, install_debian_tools, wait_for

pytestmark = pytest.mark.slow

MOVES = "/v1/games/penguin/moves"
CLIENTS = 4
RATE_PER_CLIENT = 20.0  # requests a second
SLOWEST_ALLOWED = 2.0  # seconds
STOP_SECONDS = 10.0
CALM_SECONDS = 1.0  # load before each fault, and after the server is back


@dataclass
class Sample:
    start: float
    seconds: float
    error: str | None


@dataclass
class MovesLoad:
    """``CLIENTS`` threads POSTing one /moves request after another through the balancer,
    each on a new connection, paced; every request is kept as a Sample."""

    port: int
    body: str
    samples: list[Sample] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> None:
        for _ in range(CLIENTS):
            t = threading.Thread(target=self.client, daemon=True)
            t.start()
            self.threads.append(t)

    def finish(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(15)

    def client(self) -> None:
        interval = 1.0 / RATE_PER_CLIENT
        while not self.stop.is_set():
            start = time.monotonic()
            error = self.post()
            seconds = time.monotonic() - start
            with self.lock:
                self.samples.append(Sample(start, seconds, error))
            self.stop.wait(max(0.0, interval - seconds))

    def post(self) -> str | None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("POST", MOVES, self.body, {"Content-Type": "application/json"})
            r = conn.getresponse()
            answer = r.read()
            return None if r.status == 200 else f"HTTP {r.status}: {answer[:200]!r}"
        except (OSError, http.client.HTTPException) as e:
            return f"{type(e).__name__}: {e}"
        finally:
            conn.close()

    def between(self, start: float, end: float) -> list[Sample]:
        with self.lock:
            return [s for s in self.samples if start <= s.start < end]


@dataclass
class Row:
    fault: str
    samples: list[Sample]
    retried: int  # requests HAProxy retried or sent to the other server

    @property
    def failed(self) -> list[Sample]:
        return [s for s in self.samples if s.error is not None]

    @property
    def slowest(self) -> float:
        return max((s.seconds for s in self.samples), default=0.0)


@pytest.fixture(scope="module")
def debian_tools() -> None:
    install_debian_tools()


@pytest.fixture()
def two_servers(debian_tools: None, tmp_path: Path) -> Iterator[tuple[list[Backend], Balancer]]:
    with cluster(tmp_path, workers=2, threads=4) as servers:
        yield servers


def sigterm(server: Backend, lb: Balancer) -> None:
    server.terminate()
    assert server.wait(timeout=45) == 0
    server.start()


def sigkill_server(server: Backend, lb: Balancer) -> None:
    server.signal_group(signal.SIGKILL)
    server.wait(timeout=10)
    wait_for(f"HAProxy to take {server.name} out", lambda: lb.state(server.name).startswith("DOWN"), 10, 0.05)
    server.start()


def sigkill_worker(server: Backend, lb: Balancer) -> None:
    workers = server.worker_pids()
    assert len(workers) == server.workers
    os.kill(workers[0], signal.SIGKILL)
    wait_for("the master to replace the worker",
             lambda: len(server.worker_pids()) == server.workers and workers[0] not in server.worker_pids(), 15)
    time.sleep(CALM_SECONDS)


def sigstop(server: Backend, lb: Balancer) -> None:
    server.signal_group(signal.SIGSTOP)
    try:
        time.sleep(STOP_SECONDS)
    finally:
        server.signal_group(signal.SIGCONT)


def retries(lb: Balancer) -> int:
    """Requests HAProxy has retried or redispatched so far."""
    return sum(lb.counters().values())


FAULTS: list[tuple[str, Callable[[Backend, Balancer], None]]] = [
    ("SIGTERM a server", sigterm),
    ("SIGKILL a server", sigkill_server),
    ("SIGKILL one worker", sigkill_worker),
    (f"SIGSTOP a server {STOP_SECONDS:g} s", sigstop),
]


def test_no_moves_request_fails_or_waits_over_2_s_whatever_happens_to_a_server(
    two_servers: tuple[list[Backend], Balancer],
) -> None:
    (api1, _), lb = two_servers
    client = create_app(settings_for_tests()).test_client()
    deal = client.post("/v1/games/penguin/deals", json={"deal": 1}).json
    load = MovesLoad(lb.port, json.dumps({"state": deal["state"], "move": deal["legal_moves"][0]}))
    rows: list[Row] = []
    load.start()
    try:
        time.sleep(CALM_SECONDS)
        start, retried = time.monotonic(), retries(lb)
        time.sleep(2 * CALM_SECONDS)
        rows.append(Row("none", load.between(start, time.monotonic()), retries(lb) - retried))
        for name, fault in FAULTS:
            wait_for("both servers up", lambda: lb.state("api1") == lb.state("api2") == "UP", 20, 0.05)
            time.sleep(CALM_SECONDS)
            start, retried = time.monotonic(), retries(lb)
            fault(api1, lb)
            wait_for("api1 back in HAProxy", lambda: lb.state("api1") == "UP", 20, 0.05)
            time.sleep(CALM_SECONDS)
            rows.append(Row(name, load.between(start, time.monotonic()), retries(lb) - retried))
    finally:
        load.finish()

    table = [f"{'fault':<22} {'requests':>8} {'failed':>6} {'slowest ms':>10} {'retried':>7}"]
    table += [f"{r.fault:<22} {len(r.samples):>8} {len(r.failed):>6} {r.slowest * 1000:>10.0f} {r.retried:>7}"
              for r in rows]
    print("\n" + "\n".join(table))
    assert sum(r.retried for r in rows) > 0, "HAProxy retried nothing: no fault reached a request"
    for r in rows:
        assert r.samples, f"no /moves request during {r.fault}"
        assert not r.failed, f"{r.fault}: {len(r.failed)} failed: {[s.error for s in r.failed[:5]]}"
        assert r.slowest < SLOWEST_ALLOWED, f"{r.fault}: a /moves request took {r.slowest:.2f} s"
