"""Types of the compiled Penguin-family move lister (_penguin_moves_native.c); penguin.py's
``PenguinFamily.python_legal_moves`` is the reference."""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

class MoveLister:
    def __init__(
        self,
        foundations: tuple[int, int],
        cells: tuple[int, int],
        tableau: tuple[int, int],
        beak: bool,
        ace: int,
        rank_of: Sequence[int],
        next_in_suit: Sequence[int],
        parents: Mapping[int, Sequence[int]],
        children: Mapping[int, Sequence[int]],
        empty_takes: Mapping[int, Sequence[bool]],
        run_limits: Sequence[Sequence[tuple[int, int]]],
        state_type: type,
        one_card_moves: tuple[tuple[Any, ...], ...],
        move_type: Callable[..., Any],
        move_action: Any,
        fallback: Callable[[Any], list[Any]],
    ) -> None: ...
    def legal_moves(self, state: Any) -> list[Any]: ...
