"""Sealed states and keyed deals (``STATE_PROTECTION=sealed``), proved through the HTTP API.

- Only games that keep secrets (:func:`.state_sealing.keeps_secrets`: face-down piles, or
  redeals that reshuffle) have a sealed part and ``face_down`` counts; the others (the
  Penguin family, Binary Star) answer plain states signed in the sealed mode's domain,
  dealt from the keyed deal.
- The tamper suite: every game gets a sealed-mode position (deal 1, one move played), and
  each way of changing it (a visible card, a counter, the deal, an option, a ``face_down``
  count, the signature, the game, the key, the mode, and, where the state has one, the
  sealed part) is sent back to every endpoint that reads a state; each is refused with its
  documented code and never played on. States crafted with the test key (a good signature
  over a sealed part that does not open, or does not match the readable part) are refused
  with ``state-seal-invalid``. A state sealed with an older listed key still plays.
- No leak: random playouts of every game, every answer scanned (:mod:`.sealed_scan`,
  which also checks that a state has a sealed part exactly where its game keeps
  secrets); two states that differ only in the order of their face-down cards get the
  same readable answers.
- Keyed deals: a deal number is one layout per server, another under another key, never
  PySolFC's; future reshuffles (Small Billee, Abandon Hope) follow the keyed seed, not the
  deal number.

Some tests open sealed states with the test key (``read_position``), as only the server
can: to compare hidden layouts, or to craft states a client could not.
"""

from __future__ import annotations

import base64
import copy
import os
import random
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from flask.testing import FlaskClient

from service.engine.core import MAX_DEAL
from service.engine.registry import get_game
from service.http import create_app
from service.http.problems import ProblemCode
from service.http.state_protection import Position, answer_state, deal_seeds, read_position
from service.http.state_sealing import (
    NONCE_BYTES,
    SEAL_INFO,
    SEED_BYTES,
    KeyedDeals,
    derived_key,
    keeps_secrets,
    readable_part,
)
from service.http.state_signing import DOMAINS, SIGNATURE_FIELD, sign_state, state_mac
from service.http.wire import FACE_DOWN_FIELD, SEALED_FIELD, move_to_json, state_to_json
from service.settings import Settings, StateProtection, StateProtectionSettings
from service.solver import Limits, solve_position
from service.solver.search import Outcome
from tests.app_settings import (
    TEST_STATE_KEYS,
    key_for_tests,
    sealed_settings_for_tests,
    settings_for_tests,
    signed_settings_for_tests,
)
from tests.contract.sealed_scan import OPAQUE_FIELDS, face_down_groups, face_down_leaks, face_up_cards
from tests.contract.state_tampers import GAMES, SIGNATURE_TAMPERS, STATE_ENDPOINTS, Tamper, assert_refused

SECRET_KEEPING_GAMES = [g for g in GAMES if keeps_secrets(g)]  # their sealed-mode states have a sealed part
GAMES_WITHOUT_SECRETS = [g for g in GAMES if not keeps_secrets(g)]  # plain signed states
HIDDEN_CARD_GAMES = [g for g in GAMES if face_down_groups(g)]  # a stock the player cannot see
RESHUFFLING_GAMES = [g for g in GAMES if get_game(g).redeals_reshuffle]  # redeals shuffle the cards again
TINY_LIMITS = {"max_seconds": 0.05, "max_states": 2000}
RETIRED_KEYS = key_for_tests("k0")  # a ring none of whose keys the suite's server lists
OTHER_KEYS = key_for_tests("k3")  # another server's ring: other secrets, other keyed deals

SETTINGS: dict[str, Callable[[str], Settings]] = {
    # Hints within a small budget: the suite asks for many.
    "open": lambda keys: settings_for_tests(HINT_SECONDS="0.05"),
    "signed": lambda keys: signed_settings_for_tests(keys, HINT_SECONDS="0.05"),
    "sealed": lambda keys: sealed_settings_for_tests(keys, HINT_SECONDS="0.05"),
}


def new_client(mode: str = "sealed", keys: str = TEST_STATE_KEYS) -> FlaskClient:
    """A client of a new server of ``mode`` with the key ring ``keys``."""
    app = create_app(SETTINGS[mode](keys))
    app.testing = True
    return app.test_client()


@cache
def client_of(mode: str = "sealed", keys: str = TEST_STATE_KEYS) -> FlaskClient:
    """The suite's one server of ``mode`` with ``keys``."""
    return new_client(mode, keys)


def ring_of(keys: str = TEST_STATE_KEYS) -> StateProtectionSettings:
    """The sealed-mode protection settings of the key ring ``keys`` (its first key seals)."""
    return SETTINGS["sealed"](keys).state


