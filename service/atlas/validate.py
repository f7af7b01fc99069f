"""Do the grades mean anything? Cheap players on deals of each grade the calibration did
not use: the share each wins per grade should fall from ``easy`` to ``expert``.

The players, none of which reads the deal's score:

- ``first`` (the issue's baseline): safe autoplay, then the first legal move (in the
  engine's order) that does not undo the last one, until won, stuck, a position comes back
  (``loop``) or :data:`MAX_MOVES` moves.
- ``fresh``: the same, but the first legal move to a position not seen before in the game
  (so it never loops; it stops when every move leads back).
- ``greedy``: a small depth-first search in a person's move order (to a foundation, onto a
  card, to an empty pile, to a cell or reserve, then the rest; longer runs first), safe
  autoplay after each move, never twice through a position, at most a budget of positions.
  It is not the solver: no plug-in's move order, pruning, canonical positions or compiled
  pass.
- ``lookahead``: a player who looks a budget of positions ahead before each move: it
  follows full-knowledge hints searched within that budget (the atlas's hint player,
  :func:`.players.play_by_hints`, at a small budget). It uses the solver's search and move
  order, so it shares the score's mechanism: a deal whose score is within its budget it
  wins by its first look. Those deals are left out of its counts.

``first`` wins nothing in most games, and a fixed budget makes a search win nearly every
deal of some games and nearly none of others: a player that wins everything or nothing
tells no grade from another. So a player is **tuned per game** before any validation deal
is played, on the game's first :data:`TUNING_DEALS` winnable calibration deals: ``greedy``
at the rung of its ladder (:data:`LADDERS`) whose share won is nearest
:data:`TUNING_TARGET`; when even that share is more than :data:`TUNING_BAND` away (greedy
is too weak, or too strong, for the game), ``lookahead`` is tuned the same way, and the
nearer of the two to the target plays.

The verdict reads the tuned player only. The grades **hold** when ``easy``'s 95% interval
lies above ``expert``'s (``separated``) and no grade's interval lies wholly above the next
easier grade's (no ``rise``: with a few hundred deals a grade, two shares a point apart are
noise). ``monotone`` says more: the share won falls, or stays, at every grade.

Deals are graded by :func:`.grades.score_of` (a solve at the atlas budget each) or the
atlas's lines, from the deal after the calibration range on, until each grade has
``per_grade`` deals or ``scan`` deals were tried.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from enum import StrEnum
from itertools import pairwise
from typing import Any

from service.engine.core import Game, GroupName, Move, State
from service.engine.registry import get_game
from service.solver import Knowledge, Limits
from service.solver.autoplay import run_autoplay

from .batch import DealLine
from .grades import GRADES, Calibration, Grade, calibrations, score_of
from .players import SOLVER_LIMITS, HintStop, play_by_hints
from .table import percent, wilson
from .workers import processes

MAX_MOVES = 1_000


class Baseline(StrEnum):
    """Which cheap player plays (see the module's docstring)."""

    FIRST = "first"
    FRESH = "fresh"
    GREEDY = "greedy"
    LOOKAHEAD = "lookahead"


# The tunable players, in the order they are tried, and the budgets (positions) each is
# tuned among.
LADDERS: dict[Baseline, tuple[int, ...]] = {
    Baseline.GREEDY: (10, 20, 30, 50, 100, 200, 300, 500, 1_000, 2_000, 3_000),
    Baseline.LOOKAHEAD: (100, 200, 300, 1_000, 3_000),
}
TUNING_DEALS = 200  # winnable calibration deals, from the calibration range's first deal
TUNING_TARGET = 0.5  # the share of them the tuned player wins, as near as its ladder allows
# Farther than this from the target at every rung (winning under 15% or over 85%): the
# next player. 15% is the least at which greedy told grades apart (Penguin II, Opus).
TUNING_BAND = 0.35


def walk(game: Game, state: State, fresh: bool) -> bool:
    """Whether ``first`` (or, with ``fresh``, ``fresh``) wins the deal dealt as ``state``."""
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
            if fresh and after in seen:
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


def greedy_positions(
    game: Game, state: State, most: int,
    order: Callable[[Game, State, list[Move]], list[Move]] = human_order,
) -> int | None:
    """The positions ``greedy`` has seen when it wins from ``state``, None when it does not
    win within ``most`` (so it wins at any budget of at least the answer)."""
    state = run_autoplay(game, state)[0]
    if game.is_won(state):
        return 1
    seen = {state}
    stack = [iter(order(game, state, game.legal_moves(state)))]
    states = [state]
    while stack:
        for move in stack[-1]:
            child = run_autoplay(game, game.apply(states[-1], move))[0]
            if child in seen:
                continue
            seen.add(child)
            if game.is_won(child):
                return len(seen)
            if len(seen) >= most:
                return None
            stack.append(iter(order(game, child, game.legal_moves(child))))
            states.append(child)
            break
        else:
            stack.pop()
            states.pop()
    return None


def looks_ahead(game_id: str, deal: int, budget: int) -> bool:
    """Whether ``lookahead``, looking ``budget`` positions ahead before each move, wins."""
    limits = Limits(SOLVER_LIMITS.max_seconds, budget)  # positions bind, never the clock
    return play_by_hints(game_id, deal, Knowledge.FULL, limits).stop is HintStop.WON


@dataclass(frozen=True)
class Played:
    """One deal played by the cheap players; ``greedy`` as the positions it needs (None:
    more than its ladder's top), so one game answers every budget; ``lookahead`` by budget,
    for those it played."""

    first: bool
    fresh: bool
    greedy: int | None
    lookahead: Mapping[int, bool] = field(default_factory=dict)

    def won(self, player: Baseline, budget: int) -> bool:
        """Whether ``player`` wins (a tunable one with ``budget`` positions)."""
        if player is Baseline.FIRST:
            return self.first
        if player is Baseline.FRESH:
            return self.fresh
        if player is Baseline.GREEDY:
            return self.greedy is not None and self.greedy <= budget
        return self.lookahead[budget]


def play(game: Game, state: State) -> Played:
    """The deal dealt as ``state``, played by ``first``, ``fresh`` and ``greedy``."""
    greedy = greedy_positions(game, state, LADDERS[Baseline.GREEDY][-1])
    return Played(walk(game, state, False), walk(game, state, True), greedy)


def gap(share: float) -> float:
    """How far a share won lies from :data:`TUNING_TARGET`."""
    return abs(share - TUNING_TARGET)


def nearest(shares: Mapping[int, float]) -> int:
    """The budget whose share won is nearest :data:`TUNING_TARGET` (the lower on a tie).

    >>> nearest({10: 0.1, 100: 0.45, 1_000: 0.55})
    100
    """
    return min(shares, key=lambda budget: (gap(shares[budget]), budget))


def _score(task: tuple[str, int]) -> tuple[int, int | None]:
    game_id, deal = task
    game = get_game(game_id)
    return deal, score_of(game, game.deal_state(deal))


def _play(task: tuple[str, int]) -> tuple[int, Played]:
    game_id, deal = task
    game = get_game(game_id)
    return deal, play(game, game.deal_state(deal))


def _look(task: tuple[str, int, tuple[int, ...]]) -> tuple[int, dict[int, bool]]:
    game_id, deal, budgets = task
    return deal, {b: looks_ahead(game_id, deal, b) for b in budgets}


@dataclass(frozen=True)
class Deals:
    """Which deals a count was taken on: how many, the first and the last."""

    count: int
    first: int
    last: int

    @classmethod
    def of(cls, deals: Iterable[int]) -> Deals:
        found = list(deals)
        return cls(len(found), min(found), max(found))

    def as_json(self) -> dict[str, int]:
        return {"deals": self.count, "first_deal": self.first, "last_deal": self.last}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Deals:
        return cls(data["deals"], data["first_deal"], data["last_deal"])


@dataclass(frozen=True)
class Row:
    """One grade of a game: its deals, and each player's wins and games counted (the
    ``lookahead`` player's leave out the deals its first look solves)."""

    grade: Grade
    deals: Deals
    won: dict[Baseline, int]
    played: dict[Baseline, int]

    def share(self, player: Baseline) -> float:
        return self.won[player] / self.played[player] if self.played[player] else 0.0

    def interval(self, player: Baseline) -> tuple[float, float]:
        return wilson(self.won[player], self.played[player])


@dataclass(frozen=True)
class Validation:
    """One game's validation: the tuned player and budget, what it was tuned on, the rows."""

    game_id: str
    player: Baseline
    budget: int
    tuning_deals: Deals
    tuning_shares: dict[Baseline, dict[int, float]]  # each tried player's share won at each rung
    rows: list[Row]

    @property
    def monotone(self) -> bool:
        """The tuned player's share won never rises from one grade to the next."""
        return all(a.share(self.player) >= b.share(self.player) for a, b in pairwise(self.rows))

    @property
    def rises(self) -> bool:
        """A grade's 95% interval (the tuned player's) lies wholly above the next easier
        grade's: a rise that noise does not explain."""
        return any(b.interval(self.player)[0] > a.interval(self.player)[1] for a, b in pairwise(self.rows))

    @property
    def separated(self) -> bool:
        """``easy``'s 95% interval lies above ``expert``'s, for the tuned player."""
        return self.rows[0].interval(self.player)[0] > self.rows[-1].interval(self.player)[1]

    @property
    def holds(self) -> bool:
        """The grades are validated: ``easy`` separates from ``expert`` and no grade rises."""
        return self.separated and not self.rises

    @property
    def verdict(self) -> str:
        """The verdict in words."""
        falls = "falls at every grade" if self.monotone else (
            "rises at a grade beyond noise" if self.rises else "falls but for a rise within noise")
        return f"{falls}; easy {'separates' if self.separated else 'does not separate'} from expert"

    def as_json(self) -> dict[str, Any]:
        """What the asset keeps (:func:`.grades.write_validation`)."""
        return {
            "player": self.player.value, "budget": self.budget,
            "tuning": {**self.tuning_deals.as_json(),
                       "shares": {p.value: {str(b): round(s, 4) for b, s in by.items()}
                                  for p, by in self.tuning_shares.items()}},
            "grades": {r.grade.value: {**r.deals.as_json(),
                                       "won": {p.value: n for p, n in r.won.items()},
                                       "played": {p.value: n for p, n in r.played.items()}} for r in self.rows},
            "monotone": self.monotone, "rises": self.rises, "separated": self.separated, "holds": self.holds,
        }

    @classmethod
    def from_json(cls, game_id: str, data: Mapping[str, Any]) -> Validation:
        """A kept validation, its verdict computed again from its counts."""
        rows = [Row(g, Deals.from_json(found),
                    {Baseline(p): n for p, n in found["won"].items()},
                    {Baseline(p): n for p, n in found["played"].items()})
                for g in GRADES for found in [data["grades"][g.value]]]
        tuning = data["tuning"]
        shares = {Baseline(p): {int(b): x for b, x in by.items()} for p, by in tuning["shares"].items()}
        return cls(game_id, Baseline(data["player"]), data["budget"], Deals.from_json(tuning), shares, rows)


def winnable(
    game_id: str, calibration: Calibration, count: int, workers: int, known: Mapping[int, DealLine],
) -> list[int]:
    """The first ``count`` deals of the calibration range the solver wins at the atlas budget."""
    deals = range(calibration.first_deal, calibration.last_deal + 1)
    if all(d in known for d in deals[:count * 2]):
        won = [d for d in deals if d in known and known[d].result == "solved"]
        return won[:count]
    found: list[int] = []
    with processes(workers) as pool:
        for deal, score in pool.map(_score, [(game_id, d) for d in deals], chunksize=8):
            if score is not None:
                found.append(deal)
            if len(found) >= count:
                break
    return found


def sample(
    game_id: str, start: int, per_grade: int, scan: int, workers: int, known: Mapping[int, DealLine],
) -> dict[Grade, dict[int, int]]:
    """Up to ``per_grade`` deals of each grade (each with its score), from ``start`` on,
    scanning ``scan`` deals at most; a deal ``known`` holds (an atlas line) is graded from
    it, any other by a solve."""
    calibration = calibrations()[game_id]
    chosen: dict[Grade, dict[int, int]] = {g: {} for g in GRADES}
    deals = range(start, start + scan)
    scored: Iterable[tuple[int, int | None]]
    if all(d in known for d in deals):
        scored = [(d, known[d].positions if known[d].result == "solved" else None) for d in deals]
        return _pick(calibration, chosen, scored, per_grade)
    with processes(workers) as pool:
        return _pick(calibration, chosen, pool.map(_score, [(game_id, d) for d in deals], chunksize=8), per_grade)


def _pick(
    calibration: Calibration, chosen: dict[Grade, dict[int, int]], scored: Iterable[tuple[int, int | None]],
    per_grade: int,
) -> dict[Grade, dict[int, int]]:
    """The first ``per_grade`` deals of each grade of ``scored``, in order."""
    for deal, score in scored:
        if score is not None:
            grade = calibration.grade(score)
            if len(chosen[grade]) < per_grade:
                chosen[grade][deal] = score
        if all(len(v) >= per_grade for v in chosen.values()):
            break
    return chosen


def tune_player(pool: Executor, game_id: str, tuning: list[int]) -> tuple[Baseline, int, dict[Baseline, dict[int, float]]]:
    """The tuned player and its budget (the module's docstring), with each tried player's
    share of ``tuning`` won at each rung of its ladder."""
    def shares_of(won: Callable[[int, int], bool], ladder: tuple[int, ...]) -> dict[int, float]:
        return {b: sum(won(d, b) for d in tuning) / len(tuning) for b in ladder}
    played = dict(pool.map(_play, [(game_id, d) for d in tuning], chunksize=4))
    shares = {Baseline.GREEDY: shares_of(lambda d, b: played[d].won(Baseline.GREEDY, b), LADDERS[Baseline.GREEDY])}
    player, budget = Baseline.GREEDY, nearest(shares[Baseline.GREEDY])
    if gap(shares[player][budget]) > TUNING_BAND:
        rungs = LADDERS[Baseline.LOOKAHEAD]
        looked = dict(pool.map(_look, [(game_id, d, rungs) for d in tuning], chunksize=2))
        shares[Baseline.LOOKAHEAD] = shares_of(lambda d, b: looked[d][b], rungs)
        other = nearest(shares[Baseline.LOOKAHEAD])
        if gap(shares[Baseline.LOOKAHEAD][other]) < gap(shares[player][budget]):
            player, budget = Baseline.LOOKAHEAD, other
    return player, budget, shares


def validate(
    game_id: str, per_grade: int, scan: int, workers: int = 0, known: Mapping[int, DealLine] | None = None,
) -> Validation:
    """``game_id``'s validation (see the module's docstring), on deals after its
    calibration range."""
    workers = workers or len(os.sched_getaffinity(0))
    known = known or {}
    calibration = calibrations()[game_id]
    tuning = winnable(game_id, calibration, TUNING_DEALS, workers, known)
    chosen = sample(game_id, calibration.last_deal + 1, per_grade, scan, workers, known)
    scores = {d: score for by_deal in chosen.values() for d, score in by_deal.items()}

    with processes(workers) as pool:
        player, budget, shares = tune_player(pool, game_id, tuning)
        results = dict(pool.map(_play, [(game_id, d) for d in scores], chunksize=4))
        if player is Baseline.LOOKAHEAD:
            fair = [(game_id, d, (budget,)) for d, score in scores.items() if score > budget]
            for deal, looks in pool.map(_look, fair, chunksize=2):
                results[deal] = replace(results[deal], lookahead=looks)
    budgets = {p: nearest(shares[p]) for p in shares} | {player: budget}  # each tuned player at its own
    players = [p for p in Baseline if p in (Baseline.FIRST, Baseline.FRESH, Baseline.GREEDY, player)]
    rows = []
    for grade, by_deal in chosen.items():
        if not by_deal:
            continue
        won: dict[Baseline, int] = {}
        played: dict[Baseline, int] = {}
        for p in players:
            counted = [d for d in by_deal if p is not Baseline.LOOKAHEAD or scores[d] > budget]  # not its first look's
            won[p] = sum(results[d].won(p, budgets.get(p, 0)) for d in counted)
            played[p] = len(counted)
        rows.append(Row(grade, Deals.of(by_deal), won, played))
    return Validation(game_id, player, budget, Deals.of(tuning), shares, rows)


def markdown(found: Iterable[Validation]) -> str:
    """The validation table in Markdown: per game and grade, each player's share won
    (``greedy`` at its tuned budget; ``lookahead`` where it is the tuned player)."""
    out = ["| game | grade | deals (range) | " + " | ".join(f"`{p.value}` won, 95% interval" for p in Baseline)
           + " | tuned player: verdict |", "|---|---|---:|" + "---|" * (len(Baseline) + 1)]
    for v in found:
        for i, r in enumerate(v.rows):
            cells = [f"{r.won[p]} of {r.played[p]}: {percent(r.interval(p)[0])} to {percent(r.interval(p)[1])}"
                     if p in r.played else "-" for p in Baseline]
            verdict = "" if i else f"{v.player.value} at {v.budget:,} positions: {v.verdict}"
            out.append(f"| {v.game_id} | {r.grade.value} | {r.deals.count} ({r.deals.first}-{r.deals.last}) | "
                       + " | ".join(cells) + f" | {verdict} |")
    return "\n".join(out)


def tuning_markdown(found: Iterable[Validation]) -> str:
    """How each game's player was tuned, in Markdown: each tried player's share of the
    tuning deals won at each rung of its ladder, and the one that plays."""
    out = ["| game | tuning deals | player | share won at each budget (positions) | plays |", "|---|---|---|---|---|"]
    for v in found:
        for p, by in v.tuning_shares.items():
            rungs = ", ".join(f"{b:,}: {100 * s:g}%" for b, s in by.items())
            plays = f"at {v.budget:,}" if p is v.player else ""
            out.append(f"| {v.game_id} | {v.tuning_deals.count} ({v.tuning_deals.first}-{v.tuning_deals.last}) | "
                       f"`{p.value}` | {rungs} | {plays} |")
    return "\n".join(out)
