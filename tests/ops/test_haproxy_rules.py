"""The request rules of deploy/haproxy.cfg, through the real HAProxy on loopback.

- No spelling of ``/metrics`` reaches the app's metrics through the public side: the path
  is normalized and decoded before the balancer decides.
- A request reaches a server only whole (headers and body buffered first); one that stays
  half-sent is answered 408 by HAProxy and never reaches a server. 200 half-sent bodies
  held open for 10 s keep neither server from its health checks nor /moves from answering.
- A play request (a move, legal moves) that a server does not answer within a second is
  answered by another server; a request that may search (solve, hint, any deal: the path
  decides, never the body) keeps the long timeout, which outlasts the longest search.
- A search whose client closed its connection is aborted towards the server.
- The balancer's head limits (header fields, buffer) are above the service's, so that a
  head over the service's limits gets the service's own 431 problem+json through it.

Most of these run against ``Recorder`` (tests/ops/servers.py), a minimal HTTP server that
notes when each request arrives and can hang, so that what the balancer passes on is observed directly; the
half-body and metrics tests run the real gunicorn servers (tests/ops/servers.py).
"""

from __future__ import annotations

import http.client
import json
import re
import selectors
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from gunicorn.config import Config as GunicornConfig

from service.gunicorn_worker import MAX_HEAD_BYTES
from service.http import create_app
from service.http.problems import ProblemCode
from service.settings import SOLVER_HARD_CAP_SECONDS
from service.solver.settings import longest_search_seconds
from tests.app_settings import settings_for_tests
from tests.ops.servers import (
    GUNICORN_CFG,
    HAPROXY_CFG,
    METRICS_SPELLINGS,
    REPO,
    Backend,
    Balancer,
    Recorder,
    cluster,
    connect,
    install_debian_tools,
    raw_exchange,
    wait_for,
)

pytestmark = pytest.mark.slow

MOVES = "/v1/games/penguin/moves"
SOLVE = "/v1/games/penguin/solve"
HINT = "/v1/games/penguin/hint"
DEALS = "/v1/games/penguin/deals"
LEGAL_MOVES = "/v1/games/penguin/legal-moves"
HALF_BODIES = 200
HALF_BODY_SOURCES = 4  # client addresses they come from, each under HAProxy's limit per address
HALF_BODY_SECONDS = 10.0


def haproxy_seconds(setting: str) -> float:
    """A time in deploy/haproxy.cfg: the value (with HAProxy's unit) of the first line that
    starts with ``setting``, in seconds."""
    found = re.search(rf"^\s*{re.escape(setting)}\s+(\d+)(ms|s|m)\b", HAPROXY_CFG.read_text(), re.M)
    assert found, f"no '{setting}' in {HAPROXY_CFG}"
    return int(found[1]) * {"ms": 0.001, "s": 1.0, "m": 60.0}[found[2]]


PLAY_TIMEOUT = haproxy_seconds("http-request set-timeout server")  # the backend's cut for play
SEARCH_TIMEOUT = haproxy_seconds("timeout server")  # the default, kept by the paths that may search
SLOW_REQUEST_TIMEOUT = haproxy_seconds("timeout http-request")

@pytest.fixture(scope="module")
def debian_tools() -> None:
    install_debian_tools()


def raw_get(port: int, target: str, timeout: float = 5.0) -> tuple[int, bytes]:
    """GET a request target sent byte for byte (http.client would quote or refuse some)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def is_metrics(body: bytes) -> bool:
    """Prometheus text exposition, as the app's /metrics answers."""
    return b"# HELP " in body and b"# TYPE " in body


@pytest.fixture()
def recorders(debian_tools: None, tmp_path: Path) -> Iterator[tuple[Recorder, Recorder, Balancer]]:
    """Two recorders behind HAProxy: ``slow`` hangs on /moves, /legal-moves, /solve, /hint and /deals;
    ``fast`` answers everything."""
    slow, fast = Recorder("slow", hang=("/moves", "/legal-moves", "/solve", "/hint", "/deals")), Recorder("fast")
    balancer = None
    try:
        balancer = Balancer([slow, fast], tmp_path)
        yield slow, fast, balancer
    finally:
        if balancer is not None:
            balancer.stop()
        slow.stop()
        fast.stop()


