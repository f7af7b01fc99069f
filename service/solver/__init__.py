"""The solver: one search core for every game, with per-game knowledge plugged in.

Public entry points: :func:`solve_position`, :func:`hint`, :func:`first_winnable_deal`
(:mod:`.answers`), :class:`Limits`, :class:`SolveResult` (:mod:`.search`) and
:class:`SolverSettings` (:mod:`.settings`).
"""

from __future__ import annotations

from .answers import Hint, WinnableSearch, first_winnable_deal, hint, solve_position
from .search import Limits, SolveResult
from .settings import SolverSettings

__all__ = [
    "Hint",
    "Limits",
    "SolveResult",
    "SolverSettings",
    "WinnableSearch",
    "first_winnable_deal",
    "hint",
    "solve_position",
]
