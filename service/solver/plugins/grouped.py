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
from service.engine.small_billee import MAX_REDEALS as SMALL_BILLEE_REDEALS

from ..search import GROUP_SEP, Strategy, pack_counters, pack_piles


@dataclass(frozen=True)
class KeySpec:
    """How to merge equivalent positions of one game."""

    sorted_groups: tuple[str, ...]  # groups whose piles are interchangeable
    why: str = ""
    # groups that a reshuffling redeal gathers pile by pile (its order seeds the reshuffle,
    # docs/rules.md "Determinism"): sorted only once no redeal is left, i.e. once the
    # counter at ``redeal_counter`` has reached ``max_redeals``
    gathered_groups: tuple[str, ...] = ()
    redeal_counter: int = 0
    max_redeals: int = 0


GROUPED: dict[str, KeySpec] = {
    "small-billee": KeySpec(
        ("foundation", "cell", "fan"),
        why="cells are interchangeable; a foundation holds one suit; fans never take a card, "
        "but a redeal gathers them fan by fan and that order seeds its reshuffle, so which fan "
        "holds a stack matters only while a redeal is left",
        gathered_groups=("fan",),
        redeal_counter=0,
        max_redeals=SMALL_BILLEE_REDEALS,
    ),
}


class GroupedStrategy(Strategy):
    """The generic strategy, with the key of :meth:`key` (groups as :class:`KeySpec` says)."""

    positions_per_second = 16_000  # Small Billee (bench/positions-budget.md)

    def __init__(self, game: Game, root: State, spec: KeySpec) -> None:
        super().__init__(game, root)
        self.spec = spec
        self.layout = [
            (g.name in spec.sorted_groups, g.name in spec.gathered_groups, game.group_range(g.name))
            for g in game.groups
        ]

    def key(self, state: State) -> Hashable:
        """The piles group by group, those of an interchangeable group sorted (a group a
        redeal gathers only once no redeal is left: until then its order is the next
        reshuffle's)."""
        p = state.piles
        spec = self.spec
        no_redeal_left = state.counters[spec.redeal_counter] >= spec.max_redeals if spec.gathered_groups else True
        parts: list[bytes] = []
        for sort, gathered, r in self.layout:
            piles = p[r.start : r.stop]
            parts.append(pack_piles(sorted(piles) if sort and (no_redeal_left or not gathered) else piles))
        return pack_counters(GROUP_SEP.join(parts), state.counters)
