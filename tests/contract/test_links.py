"""Every OpenAPI link leads somewhere (issue 24, item 6): followed from its operation's own
documented example, and from live answers mid-game and after a win, each link builds a
request the service answers 200, unless its description says it applies only while some
condition holds and the answer does not meet it.

The links are resolved here as the OpenAPI runtime expressions say
(``$request.path.game_id``, ``$request.body#/pointer``, ``$response.body#/pointer``; a
parameter named ``body.<field>`` is that field of the request body; an expression that
points at nothing leaves its field out), not through a tool's reading of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.contract.test_openapi import example_of, operations, spec

GAME = "penguin"
DEAL = 1

# Each conditional link's condition, as its description states it, read on the answer it
# is followed from.
CONDITIONS: dict[str, tuple[str, Callable[[dict[str, Any]], bool]]] = {
    "PlayFirstLegalMove": ("Applies only while `status` is `playing`", lambda answer: answer["status"] == "playing"),
    "PlayFirstSolutionMove": ("Applies only while `moves` is not empty", lambda answer: bool(answer["moves"])),
    "PlayHintedMove": ("Applies only while `move` is not null", lambda answer: answer["move"] is not None),
}


def pointer(document: Any, where: str) -> Any:
    """The value at JSON pointer ``where`` (RFC 6901), or KeyError."""
    node = document
    for token in where.lstrip("/").split("/") if where else []:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            if not token.isdigit() or int(token) >= len(node):
                raise KeyError(where)
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            raise KeyError(where)
    return node


def evaluate(expression: Any, game_id: str, request: dict[str, Any] | None, answer: dict[str, Any]) -> Any:
    """A link parameter's value: a constant as it is, an expression resolved (KeyError when
    it points at nothing)."""
    if not isinstance(expression, str) or not expression.startswith("$"):
        return expression
    if expression == "$request.path.game_id":
        return game_id
    source, _, where = expression.partition("#")
    if source == "$request.body":
        return pointer(request or {}, where)
    if source == "$response.body":
        return pointer(answer, where)
    raise AssertionError(f"an expression this test does not read: {expression}")


def follow(link: dict[str, Any], game_id: str, request: dict[str, Any] | None, answer: dict[str, Any]) -> tuple[str, str, dict[str, Any] | None]:
    """(method, path, body) of the request a link makes."""
    target = next((path, method) for path, method, op in operations() if op["operationId"] == link["operationId"])
    path, method = target
    body: dict[str, Any] = {}
    target_game = game_id
    for name, expression in link["parameters"].items():
        try:
            value = evaluate(expression, game_id, request, answer)
        except KeyError:
            continue  # points at nothing: the field is left out
        if name == "game_id":
            target_game = value
        else:
            location, _, field = name.partition(".")
            assert location == "body", name
            body[field] = value
    return method, path.replace("{game_id}", target_game), body if method == "post" else None


def call(client: FlaskClient, method: str, path: str, body: dict[str, Any] | None) -> Any:
    return client.get(path) if method == "get" else client.post(path, json=body)


def links_of(operation_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(op for _, _, op in operations() if op["operationId"] == operation_id)["responses"]["200"]["links"]
    return found


def test_every_conditional_link_says_when_it_applies() -> None:
    """The links this test treats as conditional say so in their description, and every
    link that names such a condition is one of them."""
    for _, _, op in operations():
        for name, link in op["responses"]["200"].get("links", {}).items():
            stated = "Applies only while" in link["description"]
            assert stated == (name in CONDITIONS), name
            if name in CONDITIONS:
                assert CONDITIONS[name][0] in link["description"], name


def documented() -> Iterator[tuple[str, str]]:
    for _, _, op in operations():
        for name in op["responses"]["200"].get("links", {}):
            yield op["operationId"], name


@pytest.mark.parametrize("operation_id,name", list(documented()))
def test_every_link_resolves_from_its_own_example(client: FlaskClient, operation_id: str, name: str) -> None:
    _, request, answer = example_of(operation_id)
    link = links_of(operation_id)[name]
    if name in CONDITIONS:
        assert CONDITIONS[name][1](answer), f"{operation_id}'s example does not meet {name}'s condition"
    method, target, body = follow(link, GAME, request, answer)  # example_of gives every example the path of GAME
    r = call(client, method, target, body)
    assert r.status_code == 200, (operation_id, name, r.json)


def play(client: FlaskClient, moves: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The example deal after its first ``moves`` first legal moves: the last answer and the moves."""
    answer = client.post(f"/v1/games/{GAME}/deals", json={"deal": DEAL}).json
    played = []
    for _ in range(moves):
        move = answer["legal_moves"][0]
        played.append(move)
        answer = client.post(f"/v1/games/{GAME}/moves", json={"state": answer["state"], "move": move, "autoplay": "safe"}).json
    return answer, played


