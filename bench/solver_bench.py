"""Solver benchmark: every game, a range of deals, one fixed per-deal limit.

For each game: counts of solved / proved unsolvable / unknown, median, p95 and mean
seconds of search per deal (and of search plus the engine replay that verifies every
solution before the service answers it), states per second and per deal. For the Penguin family, Freecell
Solver (the field's best solver for these games) runs on the same deals in the same
run, and the ratios of our mean and median to its are printed.

    .venv/bin/python -m bench.solver_bench --deals 1-1000 --seconds 10
    .venv/bin/python -m bench.solver_bench --games forty-thieves --deals-for forty-thieves=1-50

Forty Thieves takes deals 1-200 unless ``--deals-for`` says otherwise (at up to 10 s a
deal). At the end, a table of every game against issue 14's targets (:data:`TARGETS`).

Not run by ``make test``. Installs Freecell Solver itself (bench/fcs_baseline.py)
unless ``--no-fcs`` is given.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

from service.engine.penguin import PenguinFamily
from service.engine.registry import game_ids, get_game
from service.settings import read_settings
from service.solver import Limits, Outcome, StopReason, solve_position


@dataclass
class Tally:
    """Results of one solver on one game's deals."""

    outcomes: Counter[Outcome] = field(default_factory=Counter)
    seconds: list[float] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)  # search plus verification replay
    states: int = 0
    unknown_deals: list[int] = field(default_factory=list)
    invalid: int = 0  # solutions the engine refused (must stay 0)

    def add(
        self, deal: int, result: Outcome, seconds: float, states: int, stopped_by: StopReason | None = None,
        wall: float | None = None,
    ) -> None:
        self.outcomes[result] += 1
        self.walls.append(seconds if wall is None else wall)
        if stopped_by is StopReason.INVALID_SOLUTION:
            self.invalid += 1
        self.seconds.append(seconds)
        self.states += states
        if result is Outcome.UNKNOWN:
            self.unknown_deals.append(deal)

    def summary(self) -> dict[str, float | int | list[int]]:
        s = sorted(self.seconds)
        n = len(s)
        total = sum(s)
        solved, unsolvable = self.outcomes[Outcome.SOLVED], self.outcomes[Outcome.UNSOLVABLE]
        return {
            "deals": n,
            "solved": solved,
            "unsolvable": unsolvable,
            "unknown": self.outcomes[Outcome.UNKNOWN],
            "decided": solved + unsolvable,
            "median_s": statistics.median(s) if s else 0.0,
            "p95_s": s[min(n - 1, int(0.95 * n))] if s else 0.0,
            "mean_s": total / n if n else 0.0,
            "states_per_s": self.states / total if total else 0.0,
            "median_with_verify_s": statistics.median(self.walls) if self.walls else 0.0,
            "mean_with_verify_s": sum(self.walls) / n if n else 0.0,
            "states_per_deal": self.states / n if n else 0.0,
            "unknown_deals": self.unknown_deals[:20],
            "invalid_solutions": self.invalid,
        }


# Issue 14's targets, per kind of game: the Penguin family against Freecell Solver in the
# same run (decide as many deals, mean at most 1.0x its mean, median at most 3x its
# median), every other game (decide 99%, median under 0.2 s). Forty Thieves' goal (decide
# 80% of the deals) is retired (issue 27): about half its deals stay undecided at 10 s, so
# its row reports the winnable share's bounds instead (docs/atlas.md).
FCS_MEAN_RATIO, FCS_MEDIAN_RATIO = 1.0, 3.0
OTHERS_DECIDED, OTHERS_MEDIAN_S = 0.99, 0.2
DEFAULT_DEALS_FOR = ("forty-thieves=1-200",)


def parse_range(text: str) -> range:
    a, _, b = text.partition("-")
    return range(int(a), int(b or a) + 1)


def bench_game(gid: str, deals: range, seconds: float, max_states: int, fcs: bool) -> dict[str, object]:
    game = get_game(gid)
    ours = Tally()
    theirs = Tally()
    contradictions: list[int] = []  # one solver proved loss where the other won
    fcs_solver = None
    penguin = game if isinstance(game, PenguinFamily) else None
    if fcs and penguin is not None:
        from bench.fcs_baseline import FcsSolver, board

        fcs_solver = FcsSolver(penguin)
    for deal in deals:
        state = game.initial_state(deal)
        started = time.perf_counter()
        r = solve_position(game, state, Limits(seconds, max_states))
        wall = time.perf_counter() - started  # search plus the replay that verifies a solution
        ours.add(deal, r.result, r.seconds, r.states, r.stopped_by, wall)
        if fcs_solver is not None and penguin is not None:
            result, secs, iters = fcs_solver.solve(board(penguin, state), seconds)
            theirs.add(deal, result, secs, iters)
            if {result, r.result} == {Outcome.SOLVED, Outcome.UNSOLVABLE}:
                contradictions.append(deal)
    out: dict[str, object] = {"game": gid, "seconds_limit": seconds, "ours": ours.summary()}
    if fcs_solver is not None:
        t = theirs.summary()
        o = out["ours"]
        assert isinstance(o, dict)
        out["fcs"] = t
        out["contradictions"] = contradictions
        out["mean_ratio"] = o["mean_s"] / t["mean_s"] if t["mean_s"] else None
        out["median_ratio"] = o["median_s"] / t["median_s"] if t["median_s"] else None
    return out


