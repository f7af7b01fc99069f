"""The generic strategy with a canonical key: piles of interchangeable groups are sorted.

Which groups are interchangeable is rules knowledge, stated per game in
:data:`GROUPED` with the reason; the engine's safe autoplay and the generic move order
are kept (see :class:`~service.solver.search.Strategy`).

Sound: when the piles of a group are interchangeable (the rules treat them alike and
none has a place of its own), two positions that differ only in which pile of the
group holds what have the same future up to renaming those piles, so one is won
exactly when the other is, and searching one of them is enough. The key merges only
such positions; the moves of a solution are those of the children actually searched,
so they name the real piles.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from service.engine.core import Game, State

from ..search import GROUP_SEP, Strategy, pack_counters, pack_piles


@dataclass(frozen=True)
class KeySpec:
    """How to merge equivalent positions of one game."""

    sorted_groups: tuple[str, ...]  # groups whose piles are interchangeable
    why: str = ""


GROUPED: dict[str, KeySpec] = {
    "small-billee": KeySpec(
        ("foundation", "cell", "fan"),
        why="cells are interchangeable; fans never take a card and a redeal gathers them in "
        "sorted order, so which fan holds a stack does not matter; a foundation holds one suit",
    ),
}


class GroupedStrategy(Strategy):
    """The generic strategy, with the key of :meth:`key` (groups as :class:`KeySpec` says)."""

    positions_per_second = 16_000  # Small Billee (bench/positions-budget.md)

    def __init__(self, game: Game, root: State, spec: KeySpec) -> None:
        super().__init__(game, root)
        self.layout = [(g.name in spec.sorted_groups, game.group_range(g.name)) for g in game.groups]

    def key(self, state: State) -> Hashable:
        """The piles group by group, those of an interchangeable group sorted."""
        p = state.piles
        parts: list[bytes] = []
        for sort, r in self.layout:
            piles = p[r.start : r.stop]
            parts.append(pack_piles(sorted(piles) if sort else piles))
        return pack_counters(GROUP_SEP.join(parts), state.counters)
