"""Knowledge of Abandon Hope (for now the grouped canonical key; a dedicated plug-in
replaces this)."""

from __future__ import annotations

from service.engine.core import Game, State

from .grouped import GROUPED, GroupedKnowledge


class AbandonHopeKnowledge(GroupedKnowledge):
    def __init__(self, game: Game, root: State) -> None:
        super().__init__(game, root, GROUPED["abandon-hope"])
