"""The Pact verification app (service/pact_provider.py): it starts only with a test key
ring and never reads production keys, it is never the image's command, and each provider
state sets up its mode and the values a pact injects."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from service.pact_provider import (
    PACT_TEST_STATE_KEYS_FILE,
    REMOVED_KEY_ID,
    STATE_CHANGE_PATH,
    VerificationApp,
    create_verification_app,
)
from tests.app_settings import SMALL_SOLVER_BUDGETS, key_for_tests

REPO = Path(__file__).resolve().parents[2]
TEST_KEYS = REPO / "contracts" / "provider" / "test-only-state-keys.txt"
ENV = {**SMALL_SOLVER_BUDGETS, PACT_TEST_STATE_KEYS_FILE.name: str(TEST_KEYS), "WEB_CONCURRENCY": "1"}
CURRENT_KEY, RETIRED_KEY = "pact-test-2", "pact-test-1"  # the committed ring's ids, in order


@pytest.fixture(scope="module")
def app() -> VerificationApp:
    return create_verification_app(ENV)


@pytest.fixture()
def client(app: VerificationApp) -> Iterator[Client]:
    client = Client(app)
    yield client
    client.post(STATE_CHANGE_PATH, json={"state": "", "action": "teardown"})  # back to open mode


def set_up(client: Client, name: str) -> dict[str, Any]:
    answer = client.post(STATE_CHANGE_PATH, json={"state": name, "params": {}, "action": "setup"})
    assert answer.status_code == 200, answer.get_json()
    data: dict[str, Any] = answer.get_json()
    return data


def ring_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "ring.txt"
    path.write_text(text)
    return str(path)


# --- starting ------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "variable",
    ["STATE_KEYS", "STATE_KEYS_FILE", "STATE_PROTECTION", "DEAL_KEYS", "DEAL_KEYS_FILE", "RESULT_KEYS", "RESULT_KEYS_FILE"],
)
def test_refuses_to_start_beside_a_production_key_variable(variable: str) -> None:
    """Whatever else is given, a production key or mode variable stops the start, before
    any key is read (the message names the variable, never a secret)."""
    value = "/nonexistent" if variable.endswith("_FILE") else ("signed" if variable == "STATE_PROTECTION" else key_for_tests("k1"))
    with pytest.raises(RuntimeError, match=f"never reads production keys: unset {variable}"):
        create_verification_app({**ENV, variable: value})


def test_refuses_to_start_without_a_test_ring() -> None:
    env = {k: v for k, v in ENV.items() if k != PACT_TEST_STATE_KEYS_FILE.name}
    with pytest.raises(RuntimeError, match="needs a test key ring"):
        create_verification_app(env)


def test_refuses_a_ring_that_is_not_a_test_ring(tmp_path: Path) -> None:
    """A ring whose ids are not all ``pact-test-...`` (a production ring named by mistake)."""
    path = ring_file(tmp_path, f"pact-test-2:{'A' * 43}\n{key_for_tests('k1')}\n")
    with pytest.raises(RuntimeError, match=r"key ids \['k1'\] do not start with 'pact-test-'"):
        create_verification_app({**ENV, PACT_TEST_STATE_KEYS_FILE.name: path})


def test_refuses_a_ring_of_one_key(tmp_path: Path) -> None:
    path = ring_file(tmp_path, f"pact-test-2:{'A' * 43}\n")
    with pytest.raises(RuntimeError, match="needs two keys"):
        create_verification_app({**ENV, PACT_TEST_STATE_KEYS_FILE.name: path})


@pytest.mark.parametrize("workers", ["", "2"])
def test_refuses_more_than_one_worker(workers: str) -> None:
    """The mode lives in one process: another worker would play in another mode."""
    with pytest.raises(RuntimeError, match="WEB_CONCURRENCY=1"):
        create_verification_app({**ENV, "WEB_CONCURRENCY": workers})


def test_committed_ring_is_a_test_ring() -> None:
    ids = [line.split(":", 1)[0] for line in TEST_KEYS.read_text().split()]
    assert ids == [CURRENT_KEY, RETIRED_KEY]


def test_never_the_production_images_command() -> None:
    """The image serves service.wsgi:app and holds no entry point of the verification app
    (contracts/provider/wsgi.py); no other module of the service imports it."""
    dockerfile = (REPO / "deploy" / "Dockerfile").read_text()
    commands = re.findall(r"^(?:CMD|ENTRYPOINT)\s+(.*)$", dockerfile, re.MULTILINE)
    assert commands == ['["gunicorn", "-c", "deploy/gunicorn.conf.py", "service.wsgi:app"]']
    assert "pact_provider" not in dockerfile and "PACT_" not in dockerfile
    # The image copies named parts of the repository, never contracts/ (the entry point's
    # folder) nor the whole build context.
    sources = [src for line in re.findall(r"^COPY (?!--from)(.*)$", dockerfile, re.MULTILINE) for src in line.split()[:-1]]
    assert sources and not [src for src in sources if src.strip("./") in ("", "contracts") or src.startswith("contracts")]
    for module in (REPO / "service").rglob("*.py"):
        if module.name == "pact_provider.py":
            continue
        tree = ast.parse(module.read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
            a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
        }
        assert not any(name and "pact_provider" in name for name in imported), module
    for config in ("gunicorn.conf.py", "haproxy.cfg"):
        text = (REPO / "deploy" / config).read_text()
        assert "pact_provider" not in text and "PACT_" not in text


# --- provider states -----------------------------------------------------------------------

def test_open_deal(client: Client) -> None:
    values = set_up(client, "a Penguin deal 1")
    assert (values["mode"], values["game"], values["deal"], values["status"]) == ("open", "penguin", "1", "playing")
    assert "signature" not in values["state"] and values["moves"] == []
    assert client.post("/v1/games/penguin/moves", json={"state": values["state"], "move": values["legal_move"]}).status_code == 200
    refused = client.post("/v1/games/penguin/moves", json={"state": values["state"], "move": values["illegal_move"]})
    assert (refused.status_code, refused.get_json()["code"]) == (409, "illegal-move")
    assert client.get("/v1/games").get_json()["state_protection"] == "open"


def test_signed_deal_is_signed_by_the_current_key(client: Client) -> None:
    values = set_up(client, "a signed Penguin deal 1")
    assert values["mode"] == "signed" and values["state"]["signature"]["kid"] == CURRENT_KEY
    assert client.post("/v1/games/penguin/legal-moves", json={"state": values["state"]}).status_code == 200
    unsigned = {k: v for k, v in values["state"].items() if k != "signature"}
    assert client.post("/v1/games/penguin/legal-moves", json={"state": unsigned}).get_json()["code"] == "state-unsigned"


def test_sealed_game_after_moves(client: Client) -> None:
    values = set_up(client, "a sealed Forty Thieves game after 10 moves")
    assert (values["mode"], values["game"]) == ("sealed", "forty-thieves")
    assert len(values["moves"]) == 10 and "sealed" in values["state"] and "face_down" in values["state"]
    replayed = client.post("/v1/games/forty-thieves/replays", json={"deal": values["deal"], "moves": values["moves"]})
    assert replayed.status_code == 200 and replayed.get_json()["state"]["piles"] == values["state"]["piles"]
    refused = client.post("/v1/games/forty-thieves/moves", json={"state": values["state"], "move": values["illegal_move"]})
    assert refused.status_code == 409


def test_mode_only_state_and_teardown(client: Client) -> None:
    assert set_up(client, "the engine in sealed mode") == {"mode": "sealed"}
    assert client.get("/v1/games").get_json()["state_protection"] == "sealed"
    assert client.post(STATE_CHANGE_PATH, json={"state": "x", "action": "teardown"}).status_code == 200
    assert client.get("/v1/games").get_json()["state_protection"] == "open"


def test_no_state_is_open_mode(client: Client) -> None:
    """The verifier sends an empty state name for an interaction given none."""
    set_up(client, "the engine in sealed mode")
    assert set_up(client, "") == {"mode": "open"}
    assert client.get("/v1/games").get_json()["state_protection"] == "open"


def test_retired_key_still_plays_and_is_signed_again(client: Client) -> None:
    values = set_up(client, "a state signed with a retired key")
    assert values["mode"] == "signed" and values["state"]["signature"]["kid"] == RETIRED_KEY
    moved = client.post("/v1/games/penguin/moves", json={"state": values["state"], "move": values["legal_move"]})
    assert moved.status_code == 200 and moved.get_json()["state"]["signature"]["kid"] == CURRENT_KEY


def test_removed_key_is_refused(client: Client) -> None:
    values = set_up(client, "a state signed with a removed key")
    assert values["state"]["signature"]["kid"] == REMOVED_KEY_ID
    refused = client.post("/v1/games/penguin/moves", json={"state": values["state"], "move": values["legal_move"]})
    assert (refused.status_code, refused.get_json()["code"]) == (403, "state-key-unknown")


@pytest.mark.parametrize("mode", ["", "signed ", "sealed "])
def test_won_game(client: Client, mode: str) -> None:
    values = set_up(client, f"a {mode}won game")
    assert values["status"] == "won" and values["mode"] == (mode.strip() or "open")
    assert client.post("/v1/games/penguin/legal-moves", json={"state": values["state"]}).get_json() == {
        "legal_moves": [], "status": "won",
    }
    last = client.post("/v1/games/penguin/moves", json={"state": values["state_before_last_move"], "move": values["last_move"]})
    assert last.get_json()["status"] == "won"


@pytest.mark.parametrize("name", ["a Nope deal 1", "a Penguin game after 999 moves", "whatever", "a open Penguin deal 1"])
def test_unknown_state_is_a_problem(client: Client, name: str) -> None:
    """The verifier shows the detail: the state's forms are listed in it."""
    answer = client.post(STATE_CHANGE_PATH, json={"state": name, "action": "setup"})
    assert answer.status_code == 400 and answer.mimetype == "application/problem+json"
    assert answer.get_json()["code"] == "unknown-provider-state"


@pytest.mark.parametrize("body", [b"[]", b'{"state": 3}', b"not json"])
def test_malformed_state_change_is_a_problem(client: Client, body: bytes) -> None:
    answer = client.post(STATE_CHANGE_PATH, data=body, content_type="application/json")
    assert answer.status_code == 400 and answer.get_json()["code"] == "invalid-body"


def test_state_change_takes_only_post(client: Client) -> None:
    assert client.get(STATE_CHANGE_PATH).status_code == 405


def test_the_verify_script_names_the_same_state_change_path() -> None:
    """contracts/provider/verify.py runs in contracts/.venv, which cannot import the
    service: its copy of the path must stay this one."""
    script = (REPO / "contracts" / "provider" / "verify.py").read_text()
    assert re.findall(r'^STATE_CHANGE_PATH = "([^"]*)"', script, re.MULTILINE) == [STATE_CHANGE_PATH]
