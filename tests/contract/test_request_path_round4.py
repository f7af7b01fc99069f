"""The fourth round's shortcuts of the request path (issue 14) answer as the long ways
they stand for: the answer's request id and CORS headers appended in one step, the media
type read without parsing ``Content-Type``, pile groups read once by the schema for the
wire format, pile references looked up, states written from one pass over their cards,
capacities checked per group, tuple partials judged once and escaped colons looked for
only in bodies with a backslash."""

from __future__ import annotations

import random
from typing import Any

import pytest
from flask import Flask

from service.engine.cards import parse_card
from service.engine.core import Game, State
from service.engine.penguin import PRESETS
from service.engine.registry import GAME_CLASSES, get_game
from service.http import create_app
from service.http.body import parse_json, request_mimetype
from service.http.fast_load import _top_level_names
from service.http.observability import REQUEST_ID_HEADER, add_cors_headers, finish_response
from service.http.problems import ApiError, ProblemCode
from service.http.request_context import current_g, current_request
from service.http.schemas import (
    MAX_PILES_PER_GROUP,
    CardMoveSchema,
    PileGroupField,
    StateSchema,
    all_card_spellings,
)
from service.http.wire import (
    MAX_PILE_CARDS,
    IllegalMoveError,
    NotationError,
    ReadPileGroup,
    pile_from_ref,
    read_body,
    read_pile_group,
    state_from_json,
    state_to_json,
)
from tests.app_settings import settings_for_tests
from tests.rules.test_penguin_move_rule import playout_positions

CORS_SETTINGS = ["*", "https://a.example", ""]
VIEW_HEADERS: list[list[tuple[str, str]]] = [
    [],
    [("X-Request-ID", "set-by-the-view")],
    [("Access-Control-Allow-Origin", "https://b.example")],
    [("access-control-expose-headers", "Retry-After")],
    [("Retry-After", "3")],
]


