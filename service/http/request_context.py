"""The current request, its ``g`` and its app as the objects themselves, looked up once per
call.

``flask.request``, ``flask.g`` and ``flask.current_app`` are proxies: every attribute read or
write through them finds the current context again. The hooks every request goes through
(:mod:`.observability`, :mod:`.body`), the settings (:mod:`.app_settings`) and the answers
read several attributes of each, so they take the objects first and read them directly.
"""

from __future__ import annotations

from typing import Any

import flask


def current_request() -> flask.Request:
    """The request being handled (in a request context only)."""
    request: flask.Request = flask.request._get_current_object()  # type: ignore[attr-defined]
    return request


def current_app() -> flask.Flask:
    """The app handling the current request (in an app context only)."""
    app: flask.Flask = flask.current_app._get_current_object()  # type: ignore[attr-defined]
    return app


def current_g() -> Any:
    """The ``flask.g`` of the current app context (in an app context only)."""
    return flask.g._get_current_object()


def environ_key(header: str) -> str:
    """Where the WSGI environ keeps a request header (``X-Request-ID``: ``HTTP_X_REQUEST_ID``),
    as Werkzeug's ``request.headers`` reads it (not for ``Content-Type`` or ``Content-Length``)."""
    return "HTTP_" + header.upper().replace("-", "_")


def header_value(request: flask.Request, key: str) -> str | None:
    """The value of the request header kept at ``key`` (:func:`environ_key`) in the WSGI
    environ, as ``request.headers.get`` answers it, without building the header view."""
    wsgi_env = request.environ
    value: str | None = wsgi_env.get(key)
    return value
