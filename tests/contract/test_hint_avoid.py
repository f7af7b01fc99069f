"""The hint request's ``avoid`` over HTTP: never an avoided move, clear problems for a bad
list, and a client that keeps its history following the hints without going round."""

from __future__ import annotations

import json
from typing import Any

import pytest

from service.engine.registry import get_game
from service.http.solver_schemas import MAX_AVOIDED_MOVES
from service.http.wire import move_from_json, move_to_json

PROBLEM = "application/problem+json"


def deal(client: Any, game_id: str, number: int) -> dict[str, Any]:
    answer = client.post(f"/v1/games/{game_id}/deals", json={"deal": number})
    assert answer.status_code == 200, answer.json
    return answer.json


def hint(client: Any, game_id: str, body: dict[str, Any]) -> Any:
    return client.post(f"/v1/games/{game_id}/hint", json=body)


@pytest.mark.parametrize(
    ("game_id", "number", "knowledge"), [("penguin", 2, "full"), ("amazons", 1, "player"), ("forty-thieves", 4, "player")]
)
def test_a_hint_asked_to_avoid_its_move_answers_another_legal_one(client: Any, game_id: str, number: int, knowledge: str) -> None:
    dealt = deal(client, game_id, number)
    assert len(dealt["legal_moves"]) > 1
    body = {"state": dealt["state"], "knowledge": knowledge}
    first = hint(client, game_id, body).json
    again = hint(client, game_id, {**body, "avoid": [first["move"]]})
    assert again.status_code == 200, again.json
    assert again.json["move"] != first["move"] and again.json["move"] in dealt["legal_moves"]
    assert "avoid" in again.json["reason"]
    # the answer keeps its v1 shape
    assert set(again.json) == set(first)


def test_an_empty_avoid_and_moves_that_are_not_legal_change_nothing(client: Any) -> None:
    dealt = deal(client, "penguin", 2)
    game = get_game("penguin")
    plain = hint(client, "penguin", {"state": dealt["state"]}).json
    legal = {move_from_json(game, m) for m in dealt["legal_moves"]}
    not_legal = next(
        move_to_json(game, m) for m in (move_from_json(game, {"action": "move", "from": f"tableau:{i}", "to": "foundation:0"}) for i in range(7))
        if m not in legal
    )
    missing_pile = {"action": "move", "from": "tableau:99", "to": "cell:0", "count": 1}
    for avoid in ([], [not_legal], [missing_pile, not_legal]):
        answer = hint(client, "penguin", {"state": dealt["state"], "avoid": avoid})
        assert answer.status_code == 200, answer.json
        same = ("move", "winnable", "samples")
        assert {k: answer.json[k] for k in same} == {k: plain[k] for k in same}
        assert answer.json["stats"]["states"] == plain["stats"]["states"] and "avoids" not in answer.json["reason"]


def test_avoiding_every_legal_move_is_a_clear_422(client: Any) -> None:
    dealt = deal(client, "penguin", 2)
    answer = hint(client, "penguin", {"state": dealt["state"], "avoid": dealt["legal_moves"]})
    assert answer.status_code == 422 and answer.mimetype == PROBLEM
    assert answer.json["code"] == "every-move-avoided"
    assert "/avoid" in json.dumps(answer.json["errors"])


@pytest.mark.parametrize(
    ("move", "status", "code", "within"),
    [
        ({"action": "fly"}, 400, "invalid-body", "/action"),
        ({"action": "move", "from": "tableau:1", "to": "cell:0", "count": 0}, 400, "invalid-body", "/count"),
        ({"action": "move", "from": "tableau:0", "count": 1}, 422, "invalid-move", ""),
    ],
)
def test_an_unreadable_avoided_move_is_a_problem_that_points_at_it(
    client: Any, move: dict[str, Any], status: int, code: str, within: str
) -> None:
    dealt = deal(client, "penguin", 2)
    answer = hint(client, "penguin", {"state": dealt["state"], "avoid": [dealt["legal_moves"][0], move]})
    assert answer.status_code == status and answer.mimetype == PROBLEM, answer.json
    assert answer.json["code"] == code
    assert [e["where"] for e in answer.json["errors"]] == [f"/avoid/1{within}"]  # the second entry's


def test_too_many_avoided_moves_is_a_400(client: Any) -> None:
    dealt = deal(client, "penguin", 2)
    avoid = [dealt["legal_moves"][0]] * (MAX_AVOIDED_MOVES + 1)
    answer = hint(client, "penguin", {"state": dealt["state"], "avoid": avoid})
    assert answer.status_code == 400 and answer.mimetype == PROBLEM
    assert answer.json["code"] == "invalid-body"


def test_a_client_that_keeps_its_history_follows_the_hints_to_the_win_without_going_round(client: Any) -> None:
    """Penguin deal 2, played over HTTP as docs/atlas.md's hint player plays it: when a
    hinted move would bring back a position the client has had, it asks again avoiding it."""
    state = deal(client, "penguin", 2)["state"]
    seen = {json.dumps(state["piles"], sort_keys=True)}
    avoided = 0
    for _ in range(300):
        avoid: list[dict[str, Any]] = []
        while True:
            given = hint(client, "penguin", {"state": state, "autoplay": "safe", "avoid": avoid})
            assert given.status_code == 200, given.json
            moved = client.post("/v1/games/penguin/moves", json={"state": state, "move": given.json["move"], "autoplay": "safe"}).json
            if json.dumps(moved["state"]["piles"], sort_keys=True) not in seen:
                break
            avoid.append(given.json["move"])
            avoided += 1
        state = moved["state"]
        seen.add(json.dumps(state["piles"], sort_keys=True))
        if moved["status"] == "won":
            break
    assert moved["status"] == "won" and avoided > 0
