"""v1 stays compatible on the wire: the recorded requests of the v1 contract are replayed
against today's app and must get the recorded answers (issue 24).

``tests/golden/wire_v1.json`` holds request/answer pairs recorded from the code that
defines v1 (its ``recorded_from`` commit) by tests/contract/record_wire_v1.py: every v1
operation, every game's deal, moves with each autoplay, client-written states, searches
bounded by positions, and the main refusals, in open and in signed mode (each mode's
settings are stored with the corpus). Each request is sent again, as recorded, to an app
of the working tree built with those settings, and compared:

- the status, exactly;
- ``Content-Type``, exactly;
- every other recorded response header but ``Content-Length``, present with the same
  value (``Content-Length`` follows the body's bytes; a header the answer adds is not a
  break, so it is allowed);
- the body, as parsed JSON, exactly: every field, none added, none missing, the same
  values of the same JSON types (``1``, ``1.0``, ``"1"`` and ``true`` all differ). Key
  order and spacing are not compared: JSON does not give them meaning.

Not compared, because they legitimately differ from run to run (:func:`.normalise`, only
where they are expected and only when they have their expected form): the request id
the server makes when the request sent none (the ``X-Request-ID`` header and a problem's
``request_id``, which must still be equal to each other; a request id the request sent is
compared exactly), a search's timings (``stats.seconds``, ``stats.states_per_second``
of ``/solve`` and ``/hint`` answers, which must still be numbers, and the seconds a
hint's ``reason`` states: "found in 0.01 s"), and the order of the methods of an
``Allow`` header (Werkzeug's order follows the hash seed). Everything else a search
answers, ``stats.states`` included, is deterministic under the recorded position limits
(the recorder refuses an answer a clock stopped).

A failing pair means an answer of v1 changed on the wire: change the code back, or, if
the change is deliberate and allowed for v1, re-record the corpus (see the recorder).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.contract.record_wire_v1 import CORPUS_PATH, HINT_TIMING, header, make_app, normalise, send

CORPUS: dict[str, Any] = json.loads(CORPUS_PATH.read_text())
PAIRS: list[dict[str, Any]] = CORPUS["pairs"]
PAIRS_BY_NAME = {p["name"]: p for p in PAIRS}

# The v1 operations (method, path under /v1/games) the corpus must cover with a 200 answer.
V1_OPERATIONS = {
    ("GET", ""), ("GET", "{game}"), ("POST", "deals"), ("POST", "moves"), ("POST", "legal-moves"),
    ("POST", "validate"), ("POST", "hint"), ("POST", "solve"), ("POST", "replays"),
}


def shown(value: Any) -> str:
    """A value for a difference's message: its JSON, cut short, and its type."""
    text = json.dumps(value)
    return f"{text[:80] + '…' if len(text) > 80 else text} ({type(value).__name__})"


def json_differences(recorded: Any, answered: Any, where: str = "") -> list[str]:
    """Each difference between two parsed JSON values, as ``<pointer>: ...``, strict about
    JSON types (Python's ``1 == 1.0 == True`` would hide a changed type).

    >>> json_differences({"a": 1, "b": [True]}, {"a": 1.0, "b": [True, 2], "c": None})
    ['/a: 1 (int) became 1.0 (float)', '/b: 1 items became 2', '/b/1: added 2 (int)', '/c: added null (NoneType)']
    """
    if type(recorded) is not type(answered):
        return [f"{where or '/'}: {shown(recorded)} became {shown(answered)}"]
    if isinstance(recorded, dict):
        out = []
        for key in recorded:
            if key not in answered:
                out.append(f"{where}/{key}: removed (was {shown(recorded[key])})")
            else:
                out.extend(json_differences(recorded[key], answered[key], f"{where}/{key}"))
        out.extend(f"{where}/{key}: added {shown(answered[key])}" for key in answered if key not in recorded)
        return out
    if isinstance(recorded, list):
        out = [] if len(recorded) == len(answered) else [f"{where or '/'}: {len(recorded)} items became {len(answered)}"]
        for i, (old, new) in enumerate(zip(recorded, answered, strict=False)):
            out.extend(json_differences(old, new, f"{where}/{i}"))
        out.extend(f"{where}/{i}: removed (was {shown(old)})" for i, old in enumerate(recorded[len(answered):], len(answered)))
        out.extend(f"{where}/{i}: added {shown(new)}" for i, new in enumerate(answered[len(recorded):], len(recorded)))
        return out
    return [] if recorded == answered else [f"{where or '/'}: {shown(recorded)} became {shown(answered)}"]


def differences(request: dict[str, Any], recorded: dict[str, Any], answered: dict[str, Any]) -> list[str]:
    """How ``answered`` differs on the wire from the ``recorded`` answer to ``request``
    (the module docstring says what is compared); empty when it does not."""
    old, new = normalise(request, recorded), normalise(request, answered)
    out = []
    if old["status"] != new["status"]:
        out.append(f"status: {old['status']} became {new['status']}")
    for name, value in old["headers"].items():
        now = header(new["headers"], name)
        if now != value:
            out.append(f"header {name}: {value!r} became {now!r}")
    if "text" in old or "text" in new:
        if old.get("text") != new.get("text") or old.get("body") != new.get("body"):
            out.append(f"body: {old.get('text', old.get('body'))!r:.100} became {new.get('text', new.get('body'))!r:.100}")
    else:
        out.extend("body" + d for d in json_differences(old["body"], new["body"]))
    return out


