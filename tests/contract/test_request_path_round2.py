"""The second round's shortcuts of the request path (issue 14) answer as the long ways
they stand for: the idle bound skipped only for bodies a server read whole, the strict
JSON decoder built once, compact answers written by one encoder, request ids that are
version-4 UUIDs, alternative answers documented without a wrapper, and foundations
checked against their suit run in one comparison."""

from __future__ import annotations

import io
import json
import random
import socket
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from flask import Flask

from service.engine.core import State
from service.engine.penguin import PRESETS, PenguinFamily
from service.engine.registry import get_game
from service.gunicorn_worker import OneSendAnswer, WholeRequestWorker
from service.http import create_app
from service.http.body import BODY_IDLE_SECONDS, FAST_BLUEPRINT, GUNICORN_SOCKET, WHOLE_BODY_KEY, parse_json, read_body
from service.http.observability import incoming_request_id, new_request_id
from service.http.problems import ApiError, ProblemCode
from tests.app_settings import settings_for_tests
from tests.rules.test_penguin_move_rule import playout_positions


class TimeoutSeeingStream(io.BytesIO):
    """A body stream that notes the socket's timeout each time the app reads it."""

    def __init__(self, data: bytes, sock: socket.socket) -> None:
        super().__init__(data)
        self.sock = sock
        self.timeouts: list[float | None] = []

    def read(self, size: int | None = -1) -> bytes:
        self.timeouts.append(self.sock.gettimeout())
        return super().read(size)


@pytest.fixture
def sock() -> Iterator[socket.socket]:
    left, right = socket.socketpair()
    with left, right:
        yield left


@pytest.mark.parametrize("whole", [False, True])
def test_the_idle_bound_is_set_unless_the_server_read_the_body_whole(sock: socket.socket, whole: bool) -> None:
    body = b'{"deal": 2}'
    stream = TimeoutSeeingStream(body, sock)
    wsgi_env: dict[str, Any] = {"CONTENT_LENGTH": str(len(body)), "wsgi.input": stream, "gunicorn.socket": sock}
    if whole:
        wsgi_env[WHOLE_BODY_KEY] = True
    assert read_body(wsgi_env, 1024) == body
    assert stream.timeouts and set(stream.timeouts) == ({None} if whole else {BODY_IDLE_SECONDS})
    assert sock.gettimeout() is None  # left as the server had it


def test_the_whole_request_worker_tells_the_app_its_bodies_are_whole() -> None:
    seen: dict[str, Any] = {}

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        seen.update(environ)
        return [b""]

    worker = WholeRequestWorker.__new__(WholeRequestWorker)  # only load_wsgi is under test
    worker.app = SimpleNamespace(wsgi=lambda: app)
    worker.load_wsgi()
    with socket.socket() as sock:  # gunicorn writes through the wrapping; the app sees the socket
        assert worker.wsgi({"PATH_INFO": "/", GUNICORN_SOCKET: OneSendAnswer(sock)}, None) == [b""]
        assert seen == {"PATH_INFO": "/", WHOLE_BODY_KEY: True, GUNICORN_SOCKET: sock}


def hooked_loads(text: str) -> Any:
    """What parse_json read before the decoder was built once: json.loads with the hooks."""
    from service.http import body

    return json.loads(text, object_pairs_hook=body._unique_keys, parse_int=body._bounded_int,
                      parse_float=body._bounded_float, parse_constant=body._no_constant)


@pytest.mark.parametrize("text", [
    '{"a": 1, "b": [1.5, -2e3, "x", null, true]}', '\ufeff{"a": 1}', '{"a": 1, "a": 2}', "[NaN]", "[1] [2]",
    "[" + "1" * 101 + "]", '{"a": ' + "2." + "0" * 99 + "}", "", "  [ ]  ", '"\\u00e9"',
])
def test_the_strict_decoder_answers_as_json_loads_with_the_hooks(text: str) -> None:
    try:
        expected: Any = ("value", hooked_loads(text))
    except json.JSONDecodeError:
        expected = ("problem", ProblemCode.MALFORMED_JSON)
    except ApiError as e:
        expected = ("problem", e.code)
    try:
        got: Any = ("value", parse_json(text.encode()))
    except ApiError as e:
        got = ("problem", e.code)
    assert got == expected


@pytest.fixture(scope="module")
def app() -> Flask:
    return create_app(settings_for_tests())


@pytest.mark.parametrize("payload", [
    {"b": 1, "a": [1, 2.5, None, True, "é\u2028"], "c": {"z": {}, "y": []}}, [], "text", 3, None,
])
def test_compact_answers_are_what_jsonify_wrote(app: Flask, payload: Any) -> None:
    with app.app_context():
        answer = app.json.response(payload)
    expected = json.dumps(payload, separators=(",", ":"), ensure_ascii=True, sort_keys=False) + "\n"
    assert answer.get_data(as_text=True) == expected
    assert answer.mimetype == "application/json"


def test_debug_answers_stay_indented(app: Flask) -> None:
    with app.app_context():
        app.debug = True
        try:
            text = app.json.response({"a": [1]}).get_data(as_text=True)
        finally:
            app.debug = False
    assert text == json.dumps({"a": [1]}, indent=2) + "\n"


def test_new_request_ids_are_version_4_uuids_in_hex() -> None:
    for _ in range(2000):
        rid = new_request_id()
        parsed = uuid.UUID(rid)
        assert (parsed.version, parsed.variant, parsed.hex) == (4, uuid.RFC_4122, rid)
    assert incoming_request_id("not safe\n") != incoming_request_id("not safe\n")


@pytest.mark.skipif(not FAST_BLUEPRINT, reason="body.Blueprint's shortcuts are off on these versions")
def test_views_with_alternative_answers_are_called_unwrapped(app: Flask) -> None:
    view = next(f for name, f in app.view_functions.items() if name.endswith(".play_move"))
    inner = view
    while hasattr(inner, "__wrapped__"):
        inner = inner.__wrapped__
    assert inner.__name__ == "play_move"
    chain = []
    f = view
    while hasattr(f, "__wrapped__"):
        chain.append(f.__code__.co_filename)
        f = f.__wrapped__
    assert sum("flask_smorest/response.py" in name for name in chain) == 0  # neither alt_response's nor (round 6) response's wrapper


@pytest.mark.parametrize("game_id", [cls.id for cls in PRESETS])
def test_foundation_checks_point_where_the_loop_did(game_id: str) -> None:
    """A foundation in order passes; one with its top two cards swapped is refused at
    the first of them, as the card-by-card loop says (the one comparison answers only for
    foundations in order)."""
    game = get_game(game_id)
    assert isinstance(game, PenguinFamily)
    swapped = 0
    for state in playout_positions(game, random.Random(3), deals=20, steps=200):
        assert game.validate_piles(state) == []
        for i in game.F:
            pile = state.piles[i]
            if len(pile) < 3:
                continue
            broken = list(state.piles)
            broken[i] = (*pile[:-2], pile[-1], pile[-2])
            problems = game.validate_piles(State(tuple(broken), state.counters, state.deal))
            assert [(p.where, p.message) for p in problems] == [
                (game.pointer(i, len(pile) - 2), "foundations build up in suit by one")]
            swapped += 1
    assert swapped
