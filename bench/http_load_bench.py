"""Throughput and latency of POST /v1/games/penguin/moves through gunicorn, against a baseline.

Both servers run with the production settings (deploy/gunicorn.conf.py, same environment);
wrk, in its own process, sends them the same move requests (positions along random
playouts) on loopback. The baseline is a trivial Flask endpoint (``trivial_app`` of
bench/http_bench.py: a bare Flask app with one POST route that answers {"ok": true}
without reading the body, so no hook, no schema, no metrics), so the ratio says what our
hooks (request id, metrics, CORS, the strict body read), parsing, validation, engine and
serialization cost on top of gunicorn and Flask. A third server, ``hooks`` (``hooks_app``:
the service's app with one more route that answers {"ok": true}), gets the same requests:
what every request of the service pays before its view runs, so that the moves figure
splits into the hooks' share and the view's.
Rounds alternate between the servers; the figures are the medians over rounds.

Each round also says whether its figures can be trusted: how wrk's connections spread over
the workers (counted from /proc halfway through) and the busiest worker's share of the
workers' CPU, flagged "unbalanced" when that share is nearer all of it than a fair part
(one worker then serves on one core what two would share), and the CPU that processes
other than the server and wrk used meanwhile (with the hypervisor's steal), flagged "busy"
above ``BUSY_CORES``: either one halves a round's rate and raises its CPU per request. The
ratios are printed over every round and over the clean ones (neither flag). A round in
which gunicorn replaced a worker (``GUNICORN_MAX_REQUESTS``, 10,000 requests a worker with
jitter, is reached within a few rounds at these rates) is flagged "recycled" instead of
judged for balance: the old worker's CPU then counts only in the server's total (the
master's reaped children), and the new worker's start-up (importing the app) is part of
the round's CPU, as it is part of a production server's.

    .venv/bin/python bench/http_load_bench.py [--seconds 10] [--rounds 3] [--connections 16]
    .venv/bin/python bench/http_load_bench.py --servers moves,trivial   # without the hooks server
    .venv/bin/python bench/http_load_bench.py --profile   # where a moves request spends its time

Needs wrk (deploy/install-test-deps.sh installs it from Debian).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from werkzeug.test import EnvironBuilder

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.http_bench import HOOKS_PATH, bodies, trivial_app  # noqa: E402
from service.http import create_app  # noqa: E402
from tests.ops.servers import connections_by_worker  # noqa: E402

GAME = "penguin"
MOVES_PATH = f"/v1/games/{GAME}/moves"
TARGET_RATIO = 0.60  # moves / trivial requests per second, as measured (swings with the machine's load)
CPU_TARGET_RATIO = 0.85  # moves / trivial requests per server CPU-second (issue 14)
BUSY_CORES = 0.25  # a round during which other processes used more CPU than this is flagged
SERVERS = {  # name: (gunicorn's app, the path wrk posts to)
    "moves": ("service.wsgi:app", MOVES_PATH),
    "hooks": ("bench.http_bench:hooks_app()", HOOKS_PATH),
    "trivial": ("bench.http_bench:trivial_app()", "/echo"),
}

# wrk script: cycle through the request bodies; report the summary as one JSON line.
LUA = """
local bodies = {%(bodies)s}
local i = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  i = i %% #bodies + 1
  return wrk.format(nil, nil, nil, bodies[i])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK {"requests": %%d, "seconds": %%.3f, "p50_us": %%d, "p99_us": %%d, "errors": %%d, "non2xx": %%d}\\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status))
