"""Do the grades mean anything? Cheap players on deals of each grade the calibration did
not use: the share each wins per grade should fall from ``easy`` to ``expert``.

The players, none of which reads the solver's score:

- ``first`` (the issue's baseline): safe autoplay, then the first legal move (in the
  engine's order) that does not undo the last one, until won, stuck, a position comes back
  (``loop``) or :data:`MAX_MOVES` moves.
- ``fresh``: the same, but the first legal move to a position not seen before in the game
  (so it never loops; it stops when every move leads back).
- ``dfs``: a small search, stronger: depth first over the engine's legal moves in the
  engine's order, safe autoplay after each, never twice through a position, at most
  :data:`DFS_POSITIONS` positions. It is not the solver (no plug-in's move order, pruning
  or canonical positions), but it is a search, so it shares the score's mechanism in part:
  a deal the solver solves in few positions tends to be one a plain search solves early.
- ``greedy``: ``dfs`` with a human's move order: moves to a foundation first, then onto a
  card of the tableau, then to an empty tableau pile, then to a cell or reserve, then the
  rest (stock, redeal), longer runs first within each.

Deals are graded by :func:`.grades.grade_of` (a solve at the atlas budget each), from
``start`` on, until each grade has ``per_grade`` deals or ``scan`` deals were tried.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from service.engine.core import Game, GroupName, Move, State
from service.engine.registry import get_game
from service.solver.autoplay import run_autoplay

from .batch import DealLine
from .grades import GRADES, Grade, calibrations, grade_of
from .table import percent, wilson

MAX_MOVES = 1_000
DFS_POSITIONS = 2_000


class Baseline(StrEnum):
    """Which cheap player plays (see the module's docstring)."""

    FIRST = "first"
    FRESH = "fresh"
    DFS = "dfs"
    GREEDY = "greedy"


def play(game: Game, state: State, player: Baseline) -> bool:
    """Whether ``player`` wins the deal dealt as ``state``."""
    if player is Baseline.DFS:
        return search(game, state, DFS_POSITIONS)
    if player is Baseline.GREEDY:
        return search(game, state, DFS_POSITIONS, human_order)
    state = run_autoplay(game, state)[0]
    seen = {state}
    before: State | None = None
    for _ in range(MAX_MOVES):
        if game.is_won(state):
            return True
        chosen: State | None = None
        for move in game.legal_moves(state):
            after = game.apply(state, move)
            if after == before:
                continue  # undoes the last move
            after = run_autoplay(game, after)[0]
            if player is Baseline.FRESH and after in seen:
                continue
            chosen = after
            break
        if chosen is None:
            return False  # stuck
        if chosen in seen:
            return False  # loop
        before, state = state, chosen
        seen.add(state)
    return game.is_won(state)


GROUP_ORDER = {GroupName.FOUNDATION: 0, GroupName.TABLEAU: 1, GroupName.CELL: 3, GroupName.RESERVE: 3}


def human_order(game: Game, state: State, moves: list[Move]) -> list[Move]:
    """``moves`` in the order a person tries them (the ``greedy`` player's)."""
    def rank(move: Move) -> tuple[int, int]:
        if move.dst < 0:
            return 4, 0
        group = game.pile_refs[move.dst][0]
        order = GROUP_ORDER.get(GroupName(group), 4)
        if order == 1 and not state.piles[move.dst]:
            order = 2
        return order, -move.count
    return sorted(moves, key=rank)


def engine_order(game: Game, state: State, moves: list[Move]) -> list[Move]:
    """``moves`` as the engine lists them."""
    return moves


def search(
    game: Game, state: State, most: int,
    order: Callable[[Game, State, list[Move]], list[Move]] = engine_order,
) -> bool:
    """Whether a depth-first search over the engine's moves, tried in ``order`` (see the
    module's docstring), wins from ``state`` visiting at most ``most`` positions."""
    state = run_autoplay(game, state)[0]
    seen = {state}
    stack = [iter(order(game, state, game.legal_moves(state)))]
    states = [state]
    while stack:
        for move in stack[-1]:
            child = run_autoplay(game, game.apply(states[-1], move))[0]
            if child in seen:
                continue
            if game.is_won(child):
                return True
            seen.add(child)
            if len(seen) >= most:
                return False
            stack.append(iter(order(game, child, game.legal_moves(child))))
            states.append(child)
            break
        else:
            stack.pop()
            states.pop()
    return game.is_won(state)


def _grade(task: tuple[str, int]) -> tuple[int, Grade | None]:
    game_id, deal = task
    return deal, grade_of(game_id, deal)


def _play(task: tuple[str, int]) -> tuple[int, dict[Baseline, bool]]:
    game_id, deal = task
    game = get_game(game_id)
    state = game.deal_state(deal)
    return deal, {player: play(game, state, player) for player in Baseline}


@dataclass(frozen=True)
class Row:
    """One game's grade: how many deals were played and how many each player won."""

    game_id: str
    grade: Grade
    deals: list[int]
    won: dict[Baseline, int]


def sample(
    game_id: str, start: int, per_grade: int, scan: int, workers: int, known: Mapping[int, DealLine],
) -> dict[Grade, list[int]]:
    """Up to ``per_grade`` deals of each grade, from ``start`` on, scanning ``scan`` deals at
    most; a deal ``known`` holds (an atlas line) is graded from it, any other by a solve."""
    chosen: dict[Grade, list[int]] = {g: [] for g in GRADES}
    calibration = calibrations()[game_id]
    deals = range(start, start + scan)
    if all(d in known for d in deals):
        graded: Iterable[tuple[int, Grade | None]] = [
            (d, calibration.grade(known[d].positions) if known[d].result == "solved" else None) for d in deals]
        return _pick(chosen, graded, per_grade)
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return _pick(chosen, pool.imap(_grade, [(game_id, d) for d in deals], chunksize=8), per_grade)


def _pick(chosen: dict[Grade, list[int]], graded: Iterable[tuple[int, Grade | None]], per_grade: int) -> dict[Grade, list[int]]:
    """The first ``per_grade`` deals of each grade of ``graded``, in order."""
    for deal, grade in graded:
        if grade is not None and len(chosen[grade]) < per_grade:
            chosen[grade].append(deal)
        if all(len(v) >= per_grade for v in chosen.values()):
            break
    return chosen


def validate(
    game_id: str, start: int, per_grade: int, scan: int, workers: int = 0, known: Mapping[int, DealLine] | None = None,
) -> list[Row]:
    """Each grade's row for ``game_id`` (see the module's docstring)."""
    workers = workers or len(os.sched_getaffinity(0))
    chosen = sample(game_id, start, per_grade, scan, workers, known or {})
    tasks = [(game_id, d) for deals in chosen.values() for d in deals]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        results = dict(pool.imap(_play, tasks, chunksize=4))
    return [Row(game_id, g, deals, {p: sum(results[d][p] for d in deals) for p in Baseline}) for g, deals in chosen.items()]


def markdown(rows: Iterable[Row]) -> str:
    """The validation table in Markdown: per game and grade, each player's share won."""
    out = ["| game | grade | deals (range) | " + " | ".join(f"`{p.value}` won, 95% interval" for p in Baseline) + " |",
           "|---|---|---:|" + "---|" * len(Baseline)]
    for r in rows:
        n = len(r.deals)
        where = f"{n} ({min(r.deals)}-{max(r.deals)})" if n else "0"
        cells = []
        for player in Baseline:
            low, high = wilson(r.won[player], n)
            cells.append(f"{r.won[player]}: {percent(low)} to {percent(high)}" if n else "-")
        out.append(f"| {r.game_id} | {r.grade.value} | {where} | " + " | ".join(cells) + " |")
    return "\n".join(out)
