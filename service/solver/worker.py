"""The solver process's side of the pool (:mod:`.pool`): receive a search, run it, send its answer.

A solver process runs :func:`serve` until its pipe closes. It ignores SIGINT (the server
decides when its solvers stop), leaves the server's session for one of its own
(:func:`leave_the_servers_group`), lowers its own priority (:func:`yield_to_play`), so that
the threads serving play keep the CPU, and keeps to the CPUs given to searches if the
server gives some (``SOLVER_CPUS``, :func:`keep_to`). Each job is ``(function, game id,
options, args)``: the game travels as its id and options and is rebuilt here through the
registry's cache, so a game's precomputed tables are built once per process, not once per
search.
"""

from __future__ import annotations

import contextlib
import os
import signal
import traceback
from collections.abc import Callable
from enum import StrEnum
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from service.engine.registry import get_game

# Play keeps the CPU: at nice 19 a search gets about 1.5% of a core that a play thread
# (nice 0) also wants, and all of an idle one.
SOLVER_NICENESS = 19

Job = tuple[Callable[..., Any], str, dict[str, Any], tuple[Any, ...]]
PING = "ping"  # answered at once: the pool's check that an idle process still lives


class Reply(StrEnum):
    """How a job ended: its value, or the trace of the error it raised."""

    DONE = "done"
    FAILED = "failed"


def run_job(job: Job) -> Any:
    """``function(game, *args)`` for the game named by id and options."""
    function, game_id, options, args = job
    return function(get_game(game_id, options), *args)


def leave_the_servers_group() -> None:
    """A session of its own, and with it, where Linux groups processes by session for
    scheduling (autogroups: processes outside any CPU cgroup, as `make run` on a plain
    host), a scheduling group of its own at the lowest weight. Otherwise the search's CPU
    time counts against the group it shares with the web workers, and a play thread that
    wakes on a busy CPU loses a sleeper's precedence over other work there. Containers and
    systemd services are scheduled by cgroup instead: there this changes nothing.

    The cost: signals sent to the server's process group (``kill -- -<pgid>``) no longer
    reach the solver processes; each still ends when its pipe closes, at once when idle,
    after its search otherwise. The group's weight is lowered only in a session of its own,
    never in the server's."""
    try:
        os.setsid()
    except OSError:  # already a session or group leader: stay
        return
    with contextlib.suppress(OSError):  # no autogroups (kernel option), or not allowed
        Path("/proc/self/autogroup").write_text(f"{SOLVER_NICENESS}\n")


def yield_to_play() -> None:
    """The lowest priority this process may take: niced, and on Linux in the idle
    scheduling class too, which runs only on a CPU nothing else wants (and is preempted
    at once when a play thread wakes up)."""
    os.nice(SOLVER_NICENESS)
    if hasattr(os, "SCHED_IDLE"):
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def keep_to(cpus: frozenset[int]) -> None:
    """Run only on ``cpus``, if any are given (``SOLVER_CPUS``: the web workers keep the
    others). Why, when the process already yields (:func:`yield_to_play`,
    :func:`leave_the_servers_group`): a play thread that wakes on a CPU a search is using
    still shares that CPU with it (in a container the search's time also counts against
    the cgroup it shares with the workers); on a CPU no search touches, it shares nothing."""
    if cpus:
        os.sched_setaffinity(0, cpus)


def serve(conn: Connection, cpus: frozenset[int] = frozenset()) -> None:
    """The solver process's loop: one job at a time until the pool closes the pipe; on
    ``cpus`` only, if any are given."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    leave_the_servers_group()
    yield_to_play()
    keep_to(cpus)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job == PING:
            conn.send(PING)
            continue
        try:
            reply: tuple[Reply, Any] = (Reply.DONE, run_job(job))
        except Exception:
            reply = (Reply.FAILED, traceback.format_exc())
        try:
            conn.send(reply)
        except OSError:  # the pool is gone (its worker exited)
            return
