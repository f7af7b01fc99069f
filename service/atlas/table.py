"""The winnability table: each game's share of winnable deals with a 95% interval.

A deal is won (the solver found a verified solution), lost (proved unsolvable: every
reachable position seen) or unknown (the budget ran out). Unknown deals may go either
way, so the interval is an honest bound: its low end is the Wilson interval's low end of
won / deals, its high end the Wilson interval's high end of (won + unknown) / deals.
With no unknown deal it is the plain Wilson score interval of the share won.

The table ships as a small JSON asset (:data:`ASSET`), read once, which the API serves in
each game's description.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from statistics import NormalDist

from service.engine.registry import get_game
from service.solver import Outcome
from service.solver.plugins import pace_of
from service.solver.search import budget_of

from .batch import DealLine
from .players import SOLVER_LIMITS, HintStop

ASSET = Path(__file__).with_name("winnability.json")
CONFIDENCE = 0.95
Z = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)  # 1.96: the normal quantile of a 95% interval
DIGITS = 6  # the asset's bounds, rounded outwards


def wilson(successes: int, trials: int, z: float = Z) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` out of ``trials``.

    >>> [round(x, 4) for x in wilson(81, 263)]  # Newcombe (1998), table I
    [0.2553, 0.3662]
    >>> wilson(0, 0)
    (0.0, 1.0)
    """
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z / (1 + z2 / trials) * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    # At 0 or every trial the closed form touches 0 or 1, save for rounding.
    return (0.0 if successes == 0 else centre - half), (1.0 if successes == trials else centre + half)


@dataclass(frozen=True)
class Winnability:
    """One game's row of the table (shares are fractions of the deals, 0 to 1)."""

    first_deal: int
    last_deal: int
    deals: int
    won: int
    lost: int
    unknown: int
    low: float  # the 95% interval's low end
    high: float  # its high end
    budget_positions: int  # the positions each deal's search could visit

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


def budget_positions(game_id: str) -> int:
    """The positions :data:`~.players.SOLVER_LIMITS` buy a search of ``game_id``."""
    return budget_of(SOLVER_LIMITS, pace_of(get_game(game_id)))[0]


class GapInDeals(ValueError):
    """The merged lines miss deals of their range: a row says every deal between its first
    and last was solved."""


def outwards(low: float, high: float) -> tuple[float, float]:
    """``low`` rounded down and ``high`` rounded up to :data:`DIGITS` places, so rounding
    never narrows an interval.

    >>> outwards(0.99963096, 0.99900537)
    (0.99963, 0.999006)
    """
    scale = 10**DIGITS
    return math.floor(low * scale) / scale, math.ceil(high * scale) / scale


def tally(game_id: str, lines: Iterable[DealLine]) -> Winnability:
    """The row of ``game_id`` from its merged lines (one per deal, by deal)."""
    lines = list(lines)
    if not lines:
        raise GapInDeals(f"no deal of {game_id} was solved")
    first, last, n = lines[0].deal, lines[-1].deal, len(lines)
    if last - first + 1 != n:
        raise GapInDeals(f"{game_id}: {n} deals from {first} to {last}, {last - first + 1 - n} missing")
    count = Counter(line.result for line in lines)
    won, lost, unknown = count[Outcome.SOLVED.value], count[Outcome.UNSOLVABLE.value], count[Outcome.UNKNOWN.value]
    low, high = outwards(wilson(won, n)[0], wilson(won + unknown, n)[1])
    return Winnability(
        first_deal=first, last_deal=last, deals=n, won=won, lost=lost, unknown=unknown,
        low=low, high=high, budget_positions=budget_positions(game_id),
    )


def write_asset(rows: dict[str, Winnability], path: Path = ASSET) -> None:
    """``rows`` (merged with the rows ``path`` holds of other games) to ``path``."""
    table = {gid: asdict(row) for gid, row in read_asset(path).items()} if path.exists() else {}
    table.update({gid: asdict(row) for gid, row in rows.items()})
    path.write_text(json.dumps(dict(sorted(table.items())), indent=1) + "\n", encoding="utf-8")


def read_asset(path: Path = ASSET) -> dict[str, Winnability]:
    """The table ``path`` holds, by game."""
    return {gid: Winnability(**row) for gid, row in json.loads(path.read_text(encoding="utf-8")).items()}


@cache
def served() -> dict[str, Winnability]:
    """The shipped table, read once (empty when the asset is absent)."""
    return read_asset() if ASSET.exists() else {}


def percent(x: float) -> str:
    """A share as a percentage with two decimals."""
    return f"{100 * x:.2f}%"


def markdown(rows: dict[str, Winnability]) -> str:
    """The table in Markdown, as README shows it."""
    out = ["| game | deals | won | lost | unknown | won, 95% interval | half-width | positions per deal |",
           "|---|---:|---:|---:|---:|---|---:|---:|"]
    for gid, r in rows.items():
        out.append(f"| {gid} | {r.first_deal}-{r.last_deal} ({r.deals:,}) | {r.won:,} | {r.lost:,} | {r.unknown:,} | "
                   f"{percent(r.low)} to {percent(r.high)} | {100 * r.half_width:.2f} pt | {r.budget_positions:,} |")
    return "\n".join(out)


@dataclass(frozen=True)
class HintPlay:
    """How the hint player did on a range of deals, beside the solver on the same deals."""

    first_deal: int
    last_deal: int
    deals: int
    ends: dict[str, int]  # how many games ended each way (HintStop values)
    low: float  # the 95% interval of the share won by following hints
    high: float
    thoughtful: Winnability | None  # the solver on the same deals, where the atlas has them


def tally_hints(game_id: str, lines: list[DealLine], solved: list[DealLine]) -> HintPlay:
    """The hint player's row from its merged lines; ``solved``: the solver's merged lines
    of the game (those of the same deals are compared)."""
    if not lines:
        raise GapInDeals(f"no deal of {game_id} was played by the hint player")
    first, last, n = lines[0].deal, lines[-1].deal, len(lines)
    if last - first + 1 != n:
        raise GapInDeals(f"{game_id}: {n} deals from {first} to {last}, {last - first + 1 - n} missing")
    ends = {stop.value: 0 for stop in HintStop} | dict(Counter(line.result for line in lines))
    low, high = outwards(*wilson(ends[HintStop.WON.value], n))
    same = [line for line in solved if first <= line.deal <= last]
    return HintPlay(first, last, n, ends, low, high, tally(game_id, same) if len(same) == n else None)


def markdown_hints(rows: dict[str, HintPlay]) -> str:
    """The hint player's table in Markdown, beside the solver's share on the same deals."""
    out = ["| game | deals | won by following hints, 95% interval | stuck / loop / cap | won by the solver (every card known) |",
           "|---|---:|---|---|---|"]
    for gid, r in rows.items():
        e = r.ends
        won = e[HintStop.WON.value]
        solver = (f"{r.thoughtful.won:,} ({percent(r.thoughtful.low)} to {percent(r.thoughtful.high)})"
                  if r.thoughtful else "not in the atlas")
        out.append(f"| {gid} | {r.first_deal}-{r.last_deal} ({r.deals:,}) | {won:,}: {percent(r.low)} to {percent(r.high)} | "
                   f"{e[HintStop.STUCK.value]} / {e[HintStop.LOOP.value]} / {e[HintStop.CAP.value]} | {solver} |")
    return "\n".join(out)
