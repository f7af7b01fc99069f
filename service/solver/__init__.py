"""The solver: one search core for every game, with a per-game strategy plugged in.

Public entry points: :func:`solve_position`, :func:`hint`, :func:`first_winnable_deal`
(:mod:`.answers`); the player-knowledge :func:`player_hint` and :func:`player_solve`, with
:class:`Knowledge`, :class:`SampleCount` and :func:`sampled_limits` (:mod:`.sampling`);
:class:`Limits`, :class:`SolveResult` with its :class:`Outcome` and :class:`StopReason`
(:mod:`.search`) and :class:`SolverSettings` (:mod:`.settings`).
"""

from __future__ import annotations

from .answers import Hint, SampleCount, WinnableSearch, first_winnable_deal, hint, solve_position
from .sampling import Knowledge, PlayerSolve, player_hint, player_solve, sampled_limits
from .search import Limits, Outcome, SolveResult, StopReason
from .settings import SolverSettings

__all__ = [
    "Hint",
    "Knowledge",
    "Limits",
    "Outcome",
    "PlayerSolve",
    "SampleCount",
    "SolveResult",
    "SolverSettings",
    "StopReason",
    "WinnableSearch",
    "first_winnable_deal",
    "hint",
    "player_hint",
    "player_solve",
    "sampled_limits",
    "solve_position",
]