def post_head(path: str, length: int) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def read_status(s: socket.socket) -> int:
    data = b""
    while b"\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            return 0
        data += chunk
    return int(data.split(b" ", 2)[1])


# --- tests ------------------------------------------------------------------------------


def test_a_request_reaches_a_server_only_once_its_body_is_whole(recorders: tuple[Recorder, Recorder, Balancer]) -> None:
    slow, fast, lb = recorders
    # The largest body the API takes (MAX_BODY_BYTES), sent in two halves 1 s apart.
    body = b'{"pad": "' + b"x" * (65536 - 11) + b'"}'
    assert len(body) == 65536
    with socket.create_connection(("127.0.0.1", lb.port), timeout=10) as s:
        s.sendall(post_head("/v1/games/penguin/validate", len(body)) + body[:32768])
        time.sleep(1.0)
        rest_sent = time.monotonic()
        s.sendall(body[32768:])
        assert read_status(s) == 200
    (arrival,) = slow.seen("/v1/games/penguin/validate") + fast.seen("/v1/games/penguin/validate")
    assert arrival.body == body
    assert arrival.first_byte >= rest_sent, "the server got the request before its body was whole"


def test_a_half_sent_request_is_answered_408_and_never_reaches_a_server(
    recorders: tuple[Recorder, Recorder, Balancer],
) -> None:
    slow, fast, lb = recorders
    half_body = socket.create_connection(("127.0.0.1", lb.port), timeout=SLOW_REQUEST_TIMEOUT + 5)
    half_head = socket.create_connection(("127.0.0.1", lb.port), timeout=SLOW_REQUEST_TIMEOUT + 5)
    with half_body, half_head:
        start = time.monotonic()
        half_body.sendall(post_head("/v1/games/penguin/validate", 100) + b'{"state": ')
        half_head.sendall(b"GET /v1/games HTTP/1.1\r\nHost: loc")  # headers that never end
        assert read_status(half_body) == 408
        waited = time.monotonic() - start
        assert read_status(half_head) == 408
    assert SLOW_REQUEST_TIMEOUT - 0.5 < waited < SLOW_REQUEST_TIMEOUT + 2
    assert not slow.seen("/v1/games/penguin/validate") and not fast.seen("/v1/games/penguin/validate")
    assert not slow.seen("/v1/games") and not fast.seen("/v1/games")


PLAY = [(MOVES, b'{"state": {}}'), (LEGAL_MOVES, b'{"state": {}, "winnable": true}')]
SEARCHES = {
    "solve": (SOLVE, b'{"state": {}}'),
    "hint": (HINT, b'{"state": {}}'),
    "winnable-deal": (DEALS, b'{"deal": 1, "winnable": true}'),
    "winnable-deal-escaped": (DEALS, b'{"deal": 1, "winn\\u0061ble": true}'),  # winnable to the app's JSON
    "plain-deal": (DEALS, b'{"deal": 1}'),
}


def test_the_search_timeout_outlasts_the_longest_search_request() -> None:
    """A search request ends within longest_search_seconds at the hard cap (queued, then
    run); HAProxy waits longer, so it never cuts (and retries) a search that will answer."""
    assert longest_search_seconds(SOLVER_HARD_CAP_SECONDS) < SEARCH_TIMEOUT
    assert PLAY_TIMEOUT < SEARCH_TIMEOUT


