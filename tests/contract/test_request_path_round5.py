"""The fifth round's shortcuts of the request path (issue 14) answer as the long ways they
stand for: URL adapters remembered per environ (``ServiceMap``, where the version gate has
it on: ``FAST_ROUTING``), one null session for every request (``NullSessionInterface``),
JSON answers written by orjson (``CompactJSONProvider.dumps``) and request bodies whose
orjson reading counts when orjson writes them back (``body._read_plain``). (Its
``ServiceRequest``, ``ServiceResponse`` and the JSON provider's private ``response``
shortcut are gone: issue 26.)

The reference for whole answers is the same app built with Werkzeug's own URL map
(``fast_routing=False``, the path the version gate takes on a version not checked) and
Flask's own session interface and JSON provider (:func:`flask_default_app`): every request
below gets the same status, header list (names, values, order) and bytes from both."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import flask
import orjson
import pytest
from flask import Flask
from flask.json.provider import DefaultJSONProvider
from flask.sessions import NullSession, SecureCookieSessionInterface
from werkzeug.datastructures import FileStorage
from werkzeug.exceptions import BadHost
from werkzeug.http import parse_date
from werkzeug.routing import Map, MapAdapter
from werkzeug.test import EnvironBuilder

from service.http import create_app
from service.http.app import FAST_ROUTING, NullSessionInterface, ServiceMap
from service.http.body import _STRICT_DECODER, _written_back, parse_json
from service.http.problems import ApiError
from tests.app_settings import settings_for_tests

# Tests of the URL adapter cache itself: it runs only where the version gate has it on.
fast_routing_only = pytest.mark.skipif(
    not FAST_ROUTING, reason="the URL adapter cache is off on these Werkzeug/Flask versions (service/private_parts.py)"
)


def flasks_json(app: Flask) -> DefaultJSONProvider:
    """Flask's own JSON provider (Python's encoder), keeping keys in the service's order."""
    provider = DefaultJSONProvider(app)
    provider.sort_keys = False
    return provider


def flask_default_app() -> Flask:
    """The service's app built with Werkzeug's own URL map (``fast_routing=False``), and
    Flask's own session interface and JSON provider."""
    app = create_app(settings_for_tests(), fast_routing=False)
    app.session_interface = SecureCookieSessionInterface()
    app.json = flasks_json(app)
    assert type(app.url_map) is Map and app.response_class is flask.Response
    return app


def move_bodies(count: int) -> list[dict[str, Any]]:
    """Penguin move requests along a random playout of one deal."""
    client = create_app(settings_for_tests()).test_client()
    rng = random.Random(5)
    pos = client.post("/v1/games/penguin/deals", json={"deal": 3}).get_json()
    out: list[dict[str, Any]] = []
    while len(out) < count and pos["legal_moves"]:
        move = rng.choice(pos["legal_moves"])
        out.append({"state": pos["state"], "move": move})
        pos = client.post("/v1/games/penguin/moves", json={"state": pos["state"], "move": move}).get_json()
    return out


