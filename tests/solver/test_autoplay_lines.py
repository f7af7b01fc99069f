"""Solves and hints for a client that plays with ``"autoplay": "safe"`` (issue 24, item 5).

Through the API: deal, play some moves with safe autoplay, ``/solve`` with ``"autoplay":
"safe"``, and ``/replays`` of every move with safe autoplay reaches ``won`` (every game,
and the reported Penguin deal 1 case); a player-knowledge solve's moves, played with
autoplay, never reveal a hidden card; ``/hint`` with ``safe``. On the engine interface:
the walk of a solution into the line to play with autoplay (:mod:`service.solver.autoplay`),
its searches again where it diverges, and its honest ``unknown`` when it cannot finish.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.engine.core import Game, Move, State
from service.engine.registry import game_ids, get_game
from service.http import create_app
from service.http.app_settings import settings_of
from service.http.wire import move_from_json, state_to_json
from service.solver import Limits, Outcome, SolveResult, StopReason, hint, solve_position
from service.solver.autoplay import autoplay_line, follow, run_autoplay, wins_with_autoplay
from service.solver.pool import QuietListener, Search, SolverPool
from service.solver.sampling import player_solve, safe_line
from tests.app_settings import settings_for_tests
from tests.solver.test_answers import QUICK_DEALS
from tests.solver.test_sampling import hidden_reordered

SOLVE_LIMITS = {"max_seconds": 1.5, "max_states": 150_000}
LIMITS = Limits(5.0, 500_000)


@pytest.fixture(scope="module")
def client() -> FlaskClient:
    app: Flask = create_app(settings_for_tests())
    app.testing = True
    return app.test_client()


def post(client: FlaskClient, game_id: str, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    """The answer of a request that must succeed."""
    r = client.post(f"/v1/games/{game_id}/{endpoint}", json=body)
    assert r.status_code == 200, r.get_json()
    answer: dict[str, Any] = r.get_json()
    return answer


def replay_status(client: FlaskClient, game_id: str, deal: int, moves: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    """``/replays`` of ``moves`` from deal ``deal`` with safe autoplay: its status and body."""
    r = client.post(f"/v1/games/{game_id}/replays", json={"deal": deal, "moves": moves, "autoplay": "safe"})
    return r.status_code, r.get_json()


def play_with_autoplay(
    client: FlaskClient, game_id: str, state: dict[str, Any], moves: list[dict[str, Any]], most: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Up to ``most`` of ``moves`` sent to the moves endpoint with safe autoplay, each one
    the endpoint refuses skipped (a player who follows a line as far as the table allows);
    the state reached and the moves played."""
    played: list[dict[str, Any]] = []
    for move in moves[:most]:
        r = client.post(f"/v1/games/{game_id}/moves", json={"state": state, "move": move, "autoplay": "safe"})
        if r.status_code == 409:
            continue
        assert r.status_code == 200, r.get_json()
        answer = r.get_json()
        state = answer["state"]
        played.append(move)
        if answer["status"] != "playing":
            break
    return state, played


