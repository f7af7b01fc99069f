"""Signed states (``STATE_PROTECTION=signed``): the tamper suite, key rotation, and open
mode left as it was.

Every game gets a signed position (deal 1, one move played through ``/moves``), and each
way of changing it is sent back: each is refused with its documented 403 code (or 422
``invalid-state`` for a good state sent to another game) and never played on. A state
signed with an older listed key still plays; one signed with a key taken off the ring
does not.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.http import create_app
from service.http.problems import ProblemCode
from tests.app_settings import TEST_STATE_KEYS, key_for_tests, settings_for_tests, signed_settings_for_tests
from tests.contract.state_tampers import (
    GAMES,
    SIGNATURE_TAMPERS,
    STATE_ENDPOINTS,
    Tamper,
    assert_refused,
    cut_the_mac,
    drop_the_signature,
    flip_a_card,
    name_an_unlisted_key,
)


def make_app(**environ: str) -> Flask:
    app = create_app(signed_settings_for_tests(**environ))
    app.testing = True
    return app


@pytest.fixture(scope="module")
def signed() -> FlaskClient:
    return make_app().test_client()


@pytest.fixture(scope="module")
def positions(signed: FlaskClient) -> dict[str, dict[str, Any]]:
    """Per game: a signed position one move into deal 1 (its state and legal moves)."""
    out = {}
    for game in GAMES:
        dealt = signed.post(f"/v1/games/{game}/deals", json={"deal": 1}).get_json()
        moved = signed.post(f"/v1/games/{game}/moves", json={"state": dealt["state"], "move": dealt["legal_moves"][0]})
        assert moved.status_code == 200, moved.get_json()
        out[game] = moved.get_json()
    return out


def play(client: FlaskClient, game: str, state: dict[str, Any], position: dict[str, Any]) -> Any:
    """POST /moves of ``state`` with the position's first legal move."""
    return client.post(f"/v1/games/{game}/moves", json={"state": state, "move": position["legal_moves"][0]})


@pytest.mark.parametrize("tamper", list(SIGNATURE_TAMPERS), ids=lambda t: t.__name__)
@pytest.mark.parametrize("game", GAMES)
def test_a_changed_state_is_refused_with_its_code(
    signed: FlaskClient, positions: dict[str, dict[str, Any]], game: str, tamper: Tamper
) -> None:
    position = positions[game]
    assert play(signed, game, position["state"], position).status_code == 200  # the state as signed plays
    sent_to, state = tamper(game, copy.deepcopy(position["state"]))
    assert_refused(play(signed, sent_to, state, position), SIGNATURE_TAMPERS[tamper])


@pytest.mark.parametrize("endpoint", STATE_ENDPOINTS)
@pytest.mark.parametrize("tamper", [drop_the_signature, flip_a_card, cut_the_mac, name_an_unlisted_key], ids=lambda t: t.__name__)
@pytest.mark.parametrize("game", ["penguin", "forty-thieves"])
def test_every_endpoint_that_reads_a_state_verifies_it_first(
    signed: FlaskClient, positions: dict[str, dict[str, Any]], game: str, tamper: Tamper, endpoint: str
) -> None:
    position = positions[game]
    _, state = tamper(game, copy.deepcopy(position["state"]))
    body: dict[str, Any] = {"state": state}
    if endpoint == "moves":
        body["move"] = position["legal_moves"][0]
    assert_refused(signed.post(f"/v1/games/{game}/{endpoint}", json=body), SIGNATURE_TAMPERS[tamper])


def test_the_signature_is_checked_before_the_cards_are_read(signed: FlaskClient, positions: dict[str, dict[str, Any]]) -> None:
    """A changed state that is also inconsistent (a card twice) is refused for its
    signature, not described: a client learns nothing from a state it made up."""
    state = copy.deepcopy(positions["penguin"]["state"])
    tableau = state["piles"]["tableau"]
    tableau[0][-1] = tableau[1][-1]
    for endpoint in ("validate", "legal-moves"):
        assert_refused(signed.post(f"/v1/games/penguin/{endpoint}", json={"state": state}), ProblemCode.STATE_SIGNATURE_INVALID)


# --- every answer signed, and signed as documented -------------------------------------------


def documented_mac(secret: bytes, state: dict[str, Any]) -> str:
    """The MAC as the README and service/http/state_signing.py say to compute it."""
    body = {k: v for k, v in state.items() if k != "signature"}
    data = b"patience-engine state v1\n" + json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    return base64.urlsafe_b64encode(hmac.digest(secret, data, hashlib.sha256)).rstrip(b"=").decode()


def secret_of(kid: str) -> bytes:
    return base64.b64decode(key_for_tests(kid).split(":", 1)[1])