@pytest.mark.parametrize(("path", "body"), PLAY, ids=["moves", "legal-moves"])
def test_a_play_request_a_server_does_not_answer_is_answered_by_another_within_about_a_second(
    recorders: tuple[Recorder, Recorder, Balancer], path: str, body: bytes,
) -> None:
    slow, _, lb = recorders
    slowest = 0.0
    for _ in range(6):  # leastconn spreads them: some go to the hanging server first
        conn = http.client.HTTPConnection("127.0.0.1", lb.port, timeout=10)
        start = time.monotonic()
        conn.request("POST", path, body, {"Content-Type": "application/json"})
        r = conn.getresponse()
        assert (r.status, json.loads(r.read())) == (200, {"server": "fast"})
        slowest = max(slowest, time.monotonic() - start)
        conn.close()
    assert slow.seen(path), "no request went to the hanging server: the test proved nothing"
    assert PLAY_TIMEOUT - 0.1 < slowest < PLAY_TIMEOUT + 0.5
    assert lb.counters()["retries"] >= len(slow.seen(path))


@pytest.mark.parametrize(("path", "body"), SEARCHES.values(), ids=SEARCHES.keys())
def test_a_search_keeps_the_long_timeout_and_is_aborted_towards_the_server_when_its_client_leaves(
    recorders: tuple[Recorder, Recorder, Balancer], path: str, body: bytes,
) -> None:
    slow, fast, lb = recorders
    # Send searches until one is on the hanging server (leastconn alternates between them).
    for sent in range(1, 7):
        s = socket.create_connection(("127.0.0.1", lb.port), timeout=10)
        s.sendall(post_head(path, len(body)) + body)
        wait_for("the search to reach a server", lambda n=sent: len(slow.seen(path) + fast.seen(path)) >= n, 2)
        if slow.seen(path):
            break
        s.close()
    (arrival,) = slow.seen(path)
    # Not cut at the play timeout: 2 s on, the server still holds it unanswered.
    time.sleep(2 * PLAY_TIMEOUT)
    assert arrival.closed_unanswered is None
    s.setblocking(False)
    with pytest.raises(BlockingIOError):
        s.recv(1)  # and the client got nothing yet
    left = time.monotonic()
    s.close()
    wait_for("HAProxy to close the server's connection", lambda: arrival.closed_unanswered is not None, 1.0, 0.02)
    assert arrival.closed_unanswered is not None and arrival.closed_unanswered - left < 1.0


# --- against the real servers -----------------------------------------------------------


@pytest.fixture(scope="module")
def servers(debian_tools: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[Backend], Balancer]]:
    with cluster(tmp_path_factory.mktemp("haproxy-rules")) as both:
        yield both


def test_no_spelling_of_metrics_reaches_the_metrics_through_the_public_side(
    servers: tuple[list[Backend], Balancer],
) -> None:
    (api1, _), lb = servers
    status, body = raw_get(api1.port, "/metrics")
    assert status == 200 and is_metrics(body), "the check below must recognize the metrics"
    leaked = []
    for target in METRICS_SPELLINGS:
        status, body = raw_get(lb.port, target)
        if is_metrics(body) or not 400 <= status < 500:
            leaked.append(f"{target} -> {status}")
    assert not leaked, f"through HAProxy's public side: {leaked}"


def haproxy_number(setting: str) -> int:
    """A number in deploy/haproxy.cfg: the value of the first line that starts with ``setting``."""
    found = re.search(rf"^\s*{re.escape(setting)}\s+(\d+)$", HAPROXY_CFG.read_text(), re.M)
    assert found, f"no '{setting}' in {HAPROXY_CFG}"
    return int(found[1])


def test_the_balancers_head_limits_are_above_the_services() -> None:
    """A head over the service's limits reaches a server (which answers its own 431
    problem+json) instead of meeting HAProxy's 400 first: more header fields, a larger
    head (the buffer, less the 1 KiB HAProxy keeps for rewrites)."""
    fields = haproxy_number("tune.http.maxhdr") - 1  # HAProxy counts the request line too
    assert "limit_request_fields" not in (REPO / GUNICORN_CFG).read_text(), "gunicorn's default is read here"
    assert fields > GunicornConfig().limit_request_fields + 1  # and one for X-Forwarded-For
    assert haproxy_number("tune.bufsize") - 1024 > MAX_HEAD_BYTES + 1024


