"""The HTTP layer: translates JSON to engine calls and back. No rules live here."""

from .app import create_app

__all__ = ["create_app"]