end
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """gunicorn with deploy/gunicorn.conf.py serving ``app`` on a loopback port."""

    def __init__(self, app: str, path: str, env: dict[str, str]) -> None:
        self.app, self.path, self.port = app, path, free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", app],
            cwd=REPO, env={**os.environ, **env, "HOST": "127.0.0.1", "PORT": str(self.port)},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=1)
                break
            except urllib.error.HTTPError:
                break  # any HTTP answer: the server is up
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"gunicorn did not start for {app}") from None
                time.sleep(0.1)

    def cpu_seconds(self) -> float:
        """CPU time used so far by the master and its workers (live ones and reaped ones)."""
        def times(pid: int) -> list[float]:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            return [int(f) / os.sysconf("SC_CLK_TCK") for f in fields[11:15]]  # utime stime cutime cstime

        pid = self.proc.pid
        total = sum(times(pid))
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            with contextlib.suppress(FileNotFoundError):  # exited meanwhile: in cutime from now on
                total += sum(times(int(child))[:2])
        return total

    def worker_connections(self) -> dict[int, int]:
        """Connections each live worker holds now, by pid."""
        return connections_by_worker(self.proc.pid, self.port)

    def worker_cpu(self) -> dict[int, float]:
        """CPU time used so far by each live worker, by pid."""
        pid = self.proc.pid
        out: dict[int, float] = {}
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            with contextlib.suppress(FileNotFoundError):
                fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
                out[int(child)] = sum(int(f) for f in fields[11:13]) / os.sysconf("SC_CLK_TCK")
        return out

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)  # graceful; GUNICORN_DRAIN_SECONDS=0 below
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)  # its own session: master and workers
            self.proc.wait()


def wrk(url: str, script: Path, seconds: int, connections: int,
        halfway: Callable[[], Any] | None = None) -> dict[str, Any]:
    """wrk's summary of a run; with ``halfway``, what it answers halfway through the run
    (under "halfway"), and wrk's own CPU seconds (under "wrk_cpu")."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "-s", str(script), url]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as run:
        seen = None
        if halfway is not None:
            time.sleep(seconds / 2)
            seen = halfway()
        stdout, stderr = run.communicate(timeout=seconds + 60)
    if run.returncode:
        raise subprocess.CalledProcessError(run.returncode, command, stdout, stderr)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next(x for x in stdout.splitlines() if x.startswith("WRK "))
    out: dict[str, Any] = json.loads(line[4:])
    if out["errors"] or out["non2xx"]:
        raise RuntimeError(f"wrk saw failures against {url}: {out}")
    out["rps"] = out["requests"] / out["seconds"]
    out["halfway"] = seen
    out["wrk_cpu"] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return out


def machine_cpu() -> tuple[float, float]:
    """CPU seconds the whole machine's processes have used so far, and those the hypervisor
    stole. Interrupt time is left out: loopback traffic's, the server's own, counts there."""
    user, nice, system, _idle, _iowait, _irq, _softirq, steal = (
        int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9])
    tick = os.sysconf("SC_CLK_TCK")
    return (user + nice + system) / tick, steal / tick


def measure(server: Server, script: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One measured wrk run against a warmed-up ``server``: wrk's figures, the server's CPU
    per request, and what says whether the round can be trusted (see the module's docstring)."""
    wrk(server.url, script, args.warmup, args.connections)
    cpu, per_worker, (busy, steal) = server.cpu_seconds(), server.worker_cpu(), machine_cpu()
    r = wrk(server.url, script, args.seconds, args.connections, halfway=server.worker_connections)
    server_cpu = server.cpu_seconds() - cpu
    busy_after, steal_after = machine_cpu()
    r["cpu_ms"] = server_cpu / r["requests"] * 1e3
    per_worker_after = server.worker_cpu()
    used = [t - per_worker.get(w, 0.0) for w, t in per_worker_after.items()]
    r["busiest"] = max(used) / sum(used) if sum(used) > 0 else 1.0
    r["connections"] = sorted(r["halfway"].values(), reverse=True)
    fair = 1 / args.workers
    r["recycled"] = per_worker.keys() != per_worker_after.keys()
    r["unbalanced"] = args.workers > 1 and not r["recycled"] and r["busiest"] > (1 + fair) / 2
    r["other_cores"] = max(busy_after - busy - server_cpu - r["wrk_cpu"], 0.0) / r["seconds"]
    r["steal_cores"] = (steal_after - steal) / r["seconds"]
    r["busy"] = r["other_cores"] + r["steal_cores"] > BUSY_CORES
    return r


def flags(r: dict[str, Any]) -> str:
    return " ".join(flag for flag in ("recycled", "unbalanced", "busy") if r[flag]) or "ok"


def move_bodies(count: int) -> list[str]:
    client = create_app().test_client()
    return [json.dumps(b, separators=(",", ":")) for b in bodies(client, GAME, count)]


def lua_script(payloads: list[str], directory: Path) -> Path:
    for p in payloads:
        assert "]==]" not in p
    script = directory / "moves.lua"
    script.write_text(LUA % {"bodies": ",\n".join(f"[==[{p}]==]" for p in payloads)})
    return script


