"""Verified replays (``POST /v1/games/{game}/replays``, docs/replays.md).

- every solution the solver gives replays to ``won`` (a few deals of every game, open and
  signed modes; Binary Star's longest solution seen, within the default body limit);
- a replay with one move changed fails at that move's index (409 ``illegal-move``), an
  unreadable move answers 422 ``invalid-move`` at its index, too many moves 400;
- the signed result verifies with the procedure docs/replays.md gives, re-implemented
  here from those lines alone, and fails when any byte of it changes;
- the moves a client played through ``/moves`` replay to the same position, in every
  mode: the same state in open and signed modes, the same readable part in sealed mode,
  where a replay starts from the keyed deal.

Solutions come from :func:`service.solver.solve_position` with a position limit (not a
time limit), so the deals below are solved on any machine.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.engine.core import Action, Game, Move, State
from service.engine.registry import GAME_CLASSES, get_game
from service.http import create_app
from service.http.problems import ProblemCode
from service.http.replay_schemas import MAX_REPLAY_MOVES
from service.http.replays_api import REPLAY_DOMAIN
from service.http.state_sealing import keeps_secrets
from service.http.state_signing import DOMAINS
from service.http.wire import move_from_json, move_to_json
from service.settings import Settings
from service.solver import Limits, Outcome, solve_position
from tests.app_settings import key_for_tests, sealed_settings_for_tests, settings_for_tests, signed_settings_for_tests

GAMES = list(GAME_CLASSES)
# Per game, deals the solver wins within SOLVE_LIMITS (a position limit: the same on any machine).
SOLVED_DEALS: dict[str, tuple[int, ...]] = {
    "penguin": (1, 2, 3),
    "penguin-ii": (1, 2, 3),
    "opus": (2, 3, 7),
    "pelican": (1, 2, 3),
    "penguin-freecell-moves": (1, 2, 3),
    "small-billee": (1, 2, 3),
    "boomerang": (1, 2, 3),
    "amazons": (1, 2, 3),
    "abandon-hope": (1, 2, 3),
    "binary-star": (1, 2, 3),
    "forty-thieves": (2, 7, 10),
}
SOLVE_LIMITS = Limits(max_seconds=60, max_states=30_000)
LONGEST_SOLUTION = ("binary-star", 108)  # the longest solution seen over 1,400 deals (docs/replays.md)
DEFAULT_BODY_BYTES = settings_for_tests().http.max_body_bytes
LARGE_BODY_BYTES = 90_112  # the limit docs/replays.md advises for any 1,100 moves, spaced
PLAYED_MOVES = 40  # moves of a seeded random game played through /moves, then replayed
SEALED_ONLY = ("sealed", "signature")  # what a sealed state has beyond its readable part

SECRETS = {kid: base64.b64decode(key_for_tests(kid).split(":", 1)[1]) for kid in ("k1", "k2")}


# --- the checking procedure of docs/replays.md, and nothing else ---------------------------
def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def documented_check(result: dict[str, Any], secret: bytes, moves: list[dict[str, Any]]) -> bool:
    body = {k: v for k, v in result.items() if k != "signature"}
    mac = base64.urlsafe_b64encode(hmac.digest(secret, b"patience-engine replay v1\n" + canonical(body), "sha256")).rstrip(b"=").decode()
    return hmac.compare_digest(mac, result["signature"]["mac"]) and hmac.compare_digest(
        hashlib.sha256(canonical(moves)).hexdigest(), result["moves_sha256"]
    )


def verifies(result: Any, moves: list[dict[str, Any]]) -> bool:
    """The documented check, with the secret of the key the result names (False for a
    result that is not one, or names no key of the ring)."""
    try:
        return documented_check(result, SECRETS[result["signature"]["kid"]], moves)
    except (KeyError, TypeError, AttributeError, ValueError):
        return False


# --- apps, solutions and games played ------------------------------------------------------
def make_client(settings: Settings) -> FlaskClient:
    app: Flask = create_app(settings)
    app.testing = True
    return app.test_client()


MODES = {"open": settings_for_tests, "signed": signed_settings_for_tests, "sealed": sealed_settings_for_tests}


@pytest.fixture(scope="module")
def clients() -> dict[str, FlaskClient]:
    return {mode: make_client(settings()) for mode, settings in MODES.items()}


SOLUTIONS: dict[tuple[str, int], list[dict[str, Any]]] = {}


def solution(game_id: str, deal: int) -> list[dict[str, Any]]:
    """The solver's winning moves for a deal (PySolFC's numbering), as /solve answers them."""
    if (game_id, deal) not in SOLUTIONS:
        game = get_game(game_id)
        solved = solve_position(game, game.initial_state(deal), SOLVE_LIMITS)
        assert solved.result is Outcome.SOLVED, (game_id, deal, solved.result)
        SOLUTIONS[game_id, deal] = [move_to_json(game, m) for m in solved.moves]
    return SOLUTIONS[game_id, deal]


def replay(client: FlaskClient, game: str, deal: int, moves: list[Any], **more: Any) -> Any:
    return client.post(f"/v1/games/{game}/replays", json={"deal": deal, "moves": moves, **more})


def played_through_moves(client: FlaskClient, game: str, deal: int, seed: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Moves of a seeded random game played through /moves with safe autoplay (until no
    move is left or PLAYED_MOVES), and the last answer."""
    rng = random.Random(seed)
    answer = client.post(f"/v1/games/{game}/deals", json={"deal": deal}).get_json()
    moves: list[dict[str, Any]] = []
    while answer["legal_moves"] and len(moves) < PLAYED_MOVES:
        move = rng.choice(answer["legal_moves"])
        response = client.post(f"/v1/games/{game}/moves", json={"state": answer["state"], "move": move, "autoplay": "safe"})
        assert response.status_code == 200, response.get_json()
        answer = response.get_json()
        moves.append(move)
    return moves, answer


