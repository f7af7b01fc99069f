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

import re
from dataclasses import dataclass, field

# The pool's time bounds (service/solver/pool.py). Budgets are counted in positions
# (service/solver/search.py's budget_of); these are the wall-clock safety nets around them.
KILL_GRACE_SECONDS = 5.0  # past its budget, a search that has not answered is killed
# Past its budget, a search still running in its solver process stops itself (SearchOverrun),
# a second before the kill, so that its process answers the overrun and lives on.
OVERRUN_GRACE_SECONDS = KILL_GRACE_SECONDS - 1.0
PING_SECONDS = 1.0  # all the pings of idle processes before a search, together; then a new process
STOP_SECONDS = 1.0  # how long the pool waits for a process that died to report its exit code

# A player-knowledge search (service/solver/sampling.py) gives its samples together this many
# positions per second of its budget: at most every game's reference pace (each strategy's
# positions_per_second), so that a sampled search takes a fraction of its budget on an idle
# core and stays within budget and grace with the solver's share of a busy one
# (bench/positions-budget.md).
SAMPLED_POSITIONS_PER_SECOND = 10_000


# The CPU numbers a CPU list may name: Linux's largest configurable count (CONFIG_NR_CPUS).
MAX_CPUS = 8192
CPU_RANGE = re.compile(r"(\d+)(?:-(\d+))?")


def parse_cpu_list(text: str) -> frozenset[int]:
    """The CPUs of a Linux CPU list (the format of ``taskset -c`` and of cpusets): numbers
    and ranges separated by commas; an empty text names none. Raises ``ValueError``.

    >>> sorted(parse_cpu_list("0, 2-3"))
    [0, 2, 3]
    >>> parse_cpu_list(" ")
    frozenset()
    >>> parse_cpu_list("3-1")
    Traceback (most recent call last):
    ValueError: '3-1' is not a CPU number or a range of them (low-high, below 8192)
    """
    cpus: set[int] = set()
    for part in (p.strip() for p in text.split(",")) if text.strip() else ():
        match = CPU_RANGE.fullmatch(part)
        low, high = (int(match[1]), int(match[2] or match[1])) if match else (1, 0)
        if not low <= high < MAX_CPUS:
            raise ValueError(f"{part!r} is not a CPU number or a range of them (low-high, below {MAX_CPUS})")
        cpus.update(range(low, high + 1))
    return frozenset(cpus)


def cpus_left_for_play(solver_cpus: frozenset[int], available: frozenset[int]) -> frozenset[int]:
    """The CPUs the web workers keep when the solver processes take ``solver_cpus`` of the
    ``available`` ones (those the server may run on). Raises ``ValueError`` when a solver
    CPU is not available, or when none is left for play.

    >>> sorted(cpus_left_for_play(frozenset({3}), frozenset(range(4))))
    [0, 1, 2]
    """
    if not solver_cpus <= available:
        raise ValueError(f"CPUs {sorted(solver_cpus - available)} are not among this server's {sorted(available)}")
    left = available - solver_cpus
    if not left:
        raise ValueError(f"it takes every CPU of this server ({sorted(available)}) and leaves none for play")
    return left


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
    # The CPUs the solver processes run on, the web workers keeping the others (empty: no
    # pinning, every process may run on every CPU; not for searches in the request thread).
    cpus: frozenset[int] = field(default_factory=frozenset)
    # Player-knowledge hints and solves (service/solver/sampling.py): how many samples of the
    # hidden cards each searches. The default is PLAYER_KNOWLEDGE_SAMPLES's (service/settings.py).
    samples: int = 8
