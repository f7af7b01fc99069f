"""The application factory: one place that wires settings, errors and blueprints, and the
OpenAPI document's header and shared components."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

import flask
import orjson
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from flask import Flask
from flask.json.provider import DefaultJSONProvider
from flask_smorest.spec.plugins import FlaskPlugin
from werkzeug.routing import Rule
from werkzeug.sansio.response import Response

from service.settings import Settings, read_settings

from .app_settings import attach_settings
from .body import MAX_JSON_DEPTH, MAX_NUMBER_CHARS, init_body
from .contract_examples import EXAMPLE_GAME
from .games_api import GameIdConverter, game_id_schema
from .games_api import blp as games_blp
from .observability import (
    REQUEST_ID_ANSWER_DOC,
    REQUEST_ID_HEADER,
    REQUEST_ID_HEADER_COMPONENT,
    REQUEST_ID_REQUEST_DOC,
    init_observability,
)
from .ops import blp as ops_blp
from .problems import PROBLEM_COMPONENTS, ProblemApi
from .replays_api import blp as replays_blp
from .schemas import MOVE_BRANCHES, SCHEMA_COMPONENTS, branch_name, reference_component
from .solver_api import blp as solver_blp
from .solver_schemas import SOLVER_COMPONENTS
from .web import blp as web_blp

# Path parameters documented once, as a component each, by name.
PATH_PARAMETER_COMPONENTS: dict[str, str] = {"game_id": "GameId"}


class ContractMarshmallowPlugin(MarshmallowPlugin):
    """apispec's marshmallow plugin with the shared components registered before any
    schema is converted: the enums and unions of :data:`.schemas.SCHEMA_COMPONENTS` and its
    solver and problem twins, the move union's branches, the game id path parameter and
    the request id header; and fields naming a component documented as a reference to it
    (:func:`.schemas.reference_component`)."""

    def init_spec(self, spec: APISpec) -> None:
        super().init_spec(spec)
        assert self.converter is not None
        self.converter.add_attribute_function(reference_component)
        for name, schema in {**SCHEMA_COMPONENTS, **SOLVER_COMPONENTS, **PROBLEM_COMPONENTS}.items():
            spec.components.schema(name, schema)
        for branch in MOVE_BRANCHES.values():
            spec.components.schema(branch_name(branch), schema=branch)
        spec.components.parameter(
            "GameId", "path",
            {
                "name": "game_id", "required": True, "description": "The game's id.",
                "schema": {"$ref": "#/components/schemas/GameId"},
                "example": EXAMPLE_GAME,  # the examples' game: an example body goes to its own game's path
            },
        )
        spec.components.parameter(
            REQUEST_ID_HEADER_COMPONENT, "header", {"name": REQUEST_ID_HEADER, **REQUEST_ID_REQUEST_DOC}
        )
        spec.components.header(REQUEST_ID_HEADER_COMPONENT, REQUEST_ID_ANSWER_DOC)


class ContractFlaskPlugin(FlaskPlugin):
    """flask-smorest's Flask plugin, documenting each path parameter that has a component
    (:data:`PATH_PARAMETER_COMPONENTS`) as a reference to it, and the optional request id
    header on every path."""

    def path_helper(self, rule: Rule, operations: Any, parameters: list[Any], **kwargs: Any) -> str:
        path: str = super().path_helper(rule, operations, parameters, **kwargs)
        parameters[:] = [
            PATH_PARAMETER_COMPONENTS.get(p["name"], p) if isinstance(p, Mapping) and p.get("in") == "path" else p
            for p in parameters
        ]
        parameters.append(REQUEST_ID_HEADER_COMPONENT)
        return path

# Who answers for the API, and under which terms it may be used.
API_CONTACT: dict[str, str] = {"name": "Patience engine maintainers", "url": "http://localhost:8000/docs"}
API_LICENSE: dict[str, str] = {"name": "Proprietary (all rights reserved)", "url": "http://localhost:8000/docs"}

# flask-smorest's config keys: the OpenAPI document's header and where it is served.
OPENAPI_CONFIG: dict[str, Any] = {
    "API_TITLE": "Patience engine",
    "API_VERSION": "1.0.0",
    "OPENAPI_VERSION": "3.0.3",
    "OPENAPI_URL_PREFIX": "/",
    "OPENAPI_JSON_PATH": "openapi.json",
    "API_SPEC_OPTIONS": {
            "servers": [{"url": "/", "description": "The server that serves this document (`/openapi.json`)."}],
        "security": [],  # no authentication: every operation is open (README, "Security model")
        "info": {
            "contact": API_CONTACT,
            "license": API_LICENSE,
            "description": (
                "A stateless rules engine for patience (solitaire) games: deal, list legal "
                "moves, apply moves, validate states, replay a deal's moves. Every request carries the complete "
                "state; the service keeps nothing between requests. A replay (`POST /v1/games/{game}/replays`) "
                "plays the moves of a game again from its deal and answers a `result` that, when the server signs "
                "its states, is signed for a leaderboard to check offline.\n\n"
                "Errors are `application/problem+json` (RFC 9457) with a machine-readable "
                "`code`: 400 for a body that is not JSON or does not match the schema, "
                "422 for a well-formed body whose content the rules cannot accept (an "
                "inconsistent state, invalid options, an incomplete move), 404 for an "
                "unknown game, 409 for an illegal move (with the rule that forbids it, and for a replay the "
                "`move_index` of the move), "
                "403 when the server signs its states (`state_protection` of `GET /v1/games` is "
                "`signed` or `sealed`) and a state sent back is not one it signed (`state-unsigned`, "
                "`state-signature-malformed`, `state-key-unknown`, `state-signature-invalid`), or, in "
                "sealed mode, its sealed part does not open (`state-seal-invalid`) or a search asks "
                "for `\"knowledge\": \"full\"` (`full-knowledge-refused`), "
                "413 for a body over the size limit, 415 `unsupported-media-type` for a POST body that is not JSON "
                "(a `Content-Type` other than `application/json` or `application/*+json`; a deal may be asked for "
                "with no body at all), 415 `unsupported-content-encoding` for a "
                "`Content-Encoding` other than `identity` (bodies are taken only as they are). "
                f"Bodies are read strictly: JSON nested more than {MAX_JSON_DEPTH} deep (`json-too-deep`), "
                f"a number over {MAX_NUMBER_CHARS} characters (`number-too-long`) or a key twice in one object "
                "(`duplicate-key`) answers 400, as does a body the server cannot read whole "
                "(`unreadable-body`)."
            ),
        },
    },
}


class CompactJSONProvider(DefaultJSONProvider):
    """Flask's JSON provider, with keys in the order the answers build them, and compact
    answers (every answer out of debug mode) written by orjson, in C, with the text of
    Python's encoder (the same separators, ``default`` and ``ensure_ascii``).

    orjson writes the same bytes for everything an answer holds but non-ASCII text (raw
    UTF-8 where ``ensure_ascii`` escapes it; DEL too), NaN and infinities (``null`` where
    Python writes ``NaN``), floats in exponent form (``1e-7`` where Python writes
    ``1e-07``: the same number) and integers past 64 bits (which it refuses). An answer
    whose bytes show one of the first two (a byte past ``0x7e``, or a ``null``, which a
    NaN becomes), or that orjson refuses, is written again by Python's encoder, built once
    per setting rather than by ``json.dumps``, which builds one per call; only the check
    for circular containers is left out (an answer is built fresh from plain values).
    Dates and dataclasses go to ``default``, as Python's encoder sends them
    (tests/contract/test_moves_answers.py compares the two on every endpoint's answers)."""

    sort_keys = False
    # orjson leaves dates and dataclasses to ``default`` (Flask writes dates as HTTP dates).
    ORJSON_OPTIONS: Final = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS

    def __init__(self, app: Flask) -> None:
        super().__init__(app)
        self._encoder_settings: tuple[Any, bool, bool] | None = None
        self._encoder = json.JSONEncoder()

    def compact_encoder(self) -> json.JSONEncoder:
        """Python's encoder of compact answers under the provider's current settings."""
        settings = (self.default, self.ensure_ascii, self.sort_keys)
        if settings != self._encoder_settings:
            self._encoder = json.JSONEncoder(
                default=self.default, ensure_ascii=self.ensure_ascii, sort_keys=self.sort_keys,
                check_circular=False, separators=(",", ":"),
            )
            self._encoder_settings = settings
        return self._encoder

    def compact_text(self, obj: Any) -> bytes:
        """``obj`` as a compact answer writes it (without the final newline)."""
        if not self.sort_keys:
            try:
                text = orjson.dumps(obj, default=self.default, option=self.ORJSON_OPTIONS)
            except orjson.JSONEncodeError:
                pass  # an integer past 64 bits, a key that is not a string...: Python's encoder says it
            else:
                if b"null" not in text and not (self.ensure_ascii and (b"\x7f" in text or not text.isascii())):
                    return text
        return self.compact_encoder().encode(obj).encode()

    def response(self, *args: Any, **kwargs: Any) -> Response:
        if self.compact is False or (self.compact is None and self._app.debug):
            return super().response(*args, **kwargs)
        obj = self._prepare_response_obj(args, kwargs)
        response_class = cast("type[flask.Response]", self._app.response_class)  # typed as the sansio base
        return response_class(self.compact_text(obj) + b"\n", mimetype=self.mimetype)


class ServiceFlask(Flask):
    """Flask, remembering which functions :meth:`ensure_sync` found synchronous.

    Flask asks it of every hook and view on every request, and flask-smorest's decorators
    once more per layer (a view here has up to nine), each time inspecting the function
    anew; the answer for a function never changes. Async functions are not remembered
    (Flask wraps them anew, as it always did); nor is anything past
    :data:`MAX_SYNC_FUNCTIONS` (the app's functions are a fixed set, far fewer)."""

    MAX_SYNC_FUNCTIONS = 4096
    json_provider_class = CompactJSONProvider

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sync_functions: set[Callable[..., Any]] = set()

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        try:
            if func in self._sync_functions:
                return func
        except TypeError:  # unhashable: asked anew
            return super().ensure_sync(func)
        sync = super().ensure_sync(func)
        if sync is func and len(self._sync_functions) < self.MAX_SYNC_FUNCTIONS:
            self._sync_functions.add(func)
        return sync


def create_app(settings: Settings | None = None) -> Flask:
    """Build the WSGI app with ``settings`` (default: read from the environment)."""
    settings = settings if settings is not None else read_settings()
    app = ServiceFlask("service")
    attach_settings(app, settings)
    app.config.update(OPENAPI_CONFIG, MAX_CONTENT_LENGTH=settings.http.max_body_bytes)
    app.url_map.converters["game"] = GameIdConverter
    api = ProblemApi(
        app,
        answer_headers={REQUEST_ID_HEADER: REQUEST_ID_HEADER_COMPONENT},
        spec_kwargs={"marshmallow_plugin": ContractMarshmallowPlugin(), "flask_plugin": ContractFlaskPlugin()},
    )
    api.register_converter(GameIdConverter, game_id_schema)
    api.register_blueprint(games_blp)
    api.register_blueprint(solver_blp)
    api.register_blueprint(replays_blp)
    app.register_blueprint(ops_blp)
    app.register_blueprint(web_blp)
    init_observability(app)
    init_body(app)  # after the request id is given: body refusals carry it
    app.extensions["api"] = api
    return app
