"""Property tests: ``FastLoadSchema`` (service/http/fast_load.py) loads every request body
exactly as marshmallow's own ``Schema.load`` does, for every request schema of the API:
the same values of the same types, in the same order, or the same errors.

Hypothesis generates the bodies from the contract's own request examples (each request
schema's example in the OpenAPI document: a request schema the document has and
:data:`SCHEMA_NAMES` lacks fails the first test), changed in up to three places: mostly
in ways a valid body stays valid (a value swapped for another the same member takes
elsewhere: in the examples, in every game's states and moves as the service deals and
plays them, or among the values the field's own ``OneOf``/``Range`` allows), sometimes
not (a number at or just past a ``Range`` bound, a member dropped, any JSON value, an
unknown member). For each body both loads must accept or refuse alike, and give the same
values or the same errors. A success of the fast reader is proved equal, not only its
refusals (issue 26); a bump of marshmallow runs these first (README, "Private parts of
libraries"). Derandomized: the same bodies on every run.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
from flask import Flask
from hypothesis import HealthCheck, event, find, given, settings
from hypothesis import strategies as st
from marshmallow import Schema, ValidationError, fields, validate

from service.engine.registry import GAME_CLASSES
from service.http import create_app, fast_load
from service.http.fast_load import FAST_READER, FastLoadSchema
from tests.app_settings import settings_for_tests
from tests.contract.test_fast_load import marshmallow_only, places

# The fast reader runs only on the marshmallow it was checked on (its version gate); elsewhere
# every load is marshmallow's own and there is nothing to compare (make test-compat).
pytestmark = pytest.mark.skipif(not FAST_READER, reason="the fast reader's gate is closed on this marshmallow")

EXAMPLES_PER_SCHEMA = 300
MAX_CHANGES = 3
UNKNOWN_MEMBER = "not_a_member"

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@cache
def app() -> Flask:
    return create_app(settings_for_tests())


@cache
def request_schemas() -> dict[str, tuple[Schema, dict[str, Any]]]:
    """Every request schema the API documents, by component name, with its example body."""
    api = app().extensions["api"]
    document = api.spec.to_dict()
    plugin = next(p for p in api.spec.plugins if hasattr(p, "converter"))
    classes = {name: key[0] for key, name in plugin.converter.refs.items()}
    found: dict[str, tuple[Schema, dict[str, Any]]] = {}
    for operations in document["paths"].values():
        for operation in operations.values():
            if not isinstance(operation, dict) or "requestBody" not in operation:
                continue
            content = operation["requestBody"]["content"]["application/json"]
            name = content["schema"]["$ref"].rsplit("/", 1)[-1]
            found.setdefault(name, (classes[name](), content["example"]))
    return found


# The request schemas of the OpenAPI document, by component name.
SCHEMA_NAMES = ("DailyReplayRequest", "DealRequest", "HintRequest", "MoveRequest", "ReplayRequest", "SolveRequest", "StateRequest")


def field_values(schema: Schema, seen: set[int] | None = None) -> Iterator[tuple[str, Any]]:
    """(data key, value) pairs the schema's own fields allow: each ``OneOf``'s choices and
    each ``Range``'s bounds and their neighbours, through nested schemas."""
    seen = set() if seen is None else seen
    if id(schema) in seen:
        return
    seen.add(id(schema))
    for name, field in schema.load_fields.items():
        key = field.data_key or name
        for validator in field.validators:
            if isinstance(validator, validate.OneOf):
                yield from ((key, choice) for choice in validator.choices)
            elif isinstance(validator, validate.Range):
                for bound in (validator.min, validator.max):
                    if bound is not None:
                        yield from ((key, bound + step) for step in (-1, 0, 1))
        if isinstance(field, fields.Nested) and isinstance(field.schema, Schema):
            yield from field_values(field.schema, seen)


def numeric_bounds(schema: Schema, seen: set[int] | None = None) -> Iterator[Any]:
    """Each ``Range`` bound of the schema's fields (a ``Dict``'s values and nested schemas
    included) and its neighbours: numbers a field takes or refuses by one."""
    seen = set() if seen is None else seen
    if id(schema) in seen:
        return
    seen.add(id(schema))
    for field in schema.load_fields.values():
        inner = [field, *([field.value_field] if isinstance(field, fields.Dict) and field.value_field else [])]
        for each in inner:
            for validator in each.validators:
                if isinstance(validator, validate.Range):
                    for bound in (validator.min, validator.max):
                        if bound is not None:
                            yield from (bound - 1, bound, bound + 1)
        if isinstance(field, fields.Nested) and isinstance(field.schema, Schema):
            yield from numeric_bounds(field.schema, seen)


@cache
def all_bounds() -> tuple[Any, ...]:
    return tuple(sorted({b for schema, _ in request_schemas().values() for b in numeric_bounds(schema)}))


@cache
def other_games() -> tuple[dict[str, Any], ...]:
    """Bodies of every game (the examples are one game's): a state dealt and one a move
    later, and the legal moves of each, as the service answers them."""
    client = app().test_client()
    found: list[dict[str, Any]] = []
    for game in GAME_CLASSES:
        position = client.post(f"/v1/games/{game}/deals", json={"deal": 3}).get_json()
        for _ in range(2):
            moves = position["legal_moves"]
            found += [{"state": position["state"], "move": move, "moves": moves} for move in moves[:4]]
            if not moves:
                break
            position = client.post(f"/v1/games/{game}/moves", json={"state": position["state"], "move": moves[-1]}).get_json()
    return tuple(found)


