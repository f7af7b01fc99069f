"""The compiled Penguin-family search (_penguin_native.c) is the Python plug-in's search,
move for move: on deals of every preset, on random end games of other option mixes, and
at every way a pass can stop, both visit the same number of positions and answer the
same outcome, reason and moves. The Python search (``native=False``) is the reference.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import pytest

from service.engine.core import Move, State
from service.engine.penguin import PenguinFamily
from service.engine.registry import get_game
from service.solver import Limits
from service.solver import search as search_module
from service.solver.plugins import penguin as penguin_module
from service.solver.plugins.penguin import PenguinStrategy
from service.solver.search import (
    Outcome,
    SearchOverrun,
    SolveResult,
    StopReason,
    best_first,
    depth_first,
    verify,
    wall_clock_cap,
)
from tests.solver.test_soundness import FAMILY, random_penguin_position

Pass = Callable[[PenguinStrategy, Limits], SolveResult]


def run_depth_first(strategy: PenguinStrategy, limits: Limits) -> SolveResult:
    first, root = strategy.auto(strategy.start())
    return depth_first(strategy, limits, first, root, time.monotonic())


def run_best_first(strategy: PenguinStrategy, limits: Limits) -> SolveResult:
    first, root = strategy.auto(strategy.start())
    return best_first(strategy, limits, first, root, time.monotonic())


def both(
    game: PenguinFamily, state: State, run: Pass, limits: Limits, tune: Callable[[PenguinStrategy], None] | None = None
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """What the Python and the compiled search answer from ``state``: (outcome, reason,
    positions, moves) each; ``tune`` adjusts both strategies alike first."""
    answers = []
    for native in (False, True):
        strategy = PenguinStrategy(game, state, native=native)
        assert (strategy.native is not None) == native
        if tune is not None:
            tune(strategy)
        r = run(strategy, limits)
        answers.append((r.result, r.stopped_by, r.states, [tuple(m) for m in r.moves]))
    return answers[0], answers[1]


def assert_same(game: PenguinFamily, state: State, run: Pass, limits: Limits, **kw: Any) -> tuple[Any, ...]:
    python, compiled = both(game, state, run, limits, **kw)
    assert compiled == python, (game.id, game.options, state.deal)
    if python[0] is Outcome.SOLVED:
        assert verify(game, state, [Move(*m) for m in compiled[3]])
    return python


PLENTY = Limits(600, 20_000)


@pytest.mark.parametrize("game_id", FAMILY)
def test_depth_first_is_the_python_search_on_deals(game_id: str) -> None:
    game = get_game(game_id)
    outcomes = {assert_same(game, game.initial_state(deal), run_depth_first, PLENTY)[0] for deal in range(1, 31)}
    assert Outcome.SOLVED in outcomes


@pytest.mark.parametrize("game_id", ["penguin-ii", "opus", "pelican"])
def test_best_first_is_the_python_search_on_deals(game_id: str) -> None:
    game = get_game(game_id)
    for deal in range(1, 21):
        assert_same(game, game.initial_state(deal), run_best_first, PLENTY)


@pytest.mark.slow
@pytest.mark.parametrize("game_id", FAMILY)
def test_both_passes_are_the_python_search_on_more_deals(game_id: str) -> None:
    game = get_game(game_id)
    for deal in range(31, 151):
        assert_same(game, game.initial_state(deal), run_depth_first, PLENTY)
        assert_same(game, game.initial_state(deal), run_best_first, Limits(600, 5_000))


def test_opus_proves_the_same_deals_unsolvable() -> None:
    """Opus deals 1, 4 and 5 are lost: both searches exhaust the same positions."""
    game = get_game("opus")
    for deal in (1, 4, 5):
        assert assert_same(game, game.initial_state(deal), run_depth_first, Limits(600, 10**6))[0] is Outcome.UNSOLVABLE


@pytest.mark.parametrize("runs", ["whole", "single", "free-cell-limit"])
@pytest.mark.parametrize("empty_pile", ["any", "below-base"])
def test_random_end_games_of_every_option_mix(runs: str, empty_pile: str) -> None:
    """Option mixes no preset has (cells 0-4, each run rule, each empty-pile rule)."""
    rng = random.Random(f"{runs}/{empty_pile}")
    seen = set()
    for _ in range(60):
        cells = rng.randint(0, 4)
        base, state = random_penguin_position("pelican", rng, cells, lowest=rng.randint(2, 8))
        game = get_game("pelican", {"cells": cells, "runs": runs, "empty_pile": empty_pile})
        assert isinstance(game, PenguinFamily) and base is not None
        if game.validate(state):  # type: ignore[attr-defined]
            continue
        seen.add(assert_same(game, state, run_depth_first, Limits(600, 3_000))[0])
        assert_same(game, state, run_best_first, Limits(600, 3_000))
    assert Outcome.SOLVED in seen


def test_a_pass_stopped_by_the_state_limit() -> None:
    game = get_game("opus")
    state = game.initial_state(1)  # lost, after thousands of positions
    for run in (run_depth_first, run_best_first):
        python = assert_same(game, state, run, Limits(600, 500))
        assert python[:3] == (Outcome.UNKNOWN, StopReason.STATES, 500)


def test_a_pass_at_its_safety_cap_raises_in_either_form() -> None:
    """A safety cap already past: each pass, Python or compiled, looks at the clock every
    128 children and raises SearchOverrun (never an answer cut by the clock); without a
    cap, the budget's positions alone stop it."""
    game = get_game("opus")
    state = game.initial_state(1)  # lost, after thousands of positions
    for run in (run_depth_first, run_best_first):
        for native in (False, True):
            strategy = PenguinStrategy(game, state, native=native)
            with wall_clock_cap(-1.0), pytest.raises(SearchOverrun):
                run(strategy, Limits(600, 10**6))
        assert assert_same(game, state, run, Limits(0, 10**6))[0] is Outcome.UNSOLVABLE  # 0 s: only the positions count


