"""Production shape on loopback: two gunicorn servers behind HAProxy, one stopped mid-load.

Runs the real deploy files (deploy/gunicorn.conf.py, and deploy/haproxy.cfg with loopback
server lines) and proves, under a bounded load of real game traffic (a deal, then a chain
of legal moves):
- every request succeeds, and every answer is the one the app gives in-process;
- on SIGTERM a server drains: HAProxy takes it out because /readyz answers 503, while the
  server is still running; then it exits cleanly;
- restarted, the server is taken back and serves traffic again;
- access logs are JSON, one line per request, with the request id and no game state;
- metrics add up across the workers of a server.

HAProxy and wrk come from Debian through deploy/install-test-deps.sh (the session fixture);
the servers are started by tests/ops/servers.py.
"""

from __future__ import annotations

import http.client
import json
import random
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from service.http import create_app
from tests.app_settings import settings_for_tests
from tests.ops.servers import (
    DRAIN_SECONDS,
    HAPROXY_CFG,
    Backend,
    Balancer,
    cluster,
    install_debian_tools,
    wait_for,
)

GAME = "penguin"

pytestmark = pytest.mark.slow

# Bounds of the load: at most MAX_RATE requests a second, and whichever of the other two
# comes first ends it (the test needs about 15 s).
MAX_RATE = 150.0
MAX_REQUESTS = 6000
MAX_LOAD_SECONDS = 60.0
CLIENT_THREADS = 6


@pytest.fixture(scope="session")
def debian_tools() -> None:
    """HAProxy and wrk, installed from Debian if missing (fails loudly if that fails)."""
    install_debian_tools()