def benchmark(args: argparse.Namespace) -> None:
    if shutil.which("wrk") is None:
        subprocess.run(["bash", str(REPO / "deploy" / "install-test-deps.sh")], check=True)
    env = {"WEB_CONCURRENCY": str(args.workers), "GUNICORN_THREADS": str(args.threads), "GUNICORN_DRAIN_SECONDS": "0"}
    servers = {name: where for name, where in SERVERS.items() if name in args.servers}
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in servers}
    with tempfile.TemporaryDirectory() as tmp:
        script = lua_script(move_bodies(args.bodies), Path(tmp))
        print(f"cpus {os.cpu_count()}, gunicorn workers {args.workers} x threads {args.threads}, "
              f"wrk 1 thread {args.connections} connections, {args.seconds} s x {args.rounds} rounds, "
              f"{args.bodies} distinct move requests of ~{script.stat().st_size // args.bodies} bytes; "
              f"load average before: {os.getloadavg()[0]:.2f}")
        for round_no in range(args.rounds):
            for name, (app, path) in servers.items():
                server = Server(app, path, env)
                try:
                    r = measure(server, script, args)
                finally:
                    server.stop()
                results[name].append(r)
                print(f"  round {round_no + 1} {name:8} {r['rps']:8.1f} req/s  p50 {r['p50_us'] / 1e3:7.2f} ms  "
                      f"p99 {r['p99_us'] / 1e3:7.2f} ms  server CPU {r['cpu_ms']:.3f} ms/request  "
                      f"({r['requests']} requests; busiest worker {r['busiest']:.0%} of the workers' CPU, "
                      f"connections {'+'.join(map(str, r['connections']))}; other processes "
                      f"{r['other_cores']:.2f} cores, steal {r['steal_cores']:.2f}: {flags(r)})")
    summary = {
        name: {k: statistics.median(r[k] for r in rs) for k in ("rps", "p50_us", "p99_us", "cpu_ms")}
        for name, rs in results.items()
    }
    clean = {name: [not r["unbalanced"] and not r["busy"] for r in rs] for name, rs in results.items()}
    for name, rs in results.items():
        shares = ", ".join(f"{r['busiest']:.0%}" for r in rs)
        print(f"{name}: {sum(clean[name])} of {len(rs)} rounds clean; the busiest worker's CPU share {shares}")
    print(f"{'endpoint':10} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'CPU ms/req':>11}   (medians)")
    for name, s in summary.items():
        print(f"{name:10} {s['rps']:9.1f} {s['p50_us'] / 1e3:8.2f} {s['p99_us'] / 1e3:8.2f} {s['cpu_ms']:11.3f}")
    ratio = summary["moves"]["rps"] / summary["trivial"]["rps"]
    cpu_ratio = summary["trivial"]["cpu_ms"] / summary["moves"]["cpu_ms"]
    verdict = "meets" if ratio >= TARGET_RATIO else "misses"
    print(f"moves / trivial throughput: {ratio:.2f} ({verdict} the {TARGET_RATIO:.0%} target)")
    cpu_verdict = "meets" if cpu_ratio >= CPU_TARGET_RATIO else "misses"
    print(f"moves / trivial requests per server CPU-second: {cpu_ratio:.2f} ({cpu_verdict} the "
          f"{CPU_TARGET_RATIO:.2f} target; what the throughput ratio tends to when the servers have the CPUs to themselves)")
    paired = [t["cpu_ms"] / m["cpu_ms"] for t, m in zip(results["trivial"], results["moves"], strict=True)]
    print(f"  the same ratio round by round (each round's servers run back to back): "
          f"{', '.join(f'{r:.2f}' for r in paired)}; median {statistics.median(paired):.2f}")
    clean_pairs = [r for r, t, m in zip(paired, clean["trivial"], clean["moves"], strict=True) if t and m]
    clean_text = (f"{', '.join(f'{r:.2f}' for r in clean_pairs)}; median {statistics.median(clean_pairs):.2f}"
                  if clean_pairs else "none")
    print(f"  over the rounds in which both ran clean: {clean_text}")
    if "hooks" in summary:
        hooks_ratio = summary["trivial"]["cpu_ms"] / summary["hooks"]["cpu_ms"]
        print(f"hooks / trivial requests per server CPU-second: {hooks_ratio:.2f} (what every request of the "
              "service pays before its view: request id, metrics, CORS, the strict body read and parse)")
    print(f"load average after: {os.getloadavg()[0]:.2f} (other work on the machine skews req/s and latency)")


