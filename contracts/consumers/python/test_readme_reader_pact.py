"""A pact written from README's "Contract testing (Pact)" section alone (its pact-python
snippet, its provider-state table and its "what a consumer may pin" table), by someone who
had not read the provider's code: an open illegal move, a signed Opus game's legal moves,
a sealed Small Billee replay. Recorded into
contracts/pacts/readme-reader-patience-engine.json, which `make pact-verify` verifies: the
README's promises and states are what the engine does. Run by ``make pact-record``."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

os.environ["PACT_DO_NOT_TRACK"] = "true"  # before pact is imported: nothing leaves the machine

from pact import Pact, generate, match

PACTS = Path(os.environ.get("PACT_OUTPUT_DIR") or Path(__file__).resolve().parents[2] / "pacts")
PACT_FILE = PACTS / "readme-reader-patience-engine.json"
EXAMPLE_STATE = {"format": 1, "game": "penguin", "deal": "1", "piles": {"tableau": [["3D"]]}}
EXAMPLE_MOVE = {"action": "move", "from": "tableau:0", "to": "tableau:1", "count": 1}
KEY_ID, MAC = r"^[A-Za-z0-9_-]{1,32}$", r"^[A-Za-z0-9_-]{43}$"


@pytest.fixture(scope="module", autouse=True)
def fresh_pact_file() -> None:
    PACTS.mkdir(exist_ok=True)
    PACT_FILE.unlink(missing_ok=True)


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def new_pact() -> Pact:
    return Pact("readme-reader", "patience-engine").with_specification("V4")


def test_illegal_move() -> None:
    pact = new_pact()
    (pact.upon_receiving("an illegal move").given("a Penguin deal 1")
        .with_request("POST", "/v1/games/penguin/moves")
        .with_body({"state": match.like(EXAMPLE_STATE, generator=generate.provider_state("${state}")),
                    "move": match.like(EXAMPLE_MOVE, generator=generate.provider_state("${illegal_move}"))},
                   "application/json")
        .will_respond_with(409)
        .with_body({"status": 409, "code": "illegal-move", "rule": match.regex("some-rule", regex=r"^[a-z0-9]+(-[a-z0-9]+)*$"),
                    "detail": match.str("why")}, "application/problem+json"))
    with pact.serve() as mock:
        assert post(f"{mock.url}/v1/games/penguin/moves", {"state": EXAMPLE_STATE, "move": EXAMPLE_MOVE})[0] == 409
    pact.write_file(PACTS, overwrite=False)


def test_signed_legal_moves() -> None:
    pact = new_pact()
    (pact.upon_receiving("legal moves of a signed game").given("a signed Opus game after 5 moves")
        .with_request("POST", "/v1/games/opus/legal-moves")
        .with_body({"state": match.like(EXAMPLE_STATE, generator=generate.provider_state("${state}"))}, "application/json")
        .will_respond_with(200)
        .with_body({"legal_moves": match.each_like({"action": match.regex("move", regex=r"^(move|deal|redeal)$")}),
                    "status": "playing"}, "application/json"))
    with pact.serve() as mock:
        assert post(f"{mock.url}/v1/games/opus/legal-moves", {"state": EXAMPLE_STATE})[1]["status"] == "playing"
    pact.write_file(PACTS, overwrite=False)


def test_sealed_replay() -> None:
    pact = new_pact()
    (pact.upon_receiving("a sealed replay").given("a sealed Small Billee game after 4 moves")
        .with_request("POST", "/v1/games/small-billee/replays")
        .with_body({"deal": "1", "moves": match.like([EXAMPLE_MOVE], generator=generate.provider_state("${moves}"))},
                   "application/json")
        .will_respond_with(200)
        .with_body({"moves": 4, "status": "playing",
                    "result": {"game": "small-billee", "deal": "1", "state_protection": "sealed", "moves": 4,
                               "moves_sha256": match.regex("0" * 64, regex=r"^[0-9a-f]{64}$"),
                               "signature": {"kid": match.regex("k1", regex=KEY_ID), "mac": match.regex("A" * 43, regex=MAC)}}},
                   "application/json"))
    with pact.serve() as mock:
        status, answer = post(f"{mock.url}/v1/games/small-billee/replays", {"deal": "1", "moves": [EXAMPLE_MOVE]})
        assert status == 200 and answer["result"]["state_protection"] == "sealed"
    pact.write_file(PACTS, overwrite=False)


def test_a_game_without_a_state() -> None:
    """An interaction given no state is played in open mode (README's provider states)."""
    pact = new_pact()
    (pact.upon_receiving("a game's description").with_request("GET", "/v1/games/penguin")
        .will_respond_with(200)
        .with_body({"id": "penguin", "name": "Penguin", "state_protection": "open",
                    "actions": match.each_like(match.regex("move", regex=r"^(move|deal|redeal)$"))},
                   "application/json"))
    with pact.serve() as mock, urllib.request.urlopen(f"{mock.url}/v1/games/penguin", timeout=10) as answer:
        assert json.load(answer)["state_protection"] == "open"
    pact.write_file(PACTS, overwrite=False)
