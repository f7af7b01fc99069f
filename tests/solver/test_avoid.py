"""Hints that avoid moves (service/solver/answers.py's ``solve_avoiding``, the hint
request's ``avoid``): the answer is never an avoided move, an empty ``avoid`` changes
nothing, the avoiding search keeps to its budget, and a player-knowledge hint that
avoids still depends on the visible position only."""

from __future__ import annotations

import pytest

from service.engine.registry import GAME_CLASSES, get_game
from service.solver import Limits, Outcome, hint, player_hint, solve_position
from service.solver.answers import solve_avoiding
from service.solver.autoplay import run_autoplay
from service.solver.plugins import pace_of
from service.solver.search import StopReason, budget_of, verify

from .test_sampling import HIDDEN_GAMES, LIMITS, SAMPLES, hidden_reordered, positions

HINT_LIMITS = Limits(1.0, 200_000)


@pytest.mark.parametrize("game_id", sorted(GAME_CLASSES))
def test_a_hint_never_answers_an_avoided_move(game_id: str) -> None:
    game = get_game(game_id)
    state = run_autoplay(game, game.deal_state(3))[0]
    first = hint(game, state, HINT_LIMITS)
    assert first.move is not None
    avoid = frozenset({first.move})
    again = hint(game, state, HINT_LIMITS, avoid=avoid)
    assert again.move is not None and again.move not in avoid and game.is_legal(state, again.move)
    if again.winnable:
        assert again.search.moves[0] == again.move and verify(game, state, again.search.moves)
        assert "avoids the 1 move(s) asked" in again.reason


@pytest.mark.parametrize("game_id", ["penguin", "amazons", "boomerang"])
def test_an_empty_avoid_is_the_plain_search(game_id: str) -> None:
    game = get_game(game_id)
    state = game.deal_state(5)
    plain, avoiding = solve_position(game, state, HINT_LIMITS), solve_avoiding(game, state, HINT_LIMITS, frozenset())
    assert (plain.result, plain.moves, plain.states) == (avoiding.result, avoiding.moves, avoiding.states)
    assert hint(game, state, HINT_LIMITS, avoid=frozenset()).reason == hint(game, state, HINT_LIMITS).reason


@pytest.mark.parametrize("game_id", ["penguin", "forty-thieves", "binary-star"])
def test_an_avoiding_search_keeps_to_its_budget(game_id: str) -> None:
    game = get_game(game_id)
    state = game.deal_state(7)
    avoid = frozenset(game.legal_moves(state)[:1])
    for limits in (Limits(1.0, 50), Limits(0.01, 1_000_000)):
        found = solve_avoiding(game, state, limits, avoid)
        budget, _ = budget_of(limits, pace_of(game))
        # each position after a move gets what the earlier ones left; a plug-in whose own
        # search has a floor (Binary Star's) overruns a tiny budget as a plain search does
        floor = solve_position(game, state, limits).states
        assert found.states <= max(budget, floor) + len(game.legal_moves(state))
        if found.result is Outcome.UNKNOWN:
            assert found.stopped_by in (StopReason.TIME, StopReason.STATES)


def test_an_avoiding_search_proves_only_the_other_moves_lost() -> None:
    """Binary Star deal 12 is won, but some of its first moves lose: a search that
    avoids every other move answers unsolvable, and the hint then plays the losing move
    with ``winnable`` unknown (the avoided moves may still win), not false."""
    game = get_game("binary-star")
    state = game.deal_state(12)
    assert solve_position(game, state, HINT_LIMITS).result is Outcome.SOLVED
    legal = game.legal_moves(state)
    lost = [m for m in legal if solve_position(game, game.apply(state, m), HINT_LIMITS).result is Outcome.UNSOLVABLE]
    assert lost, "Binary Star deal 12 has a first move that loses"
    avoid = frozenset(m for m in legal if m != lost[0])
    assert solve_avoiding(game, state, HINT_LIMITS, avoid).result is Outcome.UNSOLVABLE
    given = hint(game, state, HINT_LIMITS, avoid=avoid)
    assert given.move == lost[0] and given.winnable is None and "no line that avoids" in given.reason


@pytest.mark.parametrize("game_id", HIDDEN_GAMES)
def test_a_player_hint_that_avoids_is_the_same_whatever_the_hidden_order(game_id: str) -> None:
    game = get_game(game_id)
    for state in positions(game_id)[:3]:
        first = player_hint(game, state, LIMITS, SAMPLES)
        if first.move is None:
            continue
        avoid = frozenset({first.move})
        if set(game.legal_moves(state)) <= avoid:
            continue
        given, other = (player_hint(game, s, LIMITS, SAMPLES, avoid=avoid) for s in (state, hidden_reordered(game, state)))
        assert given.move is not None and given.move not in avoid
        assert (given.move, given.reason, given.winnable, given.samples) == (other.move, other.reason, other.winnable, other.samples)
