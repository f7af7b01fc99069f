"""The solver process's side of the pool (:mod:`.pool`): receive a search, run it, send its answer.

A solver process runs :func:`serve` until its pipe closes. It ignores SIGINT (the server
decides when its solvers stop), leaves the server's session for one of its own
(:func:`leave_the_servers_group`), lowers its own priority moderately (:func:`yield_to_play`),
so that the threads serving play come first but a search still gets a guaranteed share of a
busy CPU, and keeps to the CPUs given to searches if the server gives some (``SOLVER_CPUS``,
:func:`keep_to`: then the share is whole CPUs). Each job is ``(function, game id, options,
args, cap)``: the game travels as its id and options and is rebuilt here through the
registry's cache, so a game's precomputed tables are built once per process, not once per
search; ``cap`` is the search's wall-clock safety cap in seconds
(:func:`~.search.wall_clock_cap`): a search still running then answers
:attr:`Reply.OVERRUN`, never a result cut by the clock.
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

from .search import SearchOverrun, wall_clock_cap

# Play comes first, and a search still gets its share of a busy CPU: at nice 2 (weight 655
# against a nice-0 thread's 1024, the kernel's sched_prio_to_weight) a search gets about 40%
# of a CPU that one play thread also wants, and all of an idle one. Where Linux groups
# processes by session (autogroups: `make run` on a plain host), the search's session is a
# group of its own at this niceness, and that share holds against the whole server's group,
# however many threads it runs. Not the idle class (SCHED_IDLE) nor nice 19: those left a
# search about 3% of a busy CPU, too little to finish within its budget and grace; nice 5
# leaves 25%, too little for a 10 s budget (bench/positions-budget.md has the measurements).
SOLVER_NICENESS = 2

Job = tuple[Callable[..., Any], str, dict[str, Any], tuple[Any, ...], float]
PING = "ping"  # answered at once: the pool's check that an idle process still lives


class Reply(StrEnum):
    """How a job ended: its value, the trace of the error it raised, or the text of its
    overrun (still running at its wall-clock safety cap: it did not get its share of the CPU)."""

    DONE = "done"
    FAILED = "failed"
    OVERRUN = "overrun"


def run_job(job: Job) -> Any:
    """``function(game, *args)`` for the game named by id and options, within the job's
    wall-clock safety cap (raises :class:`~.search.SearchOverrun` past it)."""
    function, game_id, options, args, cap = job
    with wall_clock_cap(cap):
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
    """A moderate priority: niced to :data:`SOLVER_NICENESS`, in the normal scheduling
    class (the idle class would starve a search on a busy CPU). A process that is already
    nicer keeps its niceness."""
    with contextlib.suppress(OSError):
        os.nice(max(0, SOLVER_NICENESS - os.nice(0)))


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
        except SearchOverrun as overrun:
            reply = (Reply.OVERRUN, str(overrun))
        except Exception:
            reply = (Reply.FAILED, traceback.format_exc())
        try:
            conn.send(reply)
        except OSError:  # the pool is gone (its worker exited)
            return