def position_after(game: Game, deal: int, moves: list[dict[str, Any]]) -> State:
    state = game.initial_state(deal)
    for data in moves:
        state = game.apply(state, move_from_json(game, data))
    return state


def an_illegal_move(game: Game, state: State) -> dict[str, Any]:
    """A readable move the rules refuse in ``state``."""
    piles = range(len(state.piles))
    candidates = [Move(Action.DEAL), Move(Action.REDEAL)] + [Move(Action.MOVE, s, d, 1) for s in piles for d in piles if s != d]
    return move_to_json(game, next(m for m in candidates if game.check_move(state, m) is not None))


# --- solutions replay to won ---------------------------------------------------------------
@pytest.mark.parametrize("mode", ["open", "signed"])
@pytest.mark.parametrize("game", GAMES)
def test_every_solution_replays_to_won(clients: dict[str, FlaskClient], game: str, mode: str) -> None:
    for deal in SOLVED_DEALS[game]:
        moves = solution(game, deal)
        response = replay(clients[mode], game, deal, moves)
        assert response.status_code == 200, response.get_json()
        answer = response.get_json()
        assert answer["status"] == "won" and answer["moves"] == len(moves) and answer["legal_moves"] == []
        result = answer["result"]
        assert (result["game"], result["deal"], result["status"], result["moves"]) == (game, str(deal), "won", len(moves))
        assert result["state_protection"] == mode and result["autoplay"] == "none"
        assert ("signature" in result) == (mode != "open")
        if mode != "open":
            assert verifies(result, moves)


def test_the_longest_solution_seen_replays_within_the_default_body_limit(clients: dict[str, FlaskClient]) -> None:
    game, deal = LONGEST_SOLUTION
    moves = solution(game, deal)
    assert len(moves) <= MAX_REPLAY_MOVES
    body = json.dumps({"deal": deal, "moves": moves})  # with spaces, as Python's json.dumps writes it
    assert len(body) <= DEFAULT_BODY_BYTES
    response = clients["signed"].post(f"/v1/games/{game}/replays", data=body, content_type="application/json")
    assert response.status_code == 200 and response.get_json()["status"] == "won"


