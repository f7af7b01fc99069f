"""Types of the compiled wire codec (_wire_native.c); wire.py's Python functions are the reference."""

from collections.abc import Callable, Collection, Sequence
from typing import Any

class Codec:
    def __init__(
        self,
        card_codes: dict[str, int],
        card_texts: dict[int, str],
        group_type: type[list[Any]],
        read_fallback: Callable[[Any, int], Any],
        texts_fallback: Callable[[Any, Any, Any], dict[str, list[list[str]]]],
        deck_fallback: Callable[[Any, Any], bool],
        move_fallback: Callable[[Any, Any], dict[str, Any]],
        move_action: int,
        card_move: str,
        max_pile_cards: int,
        join_fallback: Callable[[Any, Any], Any],
        shape_fallback: Callable[[Any, Any, Any], bool],
    ) -> None: ...
    def read_pile_group(self, value: Any, max_piles: int) -> Any: ...
    def join_groups(self, piles: Any, layout: Sequence[tuple[str, int]]) -> Any: ...
    def pile_texts(
        self, piles: Sequence[Sequence[int]], group_slices: Sequence[tuple[str, slice]], leave_out: Collection[str]
    ) -> dict[str, list[list[str]]]: ...
    def holds_the_deck(self, piles: Sequence[Sequence[int]], sorted_deck: list[int]) -> bool: ...
    def holds_the_deck_within(
        self, piles: Sequence[Sequence[int]], sorted_deck: list[int], most_cards: Sequence[int]
    ) -> bool: ...
    def move_to_json(self, game: Any, move: Any) -> dict[str, Any]: ...
