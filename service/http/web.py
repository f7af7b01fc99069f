"""The reference web client (/play) and API docs (/docs) (issue 5 fills this in)."""

from __future__ import annotations

from flask import Blueprint

blp = Blueprint("web", __name__)