@cache
def values_by_key() -> dict[Any, tuple[Any, ...]]:
    """For each object key or list position kind, the values the examples, the other games'
    states and moves, and the fields give it: what a valid body may hold there."""
    pool: dict[Any, list[Any]] = {}
    for example in (*(example for _, example in request_schemas().values()), *other_games()):
        for path in places(example):
            if path:
                value = example
                for step in path:
                    value = value[step]
                kind = path[-1] if isinstance(path[-1], str) else (path[-2] if len(path) > 1 else None, "item")
                pool.setdefault(kind, []).append(value)
    for schema, _ in request_schemas().values():
        for key, value in field_values(schema):
            pool.setdefault(key, []).append(value)
    unique: dict[Any, tuple[Any, ...]] = {}
    for kind, values in pool.items():
        kept: list[Any] = []
        for value in values:
            if value not in kept:
                kept.append(value)
        unique[kind] = tuple(kept)
    return unique


@st.composite
def bodies(draw: st.DrawFn, name: str) -> dict[str, Any]:
    """The example body of schema ``name``, changed in up to :data:`MAX_CHANGES` places."""
    body = copy.deepcopy(request_schemas()[name][1])
    pool = values_by_key()
    for _ in range(draw(st.integers(0, MAX_CHANGES))):
        inside = [p for p in places(body) if p]
        if not inside:
            break
        path = draw(st.sampled_from(inside))
        parent = body
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        kind = last if isinstance(last, str) else (path[-2] if len(path) > 1 else None, "item")
        action = draw(st.sampled_from(("same-kind",) * 5 + ("bound", "drop", "any", "unknown")))
        if action == "bound" and type(parent[last]) in (int, float) and all_bounds():
            parent[last] = draw(st.sampled_from(all_bounds()))
        elif action == "same-kind" and pool.get(kind):
            parent[last] = copy.deepcopy(draw(st.sampled_from(pool[kind])))
        elif action == "drop" and isinstance(parent, dict):
            del parent[last]
        elif action == "unknown" and isinstance(parent, dict):
            parent[UNKNOWN_MEMBER] = draw(JSON_VALUES)
        elif action == "any":
            parent[last] = draw(JSON_VALUES)
    return body


class Fallbacks:
    """Counts marshmallow's own loads while it is in place (the fast reader's fallback)."""

    def __init__(self) -> None:
        self.calls = 0
        self.load = Schema.load

    def __enter__(self) -> Fallbacks:
        original = self.load

        def counted(schema: Schema, *args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return original(schema, *args, **kwargs)

        Schema.load = counted  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        Schema.load = self.load  # type: ignore[method-assign]


def typed(value: Any) -> Any:
    """``value`` compared strictly: every value with its type (``1``, ``1.0`` and ``True``
    differ), a dict's keys in order, and the slots of an object that has them (a read
    pile group's ``codes``)."""
    kind = type(value)
    if isinstance(value, dict):
        return kind, tuple((typed(k), typed(v)) for k, v in value.items())
    names = getattr(kind, "__slots__", ())
    slots = tuple((name, typed(getattr(value, name, None))) for name in ((names,) if isinstance(names, str) else names))
    if isinstance(value, (list, tuple)):
        return kind, tuple(typed(item) for item in value), slots
    return kind, value, slots


def outcome(schema: Schema, body: Any) -> tuple[str, Any]:
    """What the view's load gives (``Blueprint.arguments``: the schema's own ``unknown``),
    compared strictly (:func:`typed`); or marshmallow's errors."""
    try:
        return "loaded", typed(schema.load(body))
    except ValidationError as error:
        return "refused", error.messages


def test_every_request_schema_is_a_fast_load_schema() -> None:
    assert tuple(sorted(request_schemas())) == SCHEMA_NAMES
    for name in SCHEMA_NAMES:
        schema, example = request_schemas()[name]
        assert isinstance(schema, FastLoadSchema), name
        with marshmallow_only():
            assert outcome(schema, example)[0] == "loaded", name  # the seeds are valid


@pytest.mark.parametrize("name", SCHEMA_NAMES)
@settings(max_examples=EXAMPLES_PER_SCHEMA, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_fast_load_answers_as_marshmallow(name: str, data: st.DataObject) -> None:
    schema = request_schemas()[name][0]
    body = data.draw(bodies(name), label="body")
    with marshmallow_only():
        expected = outcome(schema, copy.deepcopy(body))
    with Fallbacks() as fallbacks:
        got = outcome(schema, body)
    event(f"marshmallow {expected[0]}, {'fast reader alone' if not fallbacks.calls else 'marshmallow fallback'}")
    assert got == expected


def test_the_bodies_find_a_reader_more_lenient_than_marshmallow(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bodies reach what a reader could get wrong: one that skips its fields' ``OneOf``
    and ``Range`` (a state of format 2, of an unknown game) is found accepting what
    marshmallow refuses."""
    monkeypatch.setattr(fast_load, "exact_check", lambda field, check=fast_load.exact_check: (
        None if (found := check(field)) is None else found._replace(choices=None, low=None, high=None)))
    lenient = type(request_schemas()["StateRequest"][0])()  # a new instance: its reader written anew

    def differs(body: dict[str, Any]) -> bool:
        with marshmallow_only():
            expected = outcome(lenient, copy.deepcopy(body))
        return outcome(lenient, body) != expected

    found = find(bodies("StateRequest"), differs,
                 settings=settings(max_examples=EXAMPLES_PER_SCHEMA, derandomize=True, database=None, deadline=None))
    with marshmallow_only():
        assert outcome(lenient, found)[0] == "refused"
    assert outcome(lenient, found)[0] == "loaded"
