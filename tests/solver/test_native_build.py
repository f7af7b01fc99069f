"""The compiled modules (the searches ``service.solver.plugins._penguin_native`` and
``_forty_thieves_native``, the wire codec ``service.http._wire_native``, the Penguin family's
move lister ``service.engine._penguin_moves_native``) are built, current and used wherever
the tests run: ``make test`` builds them first (the Makefile's ``native``
target, setup.py), so a build that is missing, stale or made for another Python fails
here instead of a plug-in quietly searching in Python or the wire format quietly reading
every card in Python."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
from pathlib import Path

import pytest

from service.engine import core, penguin
from service.engine.registry import get_game
from service.http import wire
from service.solver.plugins import strategy_for
from service.solver.plugins.forty_thieves import FortyThievesStrategy
from service.solver.plugins.penguin import PenguinStrategy

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = ROOT / "service" / "solver" / "plugins"
SHARED_HEADER = PLUGINS / "_native_keyset.h"  # included by both searches
# Each compiled module by its dotted name, with the headers it includes besides Python's.
MODULES: dict[str, tuple[Path, ...]] = {
    "service.solver.plugins._penguin_native": (SHARED_HEADER,),
    "service.solver.plugins._forty_thieves_native": (SHARED_HEADER,),
    "service.http._wire_native": (),
    "service.engine._penguin_moves_native": (),
}


def source_of(module: str) -> Path:
    return ROOT.joinpath(*module.split(".")).with_suffix(".c")


def built_module(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, f"{module} is not built: run `make native`"
    return Path(spec.origin)


@pytest.mark.parametrize("module", MODULES)
def test_the_module_is_built_next_to_its_source_for_this_python(module: str) -> None:
    built = built_module(module)
    assert built.parent == source_of(module).parent
    # The interpreter's own tagged suffix (.cpython-311-x86_64-linux-gnu.so on Linux),
    # not a bare .so another Python could load as well.
    assert built.name == module.rpartition(".")[2] + importlib.machinery.EXTENSION_SUFFIXES[0]


@pytest.mark.parametrize("module", MODULES)
def test_the_module_imports(module: str) -> None:
    imported = importlib.import_module(module)
    assert Path(imported.__file__ or "") == built_module(module)


@pytest.mark.parametrize("module", MODULES)
def test_the_build_is_not_older_than_its_sources(module: str) -> None:
    for path in (source_of(module), *MODULES[module]):
        assert built_module(module).stat().st_mtime >= path.stat().st_mtime, f"{path.name} changed: run `make native`"


def test_the_penguin_plug_in_searches_with_it() -> None:
    game = get_game("pelican")
    strategy = strategy_for(game, game.initial_state(1))
    assert isinstance(strategy, PenguinStrategy) and strategy.native is not None


def test_the_forty_thieves_plug_in_searches_with_it() -> None:
    game = get_game("forty-thieves")
    strategy = strategy_for(game, game.initial_state(1))
    assert isinstance(strategy, FortyThievesStrategy) and strategy.compiled is not None


def test_the_wire_format_reads_and_writes_with_it() -> None:
    codec = wire.CODEC
    assert codec is not None
    assert wire.read_pile_group == codec.read_pile_group
    assert wire.pile_texts == codec.pile_texts
    assert wire.move_to_json == codec.move_to_json
    assert core._deck_check == codec.holds_the_deck  # the engine's deck check, given by the wire format


def test_the_penguin_rules_list_moves_with_it() -> None:
    assert penguin._penguin_moves_native is not None
    game = get_game("penguin")
    assert game._list_moves != game.python_legal_moves
