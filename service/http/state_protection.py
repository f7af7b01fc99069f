"""States in and out of the API under the server's protection mode (``STATE_PROTECTION``).

The one place where the three modes differ for the views: :func:`read_position` turns a
request's state into a :class:`Position` (checked, in signed and sealed modes, before a
card of it is read), :func:`answer_state` turns a position into the state an answer
carries, :func:`dealt_position` deals a deal number (keyed in sealed mode) and
:func:`answer_events` shows what a move did without naming a face-down card.

- open: states as the wire format writes them, trusted as sent;
- signed: the same, with a signature (:mod:`.state_signing`);
- sealed: face-down cards and the deal's seed encrypted in the state (:mod:`.state_sealing`),
  signed with the sealed mode's domain, deals keyed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from service.engine.core import Event, Game, RulesError, State
from service.engine.registry import get_game
from service.settings import StateProtection, StateProtectionSettings

from .problems import ApiError, ProblemCode
from .state_sealing import KeyedDeals, redact_event, seal, unseal
from .state_signing import sign_state, verify_state
from .wire import NotationError, event_to_json, state_from_json, state_to_json


class Position(NamedTuple):
    """A game, a position of it, and the deal number the player knows it by. In sealed
    mode ``state.deal`` is the deal's keyed seed (which later reshuffles derive from),
    never shown; in the other modes the two are the same number."""

    game: Game
    state: State
    deal: int


def is_sealed(protection: StateProtectionSettings) -> bool:
    return protection.mode is StateProtection.SEALED


def deal_seeds(protection: StateProtectionSettings, game: Game) -> Callable[[int], int] | None:
    """How a deal number becomes the engine's shuffle seed: keyed in sealed mode (a plain
    value, so that it travels to solver processes); None (the number itself) otherwise."""
    return KeyedDeals.of(protection, game) if is_sealed(protection) else None


def dealt_position(protection: StateProtectionSettings, game: Game, deal: int) -> Position:
    """Deal ``deal`` of ``game`` (its keyed layout in sealed mode). RulesError for a deal
    number out of range."""
    seeds = deal_seeds(protection, game)
    return Position(game, game.initial_state(deal if seeds is None else seeds(deal)), deal)


def answer_state(protection: StateProtectionSettings, position: Position) -> dict[str, Any]:
    """The state an answer carries for ``position``: signed, and sealed, as the mode says."""
    game, state, deal = position
    data = state_to_json(game, state)
    if is_sealed(protection):
        data = seal(protection.keys[0], game, data, state.deal, deal)
    return sign_state(protection, data)


def answer_events(protection: StateProtectionSettings, game: Game, after: State, events: list[Event]) -> list[dict[str, Any]]:
    """A move's events as its answer lists them; in sealed mode no event names a card
    that lies face down in ``after``."""
    if is_sealed(protection):
        events = [redact_event(game, after, e) for e in events]
    return [event_to_json(game, e) for e in events]


def read_position(
    protection: StateProtectionSettings, game_id: str, data: Mapping[str, Any], where: str = "/state"
) -> Position:
    """The position a request's state holds: its signature checked and its sealed part
    opened first (403 problems), then read (422 ``invalid-state`` if it cannot be read or
    is not a position the game can reach). ``game_id`` is the game the path names."""
    key = verify_state(protection, data, where)
    seed: int | None = None
    if key is not None and is_sealed(protection):
        game = read_game(data, game_id, where)
        data, seed = unseal(key, game, data, where)
    try:
        game, state = state_from_json(data, expect_game=game_id)
    except NotationError as e:
        raise ApiError(
            ProblemCode.INVALID_STATE, "the state cannot be read: " + e.problems[0].message,
            [(where + p.where, p.message) for p in e.problems],
        ) from None
    problems = game.validate(state)
    if problems:
        raise ApiError(
            ProblemCode.INVALID_STATE, "the state is not one this game can reach: " + problems[0].message,
            [(where + p.where, p.message) for p in problems],
        )
    if seed is None:
        return Position(game, state, state.deal)
    return Position(game, state._replace(deal=seed), state.deal)


def read_game(data: Mapping[str, Any], game_id: str, where: str) -> Game:
    """The game (with options) a signed state names, to open its sealed part."""
    if data.get("game") != game_id:
        raise ApiError(
            ProblemCode.INVALID_STATE, f"this state is a {data.get('game')!r} state, sent to {game_id!r}",
            [(f"{where}/game", "not the game of the path")],
        )
    try:
        return get_game(game_id, data.get("options") or {})
    except RulesError as e:
        raise ApiError(ProblemCode.INVALID_STATE, str(e), [(f"{where}/{e.where}", str(e))]) from None


__all__ = [
    "Position",
    "answer_events",
    "answer_state",
    "deal_seeds",
    "dealt_position",
    "is_sealed",
    "read_position",
]
