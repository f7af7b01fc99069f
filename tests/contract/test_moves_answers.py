"""Answers written by orjson (``CompactJSONProvider`` of service/http/app.py) are the
bytes Python's encoder wrote before, or, for floats in exponent form alone, the same JSON
value: every answer of every endpoint of every game is written both ways and compared;
and the values whose bytes orjson would get wrong (non-ASCII text, DEL, NaN and
infinities, integers past 64 bits, dates, dataclasses) are written by Python's encoder."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import json
import math
import random
import re
import uuid
from typing import Any

import pytest
from flask import Flask

from service.engine.registry import GAME_CLASSES
from service.http import create_app
from service.http.app import CompactJSONProvider
from tests.app_settings import settings_for_tests

# A float in exponent form, as either encoder writes it: the one spelling they differ in.
EXPONENT = re.compile(rb"(?<![\w\"])-?[0-9.]+e[-+]?[0-9]+")


@pytest.fixture(scope="module")
def app() -> Flask:
    return create_app(settings_for_tests(HINT_SECONDS="0.1"))


def provider(app: Flask) -> CompactJSONProvider:
    json_provider = app.json
    assert isinstance(json_provider, CompactJSONProvider)
    return json_provider


def python_text(app: Flask, obj: Any) -> bytes:
    return provider(app).compact_encoder().encode(obj).encode()


def same_answer(app: Flask, obj: Any) -> None:
    """``obj`` written as the service answers it: Python's bytes, or the same JSON value
    with only floats spelled differently."""
    ours, theirs = provider(app).compact_text(obj), python_text(app, obj)
    if ours != theirs:
        assert json.loads(ours) == json.loads(theirs), (ours, theirs)
        assert EXPONENT.sub(b"F", ours) == EXPONENT.sub(b"F", theirs), "only floats may be spelled differently"


def test_every_answer_of_every_endpoint_is_pythons(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    answers: list[Any] = []
    write = CompactJSONProvider.compact_text
    monkeypatch.setattr(CompactJSONProvider, "compact_text", lambda self, obj: answers.append(obj) or write(self, obj))
    client = app.test_client()
    rng = random.Random(14)
    client.get("/v1/games")
    for game in GAME_CLASSES:
        client.get(f"/v1/games/{game}")
        for deal in (1, 2):
            position = client.post(f"/v1/games/{game}/deals", json={"deal": deal}).get_json()
            played: list[Any] = []
            for step in range(25):
                state = position["state"]
                client.post(f"/v1/games/{game}/legal-moves", json={"state": state})
                client.post(f"/v1/games/{game}/validate", json={"state": state})
                if step == 0:  # searches: their stats hold floats
                    client.post(f"/v1/games/{game}/hint", json={"state": state})
                    client.post(f"/v1/games/{game}/solve", json={"state": state, "limits": {"max_seconds": 0.05}})
                if not position["legal_moves"]:
                    break
                move = rng.choice(position["legal_moves"])
                played.append(move)
                position = client.post(
                    f"/v1/games/{game}/moves", json={"state": state, "move": move, "autoplay": rng.choice(["none", "safe"])}
                ).get_json()
            client.post(f"/v1/games/{game}/replays", json={"deal": deal, "moves": played})
            # Problems too: an illegal move, a broken state, a bad body.
            client.post(f"/v1/games/{game}/moves", json={"state": state, "move": {"action": "move", "from": "foundation:0", "to": "tableau:0", "count": 1}})
            client.post(f"/v1/games/{game}/moves", json={"state": {**state, "deal": "x"}, "move": {"action": "deal"}})
            client.post(f"/v1/games/{game}/moves", json={"state": state, "move": {"action": "move", "count": "é"}})
    client.post("/v1/games/nöne/deals", json={"deal": 1})
    assert len(answers) > 1000
    monkeypatch.undo()
    for obj in answers:
        same_answer(app, obj)


@pytest.mark.parametrize("value", [
    {"text": "é", "n": 1}, {"text": "\x7f"}, {"x": "☃ and \U0001f600"}, float("nan"), [float("inf"), -float("inf")],
    2**64, -(2**63) - 1, 2**63 - 1, {1: "a"}, {"a": None}, [1e-7, 1e16, 0.1, -0.0, 123.5, 1.5e300],
    datetime.datetime(2026, 12, 1, 20, 0, tzinfo=datetime.UTC), datetime.date(2026, 12, 1), decimal.Decimal("1.10"),
    uuid.UUID(int=7), "control \x00\x1f\t\n chars", {"nested": [[[{"a": [True, False, None]}]]]},
])
def test_values_orjson_would_write_otherwise_are_pythons(app: Flask, value: Any) -> None:
    same_answer(app, value)
    if not (isinstance(value, list) and any(isinstance(v, float) and math.isfinite(v) for v in value)):
        assert provider(app).compact_text(value) == python_text(app, value)


def test_a_dataclass_is_written_as_flask_writes_it(app: Flask) -> None:
    @dataclasses.dataclass
    class Point:
        x: int
        when: datetime.date

    value = {"p": Point(1, datetime.date(2026, 1, 2))}
    assert provider(app).compact_text(value) == python_text(app, value)


def test_an_unknown_type_is_refused_as_before(app: Flask) -> None:
    with pytest.raises(TypeError):
        provider(app).compact_text({"x": object()})
