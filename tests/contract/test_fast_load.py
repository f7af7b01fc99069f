"""The request schemas' fast loads (service/http/fast_load.py) answer exactly as
marshmallow's own load: the same dict for every body it accepts, the same errors (by
field, with the same messages) for every body it refuses.

The bodies are real requests of every POST endpoint taking a state (positions along
random playouts of every game, with their options and counters), and the same bodies
broken at random places: a value swapped for one of another type or shape, a field
dropped, an unknown field added. The reference is marshmallow's ``Schema.load`` with the
fast path switched off everywhere (nested schemas included)."""

from __future__ import annotations

import copy
import functools
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from marshmallow import RAISE, Schema, ValidationError

from service.engine.registry import GAME_CLASSES
from service.http import create_app, schemas
from service.http.fast_load import FAST_READER, FastLoadSchema
from service.http.replay_schemas import ReplayRequestSchema
from service.http.schemas import DealRequestSchema, MoveRequestSchema, StateRequestSchema
from service.http.solver_schemas import HintRequestSchema, SolveRequestSchema
from tests.app_settings import settings_for_tests

# The fast reader runs only on the marshmallow it was checked on (its version gate); elsewhere
# every load is marshmallow's own and there is nothing to compare (make test-compat).
pytestmark = pytest.mark.skipif(not FAST_READER, reason="the fast reader's gate is closed on this marshmallow")

# Values a broken body puts in place of one of its own: every JSON type, and strings and
# numbers on both sides of the schemas' patterns and bounds.
ODD_VALUES: tuple[Any, ...] = (
    None, True, False, 0, 1, -1, 7, 1001, 2**53, 2**60, 1.5, "", "x" * 600, "TH", "10h", "TH\n", "th", "1",
    "00012", "1" * 21, "tableau:1", "tableau:99999", "safe", "none", "move", "deal", "penguin", [], {}, [[]],
    [["TH"]], ["TH"], [1], {"a": 1}, {"kid": "k", "mac": "m"}, {"tableau": [3]},
)
UNKNOWN_KEYS = ("extra", "from_", "signature", "sealed", "face_down", "format", "count")


@contextmanager
def marshmallow_only() -> Iterator[None]:
    """marshmallow's own ``Schema.load`` for every schema while it lasts (the move
    branches' loaders too, which call their readers without ``load``)."""
    fast, loaders = FastLoadSchema.load, dict(schemas.MOVE_LOADERS)
    FastLoadSchema.load = Schema.load
    for name, reader in schemas.MOVE_READERS.items():
        partial = schemas.CARD_MOVE_LENIENT if name == schemas.CARD_MOVE else ()
        schemas.MOVE_LOADERS[name] = functools.partial(Schema.load, reader, partial=partial)
    try:
        yield
    finally:
        FastLoadSchema.load = fast
        schemas.MOVE_LOADERS.update(loaders)


def outcome(schema: Schema, body: Any) -> tuple[str, Any]:
    """What loading ``body`` gives, as webargs asks for it: the data, or the errors."""
    try:
        return "loaded", schema.load(body, unknown=RAISE)
    except ValidationError as error:
        return "refused", error.messages


def playout_states(rng: random.Random) -> list[dict[str, Any]]:
    """States of every game, a few moves into random games from a few deals."""
    client = create_app(settings_for_tests()).test_client()
    states: list[dict[str, Any]] = []
    for game in GAME_CLASSES:
        for deal in (1, 2):
            position = client.post(f"/v1/games/{game}/deals", json={"deal": deal}).get_json()
            for _ in range(6):
                states.append(position["state"])
                if not position["legal_moves"]:
                    break
                move = rng.choice(position["legal_moves"])
                position = client.post(
                    f"/v1/games/{game}/moves", json={"state": position["state"], "move": move}
                ).get_json()
    return states


def request_bodies(rng: random.Random) -> list[tuple[Schema, dict[str, Any]]]:
    """A valid body of each request schema for each state, and the other request schemas'."""
    bodies: list[tuple[Schema, dict[str, Any]]] = []
    for state in playout_states(rng):
        bodies += [
            (MoveRequestSchema(), {"state": state, "move": {"action": "move", "from": "tableau:0", "to": "cell:0", "count": 1}}),
            (MoveRequestSchema(), {"state": state, "move": {"action": "deal"}, "autoplay": "safe"}),
            (StateRequestSchema(), {"state": state}),
            (SolveRequestSchema(), {"state": state, "limits": {"max_seconds": 0.5}, "knowledge": "full"}),
            (HintRequestSchema(), {"state": state, "knowledge": "player"}),
        ]
    bodies += [
        (DealRequestSchema(), {"deal": 7, "options": {"cells": 7}, "winnable": False}),
        (DealRequestSchema(), {}),
        (ReplayRequestSchema(), {"deal": "12", "moves": [{"action": "move", "from": "tableau:0", "to": "cell:0", "count": 1}]}),
    ]
    return bodies


def places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (object keys and list indexes)."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from places(item, (*path, index))


def broken(body: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """``body`` with one to three things wrong with it."""
    body = copy.deepcopy(body)
    for _ in range(rng.randint(1, 3)):
        inside = [p for p in places(body) if p]
        path = rng.choice(inside) if inside else (rng.choice(UNKNOWN_KEYS),)
        parent = body
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        choice = rng.random()
        if choice < 0.15 and isinstance(parent, dict):
            parent.pop(last, None)
        elif choice < 0.3 and isinstance(parent, dict):
            parent[rng.choice(UNKNOWN_KEYS)] = rng.choice(ODD_VALUES)
        else:
            parent[last] = copy.deepcopy(rng.choice(ODD_VALUES))
    return body


@pytest.fixture(scope="module")
def bodies() -> list[tuple[Schema, dict[str, Any]]]:
    return request_bodies(random.Random(14))


def test_valid_bodies_load_fast_to_what_marshmallow_loads(
    bodies: list[tuple[Schema, dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    with marshmallow_only():
        expected = [outcome(schema, body) for schema, body in bodies]
    assert all(kind == "loaded" for kind, _ in expected), "the bodies are valid requests"
    refused: list[Any] = []
    monkeypatch.setattr(Schema, "load", lambda self, *a, **k: refused.append(self))  # the fallback
    got = [outcome(schema, body) for schema, body in bodies]
    assert not refused, "every valid body is read by the fast path alone"
    assert got == expected


def test_broken_bodies_get_marshmallows_answer(bodies: list[tuple[Schema, dict[str, Any]]]) -> None:
    rng = random.Random(1412)
    cases = [(schema, broken(body, rng)) for schema, body in bodies for _ in range(4)]
    with marshmallow_only():
        expected = [outcome(schema, body) for schema, body in cases]
    got = [outcome(schema, body) for schema, body in cases]
    assert sum(kind == "refused" for kind, _ in expected) > len(cases) // 2, "most broken bodies are refused"
    for (schema, body), want, have in zip(cases, expected, got, strict=True):
        assert have == want, (type(schema).__name__, body)


def test_a_partial_load_skips_only_the_fields_it_names() -> None:
    """A card move may leave out `from` and `to` (the view says which is missing), and
    nothing else."""
    schema = MoveRequestSchema().fields["move"]
    for move in ({"action": "move", "count": 1}, {"action": "move", "from": "tableau:0"}, {"action": "move"}):
        with marshmallow_only():
            want = outcome_of_field(schema, move)
        assert outcome_of_field(schema, move) == want


def outcome_of_field(field: Any, value: Any) -> tuple[str, Any]:
    try:
        return "loaded", field.deserialize(value)
    except ValidationError as error:
        return "refused", error.messages