@pytest.mark.parametrize("game", GAMES)
def test_deals_and_moves_are_signed_with_the_first_key_as_documented(signed: FlaskClient, game: str) -> None:
    dealt = signed.post(f"/v1/games/{game}/deals", json={"deal": 7}).get_json()
    moved = signed.post(f"/v1/games/{game}/moves", json={"state": dealt["state"], "move": dealt["legal_moves"][-1], "autoplay": "safe"})
    assert moved.status_code == 200
    for state in (dealt["state"], moved.get_json()["state"]):
        assert list(state)[-1] == "signature"
        assert state["signature"] == {"kid": "k2", "mac": documented_mac(secret_of("k2"), state)}


def test_the_deal_may_come_back_as_an_integer(signed: FlaskClient, positions: dict[str, dict[str, Any]]) -> None:
    """The schema reads a deal in either form; the MAC covers its decimal string."""
    position = positions["penguin"]
    state = {**position["state"], "deal": int(position["state"]["deal"])}
    assert play(signed, "penguin", state, position).status_code == 200


# --- key rotation ----------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_a_state_signed_with_an_older_listed_key_still_plays(game: str) -> None:
    old = make_app(keys=key_for_tests("k1")).test_client()  # the server before k2 was added
    dealt = old.post(f"/v1/games/{game}/deals", json={"deal": 3}).get_json()
    assert dealt["state"]["signature"]["kid"] == "k1"
    now = make_app(keys=TEST_STATE_KEYS).test_client()  # k2 signs, k1 still verifies
    moved = play(now, game, dealt["state"], dealt)
    assert moved.status_code == 200, moved.get_json()
    assert moved.get_json()["state"]["signature"]["kid"] == "k2"
    assert now.post(f"/v1/games/{game}/legal-moves", json={"state": dealt["state"]}).status_code == 200


@pytest.mark.parametrize("game", GAMES)
def test_a_state_signed_with_a_key_no_longer_listed_is_refused(game: str, positions: dict[str, dict[str, Any]]) -> None:
    old = make_app(keys=key_for_tests("k1")).test_client()
    dealt = old.post(f"/v1/games/{game}/deals", json={"deal": 3}).get_json()
    retired = make_app(keys=f"{key_for_tests('k3')},{key_for_tests('k2')}").test_client()  # k1 taken off the ring
    assert_refused(play(retired, game, dealt["state"], dealt), ProblemCode.STATE_KEY_UNKNOWN)


def test_a_listed_key_id_with_another_secret_does_not_verify() -> None:
    dealt = make_app(keys=key_for_tests("k1")).test_client().post("/v1/games/opus/deals", json={"deal": 3}).get_json()
    other_k1 = "k1:" + base64.b64encode(b"another secret, 32 bytes long..!").decode()
    assert_refused(play(make_app(keys=other_k1).test_client(), "opus", dealt["state"], dealt), ProblemCode.STATE_SIGNATURE_INVALID)


# --- the mode is announced; open mode is unchanged -------------------------------------------


def test_the_games_say_which_mode_the_server_runs(client: FlaskClient, signed: FlaskClient) -> None:
    assert client.get("/v1/games").get_json()["state_protection"] == "open"
    assert client.get("/v1/games/boomerang").get_json()["state_protection"] == "open"
    assert signed.get("/v1/games").get_json()["state_protection"] == "signed"
    assert signed.get("/v1/games/boomerang").get_json()["state_protection"] == "signed"


@pytest.mark.parametrize("game", GAMES)
def test_open_mode_neither_signs_nor_checks(client: FlaskClient, positions: dict[str, dict[str, Any]], game: str) -> None:
    """Open answers carry no signature; a signature a client sends (here a signed server's,
    then a made-up one) is ignored."""
    dealt = client.post(f"/v1/games/{game}/deals", json={"deal": 1}).get_json()
    assert "signature" not in dealt["state"]
    position = positions[game]
    for state in (position["state"], {**position["state"], "signature": {"kid": "?", "mac": "x"}}):
        moved = play(client, game, state, position)
        assert moved.status_code == 200, moved.get_json()
        assert "signature" not in moved.get_json()["state"]


def test_the_open_app_is_the_default() -> None:
    assert settings_for_tests().state.mode == "open"
    assert create_app(settings_for_tests()).test_client().get("/v1/games").get_json()["state_protection"] == "open"


@pytest.mark.parametrize("signature", [None, "k2", {"kid": "k2"}, {"kid": 2, "mac": "m"}, {"kid": "k2", "mac": "m" * 129}, {"kid": "k2", "mac": "m", "at": 1}])
@pytest.mark.parametrize("mode", ["open", "signed"])
def test_a_signature_that_does_not_fit_the_schema_is_a_bad_body(
    client: FlaskClient, signed: FlaskClient, positions: dict[str, dict[str, Any]], mode: str, signature: Any
) -> None:
    """The schema bounds a signature's shape and size (400 `invalid-body`, in either mode);
    one that fits it but is not the service's is 403 `state-signature-malformed`."""
    state = {**positions["pelican"]["state"], "signature": signature}
    r = (client if mode == "open" else signed).post("/v1/games/pelican/legal-moves", json={"state": state})
    assert r.status_code == 400 and r.get_json()["code"] == "invalid-body"
    assert r.get_json()["errors"][0]["where"].startswith("/state/signature")
