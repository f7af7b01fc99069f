"""Memory per visited position of the Penguin family's search, compiled against the
interpreted reference, in one run.

Each search runs alone in a fresh interpreter, which reports its peak resident memory
(``ru_maxrss``) before and after the search, and the positions the search visited; the
figure is the growth over the positions. The largest searches the family offers are
small (the options mix below visits about 17,000 positions, proving Pelican deal 1 lost
with 7 cells and single-card runs), so the figures carry some allocator noise: quote the
ratio.

    .venv/bin/python -m bench.solver_memory

Not run by ``make test``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys

# (game, options, deal): searches that visit many positions
SEARCHES = (
    ("pelican", {"cells": 7, "runs": "free-cell-limit", "empty_pile": "below-base"}, 1),
    ("pelican", {"cells": 7, "runs": "single", "empty_pile": "below-base"}, 1),
    ("pelican", {"cells": 5, "runs": "single", "empty_pile": "any"}, 8),
    ("penguin", {"cells": 5, "runs": "single", "empty_pile": "any"}, 10),
)


def one_search(game_id: str, options: dict[str, object], deal: int, native: bool) -> dict[str, float]:
    """In this process: the search's positions and the peak memory it added (bytes)."""
    from service.engine.penguin import PenguinFamily
    from service.engine.registry import get_game
    from service.solver import Limits
    from service.solver.plugins.penguin import PenguinStrategy
    from service.solver.search import solve

    game = get_game(game_id, options)
    assert isinstance(game, PenguinFamily)
    state = game.initial_state(deal)
    strategy = PenguinStrategy(game, state, native=native)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = solve(strategy, Limits(60, 10**7))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"states": result.states, "bytes": (after - before) * 1024.0}


def measure(game_id: str, options: dict[str, object], deal: int, native: bool) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-m", "bench.solver_memory", "--one", json.dumps([game_id, options, deal, native])],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    figures: dict[str, float] = json.loads(out)
    return figures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--one", help=argparse.SUPPRESS)  # a child: [game, options, deal, native]
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one_search(*json.loads(args.one))))
        return 0
    for game_id, options, deal in SEARCHES:
        row = {native: measure(game_id, options, deal, native) for native in (False, True)}
        per = {native: r["bytes"] / max(1, r["states"]) for native, r in row.items()}
        print(
            f"{game_id} {options} deal {deal}: {row[True]['states']:.0f} positions"
            f" | python {per[False]:6.0f} B/position | compiled {per[True]:6.0f} B/position"
            f" | compiled/python {per[True] / per[False]:.2f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
