"""Positions per second of each game's search, on this machine: the figures behind each
strategy's ``positions_per_second`` (the positions one second of budget buys) and the
solver processes' niceness (bench/positions-budget.md records them).

For each game, deals in turn are searched within ``--positions`` positions each (no time
budget: the searches stop on positions only) and the CPU time of each search is measured.
Printed per game: the pace of the searches that ran out of positions (the ones a budget
decides: median and lowest), the pace of all searches together, the strategy's reference
pace, and the seconds a search that runs out of the positions of a one-second budget takes
at the measured median (the ratio to 1 s is how much of its budget such a search takes on
an idle core).

    .venv/bin/python -m bench.solver_pace --deals 1-40 --positions 200000
    .venv/bin/python -m bench.solver_pace --games boomerang,amazons --share-nice 5

``--share-nice N`` also measures the share of a CPU (CPU time over wall time) a search gets
when it runs as a solver process does (a session of its own, niceness ``N``, the normal
class) against busy processes at niceness 0 in the benchmark's session (``--busy``, default
two per CPU).

Not run by ``make test``: quote its figures with ``uptime``'s load.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection

from service.engine.registry import game_ids, get_game
from service.solver import Limits, Outcome, worker
from service.solver.plugins import pace_of, strategy_for
from service.solver.search import solve


@dataclass
class Paces:
    """The searches of one game: (positions, CPU seconds) of each, and how many ran out."""

    runs: list[tuple[int, float]]
    out_of_positions: list[float]

    @property
    def together(self) -> float:
        seconds = sum(s for _, s in self.runs)
        return sum(n for n, _ in self.runs) / seconds if seconds else math.nan


def measure(game_id: str, deals: range, positions: int) -> Paces:
    """Search ``deals`` of ``game_id`` within ``positions`` each."""
    game = get_game(game_id)
    paces = Paces([], [])
    for deal in deals:
        state = game.initial_state(deal)
        started = time.process_time()
        result = solve(strategy_for(game, state), Limits(math.inf, positions))
        seconds = time.process_time() - started
        paces.runs.append((result.states, seconds))
        if result.result is Outcome.UNKNOWN and seconds > 0:
            paces.out_of_positions.append(result.states / seconds)
    return paces


BUSY = "while True: pass"


def searched(conn: Connection, niceness: int, game_id: str, deal: int, positions: int) -> None:
    """One search as a solver process runs it (a session of its own at ``niceness``, the
    normal class): sends its CPU seconds and wall seconds."""
    worker.SOLVER_NICENESS = niceness
    worker.leave_the_servers_group()
    worker.yield_to_play()
    game = get_game(game_id)
    state = game.initial_state(deal)
    started, cpu = time.monotonic(), time.process_time()
    solve(strategy_for(game, state), Limits(math.inf, positions))
    conn.send((time.process_time() - cpu, time.monotonic() - started))


def share(niceness: int, busy: int, game_id: str, deal: int, positions: int) -> float:
    """The share of a CPU (CPU time over wall time) a search at ``niceness`` gets against
    ``busy`` busy processes at niceness 0 in this session (a stand-in for play)."""
    burners = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(busy)]
    try:
        parent, child = multiprocessing.Pipe()
        proc = multiprocessing.get_context("fork").Process(target=searched, args=(child, niceness, game_id, deal, positions))
        proc.start()
        cpu, wall = parent.recv()
        proc.join()
    finally:
        for b in burners:
            b.kill()
            b.wait()
    return float(cpu / wall)


def deal_range(text: str) -> range:
    low, _, high = text.partition("-")
    return range(int(low), int(high or low) + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", default=",".join(game_ids()))
    parser.add_argument("--deals", default="1-40", type=deal_range)
    parser.add_argument("--positions", default=200_000, type=int)
    parser.add_argument("--share-nice", type=int, default=None)
    parser.add_argument("--busy", type=int, default=2 * (os.cpu_count() or 1))
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; deals {args.deals.start}-{args.deals.stop - 1}, "
          f"{args.positions} positions each")
    print(f"{'game':24} {'ran out':>7} {'median/s':>10} {'lowest/s':>10} {'all/s':>10} {'reference/s':>12} {'1 s takes':>9}")
    for game_id in args.games.split(","):
        paces = measure(game_id, args.deals, args.positions)
        out = paces.out_of_positions
        median = statistics.median(out) if out else paces.together
        lowest = min(out) if out else math.nan
        reference = pace_of(get_game(game_id))
        print(f"{game_id:24} {len(out):7} {median:10.0f} {lowest:10.0f} {paces.together:10.0f} {reference:12} "
              f"{reference / median:8.2f}s", flush=True)
    if args.share_nice is not None:
        for game_id, deal, positions in (("boomerang", 124, 10_000), ("forty-thieves", 1, 100_000)):
            got = share(args.share_nice, args.busy, game_id, deal, positions)
            print(f"{game_id} deal {deal}, {positions} positions, at nice {args.share_nice} against {args.busy} busy "
                  f"process(es) at nice 0: {got:.0%} of a CPU")


if __name__ == "__main__":
    main()
