"""The compiled fast reader (service/http/fast_load.py, ``compile_reader``) on shapes the
request schemas do not all have: nested schemas read in place (``RAISE`` and ``EXCLUDE``),
one it may not read in place (``INCLUDE``), a schema nesting itself, ``Dict`` fields, plain
and callable defaults, ``allow_none``, ``partial``. Every body, valid or broken, loads to
what marshmallow's own load gives (the same dict, or the same errors); valid ones by the
fast reader alone. Also: a move request's state and piles are read in place (their
schemas' ``load`` is not called), and ``OptionValue``'s quick test of a common value agrees
with its full checks."""

from __future__ import annotations

import random
from typing import Any

import pytest
from marshmallow import EXCLUDE, INCLUDE, RAISE, Schema, ValidationError, fields, validate

from service.http.fast_load import FAST_READER, FastLoadSchema, compile_reader
from service.http.schemas import MoveRequestSchema, OptionValue, StateSchema
from tests.contract.test_fast_load import ODD_VALUES, broken, marshmallow_only, outcome


class Leaf(FastLoadSchema):
    name = fields.String(required=True, validate=validate.Regexp(r"^[a-z]{1,8}:[0-9]$"))
    size = fields.Integer(strict=True, validate=validate.Range(min=0, max=9), load_default=0)
    note = fields.String(allow_none=True)


class LooseLeaf(FastLoadSchema):
    class Meta:
        unknown = EXCLUDE

    kind = fields.String(validate=validate.OneOf(["a", "b"]), load_default=lambda: "a")


class OpenLeaf(FastLoadSchema):
    class Meta:
        unknown = INCLUDE

    tag = fields.String()


class Tree(FastLoadSchema):
    leaf = fields.Nested(Leaf, required=True)
    loose = fields.Nested(LooseLeaf)
    open = fields.Nested(OpenLeaf)
    child = fields.Nested(lambda: Tree(), allow_none=True)
    counts = fields.Dict(keys=fields.String(), values=fields.Integer(strict=True, validate=validate.Range(min=-5, max=5)))
    extras = fields.Dict(keys=fields.String(), values=fields.String(), load_default=dict)
    flag = fields.Boolean(load_default=False)


class Flat(FastLoadSchema):
    a = fields.String(required=True, validate=validate.Regexp(r"^x+$"))
    b = fields.Integer(required=True, strict=True)
    c = fields.String(load_default="c")


VALID_TREES: list[dict[str, Any]] = [
    {"leaf": {"name": "tab:1"}},
    {"leaf": {"name": "tab:2", "size": 3, "note": None}, "loose": {"kind": "b", "other": 1}, "flag": True},
    {"leaf": {"name": "a:0", "note": "n"}, "open": {"tag": "t", "more": [1]}, "counts": {"x": 1, "y": -5}},
    {"leaf": {"name": "a:1"}, "child": {"leaf": {"name": "b:2"}, "child": None}, "extras": {"k": "v"}},
    {"leaf": {"name": "a:1"}, "child": {"leaf": {"name": "b:2"}, "child": {"leaf": {"name": "c:3"}}}},
]


