"""Freecell Solver as the benchmark's yardstick for the Penguin family (never used by
the service). :func:`ensure_installed` installs it (Debian ``libfreecell-solver0`` and
``freecell-solver-bin``, PyPI binding ``freecell_solver``) when it is missing.

Penguin-family boards are renumbered relative to the foundation base (base -> Ace,
the rank below it -> King), which makes them Freecell-Solver boards with
``-sbb suit`` and the family's cells, run rule and empty-pile rule.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import time
from typing import Any

from service.engine.cards import Card, rank_of, suit_of
from service.engine.core import State
from service.engine.penguin import PenguinFamily
from service.solver import Outcome

PYPI_BINDING = "freecell_solver==0.6.0"
LIBRARY = "libfreecell-solver.so.0"
FC_RANKS = "A23456789TJQK"
FC_SUITS = "CDHS"
# Freecell Solver's return codes (fcs_user.h).
SOLVED, NOT_SOLVABLE, SUSPENDED = 0, 1, 5


def _library_present() -> bool:
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib", "/usr/local/lib"):
        if os.path.exists(os.path.join(d, LIBRARY)):
            return True
    return False


def ensure_installed() -> None:
    """Install Freecell Solver and its Python binding if they are missing (idempotent)."""
    if not _library_present() or shutil.which("fc-solve") is None:
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "libfreecell-solver0", "freecell-solver-bin"],
            check=True,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        )
    try:
        importlib.import_module("freecell_solver")
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", PYPI_BINDING], check=True)


def fcs_args(game: PenguinFamily) -> list[str]:
    """Freecell Solver's command line for this member of the family."""
    seq = "unlimited" if game.runs == "whole" else "limited"
    empty = "all" if game.any_empty else "kings"
    args = [
        "--freecells-num", str(game.ncells), "--stacks-num", "7", "--decks-num", "1",
        "--sequences-are-built-by", "suit", "--sequence-move", seq, "--empty-stacks-filled-by", empty,
    ]
    return args


def board(game: PenguinFamily, state: State) -> str:
    """The position as a Freecell Solver board, ranks renumbered from the base rank."""
    base_rank = game.base_rank(state)

    def rank(c: Card) -> str:
        return FC_RANKS[(rank_of(c) - base_rank) % len(FC_RANKS)]

    def card(c: Card) -> str:
        return rank(c) + FC_SUITS[suit_of(c)]

    found = []
    for f in game.group_range("foundation"):
        fp = state.piles[f]
        if fp:
            found.append(f"{FC_SUITS[suit_of(fp[-1])]}-{rank(fp[-1])}")
    lines = ["Foundations: " + " ".join(found)]
    if game.has_group("cell"):
        cells = [card(state.piles[c][0]) if state.piles[c] else "-" for c in game.group_range("cell")]
        lines.append("Freecells: " + " ".join(cells))
    for t in game.group_range("tableau"):
        lines.append(": " + " ".join(card(c) for c in state.piles[t]))
    return "\n".join(lines) + "\n"


class FcsSolver:
    """One in-process Freecell Solver instance configured for one game."""

    def __init__(self, game: PenguinFamily, step: int = 2000) -> None:
        fcs = importlib.import_module("freecell_solver")
        self.args = fcs_args(game)
        self.module: Any = fcs
        self.step = step

    def solve(self, text: str, seconds: float) -> tuple[Outcome, float, int]:
        """(result, seconds, iterations) of Freecell Solver on the board ``text``."""
        user = self.module.FreecellSolver()
        parsed = user.input_cmd_line(self.args)
        if parsed["last_arg"] != len(self.args):  # the binding stops silently at a bad option
            raise RuntimeError(f"Freecell Solver refused {self.args[parsed['last_arg']:]}")
        started = time.perf_counter()
        limit = self.step
        user.limit_iterations(limit)
        ret = user.solve_board(text)
        while ret == SUSPENDED:
            spent = time.perf_counter() - started
            if spent >= seconds:
                break
            # the next slice: doubling while slices are short, then no more than the pace
            # so far says fits in the time left (so the limit is overshot by one short slice)
            fits = int(limit / max(spent, 1e-6) * (seconds - spent))
            limit += max(self.step, min(limit, fits))
            user.limit_iterations(limit)
            ret = user.resume_solution()
        elapsed = time.perf_counter() - started
        iters = user.get_num_times()
        result = {SOLVED: Outcome.SOLVED, NOT_SOLVABLE: Outcome.UNSOLVABLE}.get(ret, Outcome.UNKNOWN)
        return result, elapsed, iters
