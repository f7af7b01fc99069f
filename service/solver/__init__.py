"""The solver: one search core for every game, with a per-game strategy plugged in.

Public entry points: :func:`solve_position`, :func:`hint`, :func:`first_winnable_deal`
(:mod:`.answers`), :class:`Limits`, :class:`SolveResult` with its :class:`Outcome` and
:class:`StopReason` (:mod:`.search`) and
:class:`SolverSettings` (:mod:`.settings`).
"""

from __future__ import annotations

from .answers import Hint, WinnableSearch, first_winnable_deal, hint, solve_position
from .search import Limits, Outcome, SolveResult, StopReason
from .settings import SolverSettings

__all__ = [
    "Hint",
    "Limits",
    "Outcome",
    "SolveResult",
    "SolverSettings",
    "StopReason",
    "WinnableSearch",
    "first_winnable_deal",
    "hint",
    "solve_position",
]