@pytest.fixture(scope="module")
def clients() -> dict[str, FlaskClient]:
    """A client of today's app per recorded mode, under the recorded settings."""
    return {mode: make_app(environ).test_client() for mode, environ in CORPUS["modes"].items()}


@pytest.mark.parametrize("pair", PAIRS, ids=[p["name"] for p in PAIRS])
def test_v1_answers_as_recorded(clients: dict[str, FlaskClient], pair: dict[str, Any]) -> None:
    answered = send(clients[pair["mode"]], pair["request"])
    found = differences(pair["request"], pair["answer"], answered)
    assert not found, f"{pair['name']}: {pair['request']['method']} {pair['request']['path']}\n" + "\n".join(found)


def test_the_corpus_covers_every_v1_operation_and_mode() -> None:
    """A re-recording that lost an operation, a mode or the refusals would guard less."""
    answered = set()
    for pair in PAIRS:
        request = pair["request"]
        rest = request["path"].removeprefix("/v1/games").strip("/").split("/")
        operation = rest[-1] if len(rest) == 2 else ("{game}" if rest[0] else "")
        if pair["answer"]["status"] == 200 and pair["mode"] == "open":
            answered.add((request["method"], operation))
    assert answered == V1_OPERATIONS
    assert {p["mode"] for p in PAIRS} == {"open", "signed"}
    assert {400, 403, 404, 405, 409, 415, 422} <= {p["answer"]["status"] for p in PAIRS}
    assert len(PAIRS_BY_NAME) == len(PAIRS)


# --- the comparison fails on a changed answer ---------------------------------------------

Mutation = Callable[[dict[str, Any]], None]


def change_a_value(answer: dict[str, Any]) -> None:
    answer["body"]["status"] = "won"


def change_a_type(answer: dict[str, Any]) -> None:
    answer["body"]["state"]["deal"] = int(answer["body"]["state"]["deal"])


def add_a_field(answer: dict[str, Any]) -> None:
    answer["body"]["state"]["autoplay"] = "none"


def remove_a_field(answer: dict[str, Any]) -> None:
    del answer["body"]["legal_moves"]


def drop_a_list_item(answer: dict[str, Any]) -> None:
    answer["body"]["legal_moves"].pop()


def change_the_status(answer: dict[str, Any]) -> None:
    answer["status"] = 201


def change_the_content_type(answer: dict[str, Any]) -> None:
    answer["headers"]["Content-Type"] = "application/problem+json"


def record_a_header_not_answered(answer: dict[str, Any]) -> None:
    answer["headers"]["Cache-Control"] = "no-store"


def change_a_header(answer: dict[str, Any]) -> None:
    answer["headers"]["Access-Control-Allow-Origin"] = "https://example.org"


MUTATIONS = [change_a_value, change_a_type, add_a_field, remove_a_field, drop_a_list_item, change_the_status,
             change_the_content_type, record_a_header_not_answered, change_a_header]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.__name__)
def test_a_changed_answer_is_reported(clients: dict[str, FlaskClient], mutation: Mutation) -> None:
    """The replay of a pair whose recorded answer was changed (in a copy) fails: today's
    app answers as recorded, so the change is what is reported."""
    pair = copy.deepcopy(PAIRS_BY_NAME["deal/penguin/int"])
    answered = send(clients["open"], pair["request"])
    assert differences(pair["request"], pair["answer"], answered) == []
    mutation(pair["answer"])
    assert differences(pair["request"], pair["answer"], answered) != []


def test_only_the_listed_fields_are_normalised(clients: dict[str, FlaskClient]) -> None:
    """Timings and a server-made request id may differ; their form, their equality to each
    other, and every other search figure may not."""
    hint = copy.deepcopy(PAIRS_BY_NAME["hint/penguin/full"])
    answered = send(clients["open"], hint["request"])
    assert differences(hint["request"], hint["answer"], answered) == []
    hint["answer"]["body"]["stats"]["seconds"] = 12.5
    hint["answer"]["body"]["stats"]["states_per_second"] = 1
    reason = hint["answer"]["body"]["reason"]
    assert HINT_TIMING.search(reason)
    hint["answer"]["body"]["reason"] = HINT_TIMING.sub(r"\1 9.99 s", reason)
    assert differences(hint["request"], hint["answer"], answered) == []
    for changed_reason in (HINT_TIMING.sub(r"\1 9.999 s", reason), reason.replace("104 move(s)", "105 move(s)")):
        hint["answer"]["body"]["reason"] = changed_reason
        assert differences(hint["request"], hint["answer"], answered) != [], changed_reason
    for field, value in (("seconds", "fast"), ("states", 1), ("max_states", 1), ("stopped_by", "time")):
        changed = copy.deepcopy(hint["answer"])
        changed["body"]["stats"][field] = value
        assert differences(hint["request"], changed, answered) != [], field

    refusal = copy.deepcopy(PAIRS_BY_NAME["get-game/unknown-404"])
    answered = send(clients["open"], refusal["request"])
    assert answered["body"]["request_id"] != refusal["answer"]["body"]["request_id"]  # made anew each time
    assert differences(refusal["request"], refusal["answer"], answered) == []
    answered["body"]["request_id"] = "not-the-header"
    assert differences(refusal["request"], refusal["answer"], answered) != []

    echoed = PAIRS_BY_NAME["get-game/unknown-404-with-request-id"]
    answered = send(clients["open"], echoed["request"])
    assert differences(echoed["request"], echoed["answer"], answered) == []
    assert differences(echoed["request"], {**echoed["answer"], "headers": {**echoed["answer"]["headers"], "X-Request-ID": "other"}}, answered) != []
