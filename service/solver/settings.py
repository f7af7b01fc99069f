"""The solver's settings, each from an environment variable (see the README table).

- ``SOLVER_MAX_SECONDS``: most seconds one solve may run (default 10, never above 30,
  so a request always ends well inside gunicorn's timeout).
- ``SOLVER_MAX_STATES``: most distinct positions one solve may visit (default
  1,000,000): this caps the visited set, and so the memory of one search.
- ``HINT_SECONDS``: the budget of a hint's solve (default 1, capped like the above).
- ``WINNABLE_DEAL_SECONDS``: the solve budget per deal when a winnable deal is asked
  for (default 2); ``WINNABLE_DEAL_TRIES``: how many deals are tried (default 10).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

HARD_MAX_SECONDS = 30.0


def _number(name: str, default: float) -> float:
    """A positive number of seconds from the environment (``default`` when unset)."""
    raw = os.environ.get(name, "")
    if raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise RuntimeError(f"environment variable {name} must be a number, not {raw!r}") from None
    if not value > 0:
        raise RuntimeError(f"environment variable {name} must be positive, not {raw!r}")
    return value


def _count(name: str, default: int) -> int:
    """A whole number, at least 1, from the environment (``default`` when unset)."""
    raw = os.environ.get(name, "")
    if raw.strip() == "":
        return default
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError:
        raise RuntimeError(f"environment variable {name} must be a whole number, not {raw!r}") from None
    if value < 1:
        raise RuntimeError(f"environment variable {name} must be at least 1, not {raw!r}")
    return value


@dataclass(frozen=True)
class SolverSettings:
    max_seconds: float
    max_states: int
    hint_seconds: float
    winnable_deal_seconds: float
    winnable_deal_tries: int

    @classmethod
    def from_env(cls) -> SolverSettings:
        cap = min(_number("SOLVER_MAX_SECONDS", 10.0), HARD_MAX_SECONDS)
        return cls(
            max_seconds=cap,
            max_states=_count("SOLVER_MAX_STATES", 1_000_000),
            hint_seconds=min(_number("HINT_SECONDS", 1.0), cap),
            winnable_deal_seconds=min(_number("WINNABLE_DEAL_SECONDS", 2.0), cap),
            winnable_deal_tries=_count("WINNABLE_DEAL_TRIES", 10),
        )
