"""Play latency while max-budget solves run on the same server: POST /moves p50 and p99
with 0, 4, 16 and 64 concurrent solves, side by side in one run.

Each level starts its own gunicorn with `make run`'s settings (deploy/gunicorn.conf.py,
default environment) on loopback, so the solves of one level never spill into the next.
During a level:
- K solve clients each send POST /v1/games/forty-thieves/solve for Forty Thieves deal 3
  with no limits (the server's largest budget), in a loop; a 503 is followed by a pause of
  its Retry-After (at most 2 s), as a well-behaved client would;
- one play client sends POST /v1/games/penguin/moves (positions along random playouts)
  one after another, and its latencies are the figures.
The level with no solve is the baseline: the target is a p99 with 16 solves at most twice
the baseline's, with no failed /moves request, and searches beyond the pool's bound
answered 503 at once.

The server takes its settings from the environment, as `make run` does: to measure the
solver processes on CPUs of their own (the workers on the others), run it with
``SOLVER_CPUS=1`` (say); every level, the baseline included, then runs that way.

    .venv/bin/python -m bench.solve_contention_bench [--seconds 10] [--levels 0,4,16,64] [--rounds 1]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.http_bench import bodies  # noqa: E402
from service.http import create_app  # noqa: E402
from service.settings import GUNICORN_THREADS, SOLVER_CPUS, SOLVER_PROCESSES, SOLVER_QUEUE, WEB_CONCURRENCY  # noqa: E402

PLAY_GAME = "penguin"
SOLVE_GAME = "forty-thieves"
SOLVE_DEAL = 3
TARGET_LEVEL = 16
TARGET_RATIO = 2.0
MOVES_TIMEOUT = 30.0  # a /moves request slower than this counts as an error
MAX_RETRY_PAUSE = 2.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (nearest rank) of ``values``; nan when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


class Server:
    """gunicorn as `make run` starts it, on a loopback port, in a temporary folder of its own."""

    def __init__(self, tmp: Path) -> None:
        self.port = free_port()
        env = {**os.environ, "HOST": "127.0.0.1", "PORT": str(self.port), "GUNICORN_DRAIN_SECONDS": "0",
               "TMPDIR": str(tmp)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "service.wsgi:app"],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while not self.ready():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError("gunicorn did not start")
            time.sleep(0.1)

    def ready(self) -> bool:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
            conn.request("GET", "/readyz")
            ok = conn.getresponse().status == 200
            conn.close()
            return ok
        except OSError:
            return False

    def stop(self) -> None:
        """SIGINT (gunicorn's quick stop: no drain, no wait for the solves), then SIGKILL the
        whole session if anything is left after 10 s."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


@dataclass
class Level:
    """What one level measured."""

    solvers: int
    moves_ms: list[float] = field(default_factory=list)
    moves_errors: Counter[str] = field(default_factory=Counter)
    solves: Counter[str] = field(default_factory=Counter)
    busy_ms: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def p(self, q: float) -> float:
        return percentile(self.moves_ms, q)

    def add(self, other: Level) -> None:
        """Pool another round of the same level into this one."""
        self.moves_ms += other.moves_ms
        self.moves_errors += other.moves_errors
        self.solves += other.solves
        self.busy_ms += other.busy_ms


def post(conn: http.client.HTTPConnection, path: str, payload: bytes) -> tuple[int, dict[str, str], bytes]:
    conn.request("POST", path, payload, {"Content-Type": "application/json"})
    r = conn.getresponse()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()


def play(port: int, payloads: list[bytes], level: Level, stop: threading.Event) -> None:
    """One /moves request after another until ``stop``; each latency or error into ``level``."""
    path = f"/v1/games/{PLAY_GAME}/moves"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=MOVES_TIMEOUT)
    i = 0
    while not stop.is_set():
        started = time.perf_counter()
        try:
            status, _, _ = post(conn, path, payloads[i % len(payloads)])
        except (OSError, http.client.HTTPException) as e:
            with level.lock:
                level.moves_errors[type(e).__name__] += 1
            conn.close()
            continue
        finally:
            i += 1
        elapsed = (time.perf_counter() - started) * 1e3
        with level.lock:
            if status == 200:
                level.moves_ms.append(elapsed)
            else:
                level.moves_errors[f"HTTP {status}"] += 1
    conn.close()


def play_process(port: int, payloads: list[bytes], delay: float, seconds: float, out: Connection) -> None:
    """The play client in a process of its own (forked before any solve client starts), so
    that the solve clients' threads never hold the interpreter lock it times with: after
    ``delay`` it plays for ``seconds`` and sends back its latencies and errors."""
    time.sleep(delay)
    level, stop = Level(0), threading.Event()
    player = threading.Thread(target=play, args=(port, payloads, level, stop), daemon=True)
    player.start()
    time.sleep(seconds)
    stop.set()
    player.join(MOVES_TIMEOUT + 5)
    out.send((level.moves_ms, dict(level.moves_errors)))