def fmt(row: dict[str, object]) -> str:
    o = row["ours"]
    assert isinstance(o, dict)
    line = (
        f"{row['game']:24} {o['deals']:5} deals: solved {o['solved']:5} unsolvable {o['unsolvable']:4} "
        f"unknown {o['unknown']:4} | median {o['median_s'] * 1000:8.2f} ms p95 {o['p95_s'] * 1000:9.2f} ms "
        f"mean {o['mean_s'] * 1000:8.2f} ms | {o['states_per_s']:8.0f} states/s {o['states_per_deal']:9.0f} states/deal"
    )
    t = row.get("fcs")
    if isinstance(t, dict):
        line += (
            f"\n{'  fc-solve':24} {t['deals']:5} deals: solved {t['solved']:5} unsolvable {t['unsolvable']:4} "
            f"unknown {t['unknown']:4} | median {t['median_s'] * 1000:8.2f} ms p95 {t['p95_s'] * 1000:9.2f} ms "
            f"mean {t['mean_s'] * 1000:8.2f} ms | ratio ours/fcs: mean {row['mean_ratio']:.2f}x "
            f"median {row['median_ratio']:.2f}x | contradictions {row['contradictions']}"
        )
    line += (
        f"\n{'':24} with the replay that verifies each solution: median "
        f"{o['median_with_verify_s'] * 1000:.2f} ms, mean {o['mean_with_verify_s'] * 1000:.2f} ms"
        f" | invalid solutions {o['invalid_solutions']}"
    )
    return line


def verdict(row: dict[str, object]) -> str:
    """Whether ``row`` meets its kind's target (see the constants above), and by what."""
    o = row["ours"]
    assert isinstance(o, dict)
    decided = o["decided"] / max(1, o["deals"])
    t = row.get("fcs")
    if isinstance(t, dict):
        mean_ratio, median_ratio = row["mean_ratio"], row["median_ratio"]
        assert isinstance(mean_ratio, float) and isinstance(median_ratio, float)
        ok = o["decided"] >= t["decided"] and mean_ratio <= FCS_MEAN_RATIO and median_ratio <= FCS_MEDIAN_RATIO
        return f"{'met' if ok else 'MISSED'} (decided >= fc-solve's, mean <= {FCS_MEAN_RATIO}x, median <= {FCS_MEDIAN_RATIO}x)"
    if row["game"] == "forty-thieves":
        deals = max(1, o["deals"])
        won, unknown = o["solved"], o["deals"] - o["decided"]
        return f"no target; won {won / deals:.1%} to {(won + unknown) / deals:.1%} of these deals"
    ok = decided >= OTHERS_DECIDED and o["median_s"] < OTHERS_MEDIAN_S
    return f"{'met' if ok else 'MISSED'} (decided >= {OTHERS_DECIDED:.0%}, median < {OTHERS_MEDIAN_S} s)"


def table(rows: list[dict[str, object]]) -> str:
    """Every game's figures as one Markdown table, with its target's verdict."""
    lines = [
        "| game | deals | decided (solved / unsolvable / unknown) | ours mean / median ms "
        "| Freecell Solver decided, mean / median ms | ratio mean / median | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        o = row["ours"]
        assert isinstance(o, dict)
        deals = f"{row['first_deal']}-{row['last_deal']}"
        ours = f"{o['decided']} ({o['solved']} / {o['unsolvable']} / {o['unknown']})"
        times = f"{o['mean_s'] * 1000:.2f} / {o['median_s'] * 1000:.2f}"
        t = row.get("fcs")
        if isinstance(t, dict):
            theirs = f"{t['decided']}, {t['mean_s'] * 1000:.2f} / {t['median_s'] * 1000:.2f}"
            ratio = f"{row['mean_ratio']:.2f}x / {row['median_ratio']:.2f}x"
        else:
            theirs = ratio = "-"
        lines.append(f"| {row['game']} | {deals} | {ours} | {times} | {theirs} | {ratio} | {verdict(row)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default=",".join(game_ids()), help="comma-separated game ids (default: all)")
    ap.add_argument("--deals", default="1-1000", type=parse_range, help="deal range, e.g. 1-1000")
    ap.add_argument("--seconds", default=10.0, type=float, help="per-deal time limit")
    ap.add_argument(
        "--max-states", default=read_settings().solver.max_states, type=int,
        help="per-deal position limit (default: the service's, SOLVER_MAX_STATES)",
    )
    ap.add_argument(
        "--deals-for", action="append", metavar="GAME=RANGE",
        help=f"another deal range for one game (repeatable; default: {', '.join(DEFAULT_DEALS_FOR)})",
    )
    ap.add_argument("--no-fcs", action="store_true", help="skip Freecell Solver")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    if not args.no_fcs and any(isinstance(get_game(g), PenguinFamily) for g in args.games.split(",")):
        from bench.fcs_baseline import ensure_installed

        ensure_installed()
    deals_for = {}
    for item in args.deals_for or DEFAULT_DEALS_FOR:
        gid, _, text = item.partition("=")
        deals_for[gid] = parse_range(text)
    rows = []
    for gid in args.games.split(","):
        started = time.monotonic()
        deals = deals_for.get(gid, args.deals)
        row = bench_game(gid, deals, args.seconds, args.max_states, not args.no_fcs)
        row["wall_s"] = time.monotonic() - started
        row["first_deal"], row["last_deal"] = deals.start, deals.stop - 1
        rows.append(row)
        print(fmt(row), flush=True)
    print(table(rows))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
