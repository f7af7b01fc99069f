"""The compiled Penguin search (``service.solver.plugins._penguin_native``) is built,
current and used wherever the tests run: ``make test`` builds it first (the Makefile's
``native`` target, setup.py), so a build that is missing, stale or made for another Python
fails here instead of the plug-in quietly searching in Python."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
from pathlib import Path

from service.engine.penguin import PenguinFamily
from service.engine.registry import get_game
from service.solver.plugins import strategy_for
from service.solver.plugins.forty_thieves import FortyThievesStrategy

NAME = "service.solver.plugins._penguin_native"
SOURCE = Path(__file__).resolve().parents[2] / "service" / "solver" / "plugins" / "_penguin_native.c"


def built_module() -> Path:
    spec = importlib.util.find_spec(NAME)
    assert spec is not None and spec.origin is not None, f"{NAME} is not built: run `make native`"
    return Path(spec.origin)


def test_the_compiled_search_is_built_next_to_its_source_for_this_python() -> None:
    built = built_module()
    assert built.parent == SOURCE.parent
    # The interpreter's own tagged suffix (.cpython-311-x86_64-linux-gnu.so on Linux),
    # not a bare .so another Python could load as well.
    assert built.name == "_penguin_native" + importlib.machinery.EXTENSION_SUFFIXES[0]


def test_the_compiled_search_imports() -> None:
    module = importlib.import_module(NAME)
    assert Path(module.__file__ or "") == built_module()


def test_the_build_is_not_older_than_its_source() -> None:
    assert built_module().stat().st_mtime >= SOURCE.stat().st_mtime, f"{SOURCE.name} changed: run `make native`"


def test_the_penguin_plug_in_searches_with_it() -> None:
    game = get_game("pelican")
    assert isinstance(game, PenguinFamily)
    assert strategy_for(game, game.initial_state(1)).native is not None


FORTY_THIEVES_NAME = "service.solver.plugins._forty_thieves_native"
FORTY_THIEVES_SOURCE = SOURCE.parent / "_forty_thieves_native.c"


def test_the_compiled_forty_thieves_parts_are_built_current_and_used() -> None:
    """Forty Thieves' compiled search parts (_forty_thieves_native.c), as the Penguin search above."""
    spec = importlib.util.find_spec(FORTY_THIEVES_NAME)
    assert spec is not None and spec.origin is not None, f"{FORTY_THIEVES_NAME} is not built: run `make native`"
    built = Path(spec.origin)
    assert built.parent == FORTY_THIEVES_SOURCE.parent
    assert built.name == "_forty_thieves_native" + importlib.machinery.EXTENSION_SUFFIXES[0]
    changed = f"{FORTY_THIEVES_SOURCE.name} changed: run `make native`"
    assert built.stat().st_mtime >= FORTY_THIEVES_SOURCE.stat().st_mtime, changed
    game = get_game("forty-thieves")
    strategy = strategy_for(game, game.initial_state(1))
    assert isinstance(strategy, FortyThievesStrategy) and strategy.compiled is not None
