"""Knowledge of Boomerang (for now the grouped canonical key and Boomerang's move order;
a dedicated plug-in replaces this)."""

from __future__ import annotations

from service.engine.core import Game, State

from .grouped import GROUPED, GroupedKnowledge


class BoomerangKnowledge(GroupedKnowledge):
    def __init__(self, game: Game, root: State) -> None:
        super().__init__(game, root, GROUPED["boomerang"])
