"""The application factory: one place that wires settings, errors and blueprints."""

from __future__ import annotations

from typing import Any

from flask import Flask

from service.settings import Settings, read_settings

from .app_settings import attach_settings
from .body import MAX_JSON_DEPTH, MAX_NUMBER_CHARS, init_body
from .games_api import GameIdConverter, game_id_schema
from .games_api import blp as games_blp
from .observability import init_observability
from .ops import blp as ops_blp
from .problems import ProblemApi
from .replays_api import blp as replays_blp
from .solver_api import blp as solver_blp
from .web import blp as web_blp

# flask-smorest's config keys: the OpenAPI document's header and where it is served.
OPENAPI_CONFIG: dict[str, Any] = {
    "API_TITLE": "Patience engine",
    "API_VERSION": "1.0.0",
    "OPENAPI_VERSION": "3.0.3",
    "OPENAPI_URL_PREFIX": "/",
    "OPENAPI_JSON_PATH": "openapi.json",
    "API_SPEC_OPTIONS": {
        "info": {
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
                "413 for a body over the size limit, 415 `unsupported-content-encoding` for a "
                "`Content-Encoding` other than `identity` (bodies are taken only as they are). "
                f"Bodies are read strictly: JSON nested more than {MAX_JSON_DEPTH} deep (`json-too-deep`), "
                f"a number over {MAX_NUMBER_CHARS} characters (`number-too-long`) or a key twice in one object "
                "(`duplicate-key`) answers 400, as does a body the server cannot read whole "
                "(`unreadable-body`)."
            ),
        },
    },
}


def create_app(settings: Settings | None = None) -> Flask:
    """Build the WSGI app with ``settings`` (default: read from the environment)."""
    settings = settings if settings is not None else read_settings()
    app = Flask("service")
    attach_settings(app, settings)
    app.config.update(OPENAPI_CONFIG, MAX_CONTENT_LENGTH=settings.http.max_body_bytes)
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.url_map.converters["game"] = GameIdConverter
    api = ProblemApi(app)
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
