"""Every game the service plays, by id, and the one way to get a configured game.

:data:`GAMES` is the one list of games: the API's game ids (and their order in
``GET /v1/games``) come from it, so a new game is added here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from . import abandon_hope, amazons, binary_star, boomerang, forty_thieves, small_billee
from .core import Game, RulesError
from .penguin import PRESETS

GAMES: tuple[type[Game], ...] = (
    *PRESETS,
    small_billee.GAME,
    boomerang.GAME,
    amazons.GAME,
    abandon_hope.GAME,
    binary_star.GAME,
    forty_thieves.GAME,
)
GAME_CLASSES: dict[str, type[Game]] = {cls.id: cls for cls in GAMES}
if len(GAME_CLASSES) != len(GAMES):
    raise RuntimeError("two games share an id")


class UnknownGame(KeyError):
    """No game has this id."""


def game_ids() -> list[str]:
    return list(GAME_CLASSES)


def check_options(cls: type[Game], options: Mapping[str, Any] | None) -> dict[str, Any]:
    """Options with defaults filled in; RulesError naming the first bad one."""
    specs = {s.name: s for s in cls.option_specs()}
    values = {name: spec.default for name, spec in specs.items()}
    for name, value in (options or {}).items():
        if name not in specs:
            allowed = ", ".join(specs) or "none"
            raise RulesError(f"{cls.name} has no option {name!r} (options: {allowed})", f"options/{name}")
        why = specs[name].check(value)
        if why:
            raise RulesError(f"option {name!r} {why}", f"options/{name}")
        values[name] = value
    return values


@lru_cache(maxsize=256)
def _make(game_id: str, frozen: tuple[tuple[str, Any], ...]) -> Game:
    return GAME_CLASSES[game_id](options=dict(frozen))


def get_game(game_id: str, options: Mapping[str, Any] | None = None) -> Game:
    """The game ``game_id`` with ``options`` (validated; defaults fill the rest).

    >>> get_game("opus").options["cells"]
    5
    """
    cls = GAME_CLASSES.get(game_id)
    if cls is None:
        raise UnknownGame(game_id)
    values = check_options(cls, options)
    return _make(game_id, tuple(sorted(values.items())))
