"""The reference web client (/play) and the interactive API docs (/docs).

Both are static files: the client is plain HTML, CSS and JavaScript modules in
``webapp/`` that talk to the public v1 API like any third-party frontend (no rule lives
in it), and the docs page is Swagger UI, served from the ``swagger-ui-bundle`` package
so that no asset comes from a CDN. Served from this blueprint (not Flask's app-level
static folder) so the web client stays one removable piece.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, send_from_directory
from werkzeug.exceptions import NotFound

from .app_settings import current_settings

blp = Blueprint("web", __name__)

WEBAPP_DIR = Path(__file__).with_name("webapp")


def swagger_ui_dir() -> Path | None:
    """Swagger UI's assets, shipped by the ``swagger-ui-bundle`` package (None if absent)."""
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        return None
    return Path(str(swagger_ui_path))


def _static(directory: Path, filename: str) -> Response:
    """A file under ``directory`` (send_from_directory refuses paths that leave it: 404),
    cacheable for the settings' ``web.asset_max_age`` seconds."""
    response = send_from_directory(directory, filename, max_age=current_settings().web.asset_max_age)
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def _page(filename: str) -> Response:
    """A page, never cached, that may load only this host's files and talk only to it."""
    response = send_from_directory(WEBAPP_DIR, filename, max_age=0)
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
        "connect-src 'self'; frame-ancestors 'none'"
    )
    return response


@blp.get("/play")
def play() -> Response:
    """The reference web client: one page, every game, the public API only."""
    return _page("play.html")


@blp.get("/play/assets/<path:filename>")
def play_asset(filename: str) -> Response:
    """The client's CSS and JavaScript modules (and the docs page's small start script)."""
    return _static(WEBAPP_DIR, filename)


@blp.get("/docs")
def docs() -> Response:
    """Swagger UI over the service's own OpenAPI document."""
    return _page("docs.html")


@blp.get("/docs/assets/<path:filename>")
def docs_asset(filename: str) -> Response:
    """Swagger UI's own files, from the installed package."""
    directory = swagger_ui_dir()
    if directory is None:
        raise NotFound("Swagger UI's assets are not installed (the swagger-ui-bundle package)")
    return _static(directory, filename)
