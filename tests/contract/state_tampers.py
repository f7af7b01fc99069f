"""The ways a client can change a signed state, shared by the signed- and sealed-mode suites
(tests/contract/test_signed_states.py, tests/contract/test_sealed_states.py).

Each tamper takes a game and a copy of a state the server signed, and gives the game to
send the changed state to and the changed state; :data:`SIGNATURE_TAMPERS` says which
problem each must be refused with (in signed mode, and in sealed mode too, where every
state is signed), and :func:`assert_refused` checks a refusal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.engine.registry import GAME_CLASSES, get_game
from service.http.problems import ProblemCode

GAMES = list(GAME_CLASSES)
STATE_ENDPOINTS = ["moves", "legal-moves", "validate", "solve", "hint"]  # every endpoint that reads a state

Tamper = Callable[[str, dict[str, Any]], tuple[str, dict[str, Any]]]


def other_game(game: str) -> str:
    return GAMES[(GAMES.index(game) + 1) % len(GAMES)]


def cards_of(state: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(group, pile, index) of every card of the state."""
    return [(g, p, i) for g, piles in state["piles"].items() for p, pile in enumerate(piles) for i in range(len(pile))]


def flip_a_card(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    g, p, i = cards_of(state)[-1]
    card = state["piles"][g][p][i]
    state["piles"][g][p][i] = card[0] + ("H" if card[1] != "H" else "S")
    return game, state


def swap_two_cards(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    where = cards_of(state)
    first = where[0]
    piles = state["piles"]
    second = next(w for w in reversed(where) if piles[w[0]][w[1]][w[2]] != piles[first[0]][first[1]][first[2]])
    a, b = piles[first[0]][first[1]], piles[second[0]][second[1]]
    a[first[2]], b[second[2]] = b[second[2]], a[first[2]]
    return game, state


def edit_a_counter(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    counters = state["counters"]
    if counters:
        spec = get_game(game).counter_specs[0]
        value = counters[spec.name]
        counters[spec.name] = value + 1 if value < spec.maximum else value - 1
    else:  # the game has none: one more is a change too
        counters["redeals_used"] = 1
    return game, state


def edit_the_deal(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    state["deal"] = str(int(state["deal"]) + 1)
    return game, state


def edit_an_option(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if "cells" in state["options"]:
        state["options"]["cells"] -= 1
    else:  # the game has no option: one more is a change too
        state["options"]["cells"] = 4
    return game, state


def edit_the_game_id(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    state["game"] = other_game(game)
    return other_game(game), state


def drop_the_signature(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    del state["signature"]
    return game, state


def cut_the_mac(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    state["signature"]["mac"] = state["signature"]["mac"][:-1]
    return game, state


def change_the_mac(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    mac = state["signature"]["mac"]
    state["signature"]["mac"] = ("B" if mac[0] != "B" else "C") + mac[1:]
    return game, state


def name_an_unlisted_key(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    state["signature"]["kid"] = "k9"
    return game, state


def send_to_another_game(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return other_game(game), state


SIGNATURE_TAMPERS: dict[Tamper, ProblemCode] = {
    flip_a_card: ProblemCode.STATE_SIGNATURE_INVALID,
    swap_two_cards: ProblemCode.STATE_SIGNATURE_INVALID,
    edit_a_counter: ProblemCode.STATE_SIGNATURE_INVALID,
    edit_the_deal: ProblemCode.STATE_SIGNATURE_INVALID,
    edit_an_option: ProblemCode.STATE_SIGNATURE_INVALID,
    edit_the_game_id: ProblemCode.STATE_SIGNATURE_INVALID,
    change_the_mac: ProblemCode.STATE_SIGNATURE_INVALID,
    drop_the_signature: ProblemCode.STATE_UNSIGNED,
    cut_the_mac: ProblemCode.STATE_SIGNATURE_MALFORMED,
    name_an_unlisted_key: ProblemCode.STATE_KEY_UNKNOWN,
    # The signature is good, but the state is another game's: refused as in open mode.
    send_to_another_game: ProblemCode.INVALID_STATE,
}


def assert_refused(response: Any, code: ProblemCode) -> None:
    """Refused with ``code`` as problem+json, and never played on."""
    assert response.status_code == code.status, response.get_json()
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert body["code"] == code.value
    assert "state" not in body and "legal_moves" not in body  # never played on


__all__ = [
    "GAMES",
    "SIGNATURE_TAMPERS",
    "STATE_ENDPOINTS",
    "Tamper",
    "assert_refused",
    "cards_of",
    "change_the_mac",
    "cut_the_mac",
    "drop_the_signature",
    "edit_a_counter",
    "edit_an_option",
    "edit_the_deal",
    "edit_the_game_id",
    "flip_a_card",
    "name_an_unlisted_key",
    "other_game",
    "send_to_another_game",
    "swap_two_cards",
]
