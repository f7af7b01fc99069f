"""gunicorn settings for `make run`, the container image and the load-balancer test.

Every value comes from an environment variable, declared with its default and parser in
``service/settings.py`` (the README's table lists them). Sizing: one worker per CPU (the
work is CPU-bound Python, one GIL per process) with a few threads each, so a long solve
does not stall the short requests queued behind it on the same worker.

Graceful stop, in three steps (`docker stop` and Kubernetes send SIGTERM):
1. SIGTERM: the master creates the drain file; every worker's ``/readyz`` answers 503, so
   the balancer's health checks take this server out, while it still serves everything.
2. After ``GUNICORN_DRAIN_SECONDS``, the master closes its listening socket and tells the
   workers to finish their in-flight requests (at most ``GUNICORN_GRACEFUL_TIMEOUT``).
3. A second SIGTERM skips the rest of the drain; SIGINT/SIGQUIT stop at once as usual.

CPUs: with ``SOLVER_CPUS`` set, each worker runs on the CPUs the solver processes leave
(pinned in ``post_fork``, before its threads start; the fork server and its solver
processes descend from it, and each solver process moves to ``SOLVER_CPUS`` itself), and
``WEB_CONCURRENCY`` defaults to the count of those CPUs.

Of the app, the master imports ``service.settings`` (with the solver's settings class)
and the worker class, never Flask or prometheus_client. It reads the app's settings too,
so that a bad value stops the start at once rather than every worker at boot, and hands
the worker its request bounds (``post_fork``). Workers load the app after the
fork, and so after ``PROMETHEUS_MULTIPROC_DIR`` is set, which prometheus_client reads
once, at import.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path
from typing import Any

from pythonjsonlogger.json import JsonFormatter

from service.gunicorn_worker import WholeRequestWorker, worker_refusal
from service.run_dirs import remove_stale_run_dirs, run_dir
from service.settings import (
    DRAIN_FILE,
    PROMETHEUS_MULTIPROC_DIR,
    SOLVER_CPUS,
    Variable,
    check_searches_leave_threads,
    read_gunicorn_settings,
    read_settings,
)
from service.solver.settings import cpus_left_for_play


def _available_cpus() -> frozenset[int] | None:
    """CPUs this process may run on (a container's cpuset, not the host's count); None
    where the system does not say (not Linux)."""
    try:
        return frozenset(os.sched_getaffinity(0))
    except AttributeError:
        return None


def _play_cpus(solver_cpus: frozenset[int], available: frozenset[int] | None) -> frozenset[int] | None:
    """The CPUs the workers are pinned to: those ``SOLVER_CPUS`` leaves (None: not pinned,
    when it is unset). A value this server cannot honour stops the start."""
    if not solver_cpus:
        return None
    if available is None:
        raise RuntimeError(f"{SOLVER_CPUS.name} needs Linux (CPU affinity); leave it unset here")
    try:
        return cpus_left_for_play(solver_cpus, available)
    except ValueError as error:
        raise RuntimeError(f"{SOLVER_CPUS.name} names CPUs {sorted(solver_cpus)}: {error}") from None


server_settings = read_gunicorn_settings()
app_settings = read_settings()
solver_budget = app_settings.solver.max_seconds  # never above the solver's hard cap
available_cpus = _available_cpus()
play_cpus = _play_cpus(app_settings.solver.cpus, available_cpus)

bind = f"{server_settings.host}:{server_settings.port}"
# One worker per CPU the workers may use (those SOLVER_CPUS leaves, if set).
workers = server_settings.workers or len(play_cpus or available_cpus or ()) or os.cpu_count() or 1
# gthread's threads, but a thread gets a connection only once its request is whole (read in
# the worker's main loop, bounded by MAX_BODY_BYTES and REQUEST_READ_SECONDS): slow or
# half-sent requests cost a socket and a small buffer, never a thread. It takes its bounds
# from post_fork below. It runs on the gunicorn versions it was checked on only
# (service.gunicorn_worker.WORKER_GUNICORN); on any other this file falls back to
# gunicorn's own gthread, with a warning at start (when_ready), rather than refuse: the
# deployment's balancer reads each request whole before gunicorn sees it (deploy/haproxy.cfg,
# option http-buffer-request), which is what the worker does, so a gunicorn security
# release is taken the day it ships. Naming the worker on the command line
# (-k service.gunicorn_worker.WholeRequestWorker) makes an unchecked gunicorn refuse instead.
WORKER_REFUSAL = worker_refusal()
worker_class = "service.gunicorn_worker.WholeRequestWorker" if WORKER_REFUSAL is None else "gthread"
threads = server_settings.threads
worker_connections = server_settings.worker_connections
# A worker that does not report for `timeout` seconds is killed: it must outlast the
# longest solve, or a legitimate request ends as a 502 at the balancer.
timeout = server_settings.timeout
graceful_timeout = server_settings.graceful_timeout
keepalive = server_settings.keepalive
max_requests = server_settings.max_requests
max_requests_jitter = server_settings.max_requests_jitter
drain_seconds = server_settings.drain_seconds
loglevel = server_settings.log_level
proc_name = "patience-engine"
if os.path.isdir("/dev/shm"):
    worker_tmp_dir = "/dev/shm"  # heartbeat files: never on a slow or overlay disk

check_searches_leave_threads(app_settings.solver, threads)
if timeout <= solver_budget + 5:
    raise RuntimeError(
        f"GUNICORN_TIMEOUT={timeout} must exceed the solver's largest budget ({solver_budget:g} s) "
        "by more than 5 s, or long solves are killed mid-request"
    )


def _runtime_path(variable: Variable[Path | None], default: Path) -> Path:
    """The path ``variable`` names, or ``default``, which is then put in the environment
    for the workers (and prometheus_client) to read."""
    named = variable.read(os.environ)
    if named is not None:
        return named
    os.environ[variable.name] = str(default)
    return default


# Per-server runtime files, unless the environment names its own: the metrics of every
# worker (prometheus_client's multiprocess mode) and the drain flag that /readyz reads.
RUN_DIR = run_dir(Path(tempfile.gettempdir()), os.getpid())
METRICS_DIR = _runtime_path(PROMETHEUS_MULTIPROC_DIR, RUN_DIR / "metrics")
DRAIN_PATH = _runtime_path(DRAIN_FILE, RUN_DIR / "draining")
control_socket = str(RUN_DIR / "gunicorn.ctl")  # not one per user: several servers may share a host


class AccessJsonFormatter(JsonFormatter):
    """gunicorn's access line as JSON fields, from the atoms it logs with (no bodies)."""

    FIELDS = {
        "request_id": "{x-request-id}o",
        "method": "m",
        "path": "U",
        "query": "q",
        "status": "s",
        "bytes": "B",
        "duration_ms": "M",
        "remote_addr": "h",
        "user_agent": "a",
    }

    def add_fields(self, log_record: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]) -> None:
        super().add_fields(log_record, record, message_dict)
        atoms = record.args
        if isinstance(atoms, dict):
            for field, atom in self.FIELDS.items():
                value = atoms.get(atom)
                if value not in (None, "-", ""):
                    log_record[field] = int(value) if field == "status" and str(value).isdigit() else value


