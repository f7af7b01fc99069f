"""The atlas's command line (``python -m service.atlas``; README's "Winnability atlas").

    run    solve a game's deals over a range on every core, resumable
    job    one index of a Kubernetes Indexed Job: its block of the range (the index is
           JOB_COMPLETION_INDEX, as Kubernetes sets it)
    merge  one file per game, one line per deal, by deal
    table  the winnability table from the merged files; --write updates the shipped asset
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from service.engine.registry import game_ids

from . import batch, table

INDEX_VARIABLE = "JOB_COMPLETION_INDEX"


def deal_range(text: str) -> range:
    """``first-last`` (both included) as a range.

    >>> deal_range("1-1000")
    range(1, 1001)
    """
    first, sep, last = text.partition("-")
    if not sep or not first.isdigit() or not last.isdigit() or int(last) < int(first):
        raise argparse.ArgumentTypeError(f"{text!r} is not a range of deals such as 1-1000")
    return range(int(first), int(last) + 1)


def games(text: str) -> list[str]:
    chosen = game_ids() if text == "all" else text.split(",")
    unknown = [g for g in chosen if g not in game_ids()]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown game(s) {', '.join(unknown)} (games: {', '.join(game_ids())})")
    return chosen


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m service.atlas", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("run", "job"):
        c = sub.add_parser(name)
        c.add_argument("--games", type=games, required=True, help="comma-separated game ids, or all")
        c.add_argument("--deals", type=deal_range, required=True, help="first-last, e.g. 1-100000")
        c.add_argument("--out", type=Path, required=True, help="the results directory")
        c.add_argument("--workers", type=int, default=0, help="processes (0: one per core)")
        if name == "job":
            c.add_argument("--blocks", type=int, required=True, help="the Job's completions: blocks of the range")
    for name in ("merge", "table"):
        c = sub.add_parser(name)
        c.add_argument("--games", type=games, default=game_ids(), help="comma-separated game ids, or all")
        c.add_argument("--out", type=Path, required=True, help="the results directory")
        c.add_argument("--deals", type=deal_range, default=None, help="only these deals")
        if name == "table":
            c.add_argument("--write", action="store_true", help=f"update {table.ASSET.name}")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command in ("run", "job"):
        deals = args.deals
        if args.command == "job":
            index = os.environ.get(INDEX_VARIABLE)
            if index is None or not index.isdigit():
                print(f"{INDEX_VARIABLE} must be set to the Job's index", file=sys.stderr)
                return 2
            deals = batch.job_block(deals, args.blocks, int(index))
            print(f"index {index} of {args.blocks}: deals {deals.start}-{deals.stop - 1}", file=sys.stderr)
        for gid in args.games:
            batch.run(args.out, gid, deals, args.workers)
        return 0
    rows = {}
    for gid in args.games:
        if not batch.game_dir(args.out, gid).is_dir():
            continue
        lines = batch.merge(args.out, gid, args.deals)
        if args.command == "table" and lines:
            rows[gid] = table.tally(gid, lines)
        print(f"{gid}: {len(lines)} deals merged into {batch.merged_path(args.out, gid)}", file=sys.stderr)
    if args.command == "table":
        print(table.markdown(rows))
        if args.write:
            table.write_asset(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
