"""Strict input (issue 25, item 6): a pile has one name, a JSON body is UTF-8 and not
empty, and a redirect names no host.

- A pile reference is read only as the service writes it (``tableau:3``): leading zeros,
  signs, spaces, other case, other digits answer 400 ``invalid-body`` (the contract's
  pattern) or, for what only the reader sees (a final newline, which Python's ``$``
  passes), 422 ``invalid-move``; never played as another pile.
- A ``Content-Type`` naming a charset other than UTF-8 answers 415 naming it.
- A body declared JSON and empty answers 400 ``malformed-json`` on every POST route; a POST
  with neither body nor ``Content-Type`` still deals (and is a missing body elsewhere).
- The 308 that merges a path's slashes carries a relative ``Location``, whatever ``Host``,
  and no body (Werkzeug's is an HTML page).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.routing import RequestRedirect
from werkzeug.test import EnvironBuilder

from service.engine.registry import GAME_CLASSES, get_game
from service.http.app import FAST_ROUTING, RelativeRedirectAdapter
from service.http.body import declared_charsets
from service.http.problems import PROBLEM_JSON, ProblemCode
from service.http.schemas import CardMoveSchema
from service.http.wire import PILE_REF_PATTERN, IllegalMoveError, NotationError, move_from_json, pile_from_ref

GAME = "penguin"

# Spellings of tableau:0 (or of no pile at all) that are not the one the service writes.
NON_CANONICAL_REFS = (
    "tableau:00", "tableau:000", "tableau:01", "tableau:+0", "tableau:-0", "tableau:+1", " tableau:0",
    "tableau:0 ", "tableau :0", "tableau: 0", "\ttableau:0", "Tableau:0", "TABLEAU:0", "tableau:\u0660",
    "tableau:\u0661", "tableau:\uff10", "tableau:\u00b9", "tableau:0\n", "tableau:0\r", "tableau:0x0",
    "tableau:0_0", "tableau:0.0", "tableau:1e0", "tableau:", ":0", "tableau", "tableau:0:0", "tableau::0",
    "tableau\x00:0", "tableau:0\x00", "t\u0430bleau:0", "tableau:00000", "",
)


def problem(answer: Any, status: int, code: ProblemCode) -> dict[str, Any]:
    assert (answer.status_code, answer.mimetype) == (status, PROBLEM_JSON), answer.get_data(as_text=True)
    body: dict[str, Any] = answer.get_json()
    assert body["code"] == code, body
    return body


@pytest.fixture(scope="module")
def dealt(app: Flask) -> dict[str, Any]:
    answer = app.test_client().post(f"/v1/games/{GAME}/deals", json={"deal": 1})
    assert answer.status_code == 200
    body: dict[str, Any] = answer.get_json()
    return body


def post_routes(app: Flask) -> list[str]:
    """Every POST route of the app, for the game under test."""
    return sorted(
        rule.rule.replace("<game:game_id>", GAME) for rule in app.url_map.iter_rules() if "POST" in (rule.methods or ())
    )


# --- pile references ---------------------------------------------------------------------------

def test_every_pile_the_service_names_is_spelt_canonically() -> None:
    for game_id in GAME_CLASSES:
        game = get_game(game_id)
        for pile, text in enumerate(game.ref_texts):
            assert re.fullmatch(PILE_REF_PATTERN, text), text
            assert pile_from_ref(game, text, "from") == pile


@pytest.mark.parametrize("ref", NON_CANONICAL_REFS, ids=repr)
def test_a_pile_spelt_otherwise_names_no_pile(ref: str) -> None:
    for game_id in GAME_CLASSES:
        with pytest.raises(NotationError):
            pile_from_ref(get_game(game_id), ref, "from")


def test_a_canonical_reference_to_a_missing_pile_is_no_such_pile() -> None:
    game = get_game(GAME)
    for ref in ("tableau:99", "tableau:9999", "nowhere:0", "cell:7"):
        with pytest.raises(IllegalMoveError) as refused:
            pile_from_ref(game, ref, "to")
        assert refused.value.rejection.rule == "no-such-pile"


def test_a_str_subclass_reads_as_its_text() -> None:
    class Text(str):
        def __eq__(self, other: object) -> bool:
            return False

        __hash__ = str.__hash__

    game = get_game(GAME)
    assert pile_from_ref(game, Text("tableau:3"), "from") == game.ref_texts.index("tableau:3")
    with pytest.raises(NotationError):
        pile_from_ref(game, Text("tableau:03"), "from")


@pytest.mark.parametrize("ref", NON_CANONICAL_REFS, ids=repr)
def test_a_move_naming_a_pile_otherwise_is_refused_never_played(client: FlaskClient, dealt: dict[str, Any], ref: str) -> None:
    """On /moves, as ``from`` and as ``to``: 400 ``invalid-body`` where the contract's
    pattern refuses it, else 422 ``invalid-move``; the error points at the field."""
    for field, move in (
        ("from", {"action": "move", "from": ref, "to": "cell:0", "count": 1}),
        ("to", {"action": "move", "from": "tableau:0", "to": ref, "count": 1}),
    ):
        answer = client.post(f"/v1/games/{GAME}/moves", json={"state": dealt["state"], "move": move})
        schema_refuses = bool(CardMoveSchema().validate(move))
        if schema_refuses:
            body = problem(answer, 400, ProblemCode.INVALID_BODY)
        else:
            body = problem(answer, 422, ProblemCode.INVALID_MOVE)
        assert any(e["where"] == f"/move/{field}" for e in body["errors"]), body


def test_tableau_00_is_a_400_on_moves_and_replays(client: FlaskClient, dealt: dict[str, Any]) -> None:
    """The issue's case: ``"from": "tableau:00"`` played as ``tableau:0``."""
    move = {**dealt["legal_moves"][0], "from": "tableau:00"}
    assert dealt["legal_moves"][0]["from"] == "tableau:0"
    body = problem(client.post(f"/v1/games/{GAME}/moves", json={"state": dealt["state"], "move": move}), 400, ProblemCode.INVALID_BODY)
    assert body["errors"][0]["where"] == "/move/from"
    replay = client.post(f"/v1/games/{GAME}/replays", json={"deal": 1, "moves": [move]})
    assert problem(replay, 400, ProblemCode.INVALID_BODY)["errors"][0]["where"] == "/moves/0/from"


