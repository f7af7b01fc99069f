"""The play endpoints' lean dispatch (``Blueprint.arguments`` of service/http/body.py)
answers exactly as webargs' parse did: the same status, headers and bytes for valid
bodies and for broken ones (which the lean view hands to webargs' parse), on every POST
endpoint that reads a body with a schema.

The reference is the same app with each lean view swapped for the webargs view it falls
back to (``webargs_view``), so every request there goes through webargs' parse."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from flask import Flask
from marshmallow import Schema

from service.http import create_app
from service.http.body import FAST_BLUEPRINT
from service.http.replay_schemas import ReplayRequestSchema
from service.http.schemas import DealRequestSchema, MoveRequestSchema, StateRequestSchema
from service.http.solver_schemas import HintRequestSchema, SolveRequestSchema
from tests.app_settings import settings_for_tests
from tests.contract.test_fast_load import broken, request_bodies

# The endpoints each request schema is read by (searches only for broken bodies: a valid
# one runs a search of its budget).
ENDPOINTS: dict[type[Schema], tuple[str, ...]] = {
    MoveRequestSchema: ("moves",),
    StateRequestSchema: ("legal-moves", "validate"),
    DealRequestSchema: ("deals",),
    ReplayRequestSchema: ("replays",),
    SolveRequestSchema: ("solve",),
    HintRequestSchema: ("hint",),
}
SEARCHES = frozenset({"solve", "hint"})

# The lean views exist only where body.Blueprint's version gate is open.
pytestmark = pytest.mark.skipif(not FAST_BLUEPRINT, reason="body.Blueprint's shortcuts are off on these versions")


def webargs_only(app: Flask) -> Flask:
    """``app`` with every lean view swapped for the webargs view it falls back to."""
    swapped = 0
    for endpoint, view in list(app.view_functions.items()):
        fallback = getattr(view, "webargs_view", None)
        if fallback is not None:
            app.view_functions[endpoint] = fallback
            swapped += 1
    assert swapped >= 7, "every POST endpoint with a body schema has a lean view"
    return app


def answer(app: Flask, endpoint: str, body: Any) -> tuple[int, list[tuple[str, str]], bytes]:
    game = body.get("state", {}).get("game", "penguin") if isinstance(body, dict) and isinstance(body.get("state"), dict) else "penguin"
    if not isinstance(game, str) or not game.isascii() or "/" in game:
        game = "penguin"
    r = app.test_client().post(f"/v1/games/{game}/{endpoint}", json=body, headers={"X-Request-ID": "dispatch-test"})
    if endpoint == "deals" and r.status_code == 200 and not (isinstance(body, dict) and "deal" in body):
        return r.status_code, [], b"a deal the service picked at random"
    if endpoint in SEARCHES and r.status_code == 200:  # timings differ from run to run
        found = {k: v for k, v in r.get_json().items() if k not in ("stats", "reason")}
        return r.status_code, [h for h in sorted(r.headers.items()) if h[0] != "Content-Length"], json.dumps(found).encode()
    return r.status_code, sorted(r.headers.items()), r.get_data()


@pytest.fixture(scope="module")
def apps() -> tuple[Flask, Flask]:
    return create_app(settings_for_tests()), webargs_only(create_app(settings_for_tests()))


@pytest.fixture(scope="module")
def bodies() -> list[tuple[Schema, dict[str, Any]]]:
    return request_bodies(random.Random(2026))


def test_valid_bodies_get_the_same_answers(apps: tuple[Flask, Flask], bodies: list[tuple[Schema, dict[str, Any]]]) -> None:
    lean, reference = apps
    checked = 0
    for schema, body in bodies:
        for endpoint in ENDPOINTS[type(schema)]:
            if endpoint in SEARCHES:
                continue
            assert answer(lean, endpoint, body) == answer(reference, endpoint, body), (endpoint, body)
            checked += 1
    assert checked > 300


def test_broken_bodies_get_the_same_answers(apps: tuple[Flask, Flask], bodies: list[tuple[Schema, dict[str, Any]]]) -> None:
    lean, reference = apps
    rng = random.Random(140)
    statuses: set[int] = set()
    searches = 0
    for schema, body in bodies:
        for endpoint in ENDPOINTS[type(schema)]:
            bad = broken(body, rng)
            if endpoint in SEARCHES:
                searches += 1
                if searches > 12:  # a broken search body may still be valid: a few suffice
                    continue
            want = answer(reference, endpoint, bad)
            assert answer(lean, endpoint, bad) == want, (endpoint, bad)
            statuses.add(want[0])
    assert {400, 422} <= statuses


@pytest.mark.parametrize("endpoint", ["moves", "legal-moves", "validate", "deals", "replays", "hint", "solve"])
@pytest.mark.parametrize("data", [None, b"", b"[]", b"null", b"{}", b'{"state": null}', b'"x"', b"{"])
def test_odd_bodies_get_the_same_answers(apps: tuple[Flask, Flask], endpoint: str, data: bytes | None) -> None:
    lean, reference = apps

    def post(app: Flask) -> tuple[int, list[tuple[str, str]], bytes]:
        headers = {"X-Request-ID": "dispatch-test"} | ({} if data is None else {"Content-Type": "application/json"})
        r = app.test_client().post(f"/v1/games/penguin/{endpoint}", data=data, headers=headers)
        if endpoint == "deals" and r.status_code == 200:
            return r.status_code, [], b"a deal the service picked at random"
        return r.status_code, sorted(r.headers.items()), r.get_data()

    assert post(lean) == post(reference)
