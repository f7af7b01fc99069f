"""What one search position costs, ours (compiled and interpreted) against Freecell
Solver's, and the least it could cost in CPython: the figures behind the Penguin
family's mean-time target, and why the search is compiled.

For each preset and the same deals, in one process:

- **compiled**: the search as the service runs it (_penguin_native.c): search seconds
  over positions visited (µs per position), positions per deal;
- **python**: the same search interpreted (``PenguinStrategy(native=False)``, the
  reference), and the children it builds per visited position (a depth-first search
  builds children one at a time and stops at the first new one);
- **fc-solve**: seconds over iterations (µs per iteration), iterations per deal;
- **floor**: on positions our search visited, the time to build one child the cheapest
  way the Python representation allows (copy the pile tuple, move one card) with its
  canonical key and a visited-set check: the least a child costs in CPython before any
  move is generated, times the children built per position;
- **allowed**: what a position may cost for our mean to be at most fc-solve's, at our
  positions per deal (``fc-solve mean / our positions per deal``).

    .venv/bin/python -m bench.position_cost --games pelican,penguin-freecell-moves --deals 1-300

Forty Thieves (``--games forty-thieves``; no Freecell Solver) has its own figures,
deal by deal in turn in the same process: the whole search compiled (the look-around of
its beam passes and its lost-position test, _forty_thieves_native.c) and interpreted
(``FortyThievesStrategy(native=False)``), µs per position and deals decided; and one
256-wide beam pass from the root alone, the part compiled, in µs per position (the
same positions either way).

Not run by ``make test``. Installs Freecell Solver itself (bench/fcs_baseline.py) for
the Penguin family.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator

from bench.fcs_baseline import FcsSolver, board, ensure_installed
from bench.solver_bench import parse_range
from service.engine.penguin import PenguinFamily
from service.engine.registry import get_game
from service.settings import read_settings
from service.solver.plugins.forty_thieves import BeamPass, FortyThievesStrategy
from service.solver.plugins.penguin import PenguinStrategy, Piles
from service.solver.search import Child, Limits, Outcome, solve

SAMPLE = 20_000  # visited positions the floor is measured on
FORTY_THIEVES = "forty-thieves"
PASS_ALONE = BeamPass(256, 8, 5.0, 2.0, False)  # the Forty Thieves pass timed alone


class _Recording(PenguinStrategy):
    """The same search, keeping the positions it expands and counting the children it
    builds (a separate, untimed pass)."""

    def __init__(self, game: PenguinFamily, root: object, into: list[Piles], built: list[int]) -> None:
        super().__init__(game, root, native=False)  # type: ignore[arg-type]
        self._into = into
        self._built = built

    def children(self, piles: Piles) -> Iterator[Child]:
        self._into.append(piles)
        for child in super().children(piles):
            self._built[0] += 1
            yield child


def _floor_per_child(kn: PenguinStrategy, positions: list[Piles]) -> float:
    """Seconds to build one child (one top card onto the first empty cell, else onto the
    next pile) with its key and a visited-set check, averaged over ``positions``."""
    key = kn.key
    t_piles = range(kn.t0, kn.t1)
    cells = range(kn.c0, kn.c1)
    moves = []
    for p in positions:
        src = next((t for t in t_piles if p[t]), kn.t0)
        dst = next((c for c in cells if not p[c]), kn.t0 + (src - kn.t0 + 1) % len(t_piles))
        moves.append((p, src, dst))
    visited: set[object] = set()
    t0 = time.perf_counter()
    for p, src, dst in moves:
        lst = list(p)
        sp = lst[src]
        lst[src] = sp[:-1]
        lst[dst] += sp[-1:]
        k = key(tuple(lst))
        if k not in visited:
            visited.add(k)
    return (time.perf_counter() - t0) / max(1, len(moves))


def measure(gid: str, deals: range, seconds: float) -> str:
    game = get_game(gid)
    assert isinstance(game, PenguinFamily), f"{gid} is not a Penguin-family game"
    fcs = FcsSolver(game)
    max_states = read_settings().solver.max_states  # as the service is configured
    ours_s = py_s = fcs_s = 0.0
    ours_n = py_n = fcs_n = 0
    expanded: list[Piles] = []
    built = [0]
    for deal in deals:
        state = game.initial_state(deal)
        r = solve(PenguinStrategy(game, state), Limits(seconds, max_states))
        ours_s += r.seconds
        ours_n += r.states
        r = solve(PenguinStrategy(game, state, native=False), Limits(seconds, max_states))
        py_s += r.seconds
        py_n += r.states
        _, secs, iters = fcs.solve(board(game, state), seconds)
        fcs_s += secs
        fcs_n += iters
        if len(expanded) < SAMPLE:
            solve(_Recording(game, state, expanded, built), Limits(seconds, max_states))
    n = len(deals)
    children_per_position = built[0] / max(1, len(expanded))
    kn = PenguinStrategy(game, game.initial_state(deals.start))
    floor = _floor_per_child(kn, expanded[:SAMPLE]) * children_per_position
    per_pos = ours_s / max(1, ours_n)
    py_per_pos = py_s / max(1, py_n)
    allowed = (fcs_s / n) / max(1.0, ours_n / n)
    return (
        f"{gid}, deals {deals.start}-{deals.stop - 1}:\n"
        f"  compiled  {ours_n / n:8.0f} positions/deal {per_pos * 1e6:6.2f} µs/position"
        f" mean {ours_s / n * 1e3:6.2f} ms/deal\n"
        f"  python    {py_n / n:8.0f} positions/deal {py_per_pos * 1e6:6.2f} µs/position"
        f" mean {py_s / n * 1e3:6.2f} ms/deal ({children_per_position:.2f} children built per position;"
        f" {py_per_pos / per_pos:.1f}x compiled)\n"
        f"  fc-solve  {fcs_n / n:8.0f} iterations/deal {fcs_s / max(1, fcs_n) * 1e6:6.2f} µs/iteration"
        f" mean {fcs_s / n * 1e3:6.2f} ms/deal\n"
        f"  floor     {floor * 1e6:6.2f} µs/position: in CPython, building its children and their keys,"
        f" no move generated ({floor / py_per_pos:.0%} of python, {floor / per_pos:.1f}x compiled)\n"
        f"  allowed   {allowed * 1e6:6.2f} µs/position for a mean at most fc-solve's"
        f" ({allowed / per_pos:.2f}x compiled, {allowed / floor:.2f}x the floor)"
    )


def measure_forty_thieves(deals: range, seconds: float) -> str:
    """Forty Thieves compiled and interpreted, deal by deal in turn (the same load)."""
    game = get_game(FORTY_THIEVES)
    max_states = read_settings().solver.max_states
    spent = {True: 0.0, False: 0.0}
    seen = {True: 0, False: 0}
    decided = {True: 0, False: 0}
    pass_spent = {True: 0.0, False: 0.0}
    pass_seen = {True: 0, False: 0}
    for deal in deals:
        state = game.initial_state(deal)
        for native in (True, False):
            r = solve(FortyThievesStrategy(game, state, native=native), Limits(seconds, max_states))
            spent[native] += r.seconds
            seen[native] += r.states
            decided[native] += r.result is not Outcome.UNKNOWN
            kn = FortyThievesStrategy(game, state, native=native)
            _, root = kn.auto(kn.start())
            started = time.perf_counter()
            pass_seen[native] += kn.beam_pass(root, PASS_ALONE, max_states).positions
            pass_spent[native] += time.perf_counter() - started

    def per_position(s: float, n: int) -> float:
        return s / max(1, n) * 1e6

    search = {native: per_position(spent[native], seen[native]) for native in (True, False)}
    alone = {native: per_position(pass_spent[native], pass_seen[native]) for native in (True, False)}
    n = len(deals)
    return (
        f"{FORTY_THIEVES}, deals {deals.start}-{deals.stop - 1}, {seconds:g} s a deal:\n"
        f"  compiled  search {search[True]:6.2f} µs/position ({seen[True] / n:8.0f} positions/deal,"
        f" {decided[True]} decided); a {PASS_ALONE.width}-wide pass alone {alone[True]:6.2f} µs/position\n"
        f"  python    search {search[False]:6.2f} µs/position ({seen[False] / n:8.0f} positions/deal,"
        f" {decided[False]} decided); a {PASS_ALONE.width}-wide pass alone {alone[False]:6.2f} µs/position\n"
        f"  ratio     search {search[False] / search[True]:.1f}x, pass alone {alone[False] / alone[True]:.1f}x"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default="pelican,penguin-freecell-moves,penguin,penguin-ii")
    ap.add_argument("--deals", default="1-300", type=parse_range)
    ap.add_argument("--seconds", default=10.0, type=float, help="per-deal time limit")
    args = ap.parse_args(argv)
    games = args.games.split(",")
    if set(games) - {FORTY_THIEVES}:
        ensure_installed()
    for gid in games:
        if gid == FORTY_THIEVES:
            print(measure_forty_thieves(args.deals, args.seconds), flush=True)
        else:
            print(measure(gid, args.deals, args.seconds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
