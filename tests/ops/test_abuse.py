"""Abuse suite (issue 12): every case of the issue, replayed on loopback against `make run`'s
server and against two servers behind HAProxy (deploy/haproxy.cfg).

For each case and target it counts the answers by status and the slowest, and checks:
- hostile input gets a 4xx problem+json (or, behind HAProxy, HAProxy's own 4xx), never a
  500, never a hang: every request runs under a timeout, and no answer is a hang;
- made-up methods add no series to /metrics (each server scraped directly);
- no spelling of /metrics is served on HAProxy's public side;
- /healthz (and a play request) answers within a second while 200 slow connections are open;
- solves whose clients have gone do not hold the server; solves beyond the pool's bound
  answer 503 `solver-busy` with Retry-After at once.
A summary table (case, target, answers by status, slowest ms) is printed at the end, so
CI's log shows it whether the cases pass or not.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field

import pytest

from service.http.problems import PROBLEM_JSON
from service.settings import MAX_BODY_BYTES
from tests.ops.servers import (
    METRICS_SPELLINGS,
    OTHER_SOURCE,
    POST_ENDPOINTS,
    Backend,
    Balancer,
    cluster,
    http_get,
    install_debian_tools,
)

pytestmark = pytest.mark.slow

REQUEST_TIMEOUT = 5.0  # an answer slower than this is a hang
AT_ONCE = 1.0  # seconds: /healthz with slow connections open, a 503 solver-busy, play next to solves
SLOW_CONNECTIONS = 200
SLOW_HOLD_SECONDS = 4.0
SOLVE_GAME = "forty-thieves"
SOLVE_DEAL = 3
PLAY_GAME = "penguin"
SOLVE_SLACK = 2.0  # a solve that runs "at once" answers within its budget plus this
STOP_WITHIN = 1.5  # seconds: a search stops within 1 s of its client's hang-up, plus scraping
SEARCH_GAUGES = ("solver_searches_running", "solver_searches_queued")


# --- talking to a server ----------------------------------------------------------------------

@dataclass
class Answer:
    """One response, or why there was none (``status`` 0)."""

    status: int
    headers: dict[str, str]
    body: bytes
    ms: float
    error: str = ""  # "hang" (no whole answer within the timeout), "reset", ...

    @property
    def label(self) -> str:
        """The status with the problem's code (``400 malformed-json``), or the error."""
        if not self.status:
            return self.error
        problem = self.problem()
        return f"{self.status} {problem['code']}" if problem else str(self.status)

    def problem(self) -> dict[str, object] | None:
        """The problem+json body, if that is what this is."""
        if not self.headers.get("content-type", "").startswith(PROBLEM_JSON):
            return None
        try:
            doc = json.loads(self.body)
        except ValueError:
            return None
        return doc if isinstance(doc, dict) and doc.get("status") == self.status and "code" in doc else None


def read_answer(sock: socket.socket, started: float, deadline: float) -> Answer:
    """Read one HTTP/1.1 response from ``sock`` before ``deadline``."""
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = sock.recv(65536)
            if not chunk:
                return Answer(0, {}, data, (time.monotonic() - started) * 1e3, "closed" if not data else "cut")
            data += chunk
        head, body = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines[1:] if ":" in x)}
        if "content-length" in headers:
            want = int(headers["content-length"])
            while len(body) < want:
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = sock.recv(65536)
                if not chunk:
                    break
                body += chunk
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            while not body.endswith(b"0\r\n\r\n"):
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = sock.recv(65536)
                if not chunk:
                    break
                body += chunk
            body = dechunk(body)
        return Answer(status, headers, body, (time.monotonic() - started) * 1e3)
    except TimeoutError:
        return Answer(0, {}, data, (time.monotonic() - started) * 1e3, "hang")
    except (ConnectionResetError, BrokenPipeError):
        return Answer(0, {}, data, (time.monotonic() - started) * 1e3, "reset")


