"""Engine speed per game: legal-move generation plus apply, in moves per second.

Plays random games (fixed seeds) and times, for every position, one ``legal_moves``
call and one ``apply`` of a chosen move. The baseline, timed in the same run on the
same positions, is the least any apply must do: rebuild the pile tuple with one pile
replaced. Figures are medians of 5 repetitions; quote ratios (the machine is noisy).

    .venv/bin/python bench/engine_bench.py [--deals 30] [--steps 150]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from service.engine.core import Game, Move, State
from service.engine.registry import GAME_CLASSES, get_game


def positions(game: Game, deals: int, steps: int) -> list[tuple[State, Move]]:
    """Positions of random playouts, each with the move played from it."""
    out = []
    rng = random.Random(12345)
    for deal in range(1, deals + 1):
        state = game.initial_state(deal)
        for _ in range(steps):
            moves = game.legal_moves(state)
            if not moves:
                break
            move = rng.choice(moves)
            out.append((state, move))
            state = game.apply(state, move)
    return out


def time_engine(game: Game, pos: list[tuple[State, Move]]) -> float:
    legal, apply = game.legal_moves, game.apply
    t0 = time.perf_counter()
    for state, move in pos:
        legal(state)
        apply(state, move)
    return time.perf_counter() - t0


def time_baseline(pos: list[tuple[State, Move]]) -> float:
    t0 = time.perf_counter()
    for state, _move in pos:
        piles = list(state.piles)
        piles[0] = piles[0][:-1] if piles[0] else piles[0]
        State(tuple(piles), state.counters, state.deal)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--deals", type=int, default=30)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{'game':24} {'positions':>9} {'moves/s':>10} {'us/move':>8} {'legal/pos':>9} {'x baseline':>10}")
    for gid in GAME_CLASSES:
        game = get_game(gid)
        pos = positions(game, args.deals, args.steps)
        eng = statistics.median(time_engine(game, pos) for _ in range(args.repeat))
        base = statistics.median(time_baseline(pos) for _ in range(args.repeat))
        avg_legal = statistics.mean(len(game.legal_moves(s)) for s, _ in pos[:500])
        rate = len(pos) / eng
        print(f"{gid:24} {len(pos):9d} {rate:10.0f} {1e6 / rate:8.1f} {avg_legal:9.1f} {eng / base:10.1f}")


if __name__ == "__main__":
    main()