class Pacer:
    """Spaces one client's requests: at most ``rate`` a second."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self.next = time.monotonic()

    def wait(self) -> None:
        now = time.monotonic()
        if self.next > now:
            time.sleep(self.next - now)
        self.next = max(self.next, now) + self.interval


@dataclass
class Exchange:
    """One request through the balancer and what came back."""

    path: str
    body: dict[str, Any]
    request_id: str
    status: int = 0
    echoed_id: str | None = None
    answer: Any = None


@dataclass
class Load:
    """Client threads playing games through the balancer, bounded in requests and time."""

    port: int
    stop: threading.Event = field(default_factory=threading.Event)
    exchanges: list[Exchange] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    threads: list[threading.Thread] = field(default_factory=list)
    deadline: float = 0.0

    def start(self) -> None:
        self.deadline = time.monotonic() + MAX_LOAD_SECONDS
        for i in range(CLIENT_THREADS):
            t = threading.Thread(target=self.play, args=(i,), daemon=True)
            t.start()
            self.threads.append(t)

    def count(self) -> int:
        with self.lock:
            return len(self.exchanges)

    def wait_for_more(self, n: int, timeout: float = 20.0) -> None:
        target = self.count() + n
        wait_for(f"{n} more requests", lambda: self.count() >= target or self.over(), timeout, 0.05)

    def over(self) -> bool:
        return self.stop.is_set() or time.monotonic() > self.deadline or self.count() >= MAX_REQUESTS

    def finish(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(30)

    def play(self, client: int) -> None:
        rng = random.Random(client)
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        pacer = Pacer(MAX_RATE / CLIENT_THREADS)
        n = 0
        try:
            while not self.over():
                deal = rng.randrange(1, 10**6)
                pacer.wait()
                answer = self.send(conn, f"{client}-{n}", f"/v1/games/{GAME}/deals", {"deal": deal})
                n += 1
                for _ in range(rng.randrange(5, 30)):
                    if answer is None or not answer["legal_moves"] or self.over():
                        break
                    body: dict[str, Any] = {"state": answer["state"], "move": rng.choice(answer["legal_moves"])}
                    if rng.random() < 0.3:
                        body["autoplay"] = "safe"
                    pacer.wait()
                    answer = self.send(conn, f"{client}-{n}", f"/v1/games/{GAME}/moves", body)
                    n += 1
        finally:
            conn.close()

    def send(self, conn: http.client.HTTPConnection, rid: str, path: str, body: dict[str, Any]) -> Any:
        """POST once, no retry: any error is a failure of the setup under test."""
        ex = Exchange(path, body, f"lb-{rid}")
        try:
            conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json", "X-Request-ID": ex.request_id})
            r = conn.getresponse()
            raw = r.read()
            ex.status, ex.echoed_id = r.status, r.getheader("X-Request-ID")
            ex.answer = json.loads(raw) if r.status == 200 else raw[:300]
        except (OSError, http.client.HTTPException, ValueError) as e:
            with self.lock:
                self.failures.append(f"{path} {ex.request_id}: {type(e).__name__}: {e}")
            conn.close()  # http.client reconnects on the next request
            return None
        with self.lock:
            self.exchanges.append(ex)
            if ex.status != 200:
                self.failures.append(f"{path} {ex.request_id}: HTTP {ex.status}: {ex.answer!r}")
        return ex.answer if ex.status == 200 else None


@pytest.fixture()
def two_servers(debian_tools: None, tmp_path: Path) -> Iterator[tuple[list[Backend], Balancer]]:
    with cluster(tmp_path, drain_seconds=DRAIN_SECONDS) as servers:
        yield servers


def test_haproxy_accepts_the_deploy_config(debian_tools: None) -> None:
    run = subprocess.run(["haproxy", "-c", "-f", str(HAPROXY_CFG)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_backend_stops_and_returns_under_load_without_a_failed_request(
    two_servers: tuple[list[Backend], Balancer],
) -> None:
    (api1, api2), lb = two_servers
    moves = {"method": "POST", "endpoint": "/v1/games/<game:game_id>/moves", "status": "200"}
    load = Load(lb.port)
    load.start()
    try:
        load.wait_for_more(200)
        assert api1.metric("http_requests_total", **moves) > 0 and api2.metric("http_requests_total", **moves) > 0

        # Stop api1 mid-load. It must leave the pool through its readiness (503), alive.
        api1.terminate()
        wait_for("HAProxy to take api1 out", lambda: lb.state("api1").startswith("DOWN"), DRAIN_SECONDS + 5, 0.05)
        assert api1.running(), "api1 exited before HAProxy took it out: the drain did not work"
        assert api1.wait(timeout=45) == 0
        load.wait_for_more(150)  # api2 alone

        # Start api1 again: HAProxy takes it back and sends it traffic.
        api1.start()
        wait_for("HAProxy to take api1 back", lambda: lb.state("api1") == "UP", 20, 0.05)
        load.wait_for_more(200)
        assert api1.metric("http_requests_total", **moves) > 0, "no traffic returned to the restarted api1"
    finally:
        load.finish()

    assert not load.failures, f"{len(load.failures)} failed of {load.count()}: {load.failures[:10]}"
    assert load.count() >= 650
    assert re.search(r"api/api1 is DOWN, reason: Layer7 wrong status, code: 503", lb.log.read_text()), \
        "HAProxy should take api1 out because /readyz answered 503"

    # Every answer is the one the app gives in-process, to the request that asked for it.
    oracle = create_app(settings_for_tests()).test_client()
    for ex in load.exchanges:
        assert ex.echoed_id == ex.request_id
        expected = oracle.post(ex.path, json=ex.body)
        assert expected.status_code == 200
        assert ex.answer == expected.json, f"wrong answer to {ex.request_id} {ex.path}"

    # Access logs: JSON, one line per request, with its id; never a game state.
    sent = {ex.request_id for ex in load.exchanges}
    logged: set[str] = set()
    api2_moves: list[int] = []
    for backend in (api1, api2):
        for line in backend.access_log.read_text().splitlines():
            entry = json.loads(line)
            assert entry["logger"] == "gunicorn.access"
            assert "piles" not in line and "foundation" not in line
            if entry.get("path", "").startswith("/v1/"):
                assert entry["request_id"] not in logged, "one line per request"
                logged.add(entry["request_id"])
                assert isinstance(entry["status"], int) and isinstance(entry["duration_ms"], int)
                if backend is api2 and entry["path"].endswith("/moves") and entry["status"] == 200:
                    api2_moves.append(entry["pid"])
    assert sent <= logged
    # The servers' own logs (gunicorn and app) are JSON too; api1 logged its drain.
    server_logs = {b.name: [json.loads(x) for x in (b.dir / "error.log").read_text().splitlines()] for b in (api1, api2)}
    assert all({"time", "level", "logger", "message"} <= e.keys() for log in server_logs.values() for e in log)
    assert any(e["message"].startswith("SIGTERM: draining") for e in server_logs["api1"])

    # The metrics of a server are the sum over its workers (api2 ran all along).
    assert api2.metric("http_requests_total", **moves) == len(api2_moves)
    print(f"\n{load.count()} requests, none failed; HAProxy {lb.counters()}; "
          f"api2 served {len(api2_moves)} moves in {len(set(api2_moves))} workers")
