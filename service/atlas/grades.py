"""Difficulty grades: how hard a winnable deal is, from the solver's work on it.

A deal's **score** is the number of positions the solver visits to solve it at the atlas's
budget (:data:`~.players.SOLVER_LIMITS`, the figure ``run`` writes as ``positions``): a
count, never a time, so a deal's grade is the same on any machine. Each game's thresholds
(:data:`ASSET`, written by ``python -m service.atlas grades --write``) cut its winnable
deals of a calibration range into :data:`SHARES` by score: the easiest 40% are ``easy``,
the next 30% ``medium``, 20% ``hard``, the last 10% ``expert``. Deals the solver does not
win at that budget (lost or undecided) have no grade.

Grades are calibrated for each game's default options only; a game (or options) without a
calibration is :class:`NotGraded`, with the reason the asset states.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

from service.engine.core import MAX_DEAL, Game, State
from service.engine.registry import get_game
from service.solver import Outcome, solve_position
from service.solver.plugins import pace_of

from .batch import DealLine
from .players import SOLVER_LIMITS

ASSET = Path(__file__).with_name("difficulty.json")


class Grade(StrEnum):
    """A winnable deal's difficulty, easiest first (the API's ``difficulty``)."""

    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"
    EXPERT = "expert"


GRADES: tuple[Grade, ...] = tuple(Grade)
# The design: each grade's share of a game's winnable deals, easiest first.
SHARES: dict[Grade, float] = {Grade.EASY: 0.40, Grade.MEDIUM: 0.30, Grade.HARD: 0.20, Grade.EXPERT: 0.10}
# Games never calibrated, and why (the asset repeats it; the API answers it).
NEVER_GRADED: dict[str, str] = {
    "forty-thieves": "not graded: the atlas leaves about half of its deals undecided at its budget, "
                     "so the winnable deals a calibration would divide are not known",
}
GRADED_DEAL_TRIES = 200  # the most deals one request for a deal of a grade tries
SCORE = "positions the solver visits to solve the deal at the atlas budget"


class NotGraded(LookupError):
    """The game, or its options, has no calibration: its reason is the message."""


@dataclass(frozen=True)
class Calibration:
    """One game's thresholds and what they were calibrated on."""

    thresholds: tuple[int, ...]  # the most positions an easy, a medium and a hard deal takes
    first_deal: int
    last_deal: int
    won: int  # the winnable deals of the range, which the shares divide
    counts: dict[str, int]  # deals of each grade in the range

    def grade(self, score: int) -> Grade:
        """The grade of a winnable deal the solver solved visiting ``score`` positions."""
        for grade, most in zip(GRADES, self.thresholds, strict=False):
            if score <= most:
                return grade
        return Grade.EXPERT

    def as_json(self) -> dict[str, Any]:
        shares = {g: round(n / self.won, 4) if self.won else 0.0 for g, n in self.counts.items()}
        return {"thresholds": list(self.thresholds), "first_deal": self.first_deal, "last_deal": self.last_deal,
                "won": self.won, "counts": self.counts, "shares": shares}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Calibration:
        return cls(tuple(data["thresholds"]), data["first_deal"], data["last_deal"], data["won"], dict(data["counts"]))


def cut(scores: list[int], share: float) -> int:
    """The threshold among ``scores`` (sorted) that puts the share of them at or below it
    nearest ``share``: ties (many deals of one score) move the cut to a score's edge.

    >>> cut([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.4)
    4
    >>> cut([1, 1, 1, 1, 1, 1, 1, 2, 3, 4], 0.4)  # 70% at 1 is nearer 40% than 0% is not
    1
    """
    n = len(scores)
    best, best_gap = scores[0], float("inf")
    for i, value in enumerate(scores):
        if i + 1 < n and scores[i + 1] == value:
            continue  # not the last deal of this score: no cut here
        gap = abs((i + 1) / n - share)
        if gap < best_gap:
            best, best_gap = value, gap
    return best


def calibrate(lines: Iterable[DealLine]) -> Calibration:
    """Thresholds putting :data:`SHARES` of the winnable deals of ``lines`` (a game's merged
    atlas lines, one per deal) in each grade, as near as ties allow."""
    lines = list(lines)
    scores = sorted(line.positions for line in lines if line.result == Outcome.SOLVED.value)
    if not scores:
        raise ValueError("no winnable deal to calibrate on")
    thresholds: list[int] = []
    total = 0.0
    for grade in GRADES[:-1]:
        total += SHARES[grade]
        most = cut(scores, total)
        thresholds.append(max(most, thresholds[-1] if thresholds else most))
    calibration = Calibration(tuple(thresholds), lines[0].deal, lines[-1].deal, len(scores), {})
    counts = {g.value: 0 for g in GRADES}
    for score in scores:
        counts[calibration.grade(score).value] += 1
    return Calibration(calibration.thresholds, calibration.first_deal, calibration.last_deal, len(scores), counts)


