"""Property tests: random playouts of every game through the engine.

Each example is a deal number and a seed for the random choice of moves; the playout
checks at every step that cards are conserved, the state validates, every legal move
applies, made-up illegal moves are refused with a reason, the state round-trips
through JSON, and won/lost are right. ``PROPERTY_EXAMPLES`` (default 1000) sets how
many playouts each game gets in the full run, which is marked slow; the quick loop
(``make test-quick``) plays ``QUICK_EXAMPLES`` playouts of every game instead.
"""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine.core import MAX_DEAL, Action, Game, Move, State, Status
from service.engine.penguin import PRESETS
from service.engine.registry import GAME_CLASSES, get_game
from service.http.wire import move_from_json, move_to_json, state_from_json, state_to_json

EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "1000"))
QUICK_EXAMPLES = 25
MAX_STEPS = 80

deals = st.one_of(st.integers(0, 31999), st.integers(32000, MAX_DEAL))


def made_up_moves(game: Game, state: State, rng: random.Random, legal: set[Move]) -> list[Move]:
    """Plausible moves that are not in the legal list: wrong targets, wrong counts."""
    n = len(state.piles)
    out = [Move(Action.DEAL), Move(Action.REDEAL)]
    for _ in range(6):
        src, dst = rng.randrange(n), rng.randrange(n)
        count = rng.choice((1, 1, 2, 3, len(state.piles[src]) or 1))
        out.append(Move(Action.MOVE, src, dst, count))
    return [m for m in out if m not in legal]


def check_playout(game: Game, deal: int, seed: int) -> None:
    rng = random.Random(seed)
    deck = Counter(game.deck())
    state = game.initial_state(deal)
    assert game.initial_state(deal) == state, "the same deal number gives the same deal"
    for _ in range(MAX_STEPS):
        state_cards = [c for p in state.piles for c in p]
        assert Counter(state_cards) == deck, "cards are conserved"
        assert game.validate(state) == [], "a reachable state validates"
        data = state_to_json(game, state)
        assert state_from_json(data) == (game, state), "states round-trip through JSON"
        moves = game.legal_moves(state)
        assert len(set(moves)) == len(moves), "each legal move is listed once"
        status = game.status(state, moves)
        if game.is_won(state):
            assert status == Status.WON
            break
        if not moves:
            assert status == Status.LOST
            break
        if status == Status.LOST:  # Binary Star: lost while star-to-star moves remain
            assert game.id == "binary-star"
        legal = set(moves)
        total = len(state_cards)
        for m in moves:
            after = game.apply(state, m)
            assert sum(map(len, after.piles)) == total, f"{m} loses or makes cards"
            assert move_from_json(game, move_to_json(game, m)) == m
        for m in rng.sample(moves, min(3, len(moves))):
            assert game.check_move(state, m, moves) is None, f"{m} is listed but refused"
            assert game.is_legal(state, m), f"{m} is listed but is_legal refuses it"
        for m in made_up_moves(game, state, rng, legal):
            assert not game.is_legal(state, m), f"{m} is not listed but is_legal accepts it"
            rejection = game.check_move(state, m, moves)
            assert rejection is not None and rejection.detail, f"{m} is not listed but accepted"
            assert rejection.rule != "not-allowed", f"{m} is refused without naming its rule"
        move = rng.choice(moves)
        fast = game.apply(state, move)
        state, events = game.play(state, move)
        assert fast == state, "apply (the solver's path) and play agree"
        assert events, "every move reports what happened"


@pytest.mark.parametrize(
    ("game_id", "examples"),
    [pytest.param(g, QUICK_EXAMPLES, id=f"{g}-quick") for g in GAME_CLASSES]
    + [pytest.param(g, EXAMPLES, id=g, marks=pytest.mark.slow) for g in GAME_CLASSES],
)
def test_random_playouts(game_id: str, examples: int) -> None:
    game = get_game(game_id)

    @settings(max_examples=examples, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(deal=deals, seed=st.integers(0, 2**32 - 1))
    def playout(deal: int, seed: int) -> None:
        check_playout(game, deal, seed)

    playout()


@pytest.mark.parametrize("game_id", [g.id for g in PRESETS])
def test_is_legal_agrees_with_legal_moves_on_every_move(game_id: str) -> None:
    """The solver checks solutions with ``is_legal``: on positions along random games,
    every (source, target, count) it could be asked about gets the answer of
    ``move in legal_moves``."""
    game = get_game(game_id)
    rng = random.Random(7)
    checked = 0
    for deal in range(1, 9):
        state = game.initial_state(deal)
        for _ in range(60):
            legal = set(game.legal_moves(state))
            if not legal:
                break
            n = len(state.piles)
            for src in range(n):
                for dst in range(n):
                    for count in range(0, len(state.piles[src]) + 2):
                        m = Move(Action.MOVE, src, dst, count)
                        assert game.is_legal(state, m) == (m in legal), m
                        checked += 1
            assert not game.is_legal(state, Move(Action.DEAL))
            state = game.apply(state, rng.choice(sorted(legal)))
    assert checked > 50_000