def finished_both_ways(
    app: Flask, method: str, view_headers: list[tuple[str, str]], origin: str | None
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """An answer's headers after :func:`finish_response`, and after the long way (the
    request id set through ``response.headers``, then :func:`add_cors_headers`)."""
    headers = {"X-Request-ID": "rid-1"} | ({"Origin": origin} if origin else {})
    with app.test_request_context("/v1/games", method=method, headers=headers):
        assert app.preprocess_request() is None
        short = app.response_class(b"{}", headers=view_headers)
        finish_response(short)
        long = app.response_class(b"{}", headers=view_headers)
        long.headers[REQUEST_ID_HEADER] = current_g().request_id
        add_cors_headers(long, current_request())
        return short.headers.to_wsgi_list(), long.headers.to_wsgi_list()


@pytest.mark.parametrize("origins", CORS_SETTINGS)
@pytest.mark.parametrize("method", ["GET", "POST", "OPTIONS"])
@pytest.mark.parametrize("view_headers", VIEW_HEADERS)
@pytest.mark.parametrize("origin", [None, "https://a.example"])
def test_finish_response_writes_the_headers_of_the_long_way(
    origins: str, method: str, view_headers: list[tuple[str, str]], origin: str | None
) -> None:
    app = create_app(settings_for_tests(CORS_ALLOW_ORIGINS=origins))
    short, long = finished_both_ways(app, method, view_headers, origin)
    assert short == long


def test_an_answer_carries_its_headers_in_order() -> None:
    client = create_app(settings_for_tests()).test_client()
    r = client.get("/v1/games", headers={"X-Request-ID": "abc"})
    names = [name for name, _ in r.headers.to_wsgi_list()]
    assert names[-3:] == ["X-Request-ID", "Access-Control-Allow-Origin", "Access-Control-Expose-Headers"]
    assert r.headers["X-Request-ID"] == "abc"


@pytest.mark.parametrize(
    "content_type",
    [None, "application/json", "application/json; charset=utf-8", "Application/JSON", "text/plain",
     "application/problem+json", "application/json ", ""],
)
def test_request_mimetype_is_werkzeugs(content_type: str | None) -> None:
    app = create_app(settings_for_tests())
    headers = {} if content_type is None else {"Content-Type": content_type}
    with app.test_request_context("/v1/games", method="POST", data=b"{}", headers=headers):
        request = current_request()
        assert request_mimetype(request) == request.mimetype


def game_states(seed: int = 3) -> list[tuple[Game, State]]:
    """Positions of every game (a few moves into random playouts), and of the Penguin
    presets along longer ones (spaces, full cells, foundations under way)."""
    rng = random.Random(seed)
    out: list[tuple[Game, State]] = []
    for game_id in GAME_CLASSES:
        game = get_game(game_id)
        state = game.initial_state(rng.randrange(1, 10**6))
        for _ in range(12):
            out.append((game, state))
            moves = game.legal_moves(state)
            if not moves:
                break
            state = game.apply(state, rng.choice(moves))
    for preset in PRESETS:
        game = preset()
        out.extend((game, s) for s in playout_positions(game, rng, deals=2, steps=40))
    return out


STATES = game_states()


def respelled(data: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """``data`` with some cards in the other spellings the engine reads ("th", "10h")."""
    def other(card: str) -> str:
        choice = rng.random()
        if choice < 0.2:
            return card.lower()
        if choice < 0.3 and card[0] == "T":
            return "10" + card[1]
        return card

    piles = {name: [[other(c) for c in pile] for pile in group] for name, group in data["piles"].items()}
    return {**data, "piles": piles}


def test_a_state_loaded_by_the_schema_reads_as_the_plain_state() -> None:
    rng = random.Random(5)
    schema = StateSchema()
    for game, state in STATES:
        for data in (state_to_json(game, state), respelled(state_to_json(game, state), rng)):
            loaded = schema.load(data)
            assert all(type(group) is ReadPileGroup for group in loaded["piles"].values())
            assert loaded["piles"] == data["piles"]  # the groups equal the lists sent
            assert read_body(game, loaded) == read_body(game, data) == state


def test_state_to_json_reads_back_as_the_state_with_lists_in_layout_order() -> None:
    for game, state in STATES:
        data = state_to_json(game, state)
        assert state_from_json(data) == (game, state)
        assert list(data["piles"]) == [g.name for g in game.groups]
        assert all(type(pile) is list for group in data["piles"].values() for pile in group)
        for g in game.groups:
            assert g.name not in state_to_json(game, state, leave_out={g.name})["piles"]
            assert state_to_json(game, state, leave_out={g.name})["piles"].keys() == data["piles"].keys() - {g.name}


class ListOfPiles(list[Any]):
    """A list subclass: left to the schema's own checks."""


ODD_GROUPS: list[Any] = [
    "TH", 3, None, {"a": ["TH"]}, [], [[]], [["TH"]], [["th", "10h", "AS"]], [["TH"], "AS"], [["TH"], {"AS": 1}],
    [["TH", ["AS"]]], [["TH", 1]], [["TH", True]], [["TH\n"]], [["1H"]], [["TH", None]],
    [["AS"]] * (MAX_PILES_PER_GROUP + 1), [["AS"] * (MAX_PILE_CARDS + 1)], [["AS"] * MAX_PILE_CARDS],
    ListOfPiles([["TH"]]), [ListOfPiles(["TH"])],
]


@pytest.mark.parametrize("value", ODD_GROUPS)
def test_a_pile_group_is_read_only_when_the_schemas_checks_pass_it(value: Any) -> None:
    read = read_pile_group(value, MAX_PILES_PER_GROUP)
    if read is None:
        return  # judged by the field's own checks, as before
    assert isinstance(value, list) and len(value) <= MAX_PILES_PER_GROUP
    assert all(isinstance(p, list) and len(p) <= MAX_PILE_CARDS and all_card_spellings(p) for p in value)
    assert read == value and PileGroupField().deserialize(value) == value
    assert read.codes == tuple(tuple(parse_card(c) for c in pile) for pile in value)


def test_every_pile_reference_reads_as_before() -> None:
    for game_id in GAME_CLASSES:
        game = get_game(game_id)
        for pile, text in enumerate(game.ref_texts):
            assert pile_from_ref(game, text, "from") == pile
            name, _, index = text.partition(":")
            with pytest.raises(NotationError):  # one spelling per pile (issue 25): no longer read
                pile_from_ref(game, f"{name}:0{index}", "from")
        with pytest.raises(IllegalMoveError):
            pile_from_ref(game, "tableau:99", "from")
        with pytest.raises(NotationError):
            pile_from_ref(game, "tableau", "from")


def test_a_cell_over_its_capacity_is_pointed_at() -> None:
    game = get_game("penguin")
    state = game.initial_state(1)
    piles = list(state.piles)
    cell, tableau = game.group_start["cell"] + 2, game.group_start["tableau"]
    piles[cell], piles[tableau] = piles[tableau][-2:], piles[tableau][:-2]
    problems = game.validate(State(tuple(piles), state.counters, state.deal))
    assert ("/piles/cell/2", "a cell holds at most 1 card(s), not 2") in problems


@pytest.mark.parametrize(
    "partial",
    [("from_", "to"), ("from_", "to"), ("a.b",), (), ("x", 1), (["x"],), ["from_"], {"to"}, frozenset({"a.b"}), "to", 3],
)
def test_tuple_partials_are_judged_as_any_other(partial: Any) -> None:
    expected = isinstance(partial, (tuple, list, set, frozenset)) and all(
        isinstance(name, str) and "." not in name for name in partial
    )
    assert _top_level_names(partial) == expected


def test_a_lenient_card_move_loads_as_before() -> None:
    schema = CardMoveSchema()
    move = {"action": "move", "from": "tableau:1", "count": 2}
    assert schema.load(move, partial=("from_", "to")) == move
    assert schema.load(move, partial=["from_", "to"]) == move


def test_an_escaped_colon_still_hides_no_duplicate_key() -> None:
    with pytest.raises(ApiError) as e:
        parse_json(b'{"a\\u003a": 1, "a:": 2}')
    assert e.value.code is ProblemCode.DUPLICATE_KEY
    assert parse_json(b'{"a\\u003a": 1, "b": "\\\\"}') == {"a:": 1, "b": "\\"}
