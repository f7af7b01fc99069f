"""Operational endpoints: liveness, readiness, metrics (issue 4 fills this in)."""

from __future__ import annotations

from flask import Blueprint

blp = Blueprint("ops", __name__)