@cache
def position(game: str, deal: int = 1, moves: int = 1, mode: str = "sealed", keys: str = TEST_STATE_KEYS) -> dict[str, Any]:
    """The answer a server of ``mode`` and ``keys`` gives after dealing ``deal`` and playing
    the first legal move ``moves`` times. Shared: copy it before changing it."""
    client = client_of(mode, keys)
    answer = client.post(f"/v1/games/{game}/deals", json={"deal": deal}).get_json()
    for _ in range(moves):
        r = client.post(f"/v1/games/{game}/moves", json={"state": answer["state"], "move": answer["legal_moves"][0]})
        assert r.status_code == 200, r.get_json()
        answer = r.get_json()
    return answer


def readable(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer without its state's opaque parts (those differ between two sealings of
    one position: the nonce is random)."""
    if "state" not in answer:
        return answer
    return {**answer, "state": {k: v for k, v in answer["state"].items() if k not in OPAQUE_FIELDS}}


def ask(client: FlaskClient, game: str, endpoint: str, state: dict[str, Any], move: dict[str, Any] | None = None) -> Any:
    """POST ``state`` to one of the endpoints that read a state (``move`` for /moves;
    searches within tiny budgets)."""
    body: dict[str, Any] = {"state": state}
    if endpoint == "moves":
        body["move"] = move
    if endpoint == "solve":
        body["limits"] = TINY_LIMITS
    return client.post(f"/v1/games/{game}/{endpoint}", json=body)


def assert_refused_by(endpoint: str, response: Any, code: ProblemCode) -> None:
    """Refused with ``code``; /validate describes another game's state instead (it is
    a state, just not one of this game)."""
    if code is ProblemCode.INVALID_STATE and endpoint == "validate":
        assert response.status_code == 200 and response.get_json()["valid"] is False, response.get_json()
    else:
        assert_refused(response, code)


def opened(state: dict[str, Any], keys: str = TEST_STATE_KEYS) -> Position:
    """A sealed state opened with the server's key, as only the server can: the whole
    position, its keyed seed in ``state.deal``."""
    return read_position(ring_of(keys), state["game"], state)


# --- the tamper suite -------------------------------------------------------------------------


def edit_a_face_down_count(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    counts = state.setdefault(FACE_DOWN_FIELD, {})
    if counts:
        pile = next(iter(counts.values()))
        pile[0] = pile[0] - 1 if pile[0] else 1
    else:  # no face-down pile (or no face_down at all, in a game that keeps no secret): one more is a change too
        counts["stock"] = [0]
    return game, state


def splice_another_games_sealed_part(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Another game's sealed part in place of the state's own, or added to a state that
    has none (a game that keeps no secret)."""
    other = next(g for g in SECRET_KEEPING_GAMES if g != game)
    state[SEALED_FIELD] = position(other)["state"][SEALED_FIELD]
    return game, state


