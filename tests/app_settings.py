"""The settings the tests build their apps with: the defaults, with small solver budgets
so that no generated request can run a long search."""

from __future__ import annotations

from service.settings import Settings, read_settings

SMALL_SOLVER_BUDGETS = {
    "SOLVER_MAX_SECONDS": "2",
    "SOLVER_MAX_STATES": "200000",
    "HINT_SECONDS": "0.5",
    "WINNABLE_DEAL_SECONDS": "1",
    "WINNABLE_DEAL_TRIES": "3",
}


def settings_for_tests(**environ: str) -> Settings:
    """The test settings, with ``environ`` (variable name -> text, as in the environment)
    on top; the process's own environment plays no part."""
    return read_settings({**SMALL_SOLVER_BUDGETS, **environ})
