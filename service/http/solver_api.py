"""Solve and hint endpoints (issue 3 fills this in)."""

from __future__ import annotations

from flask_smorest import Blueprint

blp = Blueprint("solver", __name__, url_prefix="/v1/games", description="Solve deals and ask for hints.")
