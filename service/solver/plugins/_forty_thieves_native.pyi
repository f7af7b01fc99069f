"""Types of Forty Thieves' compiled search parts (_forty_thieves_native.c)."""

from collections.abc import Callable
from typing import Any

# A beam entry (forty_thieves.py Entry): score, tie-break counter, position, trail.
_Entry = tuple[float, int, tuple[bytes, ...], Any]

class DepthFirst:
    @property
    def positions(self) -> int: ...
    def run(self, deadline: float, max_states: int) -> str | None: ...
    def moves(self) -> list[tuple[tuple[int, int, int, int], ...]]: ...

class Searcher:
    def __init__(
        self,
        layout: tuple[int, int, int, int, int, int],
        goes_on: bytes,
        below: bytes,
        suit: bytes,
        rank: bytes,
        card_at: bytes,
        copies: int,
        cards: int,
        move_action: int,
        deal_action: int,
    ) -> None: ...
    def is_lost(self, piles: tuple[bytes, ...], /) -> bool: ...
    def depth_first(
        self, root: tuple[bytes, ...], homes_of: Callable[[tuple[bytes, ...]], bytes], prune_lost: bool
    ) -> DepthFirst: ...
    def look_around(
        self,
        beam: list[_Entry],
        homes_of: Callable[[tuple[bytes, ...]], bytes],
        weights: tuple[float, float, float, float],
        budget: int,
        deadline: float,
        max_states: int,
        seen: int,
        count: int,
        tick: int,
    ) -> tuple[str, int, int, list[tuple[bytes, _Entry]] | None, Any, int, int, int, bool]: ...
