"""The server's limits on every search, as one plain value the solver is handed, and the
time bounds of the pool of solver processes that follow from them.

The HTTP layer caps each request's limits with it (a request can never ask for a longer
or larger search than the server allows). It is read from the environment, with the
30-second hard cap, by :func:`service.settings.read_solver_settings`, which also holds each
setting's default; the solver package itself reads no environment.

:func:`longest_search_seconds` is the longest a search request can take from the moment it
reaches the pool (:mod:`.pool`) to its answer, at a given budget: what a proxy in front of
the service must wait for a search's answer (HAProxy's search timeout, deploy/haproxy.cfg).
"""

from __future__ import annotations

from dataclasses import dataclass

# The pool's time bounds (service/solver/pool.py).
KILL_GRACE_SECONDS = 5.0  # past its budget, a search that has not answered is killed
PING_SECONDS = 1.0  # all the pings of idle processes before a search, together; then a new process
STOP_SECONDS = 1.0  # how long the pool waits for a process that died to report its exit code


def hold_seconds(budget: float) -> float:
    """The longest a search of ``budget`` seconds holds its place in the pool, once it has
    one: the pings of idle processes, its run, the grace before the kill, and the wait for
    a process that died to report its exit code (only one of the last two happens)."""
    return PING_SECONDS + budget + KILL_GRACE_SECONDS + STOP_SECONDS


def longest_search_seconds(budget: float) -> float:
    """The longest a search request can take end to end when no search's budget exceeds
    ``budget`` (``SOLVER_MAX_SECONDS``: every solve, hint and winnable-deal search is capped
    by it): a queued search waits at most as long as the searches running when it arrived
    may hold their places (:func:`hold_seconds`, past that it is refused 503
    ``solver-busy``), then holds its own place at most as long.

    Not counted: forking a solver process (a fork of the warm fork server: milliseconds; a
    worker's first search also starts the fork server, a few tenths of a second), reading
    the request and writing the answer.

    >>> longest_search_seconds(10.0), longest_search_seconds(30.0)
    (34.0, 74.0)
    """
    return 2 * hold_seconds(budget)


@dataclass(frozen=True)
class SolverSettings:
    max_seconds: float  # most seconds one solve may run
    max_states: int  # most distinct positions one solve may visit: caps the memory of one search
    hint_seconds: float  # the budget of a hint's solve (at most max_seconds)
    winnable_deal_seconds: float  # the solve budget per deal tried for a winnable deal (at most max_seconds)
    winnable_deal_tries: int  # how many deals are tried for a winnable deal
    # The pool of solver processes (service/solver/pool.py), per server process.
    processes: int  # searches running at once, each in its own process (0: in the request thread)
    queue: int  # searches that may wait for a process; one more is refused at once