def requests_to_compare() -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(method, path, EnvironBuilder arguments) of answers of every kind."""
    rid = {"X-Request-ID": "round5"}
    for body in move_bodies(6):
        yield "POST", "/v1/games/penguin/moves", {"json": body, "headers": rid}
        spaced = json.dumps(body).encode()
        yield "POST", "/v1/games/penguin/legal-moves", {"data": spaced, "content_type": "application/json", "headers": rid}
    yield "POST", "/v1/games/penguin/deals", {"json": {"deal": 7}, "headers": rid}
    yield "POST", "/v1/games/penguin/deals", {"json": {"deal": 7}, "headers": {**rid, "Origin": "https://a.example"}}
    yield "POST", "/v1/games/penguin/moves", {"data": b'{"state": 1, "state": 2}', "content_type": "application/json", "headers": rid}
    yield "POST", "/v1/games/penguin/moves", {"data": b"[" * 40, "content_type": "application/json", "headers": rid}
    yield "POST", "/v1/games/penguin/moves", {"data": b"{}", "content_type": "text/plain", "headers": rid}
    yield "POST", "/v1/games/chess/moves", {"json": {}, "headers": rid}
    yield "GET", "/v1/games/penguin/moves", {"headers": rid}
    yield "GET", "/v1/games", {"headers": rid, "query_string": "x=1&y=%C3%A9"}
    yield "HEAD", "/v1/games", {"headers": rid}
    yield "OPTIONS", "/v1/games", {"headers": {**rid, "Origin": "https://a.example", "Access-Control-Request-Method": "POST"}}
    yield "OPTIONS", "/v1/games/penguin", {"headers": rid}
    yield "GET", "/nowhere/é", {"headers": rid}
    yield "GET", "/healthz", {"headers": rid}
    yield "GET", "/readyz", {"headers": rid}
    yield "GET", "/play", {"headers": rid}
    yield "GET", "/play/assets/play.js", {"headers": {**rid, "Range": "bytes=0-9"}}
    yield "GET", "/play/assets/play.js", {"headers": {**rid, "Range": "bytes=999999999-"}}
    yield "GET", "/openapi.json", {"headers": rid}
    yield "GET", "/v1/games", {"headers": {**rid, "Host": "api.example:8080"}, "base_url": "https://api.example:8080/"}
    yield "GET", "/v1/games", {"headers": {**rid, "Connection": "Upgrade", "Upgrade": "websocket"}}


REQUESTS = list(requests_to_compare())


def wsgi_answer(app: Flask, method: str, path: str, kwargs: dict[str, Any]) -> tuple[str, list[tuple[str, str]], bytes, int]:
    """Status, header list, body bytes and the number of close calls of one request."""
    environ = EnvironBuilder(path=path, method=method, **kwargs).get_environ()
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None, /) -> Callable[[bytes], object]:
        seen["status"], seen["headers"] = status, list(headers)
        return seen.setdefault("written", []).append

    out = app(environ, start_response)
    body = b"".join(out)
    closes = 0
    if hasattr(out, "close"):
        out.close()
        closes = 1
    return seen["status"], [steady_header(pair) for pair in seen["headers"]], body, closes


CLOCK_HEADERS = frozenset({"date", "expires"})  # read the clock: two answers a second apart differ


def steady_header(pair: tuple[str, str]) -> tuple[str, str]:
    """A header as the comparisons see it: a clock header's value, once checked to be an
    HTTP date, as a placeholder (so that two answers made on either side of a second's
    change still compare equal)."""
    name, value = pair
    if name.lower() in CLOCK_HEADERS:
        assert parse_date(value) is not None, pair
        return name, "<an HTTP date>"
    return pair


@pytest.mark.parametrize(("method", "path", "kwargs"), REQUESTS, ids=[f"{m} {p}" for m, p, _ in REQUESTS])
def test_every_answer_is_the_one_flasks_own_classes_give(method: str, path: str, kwargs: dict[str, Any]) -> None:
    ours = create_app(settings_for_tests())
    theirs = flask_default_app()
    assert (type(ours.url_map) is ServiceMap) is FAST_ROUTING
    for _ in range(2):  # the second time, the URL adapter is a remembered one
        assert wsgi_answer(ours, method, path, kwargs) == wsgi_answer(theirs, method, path, kwargs)


# --- ServiceMap -----------------------------------------------------------------------

ENVIRONS: list[dict[str, Any]] = [
    {"path": "/v1/games"},
    {"path": "/v1/games", "method": "POST"},
    {"path": "/v1/games/penguin/moves", "query_string": "a=%C3%A9"},
    {"path": "/caf\u00e9"},
    {"path": "/v1/games", "base_url": "https://example.org/"},
    {"path": "/v1/games", "base_url": "http://example.org:8080/prefix/"},
    {"path": "/v1/games", "headers": {"Host": "b\u00fccher.example"}},
    {"path": "/v1/games", "headers": {"Connection": "keep-alive, Upgrade", "Upgrade": "WebSocket"}},
]


def adapter_fields(adapter: MapAdapter) -> tuple[Any, ...]:
    return (adapter.map, adapter.server_name, adapter.script_name, adapter.subdomain, adapter.url_scheme,
            adapter.path_info, adapter.default_method, adapter.query_args, adapter.websocket)


@fast_routing_only
@pytest.mark.parametrize("kwargs", ENVIRONS)
@pytest.mark.parametrize("subdomain", [None, ""])
def test_a_remembered_adapter_is_the_one_werkzeug_binds(kwargs: dict[str, Any], subdomain: str | None) -> None:
    url_map = ServiceMap()
    environ = EnvironBuilder(**kwargs).get_environ()
    first = url_map.bind_to_environ(environ, subdomain=subdomain)
    again = url_map.bind_to_environ(dict(environ), subdomain=subdomain)
    werkzeugs = Map.bind_to_environ(url_map, environ, subdomain=subdomain)
    assert again is first
    assert adapter_fields(first) == adapter_fields(werkzeugs)


@fast_routing_only
def test_an_adapter_is_remembered_per_environ_value() -> None:
    url_map = ServiceMap()
    base = EnvironBuilder(path="/a").get_environ()
    first = url_map.bind_to_environ(base)
    for key, value in [("PATH_INFO", "/b"), ("QUERY_STRING", "x=1"), ("REQUEST_METHOD", "POST"), ("HTTP_HOST", "other"),
                       ("wsgi.url_scheme", "https"), ("SCRIPT_NAME", "/p"), ("HTTP_UPGRADE", "websocket")]:
        other = url_map.bind_to_environ({**base, key: value})
        assert other is not first
        assert adapter_fields(other) == adapter_fields(Map.bind_to_environ(url_map, {**base, key: value}))


@fast_routing_only
def test_remembered_adapters_are_dropped_when_there_are_too_many(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ServiceMap, "MAX_ADAPTERS", 3)
    url_map = ServiceMap()
    base = EnvironBuilder(path="/").get_environ()
    for i in range(10):
        url_map.bind_to_environ({**base, "PATH_INFO": f"/{i}"})
        assert len(url_map._adapters) <= 3


@fast_routing_only
def test_a_bind_with_a_server_name_or_one_that_fails_is_not_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    url_map = ServiceMap()
    environ = EnvironBuilder(path="/", headers=[("Host", "a.example")]).get_environ()
    named = url_map.bind_to_environ(environ, server_name="a.example")
    assert url_map.bind_to_environ(environ, server_name="a.example") is not named
    assert not url_map._adapters

    def bad_host(*args: Any, **kwargs: Any) -> MapAdapter:
        raise BadHost()

    with monkeypatch.context() as patched:
        patched.setattr(Map, "bind", bad_host)
        with pytest.raises(BadHost):
            url_map.bind_to_environ(environ)
    assert not url_map._adapters
    assert adapter_fields(url_map.bind_to_environ(environ)) == adapter_fields(Map.bind_to_environ(url_map, environ))


def test_a_remembered_adapter_matches_rules_added_after_it() -> None:
    app = create_app(settings_for_tests())
    with app.test_request_context("/late"):
        pass
    app.add_url_rule("/late", "late", lambda: "late")
    assert app.test_client().get("/late").data == b"late"


# --- requests and answers ---------------------------------------------------------------

def test_a_request_closes_the_files_it_parsed() -> None:
    app = create_app(settings_for_tests())
    environ = EnvironBuilder(path="/v1/games", method="PUT", data={"f": (io.BytesIO(b"x"), "f.txt")}).get_environ()
    request = app.request_class(environ)
    upload: FileStorage = request.files["f"]
    request.close()
    assert upload.stream.closed
    app.request_class(EnvironBuilder(path="/").get_environ()).close()  # nothing parsed: nothing to close


def test_an_answer_through_the_test_client_closes_once() -> None:
    app = create_app(settings_for_tests())
    closes: list[int] = []

    @app.after_request
    def count_closes(response: flask.Response) -> flask.Response:
        response.call_on_close(lambda: closes.append(1))
        return response

    answer = app.test_client().get("/healthz")
    assert closes == []  # the test client closes the body with its answer, as with Werkzeug's
    answer.close()
    assert closes == [1]


# --- the JSON provider's answers ------------------------------------------------------

@pytest.mark.parametrize("payload", [{"b": 1, "a": [1, 2.5, None, True, "é"]}, [], "text", 3, {"k": "\u2028"}])
@pytest.mark.parametrize("mimetype", ["application/json", "text/json", "application/x+xml"])
@pytest.mark.parametrize("debug", [False, True])
def test_json_answers_are_the_ones_flasks_provider_builds(payload: Any, mimetype: str, debug: bool) -> None:
    app = create_app(settings_for_tests())
    app.debug = debug  # (debug mode: indented, Flask's own text)
    theirs_provider = flasks_json(app)
    with app.app_context():
        app.json.mimetype = theirs_provider.mimetype = mimetype  # type: ignore[attr-defined]
        ours, theirs = app.json.response(payload), theirs_provider.response(payload)
    assert type(ours) is type(theirs) is flask.Response
    assert ours.headers.to_wsgi_list() == theirs.headers.to_wsgi_list()
    assert (ours.status, ours.get_data(), ours.mimetype) == (theirs.status, theirs.get_data(), theirs.mimetype)


def test_the_provider_writes_other_json_as_flasks_does() -> None:
    """``dumps`` with anything but the compact separators alone is Flask's (Python's json)."""
    app = create_app(settings_for_tests())
    value = {"b": [1, 2.5], "a": "é"}
    for kwargs in ({}, {"indent": 2}, {"separators": (",", ":"), "sort_keys": True}, {"separators": (", ", ": ")}):
        assert app.json.dumps(value, **kwargs) == flasks_json(app).dumps(value, **kwargs)
    assert app.json.dumps(value, separators=(",", ":")) == json.dumps(value, separators=(",", ":"))


# --- sessions -------------------------------------------------------------------------

def test_every_request_has_the_null_session_flask_would_make() -> None:
    app = create_app(settings_for_tests())
    assert isinstance(app.session_interface, NullSessionInterface)
    for _ in range(2):
        with app.test_request_context("/v1/games"):
            session = flask.session._get_current_object()  # type: ignore[attr-defined]
            assert type(session) is NullSession and dict(session) == {} and session.get("a") is None
            with pytest.raises(RuntimeError, match="no secret key"):
                flask.session["a"] = 1
            assert dict(session) == {}


def test_with_a_secret_key_sessions_work_as_flasks() -> None:
    app = create_app(settings_for_tests())
    app.secret_key = "test-only"

    @app.get("/count")
    def count() -> str:
        flask.session["n"] = flask.session.get("n", 0) + 1
        return str(flask.session["n"])

    client = app.test_client()
    assert [client.get("/count").data for _ in range(3)] == [b"1", b"2", b"3"]


# --- request bodies -------------------------------------------------------------------

def typed(value: Any) -> str:
    """``value`` with its types and key order showing (``1`` and ``1.0`` differ)."""
    return repr(value)


def strict_verdict(data: bytes) -> tuple[str, Any]:
    try:
        return "value", typed(_STRICT_DECODER.decode(data.decode("utf-8")))
    except ApiError as e:
        return "problem", e.code
    except (ValueError, UnicodeDecodeError):
        return "problem", "malformed-json"


def parse_verdict(data: bytes) -> tuple[str, Any]:
    try:
        return "value", typed(parse_json(data))
    except ApiError as e:
        return "problem", "malformed-json" if e.code == "malformed-json" else e.code


SCALARS = ["0", "-0", "1", "-1", "18446744073709551615", "18446744073709551616", "-9223372036854775809",
           "1" + "0" * 30, "1.0", "1.50", "1e5", "1E5", "1e+16", "1.5e-7", "0.1234567890123456789", "2." + "0" * 120,
           "123456789012345678", "1234567890123456789", "true", "false", "null", '"a b"', '"a:b"', '"\\u003a"',
           '"\\u00e9"', '"é"', '"\\/"', '"x\\"y"', '"\\\\ "', '" "', '"a\\u0020b"', "NaN", "1e400"]


def json_texts(rng: random.Random) -> Iterator[bytes]:
    """JSON texts, and near-JSON, written compactly, with spaces, with other whitespace,
    with keys twice (plain and escaped), with every scalar above in arrays and objects."""
    for s in SCALARS:
        for text in (s, f"[{s}]", f'{{"k":{s}}}', f'{{"k": {s}, "j": [ {s} ]}}', f'{{"k":{s},"k":{s}}}',
                     f'{{"a b":{s},"ab":1}}', f'{{"k":1,"\\u006b":{s}}}', f'\n{{"k":\t{s}}}\r\n', f'{{"k":{s}}} x'):
            yield text.encode()
    for _ in range(300):
        value = random_value(rng, 4)
        for separators in ((",", ":"), (", ", ": "), (",", ": ")):
            text = json.dumps(value, separators=separators, ensure_ascii=rng.random() < 0.5)
            yield text.encode()
            if "}" in text:  # a member twice: the last one again before the object's end
                yield (text[: text.index("}")] + (',"k0":1' if '"k0"' in text else "") + text[text.index("}"):]).encode()


def random_value(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(7 if depth else 4)
    if kind == 0:
        return rng.choice([0, 1, -5, 2**63, 2**64, -(2**63) - 1, 10**20, 12345678901234567])
    if kind == 1:
        return rng.choice([0.5, -1e-7, 1e16, 1e22, 123.456, 2.0])
    if kind == 2:
        return rng.choice(["", "a b", "x:y", "é", "\u2028", "q\"t", "back\\slash", "AH", " "])
    if kind == 3:
        return rng.choice([True, False, None])
    if kind in (4, 5):
        return [random_value(rng, depth - 1) for _ in range(rng.randrange(4))]
    return {f"k{rng.randrange(4)}": random_value(rng, depth - 1) for _ in range(rng.randrange(4))}


def test_bodies_read_as_the_strict_decoder_reads_them() -> None:
    texts = list(json_texts(random.Random(11)))
    assert len(texts) > 1000
    for data in texts:
        assert parse_verdict(data) == strict_verdict(data), data


def test_move_bodies_are_written_back_by_orjson() -> None:
    """The bodies clients send (compact, or with Python's spaces) take the short way."""
    for move in move_bodies(4):
        for separators in ((",", ":"), (", ", ": ")):
            data = json.dumps(move, separators=separators).encode()
            assert _written_back(data, orjson.dumps(orjson.loads(data)))
            assert parse_json(data) == move
