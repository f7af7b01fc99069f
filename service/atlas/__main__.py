"""The atlas's command line (``python -m service.atlas``; README's "Winnability atlas").

    run    play a game's deals over a range on every core, resumable
    job    one index of a Kubernetes Indexed Job: its block of the range (--index, which
           deploy/k8s/atlas-job.yaml passes from the pod's completion index)
    merge  one file per game, one line per deal, by deal
    table  the winnability table from the merged files; --write updates the shipped asset
    grades difficulty thresholds per game from the per-deal lines (--write: the asset)
    validate  tuned cheap players' wins per grade, on deals the calibration did not use (--write: the asset)

Each takes --player: solver (the default: every card known, the winnability table),
hints (a player who follows the service's player-knowledge hints) or full-hints (the same
player following full-knowledge hints).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from service.engine.core import MAX_DEAL
from service.engine.registry import game_ids

from . import batch, grades, table, validate
from .players import Player
from .workers import BrokenProcessPool


def deal_range(text: str) -> range:
    """``first-last`` (both included) as a range.

    >>> deal_range("1-1000")
    range(1, 1001)
    """
    first, sep, last = text.partition("-")
    if not sep or not first.isdigit() or not last.isdigit() or int(last) < int(first):
        raise argparse.ArgumentTypeError(f"{text!r} is not a range of deals such as 1-1000")
    if int(last) > MAX_DEAL:
        raise argparse.ArgumentTypeError(f"deal numbers run from 0 to {MAX_DEAL}")
    return range(int(first), int(last) + 1)


def games(text: str) -> list[str]:
    """Comma-separated game ids, or ``all``."""
    chosen = game_ids() if text == "all" else text.split(",")
    unknown = [g for g in chosen if g not in game_ids()]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown game(s) {', '.join(unknown)} (games: {', '.join(game_ids())})")
    return chosen


def whole_number(least: int) -> Callable[[str], int]:
    """An argument type: an integer of at least ``least``."""
    def parse(text: str) -> int:
        if not text.isdigit() or int(text) < least:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer of at least {least}")
        return int(text)
    return parse


def parser() -> argparse.ArgumentParser:
    """The command line's arguments."""
    p = argparse.ArgumentParser(prog="python -m service.atlas", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("run", "job"):
        c = sub.add_parser(name)
        c.add_argument("--games", type=games, required=True, help="comma-separated game ids, or all")
        c.add_argument("--deals", type=deal_range, required=True, help="first-last, e.g. 1-100000")
        c.add_argument("--out", type=Path, required=True, help="the results directory")
        c.add_argument("--workers", type=whole_number(0), default=0, help="processes (0: one per core)")
        c.add_argument("--player", type=Player, choices=list(Player), default=Player.SOLVER,
                       help="who plays the deals (default: solver)")
        if name == "job":
            c.add_argument("--blocks", type=whole_number(1), required=True,
                           help="the Job's completions: blocks of the range")
            c.add_argument("--index", type=whole_number(0), required=True,
                           help="the pod's completion index: which block, 0 to blocks - 1")
    for name in ("merge", "table"):
        c = sub.add_parser(name)
        c.add_argument("--games", type=games, default=game_ids(), help="comma-separated game ids, or all")
        c.add_argument("--out", type=Path, required=True, help="the results directory")
        c.add_argument("--deals", type=deal_range, default=None,
                       help="only these deals (then the merged files are not rewritten)")
        c.add_argument("--player", type=Player, choices=list(Player), default=Player.SOLVER,
                       help="who played the deals (default: solver)")
        if name == "table":
            c.add_argument("--write", action="store_true", help=f"update {table.ASSET.name}")
    c = sub.add_parser("grades")
    c.add_argument("--data", type=Path, action="append", required=True,
                   help="a results directory `run` wrote (repeatable: a game's lines are read from the first "
                        "that holds all its deals of the range)")
    c.add_argument("--games", type=games, default=[g for g in game_ids() if g not in grades.NEVER_GRADED],
                   help="comma-separated game ids, or all")
    c.add_argument("--deals", type=deal_range, default=deal_range("1-20000"), help="the calibration range")
    c.add_argument("--reason", action="append", default=[], metavar="GAME=TEXT",
                   help="why a game without data is not graded (repeatable)")
    c.add_argument("--write", action="store_true", help=f"update {grades.ASSET.name}")
    c = sub.add_parser("validate")
    c.add_argument("--data", type=Path, action="append", default=[],
                   help="a results directory whose lines grade deals without solving them again (repeatable)")
    c.add_argument("--games", type=games, required=True, help="comma-separated game ids, or all")
    c.add_argument("--per-game", type=whole_number(1), help="deals of each grade per game (required unless --kept)")
    c.add_argument("--write", action="store_true", help=f"keep each game's validation in {grades.ASSET.name}")
    c.add_argument("--kept", action="store_true", help=f"print the validations {grades.ASSET.name} keeps; play nothing")
    c.add_argument("--scan", type=whole_number(1), default=5000, help="the most deals graded per game")
    c.add_argument("--workers", type=whole_number(0), default=0, help="processes (0: one per core)")
    return p


def calibrate(args: argparse.Namespace) -> int:
    """``grades``: calibrate each game on its lines of ``--deals``."""
    reasons = dict(grades.NEVER_GRADED)
    for text in args.reason:
        gid, sep, why = text.partition("=")
        if not sep or gid not in game_ids():
            print(f"--reason {text!r}: not GAME=TEXT", file=sys.stderr)
            return 2
        reasons[gid] = why
    found: dict[str, grades.Calibration] = {}
    for gid in args.games:
        lines: list[batch.DealLine] = []
        for data in args.data:
            lines = batch.merge(data, gid, args.deals, write=False) if batch.block_files(data, gid, args.deals) else []
            if len(lines) == len(args.deals):
                break
        if len(lines) != len(args.deals):
            print(f"{gid}: not all of deals {args.deals.start}-{args.deals.stop - 1} in {', '.join(map(str, args.data))}:"
                  " not graded", file=sys.stderr)
            reasons.setdefault(gid, f"not calibrated: no atlas data on deals {args.deals.start}-{args.deals.stop - 1}")
            continue
        c = found[gid] = grades.calibrate(lines)
        reasons.pop(gid, None)
        shares = ", ".join(f"{g} {c.counts[g] / c.won:.1%}" for g in c.counts)
        print(f"{gid}: {c.won} winnable deals; thresholds {c.thresholds}; {shares}")
    for gid in game_ids():
        if gid not in found:
            reasons.setdefault(gid, "not calibrated")
    if args.write:
        grades.write_asset(found, {g: r for g, r in reasons.items() if g not in found})
    return 0


def check(args: argparse.Namespace) -> int:
    """``validate``: cheap players' wins per grade past each game's calibration range."""
    if not args.kept and args.per_game is None:
        print("validate: --per-game is required (or --kept)", file=sys.stderr)
        return 2
    found = []
    for gid in args.games:
        if gid not in grades.calibrations():
            print(f"{gid}: not graded", file=sys.stderr)
            continue
        if args.kept:
            kept = grades.validation_of(gid)
            if kept is None:
                print(f"{gid}: not validated", file=sys.stderr)
            else:
                found.append(validate.Validation.from_json(gid, kept))
            continue
        known = {}
        for data in args.data:
            if batch.block_files(data, gid):
                known.update({line.deal: line for line in batch.merge(data, gid, write=False)})
        checked = validate.validate(gid, args.per_game, args.scan, args.workers, known)
        if args.write:
            grades.write_validation(gid, checked.as_json())
        found.append(checked)
        print(validate.markdown([checked]), file=sys.stderr)  # as each game is done
    print(validate.tuning_markdown(found), validate.markdown(found), sep="\n\n")
    return 0


def solve(args: argparse.Namespace) -> int:
    """``run`` and ``job``."""
    deals = args.deals
    if args.command == "job":
        index = args.index
        if index >= args.blocks:
            print(f"--index must be the Job's completion index, 0 to {args.blocks - 1} (it is {index})",
                  file=sys.stderr)
            return 2
        deals = batch.job_block(deals, args.blocks, index)
        if not deals:
            print(f"index {index} of {args.blocks}: no deal (the range has fewer deals than blocks)", file=sys.stderr)
            return 0
        print(f"index {index} of {args.blocks}: deals {deals.start}-{deals.stop - 1}", file=sys.stderr)
    for gid in args.games:
        batch.run(args.out, gid, deals, args.workers, args.player)
    return 0


def tabulate(args: argparse.Namespace) -> int:
    """``merge`` and ``table``."""
    rows: dict[str, table.Winnability] = {}
    hint_rows: dict[str, table.HintPlay] = {}
    for gid in args.games:
        if not batch.block_files(args.out, gid, args.deals, args.player):
            continue
        lines = batch.merge(args.out, gid, args.deals, write=args.deals is None, player=args.player)
        where = f"merged into {batch.merged_path(args.out, gid, args.player)}" if args.deals is None else "read"
        print(f"{gid}: {len(lines)} deals {where}", file=sys.stderr)
        if args.command != "table":
            continue
        if args.player is Player.SOLVER:
            rows[gid] = table.tally(gid, lines)
        else:
            solved = batch.merge(args.out, gid, range(lines[0].deal, lines[-1].deal + 1), write=False)
            hint_rows[gid] = table.tally_hints(gid, lines, solved)
    if args.command == "table":
        print(table.markdown(rows) if args.player is Player.SOLVER else table.markdown_hints(hint_rows))
        if args.write:
            if args.player is not Player.SOLVER:
                print("--write: the shipped table is the solver's", file=sys.stderr)
                return 2
            table.write_asset(rows)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line: its exit status (2: bad arguments; 1: the results refused)."""
    args = parser().parse_args(argv)
    try:
        if args.command == "grades":
            return calibrate(args)
        if args.command == "validate":
            return check(args)
        return solve(args) if args.command in ("run", "job") else tabulate(args)
    except (OSError, batch.BadResults, batch.ConflictingResults, table.GapInDeals) as e:
        print(f"python -m service.atlas {args.command}: {e}", file=sys.stderr)
        return 1
    except BrokenProcessPool:
        resumes = "; the lines written so far stay, and the same command resumes after them"
        print(f"python -m service.atlas {args.command}: a worker process died (killed, or out of memory?)"
              f"{resumes if args.command in ('run', 'job') else ''}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    # A pod's SIGTERM ends the run at once (Python as PID 1 would ignore it): the lines
    # written so far stay, and the next run resumes after them.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    sys.exit(main())