def test_a_depth_bound_cuts_lines_alike() -> None:
    """A tight depth bound cuts lines (and forgets their positions) in both; the
    unbounded pass that follows then finds the same solution."""
    game = get_game("penguin-ii")
    for deal in range(1, 11):

        def shallow(strategy: PenguinStrategy) -> None:
            strategy.max_depth = 8

        assert_same(game, game.initial_state(deal), run_depth_first, PLENTY, tune=shallow)


def test_a_long_line_is_shortened_alike() -> None:
    """A solution through more than ``long_path`` positions comes back with its positions,
    and the Python shortening makes the same line of both."""
    game = get_game("penguin-ii")
    shortened = 0
    for deal in range(1, 11):

        def short(strategy: PenguinStrategy) -> None:
            strategy.long_path = 3

        python = assert_same(game, game.initial_state(deal), run_depth_first, PLENTY, tune=short)
        plain = assert_same(game, game.initial_state(deal), run_depth_first, PLENTY)
        shortened += len(python[3]) < len(plain[3])
    assert shortened


def test_best_first_drops_open_positions_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_OPEN_NODES open positions both keep the same best half, and neither
    claims a loss after dropping any."""
    monkeypatch.setattr(search_module, "MAX_OPEN_NODES", 40)
    game = get_game("opus")
    python = assert_same(game, game.initial_state(1), run_best_first, Limits(600, 10**6))
    assert python[:2] == (Outcome.UNKNOWN, StopReason.MEMORY)


def test_the_plug_in_falls_back_to_python_without_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    game = get_game("penguin")
    monkeypatch.setattr(penguin_module, "_penguin_native", None)
    assert PenguinStrategy(game, game.initial_state(1)).native is None


def test_the_compiled_search_refuses_what_is_not_a_position() -> None:
    game = get_game("penguin")
    assert isinstance(game, PenguinFamily)
    strategy = PenguinStrategy(game, game.initial_state(1))
    assert strategy.native is not None
    root = strategy.start()
    whole_deck_home = (b"".join(root), *([b""] * (len(root) - 1)))  # a foundation of 52 cards
    for bad in (root[:-1], (*root[:-1], root[-1] + root[-1][:1]), (*root[:-1], b"\x00"), whole_deck_home):
        with pytest.raises(ValueError, match="root"):
            strategy.native.depth_first(bad, time.monotonic() + 1, 10, 0, 150)
    with pytest.raises(ValueError, match="layout"):
        penguin_module._penguin_native.Searcher(  # type: ignore[union-attr]
            layout=(0, 4, 30, 26), rel=b"\0" * 64, up=b"\0" * 64, down=b"\0" * 64, empty_takes=b"\0" * 64,
            base_cards=b"\1\2\3\4", run_limits=[], runs=0, any_empty=False, move_action=0,
        )