AREAS = (  # (area, path fragments of the code that counts for it), first match wins
    ("engine (rules)", ("/service/engine/",)),
    ("wire format (states and moves to and from JSON)", ("/service/http/wire.py",)),
    ("our HTTP layer (views, hooks, errors)", ("/service/http/",)),
    ("request/response schemas (marshmallow, webargs, flask-smorest)", ("/marshmallow/", "/webargs/", "/flask_smorest/")),
    ("Flask, Werkzeug", ("/flask/", "/werkzeug/")),
    ("JSON encoding/decoding", ("/json/",)),
    ("metrics (prometheus_client)", ("/prometheus_client/",)),
    ("logging", ("/logging/",)),
)


def wsgi_requests(path: str, payloads: list[str]) -> list[dict[str, Any]]:
    """Ready-made WSGI environs: the app is called directly, no HTTP and no test client."""
    return [EnvironBuilder(path=path, method="POST", data=p, content_type="application/json").get_environ()
            for p in payloads]


def serve_all(app: Any, environs: list[dict[str, Any]]) -> float:
    """Seconds per request of ``app`` over ``environs`` (each one is used up)."""
    def start_response(status: str, headers: Any, exc_info: Any = None) -> None:
        assert status.startswith("200"), status

    start = time.perf_counter()
    for environ in environs:
        for _ in app(environ, start_response):
            pass
    return (time.perf_counter() - start) / len(environs)


def profile(args: argparse.Namespace) -> None:
    """Where a moves request spends the server's time: the app called in-process."""
    app, trivial = create_app(), trivial_app()
    payloads = move_bodies(args.bodies)
    serve_all(app, wsgi_requests(MOVES_PATH, payloads))  # warm up
    moves_ms = serve_all(app, wsgi_requests(MOVES_PATH, payloads)) * 1e3
    trivial_ms = serve_all(trivial, wsgi_requests("/echo", payloads)) * 1e3
    print(f"app alone (WSGI call, no HTTP): moves {moves_ms:.3f} ms/request, trivial {trivial_ms:.3f} ms/request")

    environs = wsgi_requests(MOVES_PATH, payloads)
    prof = cProfile.Profile()
    prof.enable()
    serve_all(app, environs)
    prof.disable()
    stats = pstats.Stats(prof)
    by_area: dict[str, float] = {}
    for (filename, _, _), (_, _, own, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        area = next((name for name, parts in AREAS if any(p in filename for p in parts)), "other (stdlib, builtins)")
        by_area[area] = by_area.get(area, 0.0) + own
    total = sum(by_area.values())
    print(f"moves under the profiler: {total / len(payloads) * 1e3:.2f} ms/request; own time by area:")
    for area, seconds in sorted(by_area.items(), key=lambda kv: -kv[1]):
        print(f"  {seconds / total:6.1%}  {area}")
    if args.verbose:
        stats.sort_stats("tottime").print_stats(25)


def server_names(text: str) -> list[str]:
    names = text.split(",")
    if not {"moves", "trivial"} <= set(names) or not set(names) <= set(SERVERS):
        raise argparse.ArgumentTypeError("needs moves and trivial, and hooks if wanted, comma-separated")
    return names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=10, help="measured seconds per server and round")
    ap.add_argument("--warmup", type=int, default=2, help="unmeasured seconds before each measure")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="WEB_CONCURRENCY (default: CPUs)")
    ap.add_argument("--threads", type=int, default=4, help="GUNICORN_THREADS")
    ap.add_argument("--bodies", type=int, default=200, help="distinct move requests to cycle through")
    ap.add_argument("--servers", type=server_names, default=list(SERVERS),
                    help="the servers to run, comma-separated: moves and trivial, and hooks (the default: all)")
    ap.add_argument("--profile", action="store_true", help="profile in-process instead of benchmarking")
    ap.add_argument("--verbose", action="store_true", help="with --profile: the costliest functions too")
    args = ap.parse_args()
    profile(args) if args.profile else benchmark(args)


if __name__ == "__main__":
    main()
