"""Where the HTTP layer finds the app's settings: stored on the app by the factory.

Blueprints, hooks and views read the :class:`~service.settings.Settings` the app was
built with through :func:`current_settings` (or :func:`settings_of` outside a request),
never the environment, so an app built with other settings (the tests') behaves by them.
"""

from __future__ import annotations

import flask

from service.settings import Settings

from .request_context import current_app

EXTENSION_KEY = "patience.settings"


def attach_settings(app: flask.Flask, settings: Settings) -> None:
    """Make ``settings`` the settings of ``app`` (the app factory does this first)."""
    app.extensions[EXTENSION_KEY] = settings


def settings_of(app: flask.Flask) -> Settings:
    """The settings ``app`` was built with."""
    settings: Settings = app.extensions[EXTENSION_KEY]
    return settings


def current_settings() -> Settings:
    """The settings of the app handling the current request (the app itself taken from
    its proxy first: reading an attribute through ``flask.current_app`` costs several
    times more, and every request asks this a few times)."""
    return settings_of(current_app())
