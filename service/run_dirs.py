"""A gunicorn server's runtime folder, ``$TMPDIR/patience-engine-<pid>/``, and the cleanup
of the folders that killed servers left behind.

A server removes its own folder when it stops (deploy/gunicorn.conf.py's ``on_exit``); a
SIGKILLed one cannot, so each server, as it starts, removes every such folder whose pid is
no longer a running gunicorn. A folder is kept whenever its owner may be alive: a pid
that exists and runs gunicorn, or one this process may not inspect.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PREFIX = "patience-engine-"


def run_dir(parent: Path, pid: int) -> Path:
    """The runtime folder of the server whose master is ``pid``."""
    return parent / f"{PREFIX}{pid}"


def is_running_gunicorn(pid: int) -> bool:
    """True unless ``pid`` is surely not a running gunicorn (gone, a zombie, or another
    program that got the pid since)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: it may be their server
    proc = Path("/proc") / str(pid)
    try:
        if (proc / "stat").read_bytes().rsplit(b")", 1)[1].split()[0] == b"Z":
            return False  # exited, not yet reaped
        return b"gunicorn" in (proc / "cmdline").read_bytes()
    except (OSError, IndexError):
        return not proc.parent.is_dir()  # no /proc (not Linux): alive is all we know; gone: dead


def remove_stale_run_dirs(parent: Path, own_pid: int) -> list[Path]:
    """Remove the runtime folders under ``parent`` of servers no longer running; the
    folders removed."""
    removed = []
    for folder in sorted(parent.glob(PREFIX + "*")):
        pid_text = folder.name.removeprefix(PREFIX)
        if not pid_text.isdigit() or int(pid_text) == own_pid or not folder.is_dir() or folder.is_symlink():
            continue
        if is_running_gunicorn(int(pid_text)):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed
