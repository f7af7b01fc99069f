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


def strategy_for(game: Game, root: State) -> Strategy:
    """The best strategy this package has for ``game``, rooted at ``root``."""
    if isinstance(game, PenguinFamily):
        return PenguinStrategy(game, root)
    if game.id == "binary-star":
        return BinaryStarStrategy(game, root)
    if game.id == "forty-thieves":
        return FortyThievesStrategy(game, root)
    if game.id == "boomerang":
        return BoomerangStrategy(game, root)
    if game.id == "abandon-hope":
        return AbandonHopeStrategy(game, root)
    spec = GROUPED.get(game.id)
    if spec is not None:
        return GroupedStrategy(game, root, spec)
    return Strategy(game, root)
