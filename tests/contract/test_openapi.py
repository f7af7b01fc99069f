"""The committed openapi.yaml is exactly what the schemas generate (regenerate with
`make openapi`), and it is the contract generated clients need: shared components built
from the enums, a discriminated move union, request and answer states, examples that are
the service's own answers, a problem for every error, the request id, and links."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator

from service.engine.core import Action, EventKind, Status
from service.engine.registry import GAME_CLASSES
from service.http import create_app
from service.http.problems import ProblemCode
from service.http.schemas import Autoplay
from service.http.solver_schemas import ANSWERED_STOP_REASONS
from service.http.wire import ACTION_NAMES
from service.settings import StateProtection
from service.solver import Knowledge, Outcome, StopReason

ROOT = Path(__file__).resolve().parents[2]
METHODS = ("get", "post")


@cache
def spec() -> dict[str, Any]:
    document: dict[str, Any] = create_app().extensions["api"].spec.to_dict()
    return document


def operations() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in spec()["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def schemas() -> dict[str, Any]:
    found: dict[str, Any] = spec()["components"]["schemas"]
    return found


def test_openapi_yaml_matches_the_schemas() -> None:
    generated = create_app().extensions["api"].spec.to_dict()
    committed = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    assert committed == generated, "openapi.yaml drifted from the schemas: run `make openapi` and commit it"


def test_every_operation_documents_its_errors_as_problem_json() -> None:
    responses = spec()["components"]["responses"]
    for path, method, op in operations():
        assert op.get("operationId"), f"{method} {path} has no operationId"
        assert op.get("description"), f"{method} {path} has no description"
        assert op["responses"]["default"] == {"$ref": "#/components/responses/DEFAULT_ERROR"}, f"{method} {path}"
        for status, resp in op["responses"].items():
            if status == "default" or int(status) >= 400:
                ref = resp["$ref"].rsplit("/", 1)[-1]
                assert list(responses[ref]["content"]) == ["application/problem+json"]
                assert responses[ref]["content"]["application/problem+json"].get("example"), ref
                assert "X-Request-ID" in responses[ref]["headers"], ref
        if method == "post":
            assert {"400", "415"} <= set(op["responses"]), f"{method} {path} does not document 400 and 415"


def test_every_answer_documents_its_request_id_example_and_links() -> None:
    for path, method, op in operations():
        ok = op["responses"]["200"]
        assert ok["headers"]["X-Request-ID"] == {"$ref": "#/components/headers/RequestId"}, path
        assert ok["content"]["application/json"].get("example"), f"{method} {path}: no example answer"
        assert ok.get("links"), f"{method} {path}: no link to follow"
        if method == "post":
            assert op["requestBody"]["content"]["application/json"].get("example"), f"{path}: no example request"
    for item in spec()["paths"].values():
        assert {"$ref": "#/components/parameters/RequestId"} in item["parameters"]


def test_every_link_names_an_operation() -> None:
    ids = {op["operationId"] for _, _, op in operations()}
    for path, _, op in operations():
        for name, link in op["responses"]["200"].get("links", {}).items():
            assert link["operationId"] in ids, (path, name)


def test_the_document_names_its_servers_security_licence_and_contact() -> None:
    document = spec()
    assert document["servers"] and document["security"] == []
    assert document["info"]["license"]["name"] and document["info"]["contact"]


def test_shared_enums_are_built_from_the_enumerations_that_declare_them() -> None:
    components = schemas()
    assert components["GameId"]["enum"] == list(GAME_CLASSES)
    assert components["Status"]["enum"] == [s.value for s in Status]
    assert components["Action"]["enum"] == [ACTION_NAMES[a] for a in Action]
    assert [components[f"{k.value.capitalize()}Event"]["properties"]["type"]["enum"] for k in EventKind] == [[k.value] for k in EventKind]
    assert components["Knowledge"]["enum"] == [k.value for k in Knowledge]
    assert components["Autoplay"]["enum"] == [a.value for a in Autoplay]
    assert components["StateProtection"]["enum"] == [p.value for p in StateProtection]
    assert components["SolveResult"]["enum"] == [o.value for o in Outcome]
    assert components["ProblemCode"]["enum"] == [c.value for c in ProblemCode]
    assert set(components["StoppedBy"]["enum"]) == set(ANSWERED_STOP_REASONS) == set(StopReason) - {StopReason.DEPTH}


def test_a_game_id_is_one_type_wherever_it_appears() -> None:
    components = schemas()
    ref = {"$ref": "#/components/schemas/GameId"}
    assert components["Game"]["properties"]["id"] == ref
    assert components["ReplayResult"]["properties"]["game"] == ref
    assert components["State"]["properties"]["game"]["allOf"] == [ref]
    assert spec()["components"]["parameters"]["GameId"]["schema"] == ref
    for path, item in spec()["paths"].items():
        if "{game_id}" in path:
            assert {"$ref": "#/components/parameters/GameId"} in item["parameters"], path
            assert not [p for p in item["parameters"] if p.get("in") == "path"], path


def test_a_move_is_a_union_discriminated_by_its_action() -> None:
    components = schemas()
    move = components["Move"]
    branches = {"move": "CardMove", "deal": "DealMove", "redeal": "RedealMove"}
    assert move["discriminator"] == {
        "propertyName": "action",
        "mapping": {action: f"#/components/schemas/{name}" for action, name in branches.items()},
    }
    assert [b["$ref"].rsplit("/", 1)[-1] for b in move["oneOf"]] == list(branches.values())
    for action, name in branches.items():
        assert components[name]["properties"]["action"]["enum"] == [action]
        assert "action" in components[name]["required"]
    assert set(components["CardMove"]["required"]) == {"action", "from", "to", "count"}
    # A nullable reference: the move or null, and nothing else (no open object).
    hint_move = components["HintResponse"]["properties"]["move"]
    assert hint_move["oneOf"] == [{"$ref": "#/components/schemas/Move"}, {"type": "object", "nullable": True, "enum": [None]}]
    stopped_by = components["SolveStats"]["properties"]["stopped_by"]
    assert stopped_by["oneOf"] == [{"$ref": "#/components/schemas/StoppedBy"}, {"type": "string", "nullable": True, "enum": [None]}]


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def test_requests_and_answers_share_one_state() -> None:
    """One `State` both ways, so that every generated client sends an answer's state back
    as the same type, unconverted: its deal the shared `DealNumber` (answers write the
    string form), `options` and `counters` optional (answers always carry them)."""
    components = schemas()
    assert "StateInput" not in components
    state = components["State"]
    assert state["properties"]["deal"]["allOf"] == [ref("DealNumber")]
    assert [b["type"] for b in components["DealNumber"]["oneOf"]] == ["integer", "string"]
    assert components["DealNumber"]["oneOf"][0]["maximum"] == 2**53 - 1
    assert set(state["required"]) == {"format", "game", "deal", "piles"}
    for request in ("MoveRequest", "StateRequest", "SolveRequest", "HintRequest"):
        assert components[request]["properties"]["state"] == ref("State"), request
    for answer in ("DealResponse", "MoveResponse"):
        assert components[answer]["properties"]["state"] == ref("State"), answer
    assert components["ReplayResponse"]["properties"]["state"]["allOf"] == [ref("State")]
    for request in ("DealRequest", "ReplayRequest"):
        assert components[request]["properties"]["deal"]["allOf"] == [ref("DealNumber")], request


def test_requests_name_moves_and_states_by_bare_references() -> None:
    """A move or a state in a request is a bare `$ref`: a generator reads `allOf: [$ref]`
    beside a description as a type inheriting from a union, which openapi-typescript made
    `Omit<Move, "action">`, that is `{}` (any value type-checked as a move)."""
    components = schemas()
    assert components["MoveRequest"]["properties"]["move"] == ref("Move")
    assert components["ReplayRequest"]["properties"]["moves"]["items"] == ref("Move")

    def allof_unions(node: Any, where: str) -> Iterator[str]:
        if isinstance(node, dict):
            if node.get("allOf") in ([ref("Move")], [ref("Event")]):
                yield where
            for key, value in node.items():
                yield from allof_unions(value, f"{where}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from allof_unions(value, f"{where}/{i}")

    assert list(allof_unions(spec(), "")) == []


def test_an_event_is_a_union_discriminated_by_its_type() -> None:
    components = schemas()
    event = components["Event"]
    names = {k.value: f"{k.value.capitalize()}Event" for k in EventKind}
    assert event["discriminator"] == {"propertyName": "type", "mapping": {k: f"#/components/schemas/{n}" for k, n in names.items()}}
    assert event["oneOf"] == [ref(n) for n in names.values()]
    required = {name: set(components[name]["required"]) for name in names.values()}
    assert required == {
        "MoveEvent": {"type", "from", "to", "cards"},
        "AutoEvent": {"type", "from", "to", "cards", "note"},
        "AutoplayEvent": {"type", "from", "to", "cards"},
        "DealEvent": {"type", "from", "to", "cards"},
        "RedealEvent": {"type", "cards", "note"},
    }
    assert all(components[n]["additionalProperties"] is False for n in names.values())
    assert components["MoveResponse"]["properties"]["events"]["items"] == ref("Event")


def test_each_enumeration_and_union_is_written_once() -> None:
    """An enum of several values, or a `oneOf`, written out in two places is one shape
    that generators would make two types of: each is a component, named where it is used.
    A nullable reference (`oneOf` a component and null) is that component or nothing, a
    type no generator names."""
    seen: dict[str, list[str]] = {}

    def nullable_reference(node: dict[str, Any]) -> bool:
        branches = node.get("oneOf", [])
        return len(branches) == 2 and "$ref" in branches[0] and branches[1].get("enum") == [None]

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            for key in ("enum", "oneOf"):
                if key in node and not (key == "enum" and len(node[key]) < 2) and not nullable_reference(node):
                    seen.setdefault(yaml.safe_dump({key: node[key]}), []).append(where)
            for key, value in node.items():
                if key not in ("example", "examples", "discriminator"):
                    walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{where}/{i}")

    walk(spec(), "")
    assert {shape: places for shape, places in seen.items() if len(places) > 1} == {}


def test_no_default_keyword_and_no_string_bounds_on_objects() -> None:
    """A `default` makes generators require the field; the description says it instead."""

    def walk(node: Any, where: str) -> Iterator[str]:
        if isinstance(node, dict):
            if "default" in node and isinstance(node.get("type"), str):
                yield f"{where}: default"
            if node.get("type") == "object" and ("maxLength" in node or "minLength" in node):
                yield f"{where}: maxLength on an object"
            for key, value in node.items():
                if key not in ("example", "examples"):
                    yield from walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from walk(value, f"{where}/{i}")

    assert list(walk(spec(), "")) == []


def test_every_component_is_used_and_problems_are_open() -> None:
    document = spec()
    text = yaml.safe_dump({k: v for k, v in document.items()})
    for kind, named in document["components"].items():
        for name in named:
            assert f"#/components/{kind}/{name}" in text, f"unused component {kind}/{name}"
    problem = schemas()["Problem"]
    assert problem["additionalProperties"] is True
    assert problem["properties"]["code"]["allOf"] == [{"$ref": "#/components/schemas/ProblemCode"}]


# --- examples ----------------------------------------------------------------------------
def as_json_schema(node: Any) -> Any:
    """An OpenAPI 3.0 schema as JSON Schema: `nullable` as a null alternative, the
    keywords JSON Schema lacks dropped."""
    if isinstance(node, list):
        return [as_json_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: as_json_schema(v) for k, v in node.items() if k not in ("nullable", "discriminator", "example")}
    return {"anyOf": [out, {"type": "null"}]} if node.get("nullable") is True else out


def media_examples() -> Iterator[tuple[str, dict[str, Any], Any]]:
    """(where, schema, example) of every request body, answer and documented problem."""
    for path, method, op in operations():
        if "requestBody" in op:
            media = op["requestBody"]["content"]["application/json"]
            yield f"{method} {path} request", media["schema"], media["example"]
        media = op["responses"]["200"]["content"]["application/json"]
        yield f"{method} {path} 200", media["schema"], media["example"]
    for name, response in spec()["components"]["responses"].items():
        for media in response.get("content", {}).values():
            if "example" in media:
                yield name, media["schema"], media["example"]


@pytest.mark.parametrize("where,schema,example", list(media_examples()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_example_matches_its_schema(where: str, schema: dict[str, Any], example: Any) -> None:
    root = {**as_json_schema(schema), "components": as_json_schema(spec()["components"])}
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in Draft202012Validator(root).iter_errors(example)]
    assert errors == [], where


def example_of(operation_id: str) -> tuple[str, dict[str, Any] | None, dict[str, Any]]:
    """(path, request example, answer example) of an operation, the path for the example game."""
    for path, _, op in operations():
        if op["operationId"] == operation_id:
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("example")
            answer = op["responses"]["200"]["content"]["application/json"]["example"]
            return path.replace("{game_id}", "penguin"), copy.deepcopy(body), answer
    raise KeyError(operation_id)


@pytest.mark.parametrize("operation_id", ["deal_game", "play_move", "legal_moves", "validate_state", "replay_moves", "list_games", "get_game"])
def test_examples_are_what_the_service_answers(client: FlaskClient, operation_id: str) -> None:
    path, body, answer = example_of(operation_id)
    r = client.get(path) if body is None else client.post(path, json=body)
    assert r.status_code == 200 and r.json == answer


@pytest.mark.parametrize("operation_id,same", [("solve", ("result", "moves", "knowledge")), ("hint", ("move", "winnable", "knowledge"))])
def test_search_examples_are_what_the_solver_answers(client: FlaskClient, operation_id: str, same: tuple[str, ...]) -> None:
    """The figures that depend on the clock and the server's limits aside."""
    path, body, answer = example_of(operation_id)
    r = client.post(path, json=body)
    assert r.status_code == 200 and {k: r.json[k] for k in same} == {k: answer[k] for k in same}
    assert r.json["stats"]["states"] == answer["stats"]["states"]


def test_an_answers_state_is_a_requests_state() -> None:
    """The deal example's answered state validates as a request's state, unconverted."""
    _, _, answer = example_of("deal_game")
    root = {"$ref": "#/components/schemas/State", "components": as_json_schema(spec()["components"])}
    assert list(Draft202012Validator(root).iter_errors(answer["state"])) == []


def test_every_field_and_component_says_what_it_is() -> None:
    """Every property carries a description, or is a bare reference to a component that
    does; every enumeration's description names each of its values (but the game ids,
    which `GET /v1/games` describes)."""
    components = schemas()
    missing = []
    for name, schema in components.items():
        for field, prop in schema.get("properties", {}).items():
            target = components.get(prop.get("$ref", "").rsplit("/", 1)[-1], {})
            if not (prop.get("description") or target.get("description") or target.get("properties")):
                missing.append(f"{name}.{field}")
        if "enum" in schema and len(schema["enum"]) > 1 and name != "GameId":
            unnamed = [v for v in schema["enum"] if f"`{v}`" not in schema.get("description", "")]
            assert unnamed == [], f"{name}'s description leaves out {unnamed}"
    assert missing == []