@cache
def _asset() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ASSET.read_text(encoding="utf-8"))
    return data


def calibrations() -> dict[str, Calibration]:
    """Every graded game's calibration, from the shipped asset."""
    return {gid: Calibration.from_json(c) for gid, c in _asset()["games"].items()}


def validation_of(game_id: str) -> dict[str, Any] | None:
    """``game_id``'s validation as the asset keeps it (:mod:`.validate`), None when it has none."""
    found: dict[str, Any] | None = _asset()["games"].get(game_id, {}).get("validation")
    return found


def not_graded_reasons() -> dict[str, str]:
    """Why each game without a calibration has none."""
    reasons: dict[str, str] = _asset()["not_graded"]
    return reasons


def calibration_of(game: Game) -> Calibration:
    """``game``'s calibration; :class:`NotGraded` (with the reason) when it has none,
    non-default options included."""
    found = calibrations().get(game.id)
    if found is None:
        raise NotGraded(not_graded_reasons().get(game.id, f"{game.id} has no difficulty calibration"))
    if dict(game.options) != dict(get_game(game.id).options):
        raise NotGraded(f"grades are calibrated for {game.id}'s default options only")
    return found


def score_of(game: Game, state: State) -> int | None:
    """The deal's score: the positions the solver visits to solve ``state`` at the atlas
    budget, or None when it does not solve it there (lost or undecided)."""
    found = solve_position(game, state, SOLVER_LIMITS)
    return found.states if found.result is Outcome.SOLVED else None


def grade_state(game: Game, state: State) -> Grade | None:
    """The grade of the dealt position ``state`` (a deal as dealt, keyed or not), None when
    the solver does not win it at the atlas budget. Raises :class:`NotGraded`."""
    calibration = calibration_of(game)
    score = score_of(game, state)
    return None if score is None else calibration.grade(score)


def grade_of(game_id: str, deal: int) -> Grade | None:
    """The grade of ``game_id``'s deal ``deal`` (default options), None when not won at the
    atlas budget. Raises :class:`NotGraded`."""
    game = get_game(game_id)
    return grade_state(game, game.deal_state(deal))


@dataclass(frozen=True)
class GradedSearch:
    """What :func:`first_graded_deal` tried, and the deal it found (number and dealt state)."""

    tried: range
    found: tuple[int, State] | None
    positions: int  # spent in all


def first_graded_deal(
    game: Game, grade: Grade, start: int, tries: int,
    total_seconds: float | None = None, deal_seed: Callable[[int], int] | None = None,
) -> GradedSearch:
    """The first deal at or after ``start`` whose grade is ``grade``, trying at most
    ``tries`` deals, each solved at the atlas budget (so its grade is :func:`grade_of`'s).

    ``total_seconds`` bounds the work: no deal is started once the positions spent reach
    what that budget buys at the game's pace, so a search visits at most that plus one
    atlas budget. ``deal_seed`` maps a deal number to the seed the engine deals from (the
    caller's keyed deals); by default, the number itself. Raises :class:`NotGraded`."""
    calibration = calibration_of(game)
    budget = None if total_seconds is None else total_seconds * pace_of(game)
    spent = 0
    last = min(start + tries, MAX_DEAL + 1)
    for deal in range(start, last):
        if budget is not None and spent >= budget:
            return GradedSearch(range(start, deal), None, spent)
        state = game.initial_state(deal if deal_seed is None else deal_seed(deal))
        found = solve_position(game, state, SOLVER_LIMITS)
        spent += found.states
        if found.result is Outcome.SOLVED and calibration.grade(found.states) is grade:
            return GradedSearch(range(start, deal + 1), (deal, state), spent)
    return GradedSearch(range(start, last), None, spent)


def write_asset(found: Mapping[str, Calibration], not_graded: Mapping[str, str]) -> None:
    """Write :data:`ASSET`: the calibrations and the reasons the other games have none."""
    data = {
        "score": SCORE,
        "budget": {"max_seconds": SOLVER_LIMITS.max_seconds, "max_states": SOLVER_LIMITS.max_states},
        "design_shares": {g.value: s for g, s in SHARES.items()},
        "games": {gid: c.as_json() for gid, c in found.items()},
        "not_graded": dict(not_graded),
    }
    ASSET.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    _asset.cache_clear()


def write_validation(game_id: str, validation: Mapping[str, Any]) -> None:
    """Keep ``game_id``'s validation (:mod:`.validate`) beside its calibration in
    :data:`ASSET`. ``grades --write`` drops it: new thresholds are validated again."""
    data = json.loads(ASSET.read_text(encoding="utf-8"))
    data["games"][game_id]["validation"] = dict(validation)
    ASSET.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    _asset.cache_clear()
