"""The winnability table as a plot: ``docs/atlas-winnability.png``.

    make atlas-plot

Reads the shipped table (service/atlas/winnability.json) alone, so it runs in its own small
venv with matplotlib (requirements-plot.lock), apart from the service's. Left: each game's
share of winnable deals with its 95% interval; right: the share that is not won (lost, or
undecided at the budget) on a log scale, where the games near 100% differ.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ROOT = Path(__file__).resolve().parents[1]
ASSET = ROOT / "service" / "atlas" / "winnability.json"
OUT = ROOT / "docs" / "atlas-winnability.png"


def main() -> int:
    table = json.loads(ASSET.read_text())
    games = sorted(table, key=lambda g: table[g]["won"] / table[g]["deals"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 0.45 * len(games) + 1.6), sharey=True)
    for y, gid in enumerate(games):
        row = table[gid]
        won, n = row["won"], row["deals"]
        low, high = 100 * row["low"], 100 * row["high"]
        left.plot([low, high], [y, y], color="tab:blue", linewidth=6, solid_capstyle="butt")
        left.plot([100 * won / n], [y], "k|", markersize=12)
        left.text(104, y, f"{100 * won / n:.2f}%  ({n:,} deals)", va="center", fontsize=8)
        not_won = 100 - 100 * won / n
        lost = 100 * row["lost"] / n
        right.barh([y], [not_won], color="tab:orange", label="undecided at the budget" if y == 0 else None)
        right.barh([y], [lost], color="tab:red", label="proved lost" if y == 0 else None)
    left.set_yticks(range(len(games)), games)
    left.set_xlim(0, 140)
    left.set_xticks(range(0, 101, 20))
    left.set_xlabel("deals won, % (95% interval; | the share solved)")
    right.set_xscale("log")
    right.set_xlabel("deals not won, % (log scale)")
    right.legend(loc="upper right", fontsize=8)  # the games near 100% leave it free
    fig.suptitle("How often a deal can be won: the winnability atlas (each deal solved with a fixed budget in positions)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(OUT, dpi=110)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