def solve_loop(port: int, payload: bytes, level: Level, stop: threading.Event) -> None:
    """Max-budget solves one after another until ``stop``; a 503 waits its Retry-After."""
    path = f"/v1/games/{SOLVE_GAME}/solve"
    while not stop.is_set():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        started = time.perf_counter()
        try:
            status, headers, _ = post(conn, path, payload)
        except (OSError, http.client.HTTPException) as e:
            if not stop.is_set():  # the level's end closes sockets on purpose
                with level.lock:
                    level.solves[type(e).__name__] += 1
            continue
        finally:
            conn.close()
        elapsed = (time.perf_counter() - started) * 1e3
        with level.lock:
            level.solves[str(status)] += 1
            if status == 503:
                level.busy_ms.append(elapsed)
        if status != 200:
            try:
                pause = min(float(headers.get("retry-after", "1")), MAX_RETRY_PAUSE)
            except ValueError:
                pause = 1.0
            stop.wait(pause)


def run_level(solvers: int, seconds: float, move_payloads: list[bytes], solve_payload: bytes, tmp: Path) -> Level:
    level = Level(solvers)
    server = Server(tmp)
    stop_solves = threading.Event()
    try:
        warm = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        for p in move_payloads[:20]:
            post(warm, f"/v1/games/{PLAY_GAME}/moves", p)
        warm.close()
        delay = min(1.0, seconds / 5) if solvers else 0.0  # let the solves take hold first
        results, sent = multiprocessing.get_context("fork").Pipe(duplex=False)
        player = multiprocessing.get_context("fork").Process(
            target=play_process, args=(server.port, move_payloads, delay, seconds, sent), daemon=True
        )
        player.start()  # forked before the solve clients' threads exist
        solve_threads = [threading.Thread(target=solve_loop, args=(server.port, solve_payload, level, stop_solves),
                                          daemon=True) for _ in range(solvers)]
        for t in solve_threads:
            t.start()
        if results.poll(delay + seconds + MOVES_TIMEOUT + 10):
            moves_ms, errors = results.recv()
            level.moves_ms += moves_ms
            level.moves_errors.update(errors)
        else:
            level.moves_errors["play client never reported"] += 1
        player.join(5)
        stop_solves.set()
    finally:
        server.stop()  # closes the solves' connections: their threads end with an error we ignore
    return level


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0, help="measured seconds per level")
    ap.add_argument("--levels", default="0,4,16,64", help="concurrent solves per level, comma-separated (0 first)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run every level this many times, interleaved, and pool the figures (a noisy machine)")
    ap.add_argument("--bodies", type=int, default=200, help="distinct move requests to cycle through")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    if not levels or levels[0] != 0:
        levels = [0, *[k for k in levels if k != 0]]  # the baseline comes first

    client = create_app().test_client()
    move_payloads = [json.dumps(b, separators=(",", ":")).encode() for b in bodies(client, PLAY_GAME, args.bodies)]
    state = client.post(f"/v1/games/{SOLVE_GAME}/deals", json={"deal": SOLVE_DEAL}).get_json()["state"]
    solve_payload = json.dumps({"state": state}).encode()
    server_env = ", ".join(f"{v.name}={os.environ.get(v.name) or v.documented_default}"
                           for v in (WEB_CONCURRENCY, GUNICORN_THREADS, SOLVER_PROCESSES, SOLVER_QUEUE, SOLVER_CPUS))
    print(f"cpus {os.cpu_count()}, `make run` settings ({server_env}), {args.seconds:g} s per level x {args.rounds} "
          f"round(s), one play client; solves: {SOLVE_GAME} deal {SOLVE_DEAL} at the server's largest budget; "
          f"load average before: {os.getloadavg()[0]:.2f}")

    results = [Level(k) for k in levels]
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for pooled in results:
                pooled.add(run_level(pooled.solvers, args.seconds, move_payloads, solve_payload, Path(tmp)))

    base = results[0].p(99)
    print(f"{'solves':>6} {'moves':>6} {'errors':>6} {'p50 ms':>8} {'p99 ms':>9} {'p99/base':>8}   "
          f"solves answered (503s: median / slowest ms)")
    for r in results:
        errors = sum(r.moves_errors.values())
        answered = ", ".join(f"{n} x {s}" for s, n in sorted(r.solves.items())) or "-"
        busy = (f" ({statistics.median(r.busy_ms):.0f} / {max(r.busy_ms):.0f})" if r.busy_ms else "")
        print(f"{r.solvers:6d} {len(r.moves_ms):6d} {errors:6d} {r.p(50):8.2f} {r.p(99):9.2f} "
              f"{r.p(99) / base:8.2f}   {answered}{busy}")
        if r.moves_errors:
            print(f"{'':6}   /moves errors: {dict(r.moves_errors)}")
    target = next((r for r in results if r.solvers == TARGET_LEVEL), None)
    if target is not None:
        ratio = target.p(99) / base
        errors = sum(target.moves_errors.values())
        verdict = "meets" if ratio <= TARGET_RATIO and errors == 0 else "misses"
        print(f"p99 with {TARGET_LEVEL} solves / p99 with none: {ratio:.2f}, {errors} errors "
              f"({verdict} the target: at most {TARGET_RATIO:g}x, 0 errors)")
    print(f"load average after: {os.getloadavg()[0]:.2f} (other work on the machine skews the latencies)")


if __name__ == "__main__":
    main()