def dechunk(body: bytes) -> bytes:
    out = b""
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out, body = out + rest[:size], rest[size + 2:]
    return out


def exchange(port: int, raw: bytes, timeout: float = REQUEST_TIMEOUT) -> Answer:
    """Send ``raw`` (a whole request, however malformed) on a fresh connection; its answer."""
    started = time.monotonic()
    deadline = started + timeout
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError as e:
        return Answer(0, {}, b"", (time.monotonic() - started) * 1e3, f"connect: {type(e).__name__}")
    with sock:
        try:
            sock.sendall(raw)
        except TimeoutError:
            return Answer(0, {}, b"", (time.monotonic() - started) * 1e3, "hang")
        except (ConnectionResetError, BrokenPipeError):
            pass  # the server may answer before it has read everything: read what it said
        return read_answer(sock, started, deadline)


def request(method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    """A request's bytes, with Content-Length (unless chunked) and Connection: close."""
    fields = {"Host": "localhost", "Connection": "close", **(headers or {})}
    if "Transfer-Encoding" not in fields and (body or method in ("POST", "PUT")):
        fields["Content-Length"] = str(len(body))
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\n"
    return head.encode("latin-1") + body


def post_json(path: str, text: str | bytes, headers: dict[str, str] | None = None) -> bytes:
    body = text.encode() if isinstance(text, str) else text
    return request("POST", path, body, {"Content-Type": "application/json", **(headers or {})})


def chunked(path: str, chunks: list[bytes], size_lines: list[bytes] | None = None) -> bytes:
    """A chunked POST; ``size_lines`` replaces each chunk's size line (to lie about it)."""
    sizes = size_lines or [f"{len(c):x}".encode() for c in chunks]
    body = b"".join(s + b"\r\n" + c + b"\r\n" for s, c in zip(sizes, chunks, strict=True)) + b"0\r\n\r\n"
    return request("POST", path, body, {"Content-Type": "application/json", "Transfer-Encoding": "chunked"})


# --- targets -----------------------------------------------------------------------------------

@dataclass
class Target:
    """Where the cases are sent (``port``), and the servers behind it (scraped directly)."""

    name: str
    port: int
    backends: list[Backend]
    balancer: Balancer | None = None
    solve_state: dict[str, object] = field(default_factory=dict)
    move_body: dict[str, object] = field(default_factory=dict)

    @property
    def threads(self) -> int:
        """Request threads over every server behind the target."""
        return sum(b.workers * b.threads for b in self.backends)

    def own_4xx(self, a: Answer) -> bool:
        """HAProxy's own error page (a 4xx it answered itself)."""
        return self.balancer is not None and 400 <= a.status < 500 and b"<html><body><h1>" in a.body

    def settle(self, timeout: float = 45.0) -> float | None:
        """Wait until the servers answer play promptly (a case before may have left solves
        running); the seconds it took, None if they never did."""
        started = time.monotonic()
        while time.monotonic() < started + timeout:
            a = exchange(self.port, post_json(f"/v1/games/{PLAY_GAME}/moves", json.dumps(self.move_body)), 2.0)
            if a.status == 200 and a.ms < 300:
                return time.monotonic() - started
            time.sleep(0.5)
        return None


def cpus() -> int:
    return len(os.sched_getaffinity(0))


def prepare(target: Target) -> Target:
    """The bodies the cases need, taken from the target itself."""
    deal = exchange(target.port, post_json(f"/v1/games/{SOLVE_GAME}/deals", json.dumps({"deal": SOLVE_DEAL})))
    assert deal.status == 200, deal
    target.solve_state = json.loads(deal.body)["state"]
    play = json.loads(exchange(target.port, post_json(f"/v1/games/{PLAY_GAME}/deals", '{"deal": 1}')).body)
    target.move_body = {"state": play["state"], "move": play["legal_moves"][0]}
    return target


@pytest.fixture(scope="module", params=["server", "haproxy"])
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """`make run`'s server (its defaults: a worker per CPU, 4 threads), or two servers of 2
    workers x 4 threads behind HAProxy."""
    workdir = tmp_path_factory.mktemp(request.param)
    if request.param == "server":
        server = Backend("run", workdir, workers=cpus(), threads=4)
        try:
            server.start()
            yield prepare(Target("server", server.port, [server]))
        finally:
            server.kill()
        return
    install_debian_tools()
    with cluster(workdir, 2, workers=2, threads=4) as (backends, balancer):
        yield prepare(Target("haproxy", balancer.port, backends, balancer))


# --- the record --------------------------------------------------------------------------------

@dataclass
class Row:
    """What one case did against one target: its line in the summary table."""

    case: str
    target: str
    answers: Counter[str] = field(default_factory=Counter)
    slowest_ms: float = 0.0
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def count(self, a: Answer, prefix: str = "") -> Answer:
        self.answers[prefix + a.label] += 1
        self.slowest_ms = max(self.slowest_ms, a.ms)
        return a

    def fail(self, what: str) -> None:
        if len(self.failures) < 20:
            self.failures.append(what)

    def refused(self, a: Answer, target: Target, statuses: tuple[int, ...] = ()) -> None:
        """``a`` must be a 4xx problem+json (of one of ``statuses`` if given) or HAProxy's own 4xx."""
        self.count(a)
        if not 400 <= a.status < 500:
            self.fail(f"{a.label}: {a.body[:200]!r}")
        elif statuses and a.status not in statuses:
            self.fail(f"{a.status} where {'/'.join(map(str, statuses))} was expected: {a.body[:200]!r}")
        elif a.problem() is None and not target.own_4xx(a):
            self.fail(f"{a.status} is neither problem+json nor HAProxy's own: {a.body[:200]!r}")


ROWS: list[Row] = []


def summary_table(rows: list[Row]) -> str:
    lines = [f"{'case':28} {'target':8} {'verdict':7} {'slowest ms':>10}  answers by status"]
    for r in rows:
        answers = ", ".join(f"{k}: {v}" for k, v in sorted(r.answers.items()))
        lines.append(f"{r.case:28} {r.target:8} {'FAIL' if r.failures else 'ok':7} {r.slowest_ms:10.0f}  {answers}")
        lines.extend(f"{'':28} {'':8} note    {n}" for n in r.notes)
        lines.extend(f"{'':28} {'':8} why     {f[:160]}" for f in r.failures[:3])
    return "\n".join(lines)


@pytest.fixture(scope="module", autouse=True)
def summary(request: pytest.FixtureRequest) -> Iterator[None]:
    """Print the table of every case run, past pytest's output capture."""
    yield
    if not ROWS:
        return
    capture = request.config.pluginmanager.getplugin("capturemanager")
    text = "\n\nabuse suite (issue 12)\n" + summary_table(ROWS) + "\n"
    if capture is not None:
        with capture.global_and_fixture_disabled():
            print(text, flush=True)
    else:
        print(text, flush=True)


# --- the cases ---------------------------------------------------------------------------------

def nested_json(t: Target, row: Row) -> None:
    """JSON nested 10,000 deep on every POST endpoint: 400, not a RecursionError's 500."""
    body = '{"state": ' + "[" * 10_000 + "]" * 10_000 + "}"
    for endpoint in POST_ENDPOINTS:
        row.refused(exchange(t.port, post_json(f"/v1/games/{PLAY_GAME}/{endpoint}", body)), t, (400,))


def long_integer(t: Target, row: Row) -> None:
    """An integer of 5,000 digits on every POST endpoint: 400, not int()'s ValueError."""
    body = '{"deal": 1' + "0" * 4_999 + "}"
    for endpoint in POST_ENDPOINTS:
        row.refused(exchange(t.port, post_json(f"/v1/games/{PLAY_GAME}/{endpoint}", body)), t, (400,))


def chunk_size_not_hex(t: Target, row: Row) -> None:
    raw = chunked(f"/v1/games/{PLAY_GAME}/deals", [b'{"deal": 1}'], [b"zz"])
    row.refused(exchange(t.port, raw), t, (400,))


def chunk_size_huge(t: Target, row: Row) -> None:
    """A chunk size of 2^80 - 1: refused at once, not waited for."""
    raw = chunked(f"/v1/games/{PLAY_GAME}/deals", [b'{"deal": 1}'], [b"f" * 20])
    row.refused(exchange(t.port, raw), t, (400, 413))


def chunked_over_limit(t: Target, row: Row) -> None:
    """A chunked body over MAX_BODY_BYTES whose first MAX_BODY_BYTES are valid JSON: 413,
    not cut and played."""
    limit = MAX_BODY_BYTES.read(os.environ)
    body = b'{"deal": 1}' + b" " * (limit + 1024)
    pieces = [body[i:i + 8192] for i in range(0, len(body), 8192)]
    row.refused(exchange(t.port, chunked(f"/v1/games/{PLAY_GAME}/deals", pieces)), t, (413,))


def duplicate_keys(t: Target, row: Row) -> None:
    row.refused(exchange(t.port, post_json(f"/v1/games/{PLAY_GAME}/deals", '{"deal":-5,"deal":2}')), t, (400,))


def content_encoding(t: Target, row: Row) -> None:
    """A body marked gzip but sent plain (and any encoding but identity): 415."""
    for encoding in ("gzip", "br"):
        raw = post_json(f"/v1/games/{PLAY_GAME}/deals", '{"deal": 2}', {"Content-Encoding": encoding})
        row.refused(exchange(t.port, raw), t, (415,))


def made_up_method(i: int) -> str:
    """The i-th made-up method: upper-case letters (what gunicorn passes on to the app)."""
    letters = ""
    for _ in range(4):
        i, r = divmod(i, 26)
        letters += chr(ord("A") + r)
    return "XM" + letters


def scrape(b: Backend) -> tuple[int, int]:
    """A server's /metrics, directly: series (sample lines) and bytes."""
    status, body = http_get(b.port, "/metrics", timeout=REQUEST_TIMEOUT)
    assert status == 200
    return sum(1 for x in body.splitlines() if x and not x.startswith(b"#")), len(body)


def made_up_methods(t: Target, row: Row) -> None:
    """1,000 made-up methods: each refused, and no server's /metrics any bigger."""
    def send(methods: range) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", t.port, timeout=REQUEST_TIMEOUT)
        try:
            for i in methods:
                started = time.monotonic()
                try:
                    conn.request(made_up_method(i), "/v1/games")
                    r = conn.getresponse()
                    a = Answer(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read(),
                               (time.monotonic() - started) * 1e3)
                except TimeoutError:
                    a = Answer(0, {}, b"", (time.monotonic() - started) * 1e3, "hang")
                    conn.close()
                except (OSError, http.client.HTTPException) as e:
                    a = Answer(0, {}, b"", (time.monotonic() - started) * 1e3, type(e).__name__)
                    conn.close()
                row.refused(a, t)
        finally:
            conn.close()

    send(range(10))  # the series a refused method may add, once
    for b in t.backends:
        scrape(b)  # and the series of a scrape itself
    before = [scrape(b) for b in t.backends]
    send(range(10, 1010))
    after = [scrape(b) for b in t.backends]
    for b, (series0, bytes0), (series1, bytes1) in zip(t.backends, before, after, strict=True):
        row.notes.append(f"{b.name} /metrics: {series0} -> {series1} series, {bytes0} -> {bytes1} bytes")
        if series1 > series0 or bytes1 > bytes0 + 1024:
            row.fail(f"{b.name}'s /metrics grew: {series0} -> {series1} series, {bytes0} -> {bytes1} bytes")


def metrics_spellings(t: Target, row: Row) -> None:
    """No spelling of /metrics is served on HAProxy's public side; a server itself serves
    it (Prometheus scrapes each server directly), and only at its one path."""
    if t.balancer is None:
        a = row.count(exchange(t.port, request("GET", "/metrics")))
        if a.status != 200 or b"# TYPE" not in a.body:
            row.fail(f"the server's own /metrics: {a.label}")
        row.notes.append("the server serves /metrics directly, for Prometheus")
        return
    for path in METRICS_SPELLINGS:
        a = row.count(exchange(t.port, request("GET", path)))
        if a.status == 0 or a.status >= 500:
            row.fail(f"{path}: {a.label}")
        elif a.status == 200 or b"# TYPE" in a.body or b"# HELP" in a.body:
            row.fail(f"{path} served the metrics ({a.status})")


class SlowClients:
    """Connections that send part of a request and then wait: a third half a request line,
    a third half the headers, a third half the body. ``sources``: the loopback addresses
    they come from, in turn (the balancer limits the connections of each address)."""

    def __init__(self, port: int, count: int, path: str, sources: tuple[str | None, ...] = (None,)) -> None:
        whole = post_json(path, '{"deal": 1, "options": {}}' + " " * 200)
        head_end = whole.index(b"\r\n\r\n") + 4
        parts = (whole[:len(path) // 2 + 5], whole[:head_end // 2], whole[:head_end + (len(whole) - head_end) // 2])
        self.socks: list[socket.socket] = []
        self.refused = 0
        for i in range(count):
            try:
                source = sources[i % len(sources)]
                s = socket.create_connection(("127.0.0.1", port), timeout=REQUEST_TIMEOUT,
                                             source_address=(source, 0) if source else None)
                s.sendall(parts[i % 3])
                self.socks.append(s)
            except OSError:
                self.refused += 1

    def answers(self) -> Counter[str]:
        """What the slow connections got so far (408s, closes) or "open"."""
        seen: Counter[str] = Counter()
        for s in self.socks:
            s.setblocking(False)
            try:
                data = s.recv(4096)
            except BlockingIOError:
                seen["open"] += 1
                continue
            except OSError:
                seen["reset"] += 1
                continue
            seen[data.split(b" ", 2)[1].decode("latin-1", "replace") if data.startswith(b"HTTP/") else "closed"] += 1
        return seen

    def close(self) -> None:
        for s in self.socks:
            with suppress(OSError):
                s.close()


def slow_connections(t: Target, row: Row) -> None:
    """With 200 slow connections open, /healthz and a /moves answer within a second, and
    HAProxy keeps both servers up."""
    # Behind HAProxy they come from two other addresses, each under its limit of connections
    # per address (HAPROXY_CLIENT_CONNECTIONS_MAX), so that they are held, not refused, and
    # the probes' address is not the one they fill.
    sources = (OTHER_SOURCE, "127.0.0.3") if t.balancer is not None else (None,)
    slow = SlowClients(t.port, SLOW_CONNECTIONS, f"/v1/games/{PLAY_GAME}/deals", sources)
    try:
        row.notes.append(f"{len(slow.socks)} slow connections open ({slow.refused} refused)")
        until = time.monotonic() + SLOW_HOLD_SECONDS
        while time.monotonic() < until:
            for raw, name in ((request("GET", "/healthz"), "healthz"),
                              (post_json(f"/v1/games/{PLAY_GAME}/moves", json.dumps(t.move_body)), "moves")):
                a = row.count(exchange(t.port, raw), f"{name} ")
                if a.status != 200 or a.ms > AT_ONCE * 1e3:
                    row.fail(f"/{name} with slow connections open: {a.label} in {a.ms:.0f} ms")
            time.sleep(0.3)
        if t.balancer is not None:
            for b in t.backends:
                state = t.balancer.state(b.name)
                if not state.startswith("UP"):
                    row.fail(f"HAProxy has {b.name} {state} with slow connections open")
        for status, n in slow.answers().items():
            row.answers[f"slow {status}"] += n
            if status.isdigit() and not 400 <= int(status) < 500:
                row.fail(f"a slow connection got {status}")
    finally:
        slow.close()


def send_solves(t: Target, count: int, limits: dict[str, float] | None = None) -> list[socket.socket]:
    """``count`` solve requests (max budget unless ``limits``), each on its own open socket."""
    body = json.dumps({"state": t.solve_state, **({"limits": limits} if limits else {})})
    raw = post_json(f"/v1/games/{SOLVE_GAME}/solve", body)
    socks = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", t.port), timeout=REQUEST_TIMEOUT)
        s.sendall(raw)
        socks.append(s)
    return socks


def abandoned_solves(t: Target, row: Row) -> None:
    """Eight max-budget solves whose clients hang up at once do not hold the server: play
    keeps its latency, and a solve 1.5 s later (1 s for the searches to stop) runs at once."""
    for s in send_solves(t, 8):
        s.close()
    closed = time.monotonic()
    move = post_json(f"/v1/games/{PLAY_GAME}/moves", json.dumps(t.move_body))
    while time.monotonic() < closed + 1.5:
        a = row.count(exchange(t.port, move), "moves ")
        if a.status != 200 or a.ms > AT_ONCE * 1e3:
            row.fail(f"/moves after the hang-ups: {a.label} in {a.ms:.0f} ms")
        time.sleep(0.05)
    budget = 1.0
    body = json.dumps({"state": t.solve_state, "limits": {"max_seconds": budget}})
    a = row.count(exchange(t.port, post_json(f"/v1/games/{SOLVE_GAME}/solve", body), budget + 4), "solve ")
    if a.status != 200 or a.ms > (budget + SOLVE_SLACK) * 1e3:
        row.fail(f"a {budget:g} s solve after the hang-ups: {a.label} in {a.ms:.0f} ms")


def searches(t: Target) -> float:
    """Searches running and queued now, over every server (their /metrics, directly)."""
    total, seen = 0.0, False
    for b in t.backends:
        status, body = http_get(b.port, "/metrics", timeout=REQUEST_TIMEOUT)
        assert status == 200
        for line in body.decode().splitlines():
            name = line.split(" ", 1)[0].split("{", 1)[0]
            if name in SEARCH_GAUGES:
                total += float(line.rsplit(" ", 1)[1])
                seen = True
    if not seen:
        raise AssertionError(f"no {' or '.join(SEARCH_GAUGES)} in /metrics")
    return total


def searches_stop(t: Target, row: Row) -> None:
    """Eight max-budget solves hung up on once their searches run: the searches stop (the
    servers' gauges of searches running and queued fall to 0) within a second."""
    socks = send_solves(t, 8)
    try:
        started = time.monotonic()
        while searches(t) == 0:
            if time.monotonic() > started + REQUEST_TIMEOUT:
                row.fail("no search was running 5 s after 8 solves were sent")
                return
            time.sleep(0.05)
        row.notes.append(f"{searches(t):g} searches running or queued before the hang-up")
    finally:
        for s in socks:
            s.close()
    closed = time.monotonic()
    while (left := searches(t)) > 0:
        if time.monotonic() > closed + REQUEST_TIMEOUT:
            break
        time.sleep(0.05)
    took = time.monotonic() - closed
    row.answers["searches stopped" if not left else "searches still running"] += 1
    row.slowest_ms = took * 1e3
    row.notes.append(f"searches running or queued fell to {left:g} {took:.2f} s after the hang-up")
    if left or took > STOP_WITHIN:
        row.fail(f"{left:g} searches still running or queued {took:.2f} s after their clients hung up")


def solver_busy(t: Target, row: Row) -> None:
    """More max-budget solves than the pools hold (twice the request threads): the extra ones
    answer 503 solver-busy with Retry-After at once; the others are hung up on after 3 s."""
    count = 2 * t.threads
    answers: list[Answer] = []
    lock = threading.Lock()
    socks = send_solves(t, count)
    started = time.monotonic()

    def read(s: socket.socket) -> None:
        a = read_answer(s, started, started + 3.0)
        with lock:
            answers.append(a)

    readers = [threading.Thread(target=read, args=(s,), daemon=True) for s in socks]
    for r in readers:
        r.start()
    for r in readers:
        r.join(5.0)
    for s in socks:
        with suppress(OSError):
            s.close()
    busy = limited = 0
    for a in answers:
        if a.error == "hang":
            row.answers["running (hung up at 3 s)"] += 1
            continue
        row.count(a)
        problem = a.problem() or {}
        if a.status == 503 and problem.get("code") == "solver-busy" and a.headers.get("retry-after", "").isdigit():
            busy += 1
            if a.ms > AT_ONCE * 1e3:
                row.fail(f"a 503 solver-busy came after {a.ms:.0f} ms")
        elif (t.balancer is not None and a.status == 429 and problem.get("code") == "rate-limited"
              and a.headers.get("retry-after", "").isdigit()):
            limited += 1  # past HAPROXY_SEARCH_RATE from one address: refused by the balancer
            if a.ms > AT_ONCE * 1e3:
                row.fail(f"a 429 rate-limited came after {a.ms:.0f} ms")
        else:
            row.fail(f"{a.label} {a.headers.get('retry-after')!r}: {a.body[:200]!r}")
    row.notes.append(f"{count} solves sent, {busy} answered 503 solver-busy, {limited} 429 rate-limited")
    if busy == 0:
        row.fail(f"none of {count} max-budget solves was answered 503 solver-busy within 3 s")


CASES: dict[str, Callable[[Target, Row], None]] = {
    "nested JSON 10,000 deep": nested_json,
    "integer of 5,000 digits": long_integer,
    "chunk size zz": chunk_size_not_hex,
    "chunk size 20 x f": chunk_size_huge,
    "chunked over MAX_BODY_BYTES": chunked_over_limit,
    "duplicate keys": duplicate_keys,
    "Content-Encoding gzip, br": content_encoding,
    "1,000 made-up methods": made_up_methods,
    "/metrics spellings": metrics_spellings,
    "200 slow connections": slow_connections,
    "8 solves hung up": abandoned_solves,
    "8 searches hung up": searches_stop,
    "solves over the pool": solver_busy,
}


@pytest.mark.parametrize("case", list(CASES))
def test_abuse(target: Target, case: str) -> None:
    row = Row(case, target.name)
    waited = target.settle()
    if waited is None:
        row.notes.append("the servers were still slow to play 45 s after the case before")
    elif waited > 1:
        row.notes.append(f"waited {waited:.1f} s for the servers to settle before the case")
    try:
        CASES[case](target, row)
    except Exception as e:  # recorded in the table like any other failure
        row.fail(f"{type(e).__name__}: {e}")
    finally:
        if row.answers or row.failures:
            ROWS.append(row)
    assert not row.failures, f"{case} against {target.name}: " + "; ".join(row.failures)


def test_no_server_error_logged(target: Target) -> None:
    """After every case: no 500 (or other 5xx but a deliberate 503) in the servers' access logs."""
    target.settle()
    row = Row("5xx in access logs", target.name)
    for b in target.backends:
        for line in b.access_log.read_text().splitlines():
            with suppress(ValueError):
                status = json.loads(line).get("status")
                if isinstance(status, int) and status >= 500:
                    row.answers[str(status)] += 1
                    if status != 503:
                        row.fail(f"{b.name} logged {status}: {line[:300]}")
    ROWS.append(row)
    assert not row.failures, "; ".join(row.failures)

