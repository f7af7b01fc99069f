"""Per-game knowledge for the search core, and the one place that picks it."""

from __future__ import annotations

from service.engine.core import Game, State
from service.engine.penguin import PenguinFamily

from ..search import Knowledge
from .abandon_hope import AbandonHopeKnowledge
from .binary_star import BinaryStarKnowledge
from .boomerang import BoomerangKnowledge
from .forty_thieves import FortyThievesKnowledge
from .grouped import GROUPED, GroupedKnowledge
from .penguin import PenguinKnowledge


def knowledge_for(game: Game, root: State) -> Knowledge:
    """The best knowledge this package has for ``game``, rooted at ``root``."""
    if isinstance(game, PenguinFamily):
        return PenguinKnowledge(game, root)
    if game.id == "binary-star":
        return BinaryStarKnowledge(game, root)
    if game.id == "forty-thieves":
        return FortyThievesKnowledge(game, root)
    if game.id == "boomerang":
        return BoomerangKnowledge(game, root)
    if game.id == "abandon-hope":
        return AbandonHopeKnowledge(game, root)
    spec = GROUPED.get(game.id)
    if spec is not None:
        return GroupedKnowledge(game, root, spec)
    return Knowledge(game, root)