def test_a_solve_answer_replays_to_won_through_http(clients: dict[str, FlaskClient]) -> None:
    client = clients["signed"]
    dealt = client.post("/v1/games/penguin/deals", json={"deal": 2}).get_json()
    solved = client.post("/v1/games/penguin/solve", json={"state": dealt["state"]}).get_json()
    assert solved["result"] == "solved"
    answer = replay(client, "penguin", 2, solved["moves"]).get_json()
    assert answer["status"] == "won" and verifies(answer["result"], solved["moves"])


# --- refused replays -----------------------------------------------------------------------
@pytest.mark.parametrize("game", GAMES)
def test_a_changed_move_fails_at_its_index(clients: dict[str, FlaskClient], game: str) -> None:
    deal = SOLVED_DEALS[game][0]
    moves = solution(game, deal)
    index = len(moves) // 2
    rules = get_game(game)
    before = position_after(rules, deal, moves[:index])
    changed = [*moves[:index], an_illegal_move(rules, before), *moves[index + 1 :]]
    rejection = rules.check_move(before, move_from_json(rules, changed[index]))
    assert rejection is not None
    for client in clients.values():
        if client is clients["sealed"]:
            continue  # a sealed server deals keyed deals: the solution is not one of them
        response = replay(client, game, deal, changed)
        assert response.status_code == 409
        problem = response.get_json()
        assert (problem["code"], problem["move_index"], problem["rule"]) == (ProblemCode.ILLEGAL_MOVE, index, rejection.rule)
        assert [e["where"] for e in problem["errors"]] == [f"/moves/{index}"]
        assert replay(client, game, deal, moves[:index]).get_json()["moves"] == index


def test_an_unreadable_move_answers_invalid_move_at_its_index(clients: dict[str, FlaskClient]) -> None:
    moves = [*solution("penguin", 1)[:5], {"action": "move", "from": "tableau:0", "count": 1}]
    problem = replay(clients["open"], "penguin", 1, moves).get_json()
    assert (problem["status"], problem["code"], problem["move_index"]) == (422, ProblemCode.INVALID_MOVE, 5)
    assert [e["where"] for e in problem["errors"]] == ["/moves/5"]


def test_a_pile_the_game_lacks_is_an_illegal_move_at_its_index(clients: dict[str, FlaskClient]) -> None:
    moves = [*solution("penguin", 1)[:3], {"action": "move", "from": "tableau:12", "to": "cell:0", "count": 1}]
    problem = replay(clients["open"], "penguin", 1, moves).get_json()
    assert (problem["status"], problem["code"], problem["rule"], problem["move_index"]) == (409, ProblemCode.ILLEGAL_MOVE, "no-such-pile", 3)


def test_too_many_moves_are_refused_by_the_schema(clients: dict[str, FlaskClient]) -> None:
    deal = {"action": "deal"}
    too_many = replay(clients["open"], "penguin", 1, [deal] * (MAX_REPLAY_MOVES + 1))
    assert too_many.status_code == 400 and too_many.get_json()["code"] == ProblemCode.INVALID_BODY
    assert [e["where"] for e in too_many.get_json()["errors"]] == ["/moves"]
    as_many = replay(clients["open"], "penguin", 1, [deal] * MAX_REPLAY_MOVES)  # read, then refused at move 0
    assert as_many.status_code == 409 and as_many.get_json()["move_index"] == 0


def test_options_are_checked_as_deals_checks_them(clients: dict[str, FlaskClient]) -> None:
    bad = replay(clients["open"], "penguin", 1, [], options={"cells": 99})
    assert bad.status_code == 422 and bad.get_json()["code"] == ProblemCode.INVALID_OPTIONS
    five = replay(clients["open"], "penguin", 1, [], options={"cells": 5}).get_json()
    assert five["result"]["options"] == {**get_game("penguin").options, "cells": 5}
    assert replay(clients["open"], "chess", 1, []).status_code == 404


# --- the bound and the body limit (docs/replays.md) ----------------------------------------
def test_the_bound_fits_binary_star_moves_in_the_default_body_limit(clients: dict[str, FlaskClient]) -> None:
    star_move = {"action": "move", "from": "fan:16", "to": "star:1", "count": 1}  # its longest
    body = json.dumps({"deal": "9" * 20, "autoplay": "safe", "moves": [star_move] * MAX_REPLAY_MOVES}, separators=(",", ":"))
    assert len(body) <= DEFAULT_BODY_BYTES
    response = clients["open"].post("/v1/games/binary-star/replays", data=body, content_type="application/json")
    assert response.status_code in (200, 409)  # read whole: not 413


