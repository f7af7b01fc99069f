"""The compiled searches (``service.solver.plugins._penguin_native`` and
``_forty_thieves_native``) are built, current and used wherever the tests run: ``make
test`` builds them first (the Makefile's ``native`` target, setup.py), so a build that is
missing, stale or made for another Python fails here instead of a plug-in quietly
searching in Python."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
from pathlib import Path

import pytest

from service.engine.registry import get_game
from service.solver.plugins import strategy_for
from service.solver.plugins.forty_thieves import FortyThievesStrategy
from service.solver.plugins.penguin import PenguinStrategy

PLUGINS = Path(__file__).resolve().parents[2] / "service" / "solver" / "plugins"
SHARED_HEADER = PLUGINS / "_native_keyset.h"  # included by every module below
MODULES = ("_penguin_native", "_forty_thieves_native")


def built_module(module: str) -> Path:
    name = f"service.solver.plugins.{module}"
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, f"{name} is not built: run `make native`"
    return Path(spec.origin)


@pytest.mark.parametrize("module", MODULES)
def test_the_module_is_built_next_to_its_source_for_this_python(module: str) -> None:
    built = built_module(module)
    assert built.parent == PLUGINS
    # The interpreter's own tagged suffix (.cpython-311-x86_64-linux-gnu.so on Linux),
    # not a bare .so another Python could load as well.
    assert built.name == module + importlib.machinery.EXTENSION_SUFFIXES[0]


@pytest.mark.parametrize("module", MODULES)
def test_the_module_imports(module: str) -> None:
    imported = importlib.import_module(f"service.solver.plugins.{module}")
    assert Path(imported.__file__ or "") == built_module(module)


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("source", ["own", "shared header"])
def test_the_build_is_not_older_than_its_sources(module: str, source: str) -> None:
    path = PLUGINS / f"{module}.c" if source == "own" else SHARED_HEADER
    assert built_module(module).stat().st_mtime >= path.stat().st_mtime, f"{path.name} changed: run `make native`"


def test_the_penguin_plug_in_searches_with_it() -> None:
    game = get_game("pelican")
    strategy = strategy_for(game, game.initial_state(1))
    assert isinstance(strategy, PenguinStrategy) and strategy.native is not None


def test_the_forty_thieves_plug_in_searches_with_it() -> None:
    game = get_game("forty-thieves")
    strategy = strategy_for(game, game.initial_state(1))
    assert isinstance(strategy, FortyThievesStrategy) and strategy.compiled is not None
