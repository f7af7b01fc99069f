"""Fair hints and solves through the API (issue 11, part 5): ``"knowledge": "player"``.

For the five games with hidden information, a player-knowledge hint does not change when
only what is hidden changes (the face-down cards' order, or the deal seed that decides
Small Billee's and Abandon Hope's reshuffles): in open mode, where such states are built
directly, and in sealed mode, where the hint reads only sealed states. ``winnable`` is
never ``true`` while hidden information matters, every move of a player-knowledge solve
plays in turn on the real state, the full-information games answer as with ``full``, and
sealed mode defaults to ``player`` and refuses ``full``.

Budgets: a few hundred positions a sample, far inside each sample's share of the time,
so that the answers are decided by positions (tests/app_settings.py budgets otherwise).
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.engine.core import Game, State
from service.engine.registry import get_game
from service.http import create_app
from service.http.app_settings import settings_of
from service.http.state_protection import Position, answer_state
from service.http.wire import move_from_json, state_to_json
from service.solver import Limits, solve_position
from tests.app_settings import sealed_settings_for_tests, settings_for_tests
from tests.solver.test_answers import QUICK_DEALS
from tests.solver.test_sampling import FULL_INFORMATION_GAMES, HIDDEN_GAMES, hidden_reordered, playout

BUDGETS = {"HINT_SECONDS": "2", "SOLVER_MAX_STATES": "3000", "PLAYER_KNOWLEDGE_SAMPLES": "6"}
SOLVE_LIMITS = {"max_seconds": 2, "max_states": 3000}
# What two answers to the same question must share (the time spent may differ).
SAME_ANSWER = ("move", "reason", "winnable", "knowledge", "samples", "result", "moves")


def make_client(app: Flask) -> FlaskClient:
    app.testing = True
    return app.test_client()


@pytest.fixture(scope="module")
def open_client() -> FlaskClient:
    return make_client(create_app(settings_for_tests(**BUDGETS)))


@pytest.fixture(scope="module")
def sealed_app() -> Flask:
    return create_app(sealed_settings_for_tests(**BUDGETS))


@pytest.fixture(scope="module")
def sealed_client(sealed_app: Flask) -> FlaskClient:
    return make_client(sealed_app)


@functools.cache
def states_of(game_id: str) -> tuple[State, ...]:
    """A deal, a position some moves into another deal (moves that reveal nothing, so that
    the hidden information still matters), and a late position of a won line (the last
    whose hidden cards can be ordered otherwise), where samples are won."""
    game = get_game(game_id)
    start = game.initial_state(QUICK_DEALS[game_id][0])
    line = solve_position(game, start, Limits(10, 10**6)).moves
    assert line
    late = start
    for move in line:
        start = game.apply(start, move)
        if game.hidden_matters(start) and hidden_reordered(game, start) != start:
            late = start
    return (game.initial_state(1), playout(game, 2, 12, 2, quiet=True)[-1], late)


def ask(client: FlaskClient, game_id: str, endpoint: str, state: dict[str, Any], **body: Any) -> dict[str, Any]:
    """The answer of ``/hint`` or ``/solve`` (status 200 checked)."""
    limits = {"limits": SOLVE_LIMITS} if endpoint == "solve" else {}
    r = client.post(f"/v1/games/{game_id}/{endpoint}", json={"state": state, **limits, **body})
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def same_answer(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: answer[k] for k in SAME_ANSWER if k in answer} | {"states": answer["stats"]["states"]}


# --- the same visible position, other hidden cards: the same hint -----------------------------

@pytest.mark.parametrize("game_id", HIDDEN_GAMES)
def test_a_player_hint_does_not_change_with_the_hidden_cards_in_open_mode(open_client: FlaskClient, game_id: str) -> None:
    game = get_game(game_id)
    for state in states_of(game_id):
        other = hidden_reordered(game, state)
        assert other != state
        given = [ask(open_client, game_id, "hint", state_to_json(game, s), knowledge="player") for s in (state, other)]
        assert same_answer(given[0]) == same_answer(given[1])
        assert given[0]["samples"]["of"] == 6


def sealed_state(app: Flask, game: Game, state: State) -> dict[str, Any]:
    """``state`` as a sealed server answers it (deal number 1; its seed is the state's)."""
    return answer_state(settings_of(app).state, Position(game, state, 1))


@pytest.mark.parametrize("game_id", HIDDEN_GAMES)
def test_a_player_hint_does_not_change_with_the_hidden_cards_in_sealed_mode(
    sealed_app: Flask, sealed_client: FlaskClient, game_id: str
) -> None:
    game = get_game(game_id)
    for state in states_of(game_id):
        sealed = [sealed_state(sealed_app, game, s) for s in (state, hidden_reordered(game, state))]
        assert sealed[0]["sealed"] != sealed[1]["sealed"]
        given = [ask(sealed_client, game_id, "hint", s) for s in sealed]
        assert same_answer(given[0]) == same_answer(given[1])
        assert given[0]["knowledge"] == "player"


@pytest.mark.parametrize("game_id", HIDDEN_GAMES)
def test_a_player_hint_that_avoids_a_move_does_not_change_with_the_hidden_cards(
    sealed_app: Flask, sealed_client: FlaskClient, game_id: str
) -> None:
    """Asked to avoid the move it gave, the hint is another move, and still the same for
    positions that differ only in what is hidden (sealed mode, so player knowledge)."""
    game = get_game(game_id)
    checked = 0
    for state in states_of(game_id):
        if len(game.legal_moves(state)) < 2:
            continue
        sealed = [sealed_state(sealed_app, game, s) for s in (state, hidden_reordered(game, state))]
        first = ask(sealed_client, game_id, "hint", sealed[0])
        given = [ask(sealed_client, game_id, "hint", s, avoid=[first["move"]]) for s in sealed]
        assert given[0]["move"] != first["move"]
        assert same_answer(given[0]) == same_answer(given[1])
        checked += 1
    assert checked, f"no position of {game_id} with two legal moves was checked"


@pytest.mark.parametrize("game_id", HIDDEN_GAMES)
def test_the_same_player_request_gets_the_same_answer(open_client: FlaskClient, game_id: str) -> None:
    game = get_game(game_id)
    state = state_to_json(game, states_of(game_id)[1])
    for endpoint in ("hint", "solve"):
        first, again = (ask(open_client, game_id, endpoint, state, knowledge="player") for _ in range(2))
        assert same_answer(first) == same_answer(again)


# --- what a player-knowledge answer may say ---------------------------------------------------

@pytest.mark.parametrize("game_id", HIDDEN_GAMES)
def test_winnable_is_never_true_while_hidden_cards_matter(open_client: FlaskClient, game_id: str) -> None:
    game = get_game(game_id)
    for state in states_of(game_id):
        assert game.hidden_matters(state)
        hint = ask(open_client, game_id, "hint", state_to_json(game, state), knowledge="player")
        assert hint["winnable"] == "unknown" and hint["samples"] is not None
        solve = ask(open_client, game_id, "solve", state_to_json(game, state), knowledge="player")
        assert solve["result"] == "unknown" and solve["samples"]["of"] == 6


@pytest.mark.parametrize("game_id", HIDDEN_GAMES)
def test_every_move_of_a_player_solve_is_legal_in_turn_on_the_real_state(open_client: FlaskClient, game_id: str) -> None:
    game = get_game(game_id)
    for state in states_of(game_id):
        answer = ask(open_client, game_id, "solve", state_to_json(game, state), knowledge="player")
        for data in answer["moves"]:
            move = move_from_json(game, data)
            assert game.is_legal(state, move), data
            assert not game.move_reveals(state, move), data
            state = game.apply(state, move)


def test_every_move_of_a_sealed_solve_plays_through_the_moves_endpoint(sealed_client: FlaskClient) -> None:
    """Small Billee: the line stops before the first reshuffle; each move is played in turn."""
    dealt = sealed_client.post("/v1/games/small-billee/deals", json={"deal": 4}).get_json()
    answer = ask(sealed_client, "small-billee", "solve", dealt["state"])
    assert answer["knowledge"] == "player" and answer["result"] == "unknown" and answer["moves"]
    state = dealt["state"]
    for move in answer["moves"]:
        r = sealed_client.post("/v1/games/small-billee/moves", json={"state": state, "move": move})
        assert r.status_code == 200, r.get_json()
        state = r.get_json()["state"]


def test_a_position_whose_hidden_cards_no_longer_matter_is_solved_exactly(open_client: FlaskClient) -> None:
    game = get_game("small-billee")
    state = game.initial_state(1)
    for _ in range(3):
        state = game.apply(state, game.legal_moves(state)[-1])  # the redeal, listed last
    assert not game.hidden_matters(state)
    player, full = (ask(open_client, "small-billee", "solve", state_to_json(game, state), knowledge=k) for k in ("player", "full"))
    assert player["samples"] is None and player["knowledge"] == "player"
    assert (player["result"], player["moves"]) == (full["result"], full["moves"])


@pytest.mark.parametrize("game_id", FULL_INFORMATION_GAMES)
def test_full_information_games_answer_player_knowledge_as_full(open_client: FlaskClient, game_id: str) -> None:
    game = get_game(game_id)
    state = state_to_json(game, game.initial_state(2))
    for endpoint in ("hint", "solve"):
        player, full = (ask(open_client, game_id, endpoint, state, knowledge=k) for k in ("player", "full"))
        assert (player["knowledge"], full["knowledge"]) == ("player", "full")
        assert player["samples"] is None and full["samples"] is None
        keys = ("move", "winnable") if endpoint == "hint" else ("result", "moves")
        assert [player[k] for k in keys] == [full[k] for k in keys]


# --- defaults and refusals ----------------------------------------------------------------------

@pytest.mark.parametrize("endpoint", ["hint", "solve"])
def test_open_mode_defaults_to_full_knowledge(open_client: FlaskClient, endpoint: str) -> None:
    game = get_game("forty-thieves")
    answer = ask(open_client, "forty-thieves", endpoint, state_to_json(game, game.initial_state(2)))
    assert answer["knowledge"] == "full" and answer["samples"] is None


@pytest.mark.parametrize("endpoint", ["hint", "solve"])
def test_sealed_mode_defaults_to_player_knowledge(sealed_client: FlaskClient, endpoint: str) -> None:
    dealt = sealed_client.post("/v1/games/forty-thieves/deals", json={"deal": 2}).get_json()
    answer = ask(sealed_client, "forty-thieves", endpoint, dealt["state"])
    assert answer["knowledge"] == "player" and answer["samples"]["of"] == 6
    assert answer.get("winnable") is not True


@pytest.mark.parametrize("endpoint", ["hint", "solve"])
def test_sealed_mode_refuses_full_knowledge(sealed_client: FlaskClient, endpoint: str) -> None:
    dealt = sealed_client.post("/v1/games/boomerang/deals", json={"deal": 2}).get_json()
    r = sealed_client.post(f"/v1/games/boomerang/{endpoint}", json={"state": dealt["state"], "knowledge": "full"})
    assert r.status_code == 403 and r.content_type.startswith("application/problem+json")
    assert r.get_json()["code"] == "full-knowledge-refused"


def test_an_unknown_knowledge_is_a_bad_body(open_client: FlaskClient) -> None:
    game = get_game("penguin")
    r = open_client.post("/v1/games/penguin/hint", json={"state": state_to_json(game, game.initial_state(1)), "knowledge": "god"})
    assert r.status_code == 400 and r.get_json()["code"] == "invalid-body"
