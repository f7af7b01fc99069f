"""The server's limits on every search, as one plain value the solver is handed.

The HTTP layer caps each request's limits with it (a request can never ask for a longer
or larger search than the server allows). It is read from the environment, with the
30-second hard cap, by :func:`service.settings.read_solver_settings`; the solver package
itself reads no environment.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SolverSettings:
    max_seconds: float  # most seconds one solve may run
    max_states: int  # most distinct positions one solve may visit: caps the memory of one search
    hint_seconds: float  # the budget of a hint's solve (at most max_seconds)
    winnable_deal_seconds: float  # the solve budget per deal tried for a winnable deal (at most max_seconds)
    winnable_deal_tries: int  # how many deals are tried for a winnable deal
    # The pool of solver processes (service/solver/pool.py), per server process.
    processes: int = 1  # searches running at once, each in its own process (0: in the request thread)
    queue: int = 1  # searches that may wait for a process; one more is refused at once