def test_a_newline_after_the_reference_is_an_unreadable_move() -> None:
    game = get_game(GAME)
    with pytest.raises(NotationError):
        move_from_json(game, {"action": "move", "from": "tableau:0\n", "to": "cell:0", "count": 1})


# --- charsets ----------------------------------------------------------------------------------

REFUSED_CHARSETS = (
    ("application/json; charset=utf-16", "utf-16"),
    ("application/json; charset=UTF-16LE", "UTF-16LE"),
    ("application/json; charset=latin-1", "latin-1"),
    ("application/json; charset=iso-8859-1", "iso-8859-1"),
    ("application/json; charset=us-ascii", "us-ascii"),
    ("application/json; charset=utf8", "utf8"),
    ('application/json; charset="utf-16"', "utf-16"),
    ("application/json;charset=utf-32", "utf-32"),
    ("application/json; Charset=Windows-1252", "Windows-1252"),
    ("application/json; charset=utf-8; charset=utf-16", "utf-16"),
    ("application/json; charset=utf-16; charset=utf-8", "utf-16"),
    ("application/json; charset=", ""),
    ('application/json; charset="utf-8"x', 'utf-8"'),
    ("application/vnd.patience+json; charset=utf-16", "utf-16"),
)
ACCEPTED_CHARSETS = (
    "application/json; charset=utf-8", "application/json; charset=UTF-8", 'application/json; charset="utf-8"',
    'application/json; charset="UTF-8"', "application/json;charset=utf-8", "application/json; Charset=Utf-8",
    "application/json; charset=utf-8 ", "application/json; charset=utf-8; foo=bar",
    'application/json; foo="a;charset=utf-16"; charset=utf-8', "application/vnd.patience+json; charset=utf-8",
)


@pytest.mark.parametrize(("content_type", "charset"), REFUSED_CHARSETS)
@pytest.mark.parametrize("endpoint", ["deals", "moves"])
def test_a_charset_other_than_utf8_is_415_naming_it(client: FlaskClient, content_type: str, charset: str, endpoint: str) -> None:
    answer = client.post(f"/v1/games/{GAME}/{endpoint}", data=b'{"deal": 1}', headers={"Content-Type": content_type})
    body = problem(answer, 415, ProblemCode.UNSUPPORTED_MEDIA_TYPE)
    assert repr(charset) in body["detail"]


def test_a_refused_charset_is_quoted_short(client: FlaskClient) -> None:
    answer = client.post(f"/v1/games/{GAME}/deals", data=b"{}", headers={"Content-Type": "application/json; charset=" + "x" * 5000})
    assert len(problem(answer, 415, ProblemCode.UNSUPPORTED_MEDIA_TYPE)["detail"]) < 200


def test_a_utf16_body_is_refused_not_parsed(client: FlaskClient) -> None:
    body = '{"deal": 1}'.encode("utf-16")
    answer = client.post(f"/v1/games/{GAME}/deals", data=body, headers={"Content-Type": "application/json; charset=utf-16"})
    problem(answer, 415, ProblemCode.UNSUPPORTED_MEDIA_TYPE)


