"""The solver process's side of the pool (:mod:`.pool`): receive a search, run it, send its answer.

A solver process runs :func:`serve` until its pipe closes. It lowers its own priority
first (:func:`yield_to_play`), so that the threads serving play keep the CPU, and ignores SIGINT
(a Ctrl-C in the terminal reaches the whole process group: the server decides when its
solvers stop). Each job is ``(function, game id, options, args)``: the game travels as
its id and options and is rebuilt here through the registry's cache, so a game's
precomputed tables are built once per process, not once per search.
"""

from __future__ import annotations

import contextlib
import os
import signal
import traceback
from collections.abc import Callable
from enum import StrEnum
from multiprocessing.connection import Connection
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


def yield_to_play() -> None:
    """The lowest priority this process may take: niced, and on Linux in the idle
    scheduling class too, which runs only on a CPU nothing else wants (and is preempted
    at once when a play thread wakes up)."""
    os.nice(SOLVER_NICENESS)
    if hasattr(os, "SCHED_IDLE"):
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def serve(conn: Connection) -> None:
    """The solver process's loop: one job at a time until the pool closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    yield_to_play()
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