def live_answers(client: FlaskClient, position: dict[str, Any], played: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(operation id, request, answer) of every operation that has links, asked about ``position``."""
    state = position["state"]
    requests: dict[str, tuple[str, dict[str, Any] | None]] = {
        "list_games": ("", None),
        "get_game": (f"/{GAME}", None),
        "deal_game": (f"/{GAME}/deals", {"deal": DEAL}),
        "legal_moves": (f"/{GAME}/legal-moves", {"state": state}),
        "validate_state": (f"/{GAME}/validate", {"state": state}),
        "hint": (f"/{GAME}/hint", {"state": state, "autoplay": "safe"}),
        "solve": (f"/{GAME}/solve", {"state": state, "autoplay": "safe", "limits": {"max_seconds": 5}}),
        "replay_moves": (f"/{GAME}/replays", {"deal": DEAL, "moves": played, "autoplay": "safe"}),
    }
    if position["legal_moves"]:
        requests["play_move"] = (f"/{GAME}/moves", {"state": state, "move": position["legal_moves"][0], "autoplay": "safe"})
    for operation_id, (tail, body) in requests.items():
        r = call(client, "get" if body is None else "post", f"/v1/games{tail}", body)
        assert r.status_code == 200, (operation_id, r.json)
        yield operation_id, body or {}, r.json


@pytest.mark.parametrize("moves", [5, 12])
def test_every_link_resolves_mid_game(client: FlaskClient, moves: int) -> None:
    """In a game under way (the old `ReplaySolution` link replayed a solution of the
    position from the deal, which fails once moves were played), every link whose
    condition holds answers 200."""
    position, played = play(client, moves)
    assert position["status"] == "playing"
    followed = 0
    for operation_id, request, answer in live_answers(client, position, played):
        for name, link in links_of(operation_id).items():
            if name in CONDITIONS and not CONDITIONS[name][1](answer):
                continue
            method, target, body = follow(link, GAME, request, answer)
            r = call(client, method, target, body)
            assert r.status_code == 200, (operation_id, name, r.json)
            followed += 1
    assert followed >= sum(len(links_of(op)) for op in ("deal_game", "play_move", "replay_moves", "solve", "hint"))


def test_links_after_a_win_are_only_the_ones_that_apply(client: FlaskClient) -> None:
    """A won game: every link that applies answers 200; the conditional ones do not apply
    (their expressions point at nothing, or at null)."""
    position, _ = play(client, 0)
    solution = client.post(f"/v1/games/{GAME}/solve", json={"state": position["state"], "autoplay": "safe"}).json
    assert solution["result"] == "solved"
    won = client.post(f"/v1/games/{GAME}/replays", json={"deal": DEAL, "moves": solution["moves"], "autoplay": "safe"}).json
    assert won["status"] == "won" and won["legal_moves"] == []
    for operation_id, request, answer in live_answers(client, won, solution["moves"]):
        for name, link in links_of(operation_id).items():
            if operation_id == "deal_game" or operation_id in ("list_games", "get_game"):
                continue  # a fresh deal is not the won position
            if name in CONDITIONS:
                assert not CONDITIONS[name][1](answer), (operation_id, name)
                continue
            method, target, body = follow(link, GAME, request, answer)
            assert call(client, method, target, body).status_code == 200, (operation_id, name)


def test_the_document_uses_no_link_request_body() -> None:
    """openapi-generator's validator takes a link's `requestBody` only as a string; every
    body field is a `body.`-qualified parameter instead."""
    for _, _, op in operations():
        for link in op["responses"]["200"].get("links", {}).values():
            assert "requestBody" not in link
            assert all(name == "game_id" or name.startswith("body.") for name in link["parameters"])
    assert spec()["openapi"].startswith("3.0")
