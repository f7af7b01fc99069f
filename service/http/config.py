"""Configuration objects. Every setting comes from an environment variable (see README)."""

from __future__ import annotations

import os
from typing import Any


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise RuntimeError(f"environment variable {name} must be an integer, not {raw!r}") from None


class Config:
    """Production defaults, each overridable by the environment variable of the same name."""

    API_TITLE = "Patience engine"
    API_VERSION = "1.0.0"
    OPENAPI_VERSION = "3.0.3"
    OPENAPI_URL_PREFIX = "/"
    OPENAPI_JSON_PATH = "openapi.json"
    API_SPEC_OPTIONS: dict[str, Any] = {
        "info": {
            "description": (
                "A stateless rules engine for patience (solitaire) games: deal, list legal "
                "moves, apply moves, validate states. Every request carries the complete "
                "state; the service keeps nothing between requests.\n\n"
                "Errors are `application/problem+json` (RFC 9457) with a machine-readable "
                "`code`: 400 for a body that is not JSON or does not match the schema, "
                "422 for a well-formed body whose content the rules cannot accept (an "
                "inconsistent state, invalid options, an incomplete move), 404 for an "
                "unknown game, 409 for an illegal move (with the rule that forbids it), "
                "413 for a body over the size limit."
            ),
        },
    }
    JSON_SORT_KEYS = False

    def __init__(self) -> None:
        self.MAX_CONTENT_LENGTH = env_int("MAX_BODY_BYTES", 64 * 1024)


class ConfigForTests(Config):
    """Small solver budgets, so that no generated request can run a long search."""

    TESTING = True

    def __init__(self) -> None:
        super().__init__()
        from service.solver import SolverSettings

        self.SOLVER_SETTINGS = SolverSettings(
            max_seconds=2, max_states=200_000, hint_seconds=0.5, winnable_deal_seconds=1, winnable_deal_tries=3
        )
