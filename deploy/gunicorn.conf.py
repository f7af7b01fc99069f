"""gunicorn settings for `make run`, the container image and the load-balancer test.

Every value comes from an environment variable (table in the README). Sizing: one worker
per CPU (the work is CPU-bound Python, one GIL per process) with a few threads each, so a
long solve does not stall the short requests queued behind it on the same worker.

Graceful stop, in three steps (`docker stop` and Kubernetes send SIGTERM):
1. SIGTERM: the master creates ``DRAIN_FILE``; every worker's ``/readyz`` answers 503, so
   the balancer's health checks take this server out, while it still serves everything.
2. After ``GUNICORN_DRAIN_SECONDS``, the master closes its listening socket and tells the
   workers to finish their in-flight requests (at most ``GUNICORN_GRACEFUL_TIMEOUT``).
3. A second SIGTERM skips the rest of the drain; SIGINT/SIGQUIT stop at once as usual.

This file imports nothing of the app: the master stays small, and workers load the app
after the fork (and so after ``PROMETHEUS_MULTIPROC_DIR`` is set, which prometheus_client
reads once, at import).
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


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw.strip() else default
    except ValueError:
        raise RuntimeError(f"environment variable {name} must be an integer, not {raw!r}") from None


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    try:
        return float(raw) if raw.strip() else default
    except ValueError:
        raise RuntimeError(f"environment variable {name} must be a number, not {raw!r}") from None


def _cpu_count() -> int:
    """CPUs this process may run on (a container's cpuset, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


# The solver never runs longer than this, whatever SOLVER_MAX_SECONDS asks (see the solver).
SOLVER_HARD_CAP_SECONDS = 30.0  # = service.solver.settings.HARD_MAX_SECONDS (tests/ops/test_ops.py checks)
solver_budget = min(_env_float("SOLVER_MAX_SECONDS", 10.0), SOLVER_HARD_CAP_SECONDS)

bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
workers = _env_int("WEB_CONCURRENCY", _cpu_count())
worker_class = "gthread"
threads = _env_int("GUNICORN_THREADS", 4)
# A worker that does not report for `timeout` seconds is killed: it must outlast the
# longest solve, or a legitimate request ends as a 502 at the balancer.
timeout = _env_int("GUNICORN_TIMEOUT", 60)
graceful_timeout = _env_int("GUNICORN_GRACEFUL_TIMEOUT", int(SOLVER_HARD_CAP_SECONDS) + 5)
keepalive = _env_int("GUNICORN_KEEPALIVE", 5)
max_requests = _env_int("GUNICORN_MAX_REQUESTS", 10000)
max_requests_jitter = _env_int("GUNICORN_MAX_REQUESTS_JITTER", 1000)
drain_seconds = _env_float("GUNICORN_DRAIN_SECONDS", 5.0)
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
proc_name = "patience-engine"
if os.path.isdir("/dev/shm"):
    worker_tmp_dir = "/dev/shm"  # heartbeat files: never on a slow or overlay disk

if timeout <= solver_budget + 5:
    raise RuntimeError(
        f"GUNICORN_TIMEOUT={timeout} must exceed the solver's largest budget ({solver_budget:g} s) "
        "by more than 5 s, or long solves are killed mid-request"
    )

# Per-server runtime files, unless the environment names its own: the metrics of every
# worker (prometheus_client's multiprocess mode) and the drain flag that /readyz reads.
RUN_DIR = Path(tempfile.gettempdir()) / f"patience-engine-{os.getpid()}"
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", str(RUN_DIR / "metrics"))
os.environ.setdefault("DRAIN_FILE", str(RUN_DIR / "draining"))
control_socket = str(RUN_DIR / "gunicorn.ctl")  # not one per user: several servers may share a host
METRICS_DIR = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
DRAIN_FILE = Path(os.environ["DRAIN_FILE"])


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
    """Start clean: no metrics of an earlier run, not draining."""
    shutil.rmtree(METRICS_DIR, ignore_errors=True)
    METRICS_DIR.mkdir(parents=True, exist_ok=True)
    DRAIN_FILE.parent.mkdir(parents=True, exist_ok=True)
    DRAIN_FILE.unlink(missing_ok=True)


def when_ready(server: Any) -> None:
    """Make SIGTERM drain first (readiness 503) and stop after ``drain_seconds``."""
    stop_now = server.handle_term  # gunicorn's own: graceful stop of the workers
    timer: list[threading.Timer] = []

    def handle_term() -> None:
        if timer or drain_seconds <= 0:
            stop_now()  # raises StopIteration: the arbiter's graceful stop
        DRAIN_FILE.touch()
        server.log.info("SIGTERM: draining for %.1f s (/readyz answers 503), then stopping", drain_seconds)
        timer.append(threading.Timer(drain_seconds, os.kill, (os.getpid(), signal.SIGTERM)))
        timer[0].daemon = True
        timer[0].start()

    server.handle_term = handle_term


def child_exit(server: Any, worker: Any) -> None:
    """Forget a dead worker's live-only metrics (its counters stay in the sums)."""
    from prometheus_client import multiprocess  # after PROMETHEUS_MULTIPROC_DIR is set

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server: Any) -> None:
    """Leave nothing behind: the drain flag, and this server's own run directory."""
    DRAIN_FILE.unlink(missing_ok=True)
    shutil.rmtree(RUN_DIR, ignore_errors=True)
