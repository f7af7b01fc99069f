"""Request ids, JSON logs, metrics and CORS (issue 4 fills this in)."""

from __future__ import annotations

from flask import Flask


def init_observability(app: Flask) -> None:
    """Hook request ids, logging, metrics and CORS into ``app``."""