def first_legal_moves(client: FlaskClient, game_id: str, deal: int, count: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Deal ``deal`` and play its first legal move ``count`` times with safe autoplay."""
    answer = post(client, game_id, "deals", {"deal": deal})
    played: list[dict[str, Any]] = []
    for _ in range(count):
        if answer["status"] != "playing":
            break
        move = answer["legal_moves"][0]
        answer = post(client, game_id, "moves", {"state": answer["state"], "move": move, "autoplay": "safe"})
        played.append(move)
    return answer["state"], played


# --- through the API: every game --------------------------------------------------------------

@pytest.mark.parametrize("game_id", game_ids())
def test_a_solve_with_safe_autoplay_replays_to_won(client: FlaskClient, game_id: str) -> None:
    """Deal; play the start of a plain solution (with autoplay, skipping what autoplay
    made illegal), or the first legal moves; solve with ``safe``; a ``solved`` line replays
    with autoplay to ``won`` after the moves played."""
    solved = 0
    for deal in QUICK_DEALS[game_id]:
        dealt = post(client, game_id, "deals", {"deal": deal})["state"]
        plain = post(client, game_id, "solve", {"state": dealt, "limits": SOLVE_LIMITS})
        starts = [play_with_autoplay(client, game_id, dealt, plain["moves"], most) for most in (0, 7, 25)]
        starts.append(first_legal_moves(client, game_id, deal, 6))
        for state, played in starts:
            body = {"state": state, "limits": SOLVE_LIMITS, "autoplay": "safe"}
            answer = post(client, game_id, "solve", body)
            if answer["result"] != "solved":
                continue
            status, replayed = replay_status(client, game_id, deal, played + answer["moves"])
            assert status == 200, (deal, len(played), replayed)
            assert replayed["status"] == "won" and replayed["result"]["autoplay"] == "safe"
            solved += 1
    assert solved >= 2 * len(QUICK_DEALS[game_id])  # (the deals are wins: most starts stay won)


def test_the_reported_penguin_deal_1_line_replays_with_autoplay(client: FlaskClient) -> None:
    """Issue 24: Penguin deal 1, its first legal move 20 times with safe autoplay, then the
    solve's line: the plain line is refused (autoplay made some of its moves), the line
    asked for with ``safe`` wins."""
    state, played = first_legal_moves(client, "penguin", 1, 20)
    assert len(played) == 20
    plain = post(client, "penguin", "solve", {"state": state})
    assert plain["result"] == "solved"
    status, refused = replay_status(client, "penguin", 1, played + plain["moves"])
    assert status == 409 and refused["code"] == "illegal-move"
    safe = post(client, "penguin", "solve", {"state": state, "autoplay": "safe"})
    assert safe["result"] == "solved" and len(safe["moves"]) < len(plain["moves"])
    status, won = replay_status(client, "penguin", 1, played + safe["moves"])
    assert status == 200 and won["status"] == "won"


@pytest.mark.parametrize("endpoint", ["solve", "hint"])
def test_autoplay_none_answers_as_without_the_field(client: FlaskClient, endpoint: str) -> None:
    state, _ = first_legal_moves(client, "penguin", 1, 20)
    answers = [post(client, "penguin", endpoint, {"state": state, **extra}) for extra in ({}, {"autoplay": "none"})]
    keys = ("result", "moves") if endpoint == "solve" else ("move", "winnable")
    assert [answers[0][k] for k in keys] == [answers[1][k] for k in keys]
    if endpoint == "hint":
        assert "autoplay" not in answers[0]["reason"] and "autoplay" not in answers[1]["reason"]


# --- /hint with safe ----------------------------------------------------------------------------

@pytest.mark.parametrize("game_id", ["penguin", "forty-thieves", "boomerang"])
def test_a_hint_with_safe_autoplay_starts_the_solves_line(client: FlaskClient, game_id: str) -> None:
    """The hint is the first move of the line a solve with ``safe`` and the hint's budget
    answers (the same search: budgets are counted in positions), and its reason counts that
    line's moves; the move is the one hinted without autoplay."""
    deal = QUICK_DEALS[game_id][0]
    limits = {"max_seconds": settings_of(client.application).solver.hint_seconds}
    for count in (0, 10, 20):
        state, _ = first_legal_moves(client, game_id, deal, count)
        solved = post(client, game_id, "solve", {"state": state, "autoplay": "safe", "limits": limits})
        if solved["result"] != "solved":
            continue
        given = post(client, game_id, "hint", {"state": state, "autoplay": "safe"})
        assert given["move"] == solved["moves"][0] and given["winnable"] is True
        assert f"solution of {len(solved['moves'])} move(s) to play with safe autoplay" in given["reason"]
        assert post(client, game_id, "hint", {"state": state})["move"] == given["move"]


def pending_position(game: Game, deal: int) -> State:
    """A position of ``deal`` with a safe autoplay move still to make: its solution played
    without autoplay up to the first such position."""
    state = game.initial_state(deal)
    for move in solve_position(game, state, LIMITS).moves:
        if game.autoplay_move(state) is not None:
            return state
        state = game.apply(state, move)
    raise AssertionError("no autoplay move became pending")


def test_a_position_with_autoplay_pending_is_taken_as_sent(client: FlaskClient) -> None:
    """The position is not autoplayed first: the line and the hint start from it, each
    first move legal there, and the line wins played with autoplay after each move."""
    game = get_game("penguin")
    state = pending_position(game, 1)
    sent = state_to_json(game, state)
    solved = post(client, "penguin", "solve", {"state": sent, "autoplay": "safe"})
    assert solved["result"] == "solved"
    line = [move_from_json(game, m) for m in solved["moves"]]
    assert wins_with_autoplay(game, state, line)
    given = post(client, "penguin", "hint", {"state": sent, "autoplay": "safe"})
    assert given["move"] == solved["moves"][0]
    assert game.is_legal(state, move_from_json(game, given["move"]))


# --- the line on the engine interface -------------------------------------------------------------

def after_first_moves(game: Game, deal: int, count: int) -> State:
    """Deal ``deal`` with its first legal move played ``count`` times, each with autoplay."""
    state = game.initial_state(deal)
    for _ in range(count):
        state, _ = run_autoplay(game, game.apply(state, game.legal_moves(state)[0]))
    return state


def is_subsequence(part: list[Move], whole: list[Move]) -> bool:
    rest = iter(whole)
    return all(move in rest for move in part)


@pytest.mark.parametrize("game_id", game_ids())
def test_the_walk_keeps_the_solutions_moves_in_order(game_id: str) -> None:
    """:func:`follow` only leaves out moves: what it keeps of a solution is in the
    solution's order, played with autoplay it leads where it says, and where it did not
    stop early it wins."""
    game = get_game(game_id)
    for deal in QUICK_DEALS[game_id]:
        state = game.initial_state(deal)
        plain = solve_position(game, state, LIMITS)
        assert plain.result is Outcome.SOLVED
        walk = follow(game, state, plain.moves)
        assert is_subsequence(walk.moves, plain.moves)
        reached = state
        for move in walk.moves:
            assert game.is_legal(reached, move)
            reached, _ = run_autoplay(game, game.apply(reached, move))
        assert reached == walk.position
        if game.is_won(walk.position):
            assert wins_with_autoplay(game, state, walk.moves)


def test_a_line_that_diverges_is_searched_again_and_wins() -> None:
    game = get_game("penguin")
    state = after_first_moves(game, 2, 10)
    plain = solve_position(game, state, LIMITS)
    assert plain.result is Outcome.SOLVED and not wins_with_autoplay(game, state, plain.moves)
    walk = follow(game, state, plain.moves)
    assert not game.is_won(walk.position)  # diverged: a search again is needed
    searches: list[State] = []

    def solver(g: Game, s: State, limits: Limits) -> SolveResult:
        searches.append(s)
        return solve_position(g, s, limits)

    line = autoplay_line(game, state, plain.moves, LIMITS, solver)
    assert line.won and line.stopped_by is None and searches[0] == walk.position
    assert line.moves[: len(walk.moves)] == walk.moves and wins_with_autoplay(game, state, line.moves)
    answered = solve_position(game, state, LIMITS, autoplay=True)
    assert answered.result is Outcome.SOLVED and wins_with_autoplay(game, state, answered.moves)


def test_a_line_that_cannot_be_completed_is_unknown() -> None:
    """No budget left for the search again, or a search that proves the position lost:
    no line is claimed, and the part made says where it stopped."""
    game = get_game("penguin")
    state = after_first_moves(game, 2, 10)
    plain = solve_position(game, state, LIMITS)
    walk = follow(game, state, plain.moves)
    assert not game.is_won(walk.position)
    for limits, stop in ((Limits(0.0, 1000), StopReason.TIME), (Limits(5.0, 0), StopReason.STATES)):
        line = autoplay_line(game, state, plain.moves, limits, solve_position)
        assert (line.won, line.stopped_by, line.moves) == (False, stop, walk.moves)

    def lost(g: Game, s: State, limits: Limits) -> SolveResult:
        return SolveResult(Outcome.UNSOLVABLE, [], 7)

    line = autoplay_line(game, state, plain.moves, LIMITS, lost)
    assert (line.won, line.stopped_by, line.states) == (False, StopReason.INVALID_SOLUTION, 7)
    spent = solve_position(game, state, Limits(5.0, plain.states), autoplay=True)  # the first search takes all
    assert (spent.result, spent.moves, spent.stopped_by) == (Outcome.UNKNOWN, [], StopReason.STATES)


def test_a_line_with_autoplay_is_answered_from_a_solver_process() -> None:
    """The flag travels with the search to a solver process (module-level functions, a
    bool argument) and the answer is the one made in the thread."""
    game = get_game("penguin")
    state = after_first_moves(game, 2, 10)
    pool = SolverPool(1, 0, QuietListener())
    try:
        there = pool.run(Search(solve_position, game, (state, LIMITS, True), LIMITS.max_seconds))
    finally:
        pool.close()
    assert there.result is Outcome.SOLVED and there.moves == solve_position(game, state, LIMITS, True).moves


@pytest.mark.parametrize(("game_id", "deal"), [("penguin", 1), ("pelican", 1), ("forty-thieves", 2), ("boomerang", 2)])
def test_a_pending_autoplay_move_is_made_by_the_line(game_id: str, deal: int) -> None:
    """Autoplay is not run on the position first: the line starts from it, here with the
    pending move itself (the searches make safe moves first), and the hint is that move."""
    game = get_game(game_id)
    state = pending_position(game, deal)
    answered = solve_position(game, state, LIMITS, autoplay=True)
    assert answered.result is Outcome.SOLVED and wins_with_autoplay(game, state, answered.moves)
    assert answered.moves[0] == game.autoplay_move(state)
    assert hint(game, state, LIMITS, autoplay=True).move == answered.moves[0] == hint(game, state, LIMITS).move


# --- player knowledge ------------------------------------------------------------------------------

def on_the_solution(game: Game, deal: int, moves: int) -> State:
    """The position after the first ``moves`` moves of the solution of deal ``deal``."""
    state = game.initial_state(deal)
    for move in solve_position(game, state, LIMITS).moves[:moves]:
        state = game.apply(state, move)
    return state


# Positions where hidden cards still matter, the samples are won and the line a player
# solve answers with autoplay is long enough to see autoplay at work (Forty Thieves) or
# not cut at once (Boomerang).
PLAYER_POSITIONS = [("forty-thieves", 14, 125), ("boomerang", 5, 55)]
PLAYER_LIMITS = {"max_seconds": 2, "max_states": 200_000}


def plays_without_revealing(game: Game, state: State, moves: list[Move]) -> None:
    """Each move legal in turn, each followed by autoplay, none of them revealing."""
    for move in moves:
        assert game.is_legal(state, move) and not game.move_reveals(state, move)
        state = game.apply(state, move)
        for made in run_autoplay(game, state)[1]:
            assert not game.move_reveals(state, made)
            state = game.apply(state, made)


@pytest.mark.parametrize(("game_id", "deal", "moves"), PLAYER_POSITIONS)
def test_a_player_solve_with_autoplay_plays_the_same_whatever_is_hidden(
    client: FlaskClient, game_id: str, deal: int, moves: int
) -> None:
    """The moves answered, played with autoplay, are legal and reveal nothing, and they are
    the same when only the hidden cards differ; the hint is the move hinted without autoplay."""
    game = get_game(game_id)
    state = on_the_solution(game, deal, moves)
    assert game.hidden_matters(state)
    answers = [
        post(client, game_id, "solve", {
            "state": state_to_json(game, s), "knowledge": "player", "autoplay": "safe", "limits": PLAYER_LIMITS,
        })
        for s in (state, hidden_reordered(game, state))
    ]
    assert answers[0]["result"] == "unknown" and answers[0]["samples"]["won"] > 0
    assert answers[0]["moves"] and answers[0]["moves"] == answers[1]["moves"]
    plays_without_revealing(game, state, [move_from_json(game, m) for m in answers[0]["moves"]])
    hints = [post(client, game_id, "hint", {"state": state_to_json(game, state), "knowledge": "player", **extra})
             for extra in ({}, {"autoplay": "safe"})]
    assert hints[0]["move"] == hints[1]["move"]
    assert game.is_legal(state, move_from_json(game, hints[1]["move"]))


def test_the_player_line_stops_before_a_move_whose_autoplay_reveals(monkeypatch: pytest.MonkeyPatch) -> None:
    """No game's autoplay refills from a face-down pile today: here Forty Thieves is made
    to say one autoplay move reveals, and the line stops before the move it follows."""
    game = get_game("forty-thieves")
    state = on_the_solution(game, *PLAYER_POSITIONS[0][1:])
    moves = player_solve(game, state, Limits(2.0, 200_000), 8, autoplay=True).search.moves
    reached, first = state, None
    for i, move in enumerate(moves):
        moved = game.apply(reached, move)
        reached, made = run_autoplay(game, moved)
        if made:
            first = (i, moved, made[0])
            break
    assert first is not None, "no move of the line is followed by autoplay"
    index, before, revealing = first
    assert safe_line(game, state, moves, with_autoplay=True) == moves
    told = game.move_reveals
    monkeypatch.setattr(game, "move_reveals", lambda s, m: (s, m) == (before, revealing) or told(s, m))
    assert safe_line(game, state, moves, with_autoplay=True) == moves[:index]
    assert safe_line(game, state, moves) == moves  # without autoplay, nothing reveals