def loads(schema: Schema, body: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        return "loaded", schema.load(body, **kwargs)
    except ValidationError as error:
        return "refused", error.messages


def test_every_shape_has_a_compiled_reader() -> None:
    for schema in (Leaf(), LooseLeaf(), OpenLeaf(), Tree(), Flat(), MoveRequestSchema(), StateSchema()):
        assert compile_reader(schema) is not None, type(schema).__name__


# Tests that the reader itself answers: only where fast_load's version gate is open.
fast_reader_only = pytest.mark.skipif(not FAST_READER, reason="FastLoadSchema's reader is off on these versions")


@fast_reader_only
@pytest.mark.parametrize("unknown", [None, RAISE, EXCLUDE])
def test_valid_trees_load_fast_to_what_marshmallow_loads(unknown: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    with marshmallow_only():
        expected = [loads(Tree(), body, unknown=unknown) for body in VALID_TREES]
    assert all(kind == "loaded" for kind, _ in expected)
    fell_back: list[Schema] = []
    load = Schema.load

    def recorded(self: Schema, *args: Any, **kwargs: Any) -> Any:
        fell_back.append(self)
        return load(self, *args, **kwargs)

    monkeypatch.setattr(Schema, "load", recorded)
    got = [loads(Tree(), body, unknown=unknown) for body in VALID_TREES]
    assert got == expected
    # Only an INCLUDE schema (not read in place, and refused by its own fast reader) falls back.
    assert {type(s).__name__ for s in fell_back} <= {"OpenLeaf"}


def test_broken_trees_get_marshmallows_answer() -> None:
    rng = random.Random(6)
    cases = [broken(body, rng) for body in VALID_TREES for _ in range(40)]
    cases += [{"leaf": {"name": "tab:1"}, "child": value} for value in ODD_VALUES]
    cases += [{"leaf": value} for value in ODD_VALUES] + [{"leaf": {"name": value}} for value in ODD_VALUES]
    with marshmallow_only():
        expected = [outcome(Tree(), body) for body in cases]
    assert sum(kind == "refused" for kind, _ in expected) > len(cases) // 2
    for body, want in zip(cases, expected, strict=True):
        assert outcome(Tree(), body) == want, body


def test_a_remembered_pattern_still_refuses() -> None:
    """The pattern's answers are remembered per string: a string that matched, then one
    that does not, then the first again."""
    for name in ("tab:1", "tab:10", "tab:1", "TAB:1", "tab:1"):
        with marshmallow_only():
            want = loads(Leaf(), {"name": name})
        assert loads(Leaf(), {"name": name}) == want, name


@pytest.mark.parametrize("partial", [("a",), ("a", "b"), ("c",), (), ["b"], True])
def test_a_flat_schema_under_partial(partial: Any) -> None:
    for body in ({}, {"a": "xx"}, {"b": 1}, {"a": "y", "b": 1}, {"a": "x", "b": True}, {"a": None}, {"c": 3}):
        with marshmallow_only():
            want = loads(Flat(), body, partial=partial)
        assert loads(Flat(), body, partial=partial) == want, (partial, body)


@fast_reader_only
def test_a_move_requests_state_and_piles_are_read_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    body = {
        "state": {
            "format": 1, "game": "penguin", "deal": "3", "options": {"cells": 7},
            "piles": {"foundation": [["AH"], ["AS"], ["AD"], []], "tableau": [["AC", "KC"]] + [[]] * 6, "cell": [[]] * 7},
        },
        "move": {"action": "move", "from": "tableau:0", "to": "cell:0", "count": 1},
    }
    with marshmallow_only():
        want = loads(MoveRequestSchema(), body)
    loaded: list[str] = []
    load = FastLoadSchema.load

    def recorded(self: FastLoadSchema, *args: Any, **kwargs: Any) -> Any:
        loaded.append(type(self).__name__)
        return load(self, *args, **kwargs)

    monkeypatch.setattr(FastLoadSchema, "load", recorded)
    assert loads(MoveRequestSchema(), body) == want
    # The state and its piles read in place; the move's branch by MoveField's loader (MOVE_LOADERS).
    assert loaded == ["MoveRequestSchema"]


class StrValue(str):
    pass


class IntValue(int):
    pass


def test_option_values_quick_test_agrees_with_its_checks() -> None:
    """A plain ``str`` or ``int`` is judged by the quick test; the same value as a subclass
    goes through the checks below it, which must say the same."""
    values: list[Any] = ["", "x", "x" * 32, "x" * 33, "x" * 600, 0, 1, -1, 1000, -1000, 1001, -1001, 2**60]
    field = OptionValue()
    for value in values:
        twin = StrValue(value) if isinstance(value, str) else IntValue(value)
        assert outcome_of(field, value) == outcome_of(field, twin), value


def outcome_of(field: fields.Field, value: Any) -> tuple[str, Any]:
    try:
        return "loaded", field.deserialize(value)
    except ValidationError as error:
        return "refused", error.messages