def cut_the_sealed_part(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    state[SEALED_FIELD] = state[SEALED_FIELD][:-1]
    return game, state


def change_the_sealed_part(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    sealed = state[SEALED_FIELD]
    state[SEALED_FIELD] = ("B" if sealed[0] != "B" else "C") + sealed[1:]
    return game, state


def drop_the_sealed_part(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    del state[SEALED_FIELD]
    return game, state


def splice_another_deals_sealed_part(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    state[SEALED_FIELD] = position(game, deal=2)["state"][SEALED_FIELD]
    return game, state


def splice_an_earlier_states_sealed_part(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The sealed part of the same deal before the move."""
    state[SEALED_FIELD] = position(game, moves=0)["state"][SEALED_FIELD]
    return game, state


def send_a_state_sealed_with_a_key_no_longer_listed(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The same position, from a server whose only key the suite's server does not list."""
    return game, copy.deepcopy(position(game, keys=RETIRED_KEYS)["state"])


def send_a_signed_mode_state(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The same position from a signed server with the same keys: signed in another domain."""
    return game, copy.deepcopy(position(game, mode="signed")["state"])


def sign_in_the_signed_modes_domain(game: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The very same state, signed with the same key over the signed mode's domain string."""
    key = ring_of().keys[0]
    state[SIGNATURE_FIELD] = {"kid": key.kid, "mac": state_mac(key, state, DOMAINS[StateProtection.SIGNED])}
    return game, state


# Refused in every game: every sealed-mode state is signed, in the sealed mode's domain.
TAMPERS: dict[Tamper, ProblemCode] = {
    **SIGNATURE_TAMPERS,
    edit_a_face_down_count: ProblemCode.STATE_SIGNATURE_INVALID,
    splice_another_games_sealed_part: ProblemCode.STATE_SIGNATURE_INVALID,
    send_a_signed_mode_state: ProblemCode.STATE_SIGNATURE_INVALID,
    sign_in_the_signed_modes_domain: ProblemCode.STATE_SIGNATURE_INVALID,
    send_a_state_sealed_with_a_key_no_longer_listed: ProblemCode.STATE_KEY_UNKNOWN,
}
# Refused in the games that keep secrets, whose states have a sealed part to change.
SEALED_PART_TAMPERS: dict[Tamper, ProblemCode] = {
    cut_the_sealed_part: ProblemCode.STATE_SIGNATURE_INVALID,
    change_the_sealed_part: ProblemCode.STATE_SIGNATURE_INVALID,
    drop_the_sealed_part: ProblemCode.STATE_SIGNATURE_INVALID,
    splice_another_deals_sealed_part: ProblemCode.STATE_SIGNATURE_INVALID,
    splice_an_earlier_states_sealed_part: ProblemCode.STATE_SIGNATURE_INVALID,
}
TAMPERED = [(g, t) for g in GAMES for t in TAMPERS] + [(g, t) for g in SECRET_KEEPING_GAMES for t in SEALED_PART_TAMPERS]


@pytest.mark.parametrize("endpoint", STATE_ENDPOINTS)
@pytest.mark.parametrize("game", GAMES)
def test_a_sealed_state_sent_back_as_answered_is_read_by_every_endpoint(game: str, endpoint: str) -> None:
    answer = position(game)
    r = ask(client_of(), game, endpoint, answer["state"], answer["legal_moves"][0])
    assert r.status_code == 200, r.get_json()


@pytest.mark.parametrize("endpoint", STATE_ENDPOINTS)
@pytest.mark.parametrize(("game", "tamper"), TAMPERED, ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_a_changed_sealed_state_is_refused_with_its_code_by_every_endpoint(game: str, tamper: Tamper, endpoint: str) -> None:
    answer = position(game)
    sent_to, state = tamper(game, copy.deepcopy(answer["state"]))
    assert state != answer["state"] or sent_to != game
    code = {**TAMPERS, **SEALED_PART_TAMPERS}[tamper]
    assert_refused_by(endpoint, ask(client_of(), sent_to, endpoint, state, answer["legal_moves"][0]), code)


@pytest.mark.parametrize("endpoint", STATE_ENDPOINTS)
@pytest.mark.parametrize("game", GAMES)
def test_a_sealed_state_is_refused_by_a_signed_server_with_the_same_keys(game: str, endpoint: str) -> None:
    """The modes sign in different domains, so a state of one never passes in the other."""
    answer = position(game)
    assert_refused(ask(client_of("signed"), game, endpoint, answer["state"], answer["legal_moves"][0]),
                   ProblemCode.STATE_SIGNATURE_INVALID)


@pytest.mark.parametrize("game", GAMES_WITHOUT_SECRETS)
def test_a_game_that_keeps_no_secret_answers_plain_states_signed_in_the_sealed_domain(game: str) -> None:
    """Nothing to hide, nothing sealed: dealt and moved, the state has neither
    ``face_down`` nor ``sealed``, lists every pile group face up, and is signed by the
    first key over the sealed mode's domain string (not the signed mode's), so that the
    other checks of a sealed server still hold for it."""
    key = ring_of().keys[0]
    groups = {g.name for g in get_game(game).groups}
    for answer in (position(game, moves=0), position(game)):
        state = answer["state"]
        assert FACE_DOWN_FIELD not in state and SEALED_FIELD not in state
        assert set(state["piles"]) == groups
        assert state[SIGNATURE_FIELD] == {"kid": key.kid, "mac": state_mac(key, state, DOMAINS[StateProtection.SEALED])}
        assert state_mac(key, state, DOMAINS[StateProtection.SIGNED]) != state[SIGNATURE_FIELD]["mac"]
        held = opened(state)  # the server's own reading: nothing beyond what the state shows
        assert state_to_json(held.game, held.state) == {k: v for k, v in state.items() if k != SIGNATURE_FIELD}


# --- states crafted with the test key: a good signature over a sealed part that does not fit ----


def sealed_payload(state: dict[str, Any], keys: str = TEST_STATE_KEYS) -> bytes:
    """The decrypted sealed part of a state the server sealed with the first key of ``keys``."""
    raw = base64.urlsafe_b64decode(state[SEALED_FIELD] + "=" * (-len(state[SEALED_FIELD]) % 4))
    box = AESGCM(derived_key(ring_of(keys).keys[0].secret, SEAL_INFO))
    return box.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], readable_part(state))


def resealed(state: dict[str, Any], payload: bytes, seal_keys: str = TEST_STATE_KEYS) -> dict[str, Any]:
    """``state`` with ``payload`` sealed (fresh nonce, bound to ``state``'s readable part)
    with the first key of ``seal_keys``, then signed with the suite's signing key."""
    state = {k: v for k, v in state.items() if k not in OPAQUE_FIELDS}
    nonce = os.urandom(NONCE_BYTES)
    box = AESGCM(derived_key(ring_of(seal_keys).keys[0].secret, SEAL_INFO)).encrypt(nonce, payload, readable_part(state))
    state[SEALED_FIELD] = base64.urlsafe_b64encode(nonce + box).rstrip(b"=").decode("ascii")
    return resigned(state)


def resigned(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` signed with the suite's signing key, whatever it holds."""
    return sign_state(ring_of(), {k: v for k, v in state.items() if k != SIGNATURE_FIELD})


def with_random_sealed_part(state: dict[str, Any]) -> dict[str, Any]:
    sealed = state[SEALED_FIELD]
    noise = base64.urlsafe_b64encode(random.Random(sealed).randbytes(len(sealed))).decode()[: len(sealed)]
    return resigned({**state, SEALED_FIELD: noise})


def with_a_sealed_part_that_is_not_base64(state: dict[str, Any]) -> dict[str, Any]:
    return resigned({**state, SEALED_FIELD: "*" * len(state[SEALED_FIELD])})


def with_a_sealed_part_cut_short(state: dict[str, Any]) -> dict[str, Any]:
    return resigned({**state, SEALED_FIELD: state[SEALED_FIELD][:8]})


def with_another_deals_sealed_part(state: dict[str, Any]) -> dict[str, Any]:
    return resigned({**state, SEALED_FIELD: position(state["game"], deal=2)["state"][SEALED_FIELD]})


def with_an_earlier_states_sealed_part(state: dict[str, Any]) -> dict[str, Any]:
    return resigned({**state, SEALED_FIELD: position(state["game"], moves=0)["state"][SEALED_FIELD]})


def with_a_face_down_count_changed(state: dict[str, Any]) -> dict[str, Any]:
    """The readable part changed under its sealed part: the seal is bound to it."""
    return resigned(edit_a_face_down_count(state["game"], copy.deepcopy(state))[1])


def without_face_down_counts(state: dict[str, Any]) -> dict[str, Any]:
    return resigned({k: v for k, v in state.items() if k != FACE_DOWN_FIELD})


def without_the_sealed_part(state: dict[str, Any]) -> dict[str, Any]:
    return resigned({k: v for k, v in state.items() if k != SEALED_FIELD})


def sealed_with_another_servers_key(state: dict[str, Any]) -> dict[str, Any]:
    return resealed(state, sealed_payload(state), seal_keys=OTHER_KEYS)


def with_counts_the_payload_does_not_hold(state: dict[str, Any]) -> dict[str, Any]:
    """The sealed part opens (sealed anew over the changed counts), but its cards are not
    as many as the readable counts say."""
    payload = sealed_payload(state)
    return resealed(edit_a_face_down_count(state["game"], copy.deepcopy(state))[1], payload)


def with_another_payload_version(state: dict[str, Any]) -> dict[str, Any]:
    payload = sealed_payload(state)
    return resealed(state, bytes([payload[0] + 1]) + payload[1:])


def with_a_byte_after_the_payload(state: dict[str, Any]) -> dict[str, Any]:
    return resealed(state, sealed_payload(state) + b"\x00")


def with_the_last_payload_byte_cut(state: dict[str, Any]) -> dict[str, Any]:
    return resealed(state, sealed_payload(state)[:-1])


def with_the_payload_cut_after_its_seed(state: dict[str, Any]) -> dict[str, Any]:
    return resealed(state, sealed_payload(state)[: 1 + SEED_BYTES])


def with_a_seed_past_the_last_deal(state: dict[str, Any]) -> dict[str, Any]:
    payload = sealed_payload(state)
    return resealed(state, payload[:1] + (MAX_DEAL + 1).to_bytes(SEED_BYTES, "big") + payload[1 + SEED_BYTES :])


def with_a_card_byte_past_the_suits(state: dict[str, Any]) -> dict[str, Any]:
    return resealed(state, sealed_payload(state)[:-1] + b"\xff")


def with_a_card_byte_of_rank_zero(state: dict[str, Any]) -> dict[str, Any]:
    return resealed(state, sealed_payload(state)[:-1] + b"\x00")


Craft = Callable[[dict[str, Any]], dict[str, Any]]
SEALS_THAT_DO_NOT_FIT: list[Craft] = [
    with_random_sealed_part,
    with_a_sealed_part_that_is_not_base64,
    with_a_sealed_part_cut_short,
    with_another_deals_sealed_part,
    with_an_earlier_states_sealed_part,
    with_a_face_down_count_changed,
    without_face_down_counts,
    sealed_with_another_servers_key,
    with_counts_the_payload_does_not_hold,
    with_another_payload_version,
    with_a_byte_after_the_payload,
    with_the_last_payload_byte_cut,
    without_the_sealed_part,
    with_a_seed_past_the_last_deal,
]
# The payload's card bytes: only games with face-down piles have any.
CARD_PAYLOADS_THAT_DO_NOT_FIT: list[Craft] = [
    with_the_payload_cut_after_its_seed,
    with_a_card_byte_past_the_suits,
    with_a_card_byte_of_rank_zero,
]


@pytest.mark.parametrize("endpoint", STATE_ENDPOINTS)
@pytest.mark.parametrize(
    ("game", "craft"),
    [(g, c) for g in SECRET_KEEPING_GAMES for c in SEALS_THAT_DO_NOT_FIT]
    + [(g, c) for g in HIDDEN_CARD_GAMES for c in CARD_PAYLOADS_THAT_DO_NOT_FIT],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_a_well_signed_state_whose_sealed_part_does_not_fit_is_refused(game: str, craft: Craft, endpoint: str) -> None:
    """Signed with the test key (as only the server could), but the sealed part does not
    open with it, or opens to a payload that does not match the readable part: 403
    `state-seal-invalid`, never played on, never a 500."""
    answer = position(game)
    state = craft(answer["state"])
    assert resigned(state) == state  # the signature is good: only the seal is wrong
    assert_refused(ask(client_of(), game, endpoint, state, answer["legal_moves"][0]), ProblemCode.STATE_SEAL_INVALID)


# --- key rotation -----------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_a_state_sealed_with_an_older_listed_key_plays_on_as_dealt_and_is_answered_under_the_first(game: str) -> None:
    """Dealt by the server before k2 was added (k1 only), played on by the server where k2
    seals and k1 still opens: the hidden cards and the seed travel with the state, so the
    game goes on as the old server would have played it; the answer is sealed and signed
    with k2 alone."""
    old_keys = key_for_tests("k1")
    dealt = position(game, deal=3, moves=0, keys=old_keys)
    assert dealt["state"]["signature"]["kid"] == "k1"
    move = dealt["legal_moves"][-1]  # a deal of the stock when the game has one
    then = client_of(keys=old_keys).post(f"/v1/games/{game}/moves", json={"state": dealt["state"], "move": move})
    now = client_of().post(f"/v1/games/{game}/moves", json={"state": dealt["state"], "move": move})
    assert now.status_code == 200, now.get_json()
    assert readable(now.get_json()) == readable(then.get_json())
    state = now.get_json()["state"]
    assert state["signature"]["kid"] == "k2"
    assert opened(state).state == opened(then.get_json()["state"], keys=old_keys).state
    if keeps_secrets(game):
        sealed_payload(state)  # sealed with k2's key, not k1's
        with pytest.raises(InvalidTag):
            sealed_payload(state, keys=old_keys)
    assert ask(client_of(), game, "legal-moves", dealt["state"]).status_code == 200


@pytest.mark.parametrize("game", GAMES)
def test_a_state_sealed_with_a_key_taken_off_the_ring_is_refused(game: str) -> None:
    dealt = position(game, deal=3, moves=0, keys=key_for_tests("k1"))
    retired = client_of(keys=f"{key_for_tests('k3')},{key_for_tests('k2')}")
    assert_refused(ask(retired, game, "moves", dealt["state"], dealt["legal_moves"][0]), ProblemCode.STATE_KEY_UNKNOWN)


def test_the_games_say_the_server_seals() -> None:
    assert client_of().get("/v1/games").get_json()["state_protection"] == "sealed"
    assert client_of().get("/v1/games/forty-thieves").get_json()["state_protection"] == "sealed"


# --- keyed deals ------------------------------------------------------------------------------

DEAL = 123


@pytest.mark.parametrize("game", GAMES)
def test_a_deal_number_is_one_layout_for_every_player_of_a_server(game: str) -> None:
    """Deals of one number, twice from one server and once from another of the same ring
    (behind one balancer, say): the same readable part, the same hidden cards and seed."""
    deals = [c.post(f"/v1/games/{game}/deals", json={"deal": DEAL}).get_json() for c in (client_of(), client_of(), new_client())]
    assert [readable(d) for d in deals] == [readable(deals[0])] * 3
    assert [opened(d["state"]).state for d in deals] == [opened(deals[0]["state"]).state] * 3


@pytest.mark.parametrize("game", GAMES)
def test_a_deal_number_is_another_layout_under_another_key(game: str) -> None:
    ours = client_of().post(f"/v1/games/{game}/deals", json={"deal": DEAL}).get_json()
    theirs = client_of(keys=OTHER_KEYS).post(f"/v1/games/{game}/deals", json={"deal": DEAL}).get_json()
    assert opened(ours["state"]).state.piles != opened(theirs["state"], keys=OTHER_KEYS).state.piles


@pytest.mark.parametrize("game", GAMES)
def test_a_keyed_deal_is_not_the_pysolfc_deal_of_its_number(game: str) -> None:
    """Dealt from the keyed seed of its number, whether the game keeps secrets or not:
    not the layout an open server (or PySolFC) deals under that number. Where the game
    keeps secrets the seed travels sealed, for the reshuffles to come."""
    sealed = client_of().post(f"/v1/games/{game}/deals", json={"deal": DEAL}).get_json()
    pysolfc = client_of("open").post(f"/v1/games/{game}/deals", json={"deal": DEAL}).get_json()
    hidden_position = opened(sealed["state"])
    seed = KeyedDeals.of(ring_of(), get_game(game))(DEAL)
    assert seed != DEAL
    assert hidden_position.state.piles == get_game(game).initial_state(seed).piles != get_game(game).initial_state(DEAL).piles
    assert sealed["state"]["piles"] != {g: p for g, p in pysolfc["state"]["piles"].items() if g not in face_down_groups(game)}
    if keeps_secrets(game):
        assert hidden_position.state.deal == seed


@pytest.mark.parametrize("deal", [0, DEAL, "98765432109876543210", str(10**20 - 1)])
@pytest.mark.parametrize("game", GAMES)
def test_answers_carry_the_deal_number_asked_for(game: str, deal: int | str) -> None:
    client = client_of()
    dealt = client.post(f"/v1/games/{game}/deals", json={"deal": deal}).get_json()
    moved = client.post(f"/v1/games/{game}/moves", json={"state": dealt["state"], "move": dealt["legal_moves"][0]}).get_json()
    assert dealt["deal"] == dealt["state"]["deal"] == moved["state"]["deal"] == str(deal)


@pytest.mark.parametrize("game", [g for g in GAMES if g != "forty-thieves"])  # rarely proved within a test budget
def test_a_winnable_sealed_deal_is_sealed_and_its_keyed_layout_is_won(game: str) -> None:
    """The deal a winnable search hands out is sealed like any other, and it is the keyed
    layout the solver proved: a solution of that layout (found here with the key) replays
    through /moves to ``won``. (Budgets well above the deals' solving times, so that a
    loaded machine finds the same deal.)"""
    app = create_app(sealed_settings_for_tests(WINNABLE_DEAL_SECONDS="5", SOLVER_MAX_SECONDS="10", WINNABLE_DEAL_TRIES="10"))
    client = app.test_client()
    dealt = client.post(f"/v1/games/{game}/deals", json={"deal": 1, "winnable": True}).get_json()
    deal = int(dealt["deal"])
    assert dealt["state"]["deal"] == dealt["deal"]
    hidden = opened(dealt["state"])
    seed = KeyedDeals.of(ring_of(), get_game(game))(deal)
    assert face_down_leaks(game, dealt, dealt["state"], seed) == []
    assert hidden.state.piles == get_game(game).initial_state(seed).piles
    if keeps_secrets(game):
        assert hidden.state.deal == seed
    solved = solve_position(hidden.game, hidden.state, Limits(10, 1_000_000))
    assert solved.result is Outcome.SOLVED
    answer = dealt
    for move in solved.moves:
        r = client.post(f"/v1/games/{game}/moves", json={"state": answer["state"], "move": move_to_json(hidden.game, move)})
        assert r.status_code == 200, r.get_json()
        answer = r.get_json()
    assert answer["status"] == "won"


# --- future reshuffles ------------------------------------------------------------------------


def redealt(mode: str, keys: str, dealt: Position) -> tuple[tuple[int, ...], ...]:
    """The piles after a redeal of ``dealt``'s layout on the server of ``mode`` and
    ``keys``, from the seed that server deals ``dealt``'s deal number from."""
    game, state, deal = dealt
    protection = SETTINGS[mode](keys).state
    seeds = deal_seeds(protection, game) or (lambda number: number)
    sent = answer_state(protection, Position(game, state._replace(deal=seeds(deal)), deal))
    r = client_of(mode, keys).post(f"/v1/games/{game.id}/moves", json={"state": sent, "move": {"action": "redeal"}})
    assert r.status_code == 200, r.get_json()
    return read_position(protection, game.id, r.get_json()["state"]).state.piles


@pytest.mark.parametrize("game", RESHUFFLING_GAMES)
def test_a_reshuffle_follows_the_keyed_seed_not_the_deal_number(game: str) -> None:
    """One layout of deal ``DEAL``, redealt on two sealed servers with other keys and on an
    open one (where the reshuffle follows the deal number, as a player could compute):
    three different layouts, so the deal number and the moves alone do not tell the
    player what the redeal brings."""
    dealt = opened(position(game, deal=DEAL, moves=0)["state"])
    layouts = [redealt("sealed", TEST_STATE_KEYS, dealt), redealt("sealed", OTHER_KEYS, dealt), redealt("open", TEST_STATE_KEYS, dealt)]
    assert len(set(layouts)) == 3
    assert all(sorted(c for p in layout for c in p) == sorted(c for p in dealt.state.piles for c in p) for layout in layouts)


# --- nothing face down is ever shown ----------------------------------------------------------

PLAYOUTS = int(os.environ.get("SEALED_PLAYOUTS", "6"))  # random games per game
STEPS = 60


class Scanner:
    """Sends requests to the sealed server and checks each answer with :mod:`.sealed_scan`."""

    def __init__(self, game: str, deal: int) -> None:
        self.game, self.client = game, client_of()
        self.seed = KeyedDeals.of(ring_of(), get_game(game))(deal)
        self.deal = str(deal)
        self.answers = 0

    def post(self, endpoint: str, body: dict[str, Any], asked_about: dict[str, Any] | None = None) -> Any:
        r = self.client.post(f"/v1/games/{self.game}/{endpoint}", json=body)
        answer = r.get_json()
        state = answer.get("state") if r.status_code == 200 else None
        assert face_down_leaks(self.game, answer, asked_about or state or {}, self.seed) == [], (endpoint, answer)
        assert state is None or state["deal"] == self.deal
        self.answers += 1
        return r


def play_and_scan(scanner: Scanner, rng: random.Random, dealt: dict[str, Any]) -> None:
    """One random game from ``dealt``: every step asks every state endpoint (searches now
    and then), sends a move that is not listed, and plays a listed one."""
    game, pos = scanner.game, dealt
    piles = [f"{g.name}:{i}" for g in get_game(game).groups for i in range(g.count)]
    for step in range(STEPS):
        state = pos["state"]
        assert scanner.post("legal-moves", {"state": state}, state).get_json()["legal_moves"] == pos["legal_moves"]
        assert scanner.post("validate", {"state": state}, state).get_json()["valid"] is True
        if step % 10 == 3:
            scanner.post("hint", {"state": state}, state)
            scanner.post("solve", {"state": state, "limits": TINY_LIMITS}, state)
        bogus = {"action": "move", "from": rng.choice(piles), "to": rng.choice(piles), "count": rng.randint(1, 3)}
        if bogus not in pos["legal_moves"]:
            assert scanner.post("moves", {"state": state, "move": bogus}, state).status_code in (409, 422)
        if pos["status"] != "playing":
            break
        body = {"state": state, "move": rng.choice(pos["legal_moves"])}
        autoplay = rng.choice([None, "none", "safe"])
        if autoplay:
            body["autoplay"] = autoplay
        r = scanner.post("moves", body, state)
        assert r.status_code == 200, r.get_json()
        pos = r.get_json()


@pytest.mark.parametrize("game", GAMES)
def test_no_answer_names_a_face_down_card_or_the_seed(game: str) -> None:
    """Random games of every game through the API: no answer (deals, moves with and
    without autoplay, refusals, legal moves, validation, hints, solves) shows a face-down
    pile, a card no face-up card accounts for, or the deal's seed."""
    rng = random.Random(f"sealed {game}")
    answers = 0
    for _ in range(PLAYOUTS):
        deal = rng.randrange(10**20)
        scanner = Scanner(game, deal)
        dealt = scanner.post("deals", {"deal": str(deal)}).get_json()
        play_and_scan(scanner, rng, dealt)
        answers += scanner.answers
    assert answers > PLAYOUTS * 10


def test_the_scan_sees_what_a_sealed_answer_must_not_show() -> None:
    """The scan is not blind: a listed stock, a missing sealed part or ``face_down``, a
    stock card named more often than it lies face up (in an event, in a text) and the
    seed are each reported."""
    game = "forty-thieves"
    sealed = position(game, moves=0)
    hidden = opened(sealed["state"])
    seed = hidden.state.deal
    assert face_down_leaks(game, sealed, sealed["state"], seed) == []
    assert face_down_leaks(game, position(game, moves=0, mode="signed"), sealed["state"], seed)  # its stock is listed
    card = state_to_json(hidden.game, hidden.state)["piles"]["stock"][0][-1]
    named = [card] * (face_up_cards(sealed["state"])[card] + 1)
    event = {"type": "deal", "from": "stock:0", "to": "waste:0", "cards": named}
    assert face_down_leaks(game, {**sealed, "events": [event]}, sealed["state"], seed)
    assert face_down_leaks(game, {"detail": f"under it: {' '.join(named)}."}, sealed["state"], seed)
    assert face_down_leaks(game, {**sealed, "note": f"seed {seed}"}, sealed["state"], seed)
    for field in (SEALED_FIELD, FACE_DOWN_FIELD):
        unsealed = {k: v for k, v in sealed["state"].items() if k != field}
        assert face_down_leaks(game, {**sealed, "state": unsealed}, sealed["state"], seed)
    # Small Billee has no face-down pile, but a secret seed: an empty face_down, and a sealed part.
    billee = position("small-billee", moves=0)
    billee_seed = opened(billee["state"]).state.deal
    assert billee["state"][FACE_DOWN_FIELD] == {}
    assert face_down_leaks("small-billee", billee, billee["state"], billee_seed) == []
    for field in (SEALED_FIELD, FACE_DOWN_FIELD):
        unsealed = {k: v for k, v in billee["state"].items() if k != field}
        assert face_down_leaks("small-billee", {**billee, "state": unsealed}, billee["state"], billee_seed)


@pytest.mark.parametrize("game", GAMES_WITHOUT_SECRETS)
def test_the_scan_sees_a_sealed_part_where_a_game_keeps_no_secret(game: str) -> None:
    """The scan holds a game that keeps no secret to plain states: a ``face_down`` (even
    an empty one) or a ``sealed`` part in its state is reported; the state as answered is
    not."""
    answer = position(game)
    seed = KeyedDeals.of(ring_of(), get_game(game))(1)
    assert face_down_leaks(game, answer, answer["state"], seed) == []
    extras: list[dict[str, Any]] = [{FACE_DOWN_FIELD: {}}, {SEALED_FIELD: position("forty-thieves")["state"][SEALED_FIELD]}]
    for extra in extras:
        state = {**answer["state"], **extra}
        assert face_down_leaks(game, {**answer, "state": state}, answer["state"], seed)


def stock_reordered(dealt: Position, rng: random.Random) -> Position:
    """``dealt`` with the cards of its face-down piles in another order."""
    game, state, _ = dealt
    piles = list(state.piles)
    for p in game.face_down_piles:
        cards = list(piles[p])
        assert len(set(cards)) > 1, "nothing to reorder"
        while tuple(cards) == piles[p]:
            rng.shuffle(cards)
        piles[p] = tuple(cards)
    return dealt._replace(state=state._replace(piles=tuple(piles)))


@pytest.mark.parametrize("game", HIDDEN_CARD_GAMES)
def test_the_order_of_the_face_down_cards_changes_no_readable_answer(game: str) -> None:
    """Two positions that differ only in the order of their face-down cards, sealed with
    the test key: legal moves, validation, and every move of a face-up card (that turns no
    face-down card up) get the same answers, opaque parts aside."""
    mid_game = opened(next(
        a["state"] for a in (position(game, deal=DEAL, moves=k) for k in range(3, 20))
        if any(m["action"] == "move" for m in a["legal_moves"]) and sum(map(sum, a["state"][FACE_DOWN_FIELD].values())) > 1
    ))
    states = [answer_state(ring_of(), p) for p in (mid_game, stock_reordered(mid_game, random.Random(game)))]
    assert [readable({"state": s}) for s in states] == [readable({"state": states[0]})] * 2
    client = client_of()
    for endpoint in ("legal-moves", "validate"):
        first, second = (ask(client, game, endpoint, s).get_json() for s in states)
        assert first == second
    face_down = {f"{g}:0" for g in face_down_groups(game)}
    compared = 0
    for move in ask(client, game, "legal-moves", states[0]).get_json()["legal_moves"]:
        if move["action"] != "move":
            continue
        for autoplay in ("none", "safe"):
            first, second = (
                client.post(f"/v1/games/{game}/moves", json={"state": s, "move": move, "autoplay": autoplay}).get_json()
                for s in states
            )
            if any(e.get("from") in face_down for a in (first, second) for e in a["events"]):
                continue  # the move turned a face-down card up: the answers may differ
            assert readable(first) == readable(second), move
            compared += 1
    assert compared > 0