@pytest.mark.parametrize("head", ["fields", "bytes"])
def test_a_head_over_the_services_limits_gets_its_431_problem_through_the_balancer(
    servers: tuple[list[Backend], Balancer], head: str,
) -> None:
    _, lb = servers
    over = (b"".join(b"X-F%d: a\r\n" % i for i in range(GunicornConfig().limit_request_fields + 1)) if head == "fields"
            else b"".join(b"X-F%d: %s\r\n" % (i, b"a" * 4000) for i in range(MAX_HEAD_BYTES // 4000 + 1)))
    answer = raw_exchange(lb.port, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n" + over + b"\r\n")
    assert answer.status == 431
    assert answer.problem()["code"] == ProblemCode.HEADERS_TOO_LARGE


@dataclass
class HalfBodies:
    """Keeps ``count`` connections open that each sent headers and half a body, reopening
    any the balancer closes, until stopped. ``closed`` counts the ones it closed. They come
    from ``HALF_BODY_SOURCES`` loopback addresses other than the one /moves is sent from."""

    port: int
    count: int
    closed: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def open_one(self, selector: selectors.DefaultSelector, source: str) -> None:
        s = connect(self.port, 5, source)
        s.sendall(post_head(MOVES, 2000) + b'{"state": {"format": 1, "game": "penguin", "piles": {' + b" " * 900)
        s.setblocking(False)
        selector.register(s, selectors.EVENT_READ, source)

    def run(self) -> None:
        with selectors.DefaultSelector() as selector:
            for i in range(self.count):
                self.open_one(selector, f"127.0.0.{2 + i % HALF_BODY_SOURCES}")
            while not self.stop.is_set():
                for key, _ in selector.select(timeout=0.1):
                    s = key.fileobj
                    assert isinstance(s, socket.socket)
                    selector.unregister(s)
                    s.close()  # the balancer answered (408) or closed it: open another
                    self.closed += 1
                    self.open_one(selector, key.data)
            for key in list(selector.get_map().values()):
                assert isinstance(key.fileobj, socket.socket)
                key.fileobj.close()


def test_half_sent_bodies_take_neither_server_offline(servers: tuple[list[Backend], Balancer]) -> None:
    backends, lb = servers
    names = [b.name for b in backends]
    failed_checks = {n: lb.failed_checks(n) for n in names}
    client = create_app(settings_for_tests()).test_client()
    deal = client.post("/v1/games/penguin/deals", json={"deal": 1}).json
    moves_body = json.dumps({"state": deal["state"], "move": deal["legal_moves"][0]})

    attack = HalfBodies(lb.port, HALF_BODIES)
    thread = threading.Thread(target=attack.run, daemon=True)
    thread.start()
    states: set[str] = set()
    times: list[float] = []
    try:
        end = time.monotonic() + HALF_BODY_SECONDS
        while time.monotonic() < end:
            states.update(lb.state(n) for n in names)
            conn = http.client.HTTPConnection("127.0.0.1", lb.port, timeout=5)
            start = time.monotonic()
            conn.request("POST", MOVES, moves_body, {"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            times.append(time.monotonic() - start)
            conn.close()
            assert r.status == 200
            time.sleep(0.1)
    finally:
        attack.stop.set()
        thread.join(10)
    print(f"\n{HALF_BODIES} half-sent bodies for {HALF_BODY_SECONDS:g} s: {attack.closed} closed by HAProxy; "
          f"{len(times)} /moves, slowest {max(times) * 1000:.0f} ms; server states {sorted(states)}")
    assert states == {"UP"}
    assert {n: lb.failed_checks(n) for n in names} == failed_checks
    assert max(times) < 1.0
    assert attack.closed >= HALF_BODIES, "HAProxy should cut each half-sent request after 5 s"
