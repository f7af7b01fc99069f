"""The application factory: one place that wires config, errors and blueprints."""

from __future__ import annotations

from flask import Flask

from .config import Config
from .games_api import blp as games_blp
from .problems import ProblemApi


def create_app(config: object | None = None) -> Flask:
    """Build the WSGI app. ``config`` is a config object (default: :class:`Config`)."""
    app = Flask("service")
    app.config.from_object(config if config is not None else Config())
    app.json.sort_keys = False  # type: ignore[attr-defined]
    api = ProblemApi(app)
    api.register_blueprint(games_blp)
    app.extensions["api"] = api
    return app