@pytest.mark.parametrize("content_type", ACCEPTED_CHARSETS)
def test_utf8_named_any_way_is_read(client: FlaskClient, content_type: str) -> None:
    answer = client.post(f"/v1/games/{GAME}/deals", data=b'{"deal": 1}', headers={"Content-Type": content_type})
    assert answer.status_code == 200 and answer.get_json()["deal"] == "1", answer.get_data(as_text=True)


def test_every_charset_is_found() -> None:
    assert declared_charsets("application/json") == []
    assert declared_charsets('application/json; a="x;charset=no"; charset="u\\"8"') == ['u"8']
    assert declared_charsets("application/json; charset*=utf-8''x; charsets=no") == ["utf-8''x"]


# --- empty bodies ------------------------------------------------------------------------------

def json_post(client: FlaskClient, path: str, content_type: str, length: str | None) -> Any:
    """A POST declared ``content_type`` with no body: ``Content-Length`` ``length``, or none."""
    environ = EnvironBuilder(path=path, method="POST", headers=[("Content-Type", content_type)]).get_environ()
    environ.pop("CONTENT_LENGTH", None)
    if length is not None:
        environ["CONTENT_LENGTH"] = length
    return client.open(environ)


@pytest.mark.parametrize("length", ["0", None])
@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8", "application/vnd.patience+json"])
def test_an_empty_body_declared_json_is_400_on_every_post_route(app: Flask, client: FlaskClient, content_type: str, length: str | None) -> None:
    routes = post_routes(app)
    assert f"/v1/games/{GAME}/deals" in routes and len(routes) >= 7
    for path in routes:
        body = problem(json_post(client, path, content_type, length), 400, ProblemCode.MALFORMED_JSON)
        assert "empty" in body["detail"], path


def test_no_body_and_no_content_type_deals_and_is_a_missing_body_elsewhere(app: Flask, client: FlaskClient) -> None:
    """As the contract says: the deal's body is optional (sent as nothing at all); every
    other POST requires one (400 ``invalid-body``)."""
    for path in post_routes(app):
        answer = client.post(path)
        if path.endswith("/deals"):
            assert answer.status_code == 200, answer.get_data(as_text=True)
        else:
            problem(answer, 400, ProblemCode.INVALID_BODY)


# --- redirects ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "location"), [
    ("/v1//games", "/v1/games"),
    ("/v1//games?x=1&y=%20", "/v1/games?x=1&y=%20"),
    ("/v1/games//penguin", "/v1/games/penguin"),
    pytest.param("/v1///games///penguin", "/v1/games/penguin", marks=pytest.mark.skipif(
        not FAST_ROUTING, reason="Werkzeug's own routing (3.0) merges doubled slashes only")),
])
@pytest.mark.parametrize("host", ["evil.example", "evil.example:8443", "a/b", "127.0.0.1"])
def test_the_slash_merging_308_is_relative(client: FlaskClient, path: str, location: str, host: str) -> None:
    answer = client.get(path, headers={"Host": host})
    assert answer.status_code == 308
    assert answer.headers["Location"] == location
    assert answer.data == b"" and "Content-Type" not in answer.headers  # no HTML page either


def test_a_post_is_redirected_relative_too(client: FlaskClient) -> None:
    answer = client.post(f"/v1/games//{GAME}//deals", json={"deal": 1}, headers={"Host": "evil.example"})
    assert (answer.status_code, answer.headers["Location"]) == (308, f"/v1/games/{GAME}/deals")


@pytest.mark.skipif(not FAST_ROUTING, reason="the service's own adapter runs only behind its version gate")
def test_a_redirect_url_is_a_path_with_one_leading_slash(app: Flask) -> None:
    adapter = app.url_map.bind("evil.example", script_name="/app")
    assert isinstance(adapter, RelativeRedirectAdapter)
    assert adapter.make_redirect_url("//v1/games", "a=1") == "/app/v1/games?a=1"
    root = app.url_map.bind("evil.example")
    assert root.make_redirect_url("//evil.example/x") == "/evil.example/x"
    with pytest.raises(RequestRedirect) as redirected:
        root.match("/v1//games")
    assert redirected.value.new_url == "/v1/games"


def test_no_rule_redirects_any_other_way(app: Flask) -> None:
    """Werkzeug's other redirects (a rule's ``redirect_to``, an alias, defaults) build
    absolute URLs of their own: the service has none."""
    for rule in app.url_map.iter_rules():
        assert rule.redirect_to is None and not rule.alias and not rule.defaults, rule
