"""The atlas's losses checked by another solver: every deal of a Penguin-family game the
atlas proved unwinnable is given to Freecell Solver (bench/fcs_baseline.py), which must not
solve it. One solve it finds refutes our proof of that deal (and the solver's pruning).

    .venv/bin/python -m bench.atlas_crosscheck --out atlas-data --seconds 30

Reads the merged files of ``python -m service.atlas merge``. Prints, per game, how many
lost deals Freecell Solver also proved lost, left undecided at its limit, or solved.
Not run by ``make test``.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from bench.fcs_baseline import FcsSolver, board, ensure_installed
from service.atlas import batch
from service.engine.penguin import PenguinFamily
from service.engine.registry import game_ids, get_game
from service.solver import Outcome


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True, help="the atlas's results directory")
    p.add_argument("--seconds", type=float, default=30.0, help="Freecell Solver's limit per deal")
    args = p.parse_args()
    ensure_installed()
    refuted = 0
    print(f"{'game':24} {'lost':>5} {'fcs lost':>9} {'fcs unknown':>12} {'fcs solved':>11}  (limit {args.seconds:g} s a deal)")
    for gid in game_ids():
        game = get_game(gid)
        path = batch.merged_path(args.out, gid)
        if not isinstance(game, PenguinFamily) or not path.exists():
            continue
        lost = [line.deal for line in batch.read_lines(path) if line.result == Outcome.UNSOLVABLE.value]
        fcs = FcsSolver(game)
        verdicts: Counter[Outcome] = Counter()
        solved = []
        for deal in lost:
            result, _, _ = fcs.solve(board(game, game.deal_state(deal)), args.seconds)
            verdicts[result] += 1
            if result is Outcome.SOLVED:
                solved.append(deal)
        refuted += len(solved)
        print(f"{gid:24} {len(lost):5d} {verdicts[Outcome.UNSOLVABLE]:9d} {verdicts[Outcome.UNKNOWN]:12d} "
              f"{verdicts[Outcome.SOLVED]:11d}" + (f"  solved by fcs: {solved}" if solved else ""))
    print("no loss refuted" if not refuted else f"{refuted} losses refuted")
    return 1 if refuted else 0


if __name__ == "__main__":
    sys.exit(main())
