"""What README's "Contract testing" section lets a consumer pin, held: the order of legal
moves is a function of the state alone (every call, every mode that shows the same layout,
every process whatever its hash seed), and a move's events come in the order they
happened, the move asked for first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.engine.registry import game_ids
from service.http import create_app
from tests.app_settings import sealed_settings_for_tests, settings_for_tests, signed_settings_for_tests

REPO = Path(__file__).resolve().parents[2]
DEALS = ("1", "2")
PLIES = 12  # moves played per deal before each check


@pytest.fixture(scope="module")
def open_client() -> FlaskClient:
    return create_app(settings_for_tests()).test_client()


def post(client: FlaskClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = client.post(path, json=body)
    assert answer.status_code == 200, answer.get_json()
    data: dict[str, Any] = answer.get_json()
    return data


def walk(client: FlaskClient, game: str, deal: str, autoplay: str = "none") -> list[dict[str, Any]]:
    """The answers of deal ``deal`` and of up to :data:`PLIES` moves after it, move i being
    the (i mod n)-th of the n listed (so that deals, redeals and card moves all come up)."""
    answers = [post(client, f"/v1/games/{game}/deals", {"deal": deal})]
    for ply in range(PLIES):
        legal = answers[-1]["legal_moves"]
        if not legal:
            break
        move = legal[ply % len(legal)]
        answer = post(client, f"/v1/games/{game}/moves", {"state": answers[-1]["state"], "move": move, "autoplay": autoplay})
        answer["asked"] = move
        answers.append(answer)
    return answers


def legal_move_lists() -> dict[str, list[Any]]:
    """Every game's legal move lists along :func:`walk` of each deal, in open mode."""
    client = create_app(settings_for_tests()).test_client()
    return {f"{g} {d}": [a["legal_moves"] for a in walk(client, g, d)] for g in game_ids() for d in DEALS}


@pytest.mark.parametrize("game", game_ids())
def test_legal_moves_are_a_function_of_the_state(open_client: FlaskClient, game: str) -> None:
    """The same state listed again (``/legal-moves``), in signed mode (the same layout, a
    signature added) and in sealed mode for a game with nothing to hide (a keyed layout,
    so it is compared with itself): the same moves, in the same order."""
    signed = create_app(signed_settings_for_tests()).test_client()
    for deal in DEALS:
        opened, signed_walk = walk(open_client, game, deal), walk(signed, game, deal)
        for plain, protected in zip(opened, signed_walk, strict=True):
            assert protected["legal_moves"] == plain["legal_moves"]
            again = post(open_client, f"/v1/games/{game}/legal-moves", {"state": plain["state"]})
            assert again["legal_moves"] == plain["legal_moves"]
            again = post(signed, f"/v1/games/{game}/legal-moves", {"state": protected["state"]})
            assert again["legal_moves"] == plain["legal_moves"]
    sealed = create_app(sealed_settings_for_tests()).test_client()
    for answer in walk(sealed, game, DEALS[0]):
        again = post(sealed, f"/v1/games/{game}/legal-moves", {"state": answer["state"]})
        assert again["legal_moves"] == answer["legal_moves"]


def test_legal_move_order_does_not_depend_on_the_process() -> None:
    """Two processes with different hash seeds (set and dict orders of strings differ)
    list the same moves in the same order."""
    script = "import json; from tests.pact.test_contract_promises import legal_move_lists as f; print(json.dumps(f()))"
    lists = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        lists.append(json.loads(done.stdout))
    assert lists[0] == lists[1] == json.loads(json.dumps(legal_move_lists()))


@pytest.mark.parametrize("game", game_ids())
@pytest.mark.parametrize("autoplay", ["none", "safe"])
def test_events_come_in_order_the_move_first(open_client: FlaskClient, game: str, autoplay: str) -> None:
    """A move's first event is the move asked for (its ``type`` is the move's ``action``; a
    card move's names its ``from`` and ``to`` and moves ``count`` cards); what it caused
    follows, never another ``move``."""
    for deal in DEALS:
        for answer in walk(open_client, game, deal, autoplay)[1:]:
            asked, events = answer["asked"], answer["events"]
            assert events and events[0]["type"] == asked["action"], (asked, events)
            if asked["action"] == "move":
                first = events[0]
                assert (first["from"], first["to"], len(first["cards"])) == (asked["from"], asked["to"], asked["count"])
            assert all(e["type"] != "move" for e in events[1:]), events
            if autoplay == "none":
                assert all(e["type"] != "autoplay" for e in events), events
