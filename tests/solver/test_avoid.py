"""Hints that avoid moves (service/solver/answers.py's ``solve_avoiding``, the hint
request's ``avoid``): the answer is never an avoided move, an empty ``avoid`` changes
nothing, the avoiding search keeps to its budget, and a player-knowledge hint that
avoids still depends on the visible position only."""

from __future__ import annotations

import pytest

from service.engine.core import Action, Move
from service.engine.registry import GAME_CLASSES, get_game
from service.solver import Limits, Outcome, hint, player_hint, solve_position
from service.solver.answers import EveryMoveAvoided, avoided_here, solve_avoiding
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
def test_an_empty_avoid_and_moves_that_are_not_legal_are_the_plain_search(game_id: str) -> None:
    game = get_game(game_id)
    state = game.deal_state(5)
    plain, avoiding = solve_position(game, state, HINT_LIMITS), solve_avoiding(game, state, HINT_LIMITS, frozenset())
    assert (plain.result, plain.moves, plain.states) == (avoiding.result, avoiding.moves, avoiding.states)
    elsewhere = Move(Action.MOVE, 0, 0, 1)  # a pile onto itself: not legal here, so it changes nothing
    given = hint(game, state, HINT_LIMITS)
    for avoid in (frozenset(), frozenset({elsewhere})):
        other = hint(game, state, HINT_LIMITS, avoid=avoid)
        assert (other.move, other.winnable, other.search.states) == (given.move, given.winnable, given.search.states)
        assert "avoids" not in other.reason


@pytest.mark.parametrize("game_id", ["penguin", "amazons", "forty-thieves"])
def test_avoiding_every_legal_move_is_refused(game_id: str) -> None:
    game = get_game(game_id)
    state = game.deal_state(4)
    every = frozenset(game.legal_moves(state))
    never = Move(Action.MOVE, 0, 0, 1)  # a pile onto itself: legal nowhere
    assert avoided_here(game, state, frozenset({never})) == frozenset()
    for avoid in (every, every | {never}):
        with pytest.raises(EveryMoveAvoided):
            hint(game, state, HINT_LIMITS, avoid=avoid)
        with pytest.raises(EveryMoveAvoided):
            player_hint(game, state, LIMITS, SAMPLES, avoid=avoid)
    # one left out: that one is the hint
    last = game.legal_moves(state)[-1]
    assert hint(game, state, HINT_LIMITS, avoid=every - {last}).move == last


@pytest.mark.parametrize(("game_id", "limits", "binding"), [
    ("penguin", Limits(1.0, 50), StopReason.STATES), ("penguin", Limits(0.0001, 1_000_000), StopReason.TIME),
    ("forty-thieves", Limits(1.0, 50), StopReason.STATES), ("binary-star", Limits(1.0, 50), StopReason.STATES),
])
def test_an_avoiding_search_keeps_to_its_budget(game_id: str, limits: Limits, binding: StopReason) -> None:
    game = get_game(game_id)
    state = game.deal_state(7)
    avoid = frozenset(game.legal_moves(state)[:1])
    found = solve_avoiding(game, state, limits, avoid)
    budget, _ = budget_of(limits, pace_of(game))
    # each position after a move gets what the earlier ones left; a plug-in whose own
    # search has a floor (Binary Star's) overruns a tiny budget as a plain search does
    floor = solve_position(game, state, limits).states
    assert found.states <= max(budget, floor) + len(game.legal_moves(state))
    assert found.result is Outcome.UNKNOWN and found.stopped_by is binding


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
    checked = 0
    for state in positions(game_id)[:6]:
        first = player_hint(game, state, LIMITS, SAMPLES)
        if first.move is None or len(game.legal_moves(state)) < 2:
            continue
        avoid = frozenset({first.move})
        given, other = (player_hint(game, s, LIMITS, SAMPLES, avoid=avoid) for s in (state, hidden_reordered(game, state)))
        assert given.move is not None and given.move not in avoid
        assert (given.move, given.reason, given.winnable, given.samples) == (other.move, other.reason, other.winnable, other.samples)
        checked += 1
    assert checked, f"no position of {game_id} with two legal moves was checked"
