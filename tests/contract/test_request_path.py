"""The shortcuts of the request path (issue 14) answer as the long ways they stand for:
Flask's ``ensure_sync`` remembered per function, headers read from the WSGI environ, the
request metrics' children kept per label set, games remembered per option set, card texts
looked up, and a whole deck checked in one sort."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.engine.cards import CARD_CODES, format_card
from service.engine.core import RulesError, State
from service.engine.registry import GAME_CLASSES, get_game
from service.http import create_app
from service.http.app import ServiceFlask
from service.http.observability import HTTP_REQUESTS, ORIGIN_ENVIRON_KEY, REQUEST_ID_ENVIRON_KEY, REQUEST_ID_HEADER
from service.http.request_context import header_value
from service.http.wire import CARD_TEXTS, NotationError, configured_game, read_header
from tests.app_settings import settings_for_tests


@pytest.fixture(scope="module")
def app() -> Flask:
    return create_app(settings_for_tests())


def test_ensure_sync_keeps_sync_functions_as_they_are_and_wraps_async_ones(app: Flask) -> None:
    assert isinstance(app, ServiceFlask)

    def view() -> str:
        return "sync"

    async def async_view() -> str:
        await asyncio.sleep(0)
        return "async"

    assert app.ensure_sync(view) is view
    assert app.ensure_sync(view) is view  # remembered
    for _ in range(2):  # asked anew each time, never taken as sync (Flask here lacks its async extra)
        with pytest.raises(RuntimeError, match="async"):
            app.ensure_sync(async_view)


@pytest.mark.parametrize("value", ["abc-123", "two words", "caf\u00c3\u00a9", "", None])
def test_a_header_read_from_the_environ_is_what_request_headers_answer(app: Flask, value: str | None) -> None:
    headers = {} if value is None else {REQUEST_ID_HEADER: value, "Origin": value}
    with app.test_request_context("/v1/games", headers=headers) as ctx:
        request = ctx.request
        assert header_value(request, REQUEST_ID_ENVIRON_KEY) == request.headers.get(REQUEST_ID_HEADER)
        assert header_value(request, ORIGIN_ENVIRON_KEY) == request.headers.get("Origin")


def count_of(labels: dict[str, str]) -> float:
    for metric in HTTP_REQUESTS.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total") and sample.labels == labels:
                return sample.value
    return 0.0


def test_every_request_is_counted_under_its_labels(app: Flask) -> None:
    client: FlaskClient = app.test_client()
    ok = {"method": "GET", "endpoint": "/v1/games", "status": "200"}
    missing = {"method": "GET", "endpoint": "/v1/games/<game:game_id>", "status": "404"}
    before_ok, before_missing = count_of(ok), count_of(missing)
    for _ in range(3):
        assert client.get("/v1/games").status_code == 200
    assert client.get("/v1/games/no-such-game").status_code == 404
    assert count_of(ok) == before_ok + 3
    assert count_of(missing) == before_missing + 1


def test_card_texts_are_format_card() -> None:
    assert {card: format_card(card) for card in set(CARD_CODES.values())} == CARD_TEXTS


@pytest.mark.parametrize("game_id", list(GAME_CLASSES))
def test_a_remembered_game_is_the_game_its_options_make(game_id: str) -> None:
    defaults = get_game(game_id).options
    for options in ({}, dict(defaults), dict(reversed(list(defaults.items())))):
        assert configured_game(game_id, options) == get_game(game_id, options)


def test_options_equal_as_keys_but_not_as_values_are_read_apart() -> None:
    """True == 1 as dict keys: a remembered game for 1 never answers for True."""
    name, value = next((n, v) for n, v in get_game("penguin").options.items() if type(v) is int)
    assert configured_game("penguin", {name: value}) == get_game("penguin", {name: value})
    problems: list[Any] = []
    for odd in (True, float(value)):
        with pytest.raises(NotationError):
            read_header({"format": 1, "game": "penguin", "options": {name: odd}}, "penguin", problems)
    with pytest.raises(RulesError):  # a value that cannot be a key is still read, and refused
        configured_game("penguin", {name: [value]})


@pytest.mark.parametrize("game_id", list(GAME_CLASSES))
def test_deck_problems_are_found_past_the_whole_deck_check(game_id: str) -> None:
    """The one-sort check lets a whole deck through and nothing else: a card taken away,
    doubled or swapped for another still gets its problems, and the dealt deck none."""
    game = get_game(game_id)
    rng = random.Random(game_id)
    state = game.initial_state(3)
    assert game._deck_problems(state) == []
    piles = [list(p) for p in state.piles]
    full = [i for i, p in enumerate(piles) if p]
    for _ in range(20):
        changed = [list(p) for p in piles]
        i = rng.choice(full)
        kind = rng.randrange(3)
        if kind == 0:
            changed[i].pop()
        elif kind == 1:
            changed[i].append(changed[rng.choice(full)][0])
        else:  # one card missing, another once too often
            changed[i][-1] = rng.choice([c for p in piles for c in p if c != changed[i][-1]])
        broken = State(tuple(tuple(p) for p in changed), state.counters, state.deal)
        assert game._deck_problems(broken), (kind, changed[i])