def test_the_advised_body_limit_holds_the_longest_moves_of_any_game() -> None:
    def longest_move(game: Game) -> dict[str, Any]:
        piles = range(len(game.initial_state(1).piles))
        moves = [move_to_json(game, Move(Action.MOVE, s, d, len(game.deck()))) for s in piles for d in piles]
        return max(moves, key=lambda m: len(json.dumps(m)))

    move = max((longest_move(get_game(g)) for g in GAMES), key=lambda m: len(json.dumps(m)))
    options = {"cells": 7, "foundation_base": "beak", "runs": "free-cell-limit", "empty_pile": "below-base", "deal": "pelican"}
    body = json.dumps({"deal": "9" * 20, "options": options, "autoplay": "safe", "moves": [move] * MAX_REPLAY_MOVES})
    assert DEFAULT_BODY_BYTES < len(body) <= LARGE_BODY_BYTES


# --- the signed result ---------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["signed", "sealed"])
@pytest.mark.parametrize("game", ["forty-thieves", "penguin"])  # hidden cards; rule options
def test_the_signed_result_verifies_and_any_changed_byte_fails(clients: dict[str, FlaskClient], game: str, mode: str) -> None:
    moves, _ = played_through_moves(clients[mode], game, 5, seed=5)
    result = replay(clients[mode], game, 5, moves, autoplay="safe").get_json()["result"]
    assert verifies(result, moves)
    text = canonical(result)
    for at in range(len(text)):
        changed = text[:at] + bytes([text[at] ^ 1]) + text[at + 1 :]
        try:
            tampered = json.loads(changed)
        except ValueError:
            continue  # no longer JSON: nothing to check
        assert not verifies(tampered, moves), changed
    assert not verifies(result, moves[:-1])  # not the moves it was answered for


def test_a_replay_mac_never_passes_as_a_state_mac() -> None:
    for state_domain in DOMAINS.values():
        assert not state_domain.startswith(REPLAY_DOMAIN) and not REPLAY_DOMAIN.startswith(state_domain)


# --- moves played through /moves replay to the same position -------------------------------
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("game", GAMES)
def test_moves_played_replay_to_the_same_position(clients: dict[str, FlaskClient], game: str, mode: str) -> None:
    seed = GAMES.index(game)
    moves, last = played_through_moves(clients[mode], game, deal=3, seed=seed)
    answer = replay(clients[mode], game, 3, moves, autoplay="safe").get_json()
    assert (answer["status"], answer["legal_moves"], answer["moves"]) == (last["status"], last["legal_moves"], len(moves))
    if mode == "sealed" and keeps_secrets(game):
        def readable(state: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in state.items() if k not in SEALED_ONLY}

        assert readable(answer["state"]) == readable(last["state"])
        assert answer["state"]["sealed"] and answer["state"]["signature"]
    else:
        assert answer["state"] == last["state"]  # signatures are deterministic; nothing sealed
    assert answer["result"]["autoplay"] == "safe" and answer["result"]["status"] == last["status"]
    assert ("signature" in answer["result"]) == (mode != "open")
    if mode != "open":
        assert verifies(answer["result"], moves)


@pytest.mark.parametrize("game", ["forty-thieves", "abandon-hope", "penguin"])
def test_a_sealed_replay_starts_from_the_keyed_deal(clients: dict[str, FlaskClient], game: str) -> None:
    dealt = clients["sealed"].post(f"/v1/games/{game}/deals", json={"deal": 9}).get_json()
    replayed = replay(clients["sealed"], game, 9, []).get_json()
    assert {k: v for k, v in replayed["state"].items() if k not in SEALED_ONLY} == {
        k: v for k, v in dealt["state"].items() if k not in SEALED_ONLY
    }
    open_deal = clients["open"].post(f"/v1/games/{game}/deals", json={"deal": 9}).get_json()
    assert replayed["state"]["piles"] != open_deal["state"]["piles"]  # keyed: not PySolFC's deal 9
