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
from typing import Any, Final, NamedTuple

from service.engine.core import Event, Game, Problem, State
from service.settings import StateProtection, StateProtectionSettings

from .problems import ApiError, ProblemCode
from .state_sealing import KeyedDeals, keeps_secrets, readable_part, redact_event, seal, signed_part, unseal
from .state_signing import DOMAINS, position_canonical, protects, sign_state, verify_state
from .wire import SEALED_FIELD, NotationError, event_to_json, move_to_json, read_body, read_header, state_to_json


class Position(NamedTuple):
    """A game, a position of it, and the deal number the player knows it by. In sealed
    mode ``state.deal`` is the deal's keyed seed (which later reshuffles derive from),
    never shown, from the deal until the state is read back; a game that keeps no secret
    reads back with its deal number there, since its seed plays no further part. In the
    other modes the two are the same number."""

    game: Game
    state: State
    deal: int


SEALED: Final = StateProtection.SEALED  # looked up once: an enum member is reached through a descriptor


def is_sealed(protection: StateProtectionSettings) -> bool:
    return protection.mode is SEALED


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
    if is_sealed(protection) and keeps_secrets(game.id):
        data, signed = seal(protection.keys[0], game, state, deal)
        return sign_state(protection, data, signed)
    # The number the player knows: in sealed mode a game that keeps no secret has no
    # sealed part, and its seed (which played its part in the deal) is never shown.
    data = state_to_json(game, state if state.deal == deal else state._replace(deal=deal))
    if not protects(protection):
        return data
    return sign_state(protection, data, position_canonical(game, state, deal, DOMAINS[protection.mode]))


def position_answer(protection: StateProtectionSettings, position: Position) -> dict[str, Any]:
    """A position as answers carry it: the state, its legal moves and its status."""
    game, state, _ = position
    moves = game.legal_moves(state)
    return {
        "state": answer_state(protection, position),
        "legal_moves": [move_to_json(game, m) for m in moves],
        "status": str(game.status(state, moves)),  # a StrEnum's str() is its value, without `.value`'s descriptor
    }


def move_answer(protection: StateProtectionSettings, position: Position, events: list[Event]) -> dict[str, Any]:
    """What a move answers: the position it led to (:func:`position_answer`'s keys) and the
    move's events (:func:`answer_events`), built as one dict."""
    answer = position_answer(protection, position)
    answer["events"] = answer_events(protection, position.game, position.state, events)
    return answer


def answer_events(protection: StateProtectionSettings, game: Game, after: State, events: list[Event]) -> list[dict[str, Any]]:
    """A move's events as its answer lists them; in sealed mode no event names a card
    that lies face down in ``after``."""
    if is_sealed(protection) and game.face_down_piles:  # with no face-down pile, nothing to redact
        events = [redact_event(game, after, e) for e in events]
    return [event_to_json(game, e) for e in events]


def read_position(
    protection: StateProtectionSettings, game_id: str, data: Mapping[str, Any], where: str = "/state"
) -> Position:
    """The position a request's state holds: its signature checked and its sealed part
    opened first (403 problems), then read (422 ``invalid-state`` if it cannot be read or
    is not a position the game can reach). ``game_id`` is the game the path names."""
    seed: int | None = None
    problems: list[Problem] = []
    try:
        if is_sealed(protection) and keeps_secrets(game_id):
            readable = readable_part(data)
            sealed = data.get(SEALED_FIELD)
            # A state without a sealed part is checked as it is, then refused as unsealed.
            signed = signed_part(readable, sealed) if isinstance(sealed, str) else None
            key = verify_state(protection, data, where, signed)
            assert key is not None  # sealed mode always has a key ring
            game = read_header(data, game_id, problems)
            hidden, seed = unseal(key, game, data, readable, where)
            state = read_body(game, data, problems, hidden)
        else:
            verify_state(protection, data, where)
            game = read_header(data, game_id, problems)
            state = read_body(game, data, problems)
    except NotationError as e:
        raise ApiError(
            ProblemCode.INVALID_STATE, "the state cannot be read: " + e.problems[0].message,
            [(where + p.where, p.message) for p in e.problems],
        ) from None
    found = game.validate(state)
    if found:
        raise ApiError(
            ProblemCode.INVALID_STATE, "the state is not one this game can reach: " + found[0].message,
            [(where + p.where, p.message) for p in found],
        )
    if seed is None:
        return Position(game, state, state.deal)
    return Position(game, state._replace(deal=seed), state.deal)


__all__ = [
    "Position",
    "answer_events",
    "answer_state",
    "deal_seeds",
    "dealt_position",
    "is_sealed",
    "move_answer",
    "position_answer",
    "read_position",
]
