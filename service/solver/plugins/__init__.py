"""Per-game search strategies for the search core, and the one place that picks them."""

from __future__ import annotations

from service.engine.core import Game, State
from service.engine.penguin import PenguinFamily

from ..search import Strategy
from .abandon_hope import AbandonHopeStrategy
from .binary_star import BinaryStarStrategy
from .boomerang import BoomerangStrategy
from .forty_thieves import FortyThievesStrategy
from .grouped import GROUPED, GroupedStrategy
from .penguin import PenguinStrategy

# The games whose strategy is their own plug-in, by id (the Penguin family and the grouped
# games are picked by kind below).
BY_ID: dict[str, type[Strategy]] = {
    "binary-star": BinaryStarStrategy,
    "forty-thieves": FortyThievesStrategy,
    "boomerang": BoomerangStrategy,
    "abandon-hope": AbandonHopeStrategy,
}


def strategy_class(game: Game) -> type[Strategy]:
    """The class of the best strategy this package has for ``game``."""
    if isinstance(game, PenguinFamily):
        return PenguinStrategy
    if game.id in BY_ID:
        return BY_ID[game.id]
    if game.id in GROUPED:
        return GroupedStrategy
    return Strategy


def strategy_for(game: Game, root: State) -> Strategy:
    """The best strategy this package has for ``game``, rooted at ``root``."""
    kind = strategy_class(game)
    if kind is GroupedStrategy:
        return GroupedStrategy(game, root, GROUPED[game.id])
    if kind is PenguinStrategy:
        assert isinstance(game, PenguinFamily)
        return PenguinStrategy(game, root)
    return kind(game, root)


def pace_of(game: Game) -> int:
    """The positions one second of a search's budget buys in ``game``
    (:attr:`~service.solver.search.Strategy.positions_per_second` of its strategy)."""
    return strategy_class(game).positions_per_second
