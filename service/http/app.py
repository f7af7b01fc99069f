"""The application factory: one place that wires config, errors and blueprints."""

from __future__ import annotations

from flask import Flask

from .config import Config
from .games_api import GameIdConverter, game_id_schema
from .games_api import blp as games_blp
from .observability import init_observability
from .ops import blp as ops_blp
from .problems import ProblemApi
from .solver_api import blp as solver_blp
from .web import blp as web_blp


def create_app(config: object | None = None) -> Flask:
    """Build the WSGI app. ``config`` is a config object (default: :class:`Config`)."""
    app = Flask("service")
    app.config.from_object(config if config is not None else Config())
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.url_map.converters["game"] = GameIdConverter
    api = ProblemApi(app)
    api.register_converter(GameIdConverter, game_id_schema)
    api.register_blueprint(games_blp)
    api.register_blueprint(solver_blp)
    app.register_blueprint(ops_blp)
    app.register_blueprint(web_blp)
    init_observability(app)
    app.extensions["api"] = api
    return app
