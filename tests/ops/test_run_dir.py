"""A server removes, as it starts, the runtime folders (``$TMPDIR/patience-engine-<pid>/``)
that killed servers left behind, and never a live server's (service/run_dirs.py, called
from deploy/gunicorn.conf.py's ``on_starting``)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from service.run_dirs import is_running_gunicorn, remove_stale_run_dirs, run_dir
from tests.ops.servers import stop_gracefully

REPO = Path(__file__).resolve().parents[2]


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(10)
    return child.pid


@contextmanager
def sleeper(*argv_tail: str) -> Iterator[subprocess.Popen[bytes]]:
    """A live process whose command line ends with ``argv_tail``."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", *argv_tail])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait(10)


def make_run_dir(parent: Path, pid: int) -> Path:
    folder = run_dir(parent, pid)
    (folder / "metrics").mkdir(parents=True)
    (folder / "metrics" / "counter_1.db").write_bytes(b"x")
    return folder


def test_a_dead_servers_folder_is_removed_and_a_live_ones_kept(tmp_path: Path) -> None:
    with sleeper("gunicorn: master [patience-engine]") as live_server, sleeper("not-a-server") as other_program:
        stale = make_run_dir(tmp_path, dead_pid())
        live = make_run_dir(tmp_path, live_server.pid)
        reused = make_run_dir(tmp_path, other_program.pid)  # the dead server's pid, taken by another program
        own = make_run_dir(tmp_path, os.getpid())
        unrelated = tmp_path / "patience-engine-notes"
        unrelated.mkdir()
        assert remove_stale_run_dirs(tmp_path, os.getpid()) == sorted([stale, reused])
        assert not stale.exists() and not reused.exists()
        assert live.exists() and own.exists() and unrelated.exists()


def test_a_zombie_is_not_a_running_server() -> None:
    zombie = subprocess.Popen([sys.executable, "-c", "pass", "gunicorn"])
    try:
        deadline = time.monotonic() + 10
        while Path(f"/proc/{zombie.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert not is_running_gunicorn(zombie.pid)
    finally:
        zombie.wait(10)
    assert not is_running_gunicorn(zombie.pid)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(tmpdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {**os.environ, "PORT": str(port), "TMPDIR": str(tmpdir), "WEB_CONCURRENCY": "1", "GUNICORN_DRAIN_SECONDS": "0",
           "LOG_LEVEL": "info"}
    for name in ("PROMETHEUS_MULTIPROC_DIR", "DRAIN_FILE"):
        env.pop(name, None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "service.wsgi:app"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as answer:
                if answer.status == 200:
                    return proc, port
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError("gunicorn did not start")
        time.sleep(0.1)


@pytest.mark.slow
def test_a_server_removes_what_a_sigkilled_predecessor_left(tmp_path: Path) -> None:
    killed, _ = start_server(tmp_path)
    left = run_dir(tmp_path, killed.pid)
    assert (left / "metrics").is_dir()
    os.killpg(killed.pid, signal.SIGKILL)  # master and workers: nothing runs on_exit
    killed.wait(10)
    assert left.exists()
    with sleeper("gunicorn") as live_server:
        live = make_run_dir(tmp_path, live_server.pid)
        successor, _ = start_server(tmp_path)
        try:
            assert not left.exists(), "the killed server's folder is still there"
            assert live.exists(), "a live server's folder was removed"
            assert run_dir(tmp_path, successor.pid).is_dir()
        finally:
            stop_gracefully(successor, 20)
    assert not run_dir(tmp_path, successor.pid).exists()  # a stopped server removes its own
