"""The fast ways state protection builds its bytes give exactly the bytes of the reference.

Signed and sealed answers are signed from the engine's position directly
(:func:`.state_signing.position_canonical`: a template per game and remembered pile texts)
instead of through ``canonical_state(state_to_json(...))``; canonical JSON comes from one
encoder built once instead of ``json.dumps``; base64url goes through ``binascii``; MACs
start from a prepared HMAC. Each is compared here with the documented reference on many
states of every game (random playouts of several deals, under every option value), so that
a state signed before these changes still verifies, and the MACs stay the ones
``docs``/README tell a leaderboard's server to compute.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import random
from collections.abc import Iterator
from typing import Any

import pytest

from service.engine.core import Game, RulesError, State
from service.engine.registry import GAME_CLASSES, get_game
from service.http import state_signing
from service.http.state_sealing import face_down_groups, keeps_secrets, readable_part, seal, signed_part
from service.http.state_signing import (
    DOMAINS,
    b64url,
    canonical_json,
    canonical_layout,
    canonical_state,
    from_b64url,
    keyed_mac,
    position_canonical,
)
from service.http.wire import state_to_json
from service.settings import StateKey, StateProtection

SIGNED_DOMAIN = DOMAINS[StateProtection.SIGNED]
SEALED_DOMAIN = DOMAINS[StateProtection.SEALED]
KEY = StateKey("k1", bytes(range(32)))


def reference_json(value: Any) -> bytes:
    """The canonical JSON as the README documents it."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def games(game_id: str) -> Iterator[Game]:
    """The game with its defaults, then with each option at each of its choices (or its
    bounds), where the other defaults allow that value."""
    yield get_game(game_id)
    for spec in GAME_CLASSES[game_id].option_specs():
        for value in spec.choices or tuple(v for v in (spec.minimum, spec.maximum) if v is not None):
            try:
                game = get_game(game_id, {spec.name: value})
            except RulesError:
                continue
            yield game


def positions(game: Game, deals: int = 6, moves: int = 40) -> Iterator[State]:
    """States of random playouts of the first deals (a fixed seed per game)."""
    rng = random.Random(game.id)
    for deal in range(deals):
        state = game.initial_state(deal)
        for _ in range(moves):
            yield state
            legal = game.legal_moves(state)
            if not legal:
                break
            state, _ = game.play(state, rng.choice(legal))


@pytest.mark.parametrize("game_id", list(GAME_CLASSES))
def test_answers_are_signed_over_the_bytes_of_the_reference(game_id: str) -> None:
    """position_canonical against canonical_state(state_to_json(...)), in both domains, and
    a sealed state's readable part and signed bytes against readable_part and
    canonical_state of the sealed state."""
    rng = random.Random(7)
    compared = 0
    for game in games(game_id):
        hidden = face_down_groups(game_id)
        # 8 deals: Small Billee's random playouts of the first 6 end after 59 positions
        # since its reshuffles hash the cards gathered (docs/rules.md "Determinism")
        for state in positions(game, deals=8):
            deal = rng.choice([0, 7, 10**20 - 1, rng.randrange(10**20)])
            data = state_to_json(game, state._replace(deal=deal))
            for domain in (SIGNED_DOMAIN, SEALED_DOMAIN):
                assert position_canonical(game, state, deal, domain) == canonical_state(data, domain)
                assert canonical_state(data, domain) == domain + reference_json(data)
            if keeps_secrets(game_id):
                sealed, signed = seal(KEY, game, state, deal)
                assert position_canonical(game, state, deal, SEALED_DOMAIN, hidden) == readable_part(sealed)
                assert signed == canonical_state(sealed, SEALED_DOMAIN) == signed_part(readable_part(sealed), sealed["sealed"])
            compared += 1
    assert compared > 60


def test_the_remembered_pile_texts_start_afresh_and_stay_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a memory of a few piles, cleared again and again, the bytes do not change."""
    monkeypatch.setattr(state_signing, "REMEMBERED_PILES", 5)
    monkeypatch.setattr(state_signing, "_pile_texts", {})
    game = get_game("forty-thieves")
    for state in positions(game, deals=2, moves=60):
        data = state_to_json(game, state)
        assert position_canonical(game, state, state.deal, SIGNED_DOMAIN) == canonical_state(data, SIGNED_DOMAIN)
    assert len(state_signing._pile_texts) <= 5


def test_a_layout_is_one_games_even_when_another_game_had_its_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """Layouts are remembered by the game object's id: an entry made for a game that is
    gone is not taken for another game that got the same id."""
    opus, penguin = get_game("opus"), get_game("penguin")
    monkeypatch.setattr(state_signing, "_layouts", {(id(penguin), None): canonical_layout(opus)})
    state = penguin.initial_state(3)
    expected = canonical_state(state_to_json(penguin, state), SIGNED_DOMAIN)
    assert position_canonical(penguin, state, 3, SIGNED_DOMAIN) == expected


@pytest.mark.parametrize("game_id", ["penguin", "forty-thieves", "small-billee"])
def test_canonical_json_is_json_dumps_on_whatever_a_client_sends(game_id: str) -> None:
    """The encoder built once writes what json.dumps writes, on states as the request schema
    loads them (deal an integer, other spellings of cards, keys in any order, text out of
    ASCII) and on odd values."""
    game = get_game(game_id)
    for state in positions(game, deals=1, moves=20):
        data = json.loads(json.dumps(state_to_json(game, state)))
        data["deal"] = state.deal
        odd = {**data, "piles": {k: [[c.lower() for c in p] for p in v] for k, v in reversed(data["piles"].items())}}
        for value in (data, odd, {"options": {"é": "∞", "n": None, "f": 1.5, "b": True}, **data}):
            assert canonical_state(value, SIGNED_DOMAIN) == SIGNED_DOMAIN + reference_json(
                {**value, "deal": str(value["deal"])}
            )
            assert canonical_json(value) == reference_json(value)
    for value in ("sealed/part\u2028", [], {}, [1, 2.5, -0.0, 10**30, "x"], {"b": [{"a": "\x00"}]}):
        assert canonical_json(value) == reference_json(value)


def test_base64url_is_the_base64_modules() -> None:
    rng = random.Random(3)
    for size in [*range(40), 200, 512]:
        data = bytes(rng.randrange(256) for _ in range(size))
        text = base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")
        assert b64url(data) == text
        assert from_b64url(text) == data == base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    for text in ["a-b_c", "ab!cd", "abc", "a", "ab==", "=", ""]:  # what a client may send instead
        try:
            expected: bytes | type[Exception] = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except ValueError:
            expected = ValueError
        if expected is ValueError:
            with pytest.raises(ValueError):
                from_b64url(text)
        else:
            assert from_b64url(text) == expected
    with pytest.raises(ValueError):
        from_b64url("é")


def test_a_mac_is_the_documented_hmac() -> None:
    for data in (b"", b"x", os.urandom(700), os.urandom(5000)):
        mac = base64.urlsafe_b64encode(hmac.digest(KEY.secret, data, hashlib.sha256)).rstrip(b"=").decode("ascii")
        assert keyed_mac(KEY, data) == mac