JSON_FIELDS = "%(levelname)s %(name)s %(process)d %(message)s"
RENAME = {"levelname": "level", "name": "logger", "process": "pid"}
access_log_format = "%(m)s %(U)s %(s)s"
logconfig_dict: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": JsonFormatter, "fmt": JSON_FIELDS, "rename_fields": RENAME, "timestamp": "time"},
        "access": {"()": AccessJsonFormatter, "fmt": JSON_FIELDS, "rename_fields": RENAME, "timestamp": "time"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"},
        "access": {"class": "logging.StreamHandler", "formatter": "access", "stream": "ext://sys.stdout"},
    },
    "root": {"level": loglevel.upper(), "handlers": ["console"]},
    "loggers": {
        "gunicorn.error": {"level": loglevel.upper(), "handlers": ["console"], "propagate": False},
        "gunicorn.access": {"level": "INFO", "handlers": ["access"], "propagate": False},
    },
}


def on_starting(server: Any) -> None:
    """Start clean: no metrics of an earlier run, not draining, and no runtime folder left
    by a killed server (one whose pid no longer runs gunicorn)."""
    for folder in remove_stale_run_dirs(RUN_DIR.parent, os.getpid()):
        server.log.info("removed %s, left by a server that no longer runs", folder)
    shutil.rmtree(METRICS_DIR, ignore_errors=True)
    METRICS_DIR.mkdir(parents=True, exist_ok=True)
    DRAIN_PATH.parent.mkdir(parents=True, exist_ok=True)
    DRAIN_PATH.unlink(missing_ok=True)


def when_ready(server: Any) -> None:
    """Make SIGTERM drain first (readiness 503) and stop after ``drain_seconds``; say
    once, loudly, when gthread serves because the service's worker refuses this gunicorn
    (a worker that refuses never gets here: gunicorn stops at its check_config)."""
    if WORKER_REFUSAL is not None:
        server.log.warning(
            "%s This server chose gthread instead (deploy/gunicorn.conf.py): a slow or half-sent request holds "
            "one of its threads unless the balancer reads each request whole first.", WORKER_REFUSAL)
    stop_now = server.handle_term  # gunicorn's own: graceful stop of the workers
    timer: list[threading.Timer] = []

    def handle_term() -> None:
        if timer or drain_seconds <= 0:
            stop_now()  # raises StopIteration: the arbiter's graceful stop
        DRAIN_PATH.touch()
        server.log.info("SIGTERM: draining for %.1f s (/readyz answers 503), then stopping", drain_seconds)
        timer.append(threading.Timer(drain_seconds, os.kill, (os.getpid(), signal.SIGTERM)))
        timer[0].daemon = True
        timer[0].start()

    server.handle_term = handle_term


def post_fork(server: Any, worker: Any) -> None:
    """Give the worker the request bounds read here, once (it reads no environment itself),
    and keep it to the CPUs the solver processes leave, if ``SOLVER_CPUS`` is set."""
    if play_cpus:
        os.sched_setaffinity(0, play_cpus)
    if isinstance(worker, WholeRequestWorker):
        worker.configure(
            max_body_bytes=app_settings.http.max_body_bytes, read_seconds=server_settings.request_read_seconds
        )


def child_exit(server: Any, worker: Any) -> None:
    """Forget a dead worker's live-only metrics (its counters stay in the sums)."""
    from prometheus_client import multiprocess  # after PROMETHEUS_MULTIPROC_DIR is set

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server: Any) -> None:
    """Leave nothing behind: the drain flag, and this server's own run directory."""
    DRAIN_PATH.unlink(missing_ok=True)
    shutil.rmtree(RUN_DIR, ignore_errors=True)
