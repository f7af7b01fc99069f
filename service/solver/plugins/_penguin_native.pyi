"""Types of the compiled Penguin-family search (_penguin_native.c)."""

from service.solver.search import NativeAnswer

class Searcher:
    def __init__(
        self,
        layout: tuple[int, int, int, int],
        rel: bytes,
        up: bytes,
        down: bytes,
        empty_takes: bytes,
        base_cards: bytes,
        run_limits: list[int],
        runs: int,
        any_empty: bool,
        move_action: int,
    ) -> None: ...
    def depth_first(
        self, root: tuple[bytes, ...], deadline: float, max_states: int, max_depth: int, long_path: int
    ) -> NativeAnswer: ...
    def best_first(self, root: tuple[bytes, ...], deadline: float, max_states: int, max_open: int) -> NativeAnswer: ...
