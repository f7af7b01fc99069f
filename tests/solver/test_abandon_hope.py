"""The Abandon Hope plug-in's exact phase search agrees with the generic search (every
legal move, identical positions merged only) and with the engine's own redeals."""

from __future__ import annotations

import random
from collections.abc import Hashable

import pytest

from service.engine.abandon_hope import CLUB_CARDS, WASTE, deal_layout
from service.engine.core import REDEAL, Action, State
from service.engine.registry import get_game
from service.solver import Limits
from service.solver.plugins import strategy_for
from service.solver.plugins.abandon_hope import AbandonHopeStrategy, club_bit
from service.solver.search import Outcome, Strategy, solve, verify

GAME = get_game("abandon-hope", {})
CLUBS = sorted(CLUB_CARDS)  # the 13 Clubs, Ace first


def discard_some(state: State, rng: random.Random, k: int) -> State:
    """Discard up to ``k`` available Clubs, chosen at random."""
    for _ in range(k):
        moves = [m for m in GAME.legal_moves(state) if m.action == Action.MOVE]
        if not moves:
            break
        state = GAME.apply(state, rng.choice(moves))
    return state


def random_position(rng: random.Random, in_play: int) -> State:
    """A reachable-looking position: some Clubs already discarded before the last of
    ``r`` random-deck redeals, the rest dealt at random as the engine deals, then a few
    more discards; about ``in_play`` Clubs are left in the tableau and stock."""
    deal = rng.choice([rng.randint(1, 3199), rng.randint(3200, 10**9)])  # redeals: MS or MT generator
    r = rng.randint(0, 3)
    gone = rng.sample(CLUBS, 13 - in_play - rng.randint(0, 2)) if r else []
    cards = [c for c in GAME.deck() if c not in gone]
    rng.shuffle(cards)
    layout = deal_layout(cards)
    state = State((*layout, tuple(gone)), (r,), deal)
    if r == 0:  # an initial deal: discard down to about ``in_play`` Clubs
        return discard_some(state, rng, 13 - in_play)
    return discard_some(state, rng, rng.randint(0, 2))


def test_phase_redeals_match_the_engine() -> None:
    """The plug-in's gathered sequence and its next phase are the engine's redeal: a
    random discard set played through the engine, then a redeal, lays out exactly the
    piles the plug-in computes from the phase and the discard mask (the reshuffle hashes
    the gathered order, docs/rules.md "Determinism", so the order must match too)."""
    rng = random.Random(7)
    for _ in range(60):
        deal = rng.choice([rng.randint(1, 3199), rng.randint(3200, 10**12)])
        state = GAME.initial_state(deal)
        strategy = AbandonHopeStrategy(GAME, state)
        for n in range(1, 4):
            before = state
            state = discard_some(state, rng, rng.randint(0, 3))
            discarded = sum(club_bit(c) for c in state.piles[WASTE][len(before.piles[WASTE]) :])
            phase = tuple(before.piles[p] for p in strategy.in_play)
            gathered = strategy.gathered(phase, discarded)
            assert list(gathered) == [c for p in strategy.in_play for c in state.piles[p]]
            state = GAME.apply(state, REDEAL)
            assert strategy.redeal(gathered, n) == tuple(state.piles[p] for p in strategy.in_play), (deal, n)


@pytest.mark.slow
def test_pruning_agrees_with_generic_search() -> None:
    rng = random.Random("abandon-hope")
    verdicts = {Outcome.SOLVED: 0, Outcome.UNSOLVABLE: 0}
    for i in range(150):
        state = random_position(rng, 2 + i % 7)
        if GAME.validate(state) or GAME.is_won(state):
            continue
        plug = solve(strategy_for(GAME, state), Limits(5, 10**6))
        assert plug.result is not Outcome.UNKNOWN, state
        plain = solve(Strategy(GAME, state), Limits(60, 10**5))  # positions, not seconds: machine-independent
        if plain.result is Outcome.UNKNOWN:
            continue
        assert plug.result == plain.result, state
        if plug.result is Outcome.SOLVED:
            assert verify(GAME, state, plug.moves), state
        verdicts[plug.result] += 1
    assert verdicts[Outcome.SOLVED] >= 30 and verdicts[Outcome.UNSOLVABLE] >= 30, verdicts


class WholeStateStrategy(Strategy):
    """The generic search, merging only identical tableau and stock (the waste is the
    Clubs missing from them, and its order never matters)."""

    def key(self, state: State) -> Hashable:
        return (state.piles[:WASTE], state.counters)


@pytest.mark.slow
def test_whole_deal_loss_agrees_with_plain_search() -> None:
    """Deal 366 (proved lost when reshuffles depended on the count only; now every discard
    set draws a fresh reshuffle and it is won): the plain search over engine positions
    agrees."""
    for deal, verdict in ((366, Outcome.SOLVED),):
        state = GAME.initial_state(deal)
        plug = solve(strategy_for(GAME, state), Limits(10, 10**6))
        plain = solve(WholeStateStrategy(GAME, state), Limits(30, 10**6))
        assert plug.result == plain.result == verdict, deal
        if verdict is Outcome.SOLVED:
            assert verify(GAME, state, plug.moves)


def test_deals_decided_and_solutions_replay() -> None:
    for deal in range(1, 31):
        state = GAME.initial_state(deal)
        result = solve(strategy_for(GAME, state), Limits(10, 10**6))
        assert result.result in (Outcome.SOLVED, Outcome.UNSOLVABLE), deal
        if result.result is Outcome.SOLVED:
            assert verify(GAME, state, result.moves)
            assert result.moves.count(REDEAL) <= 3


def test_mid_phase_root_keeps_its_layout() -> None:
    """A root in the middle of a phase is searched from its own piles, not a redeal's."""
    state = discard_some(GAME.initial_state(12), random.Random(1), 2)
    assert len(state.piles[WASTE]) == 2
    result = solve(strategy_for(GAME, state), Limits(10, 10**6))
    plain = solve(WholeStateStrategy(GAME, state), Limits(30, 10**6))
    assert result.result == plain.result
    if result.result is Outcome.SOLVED:
        assert verify(GAME, state, result.moves)


def test_a_club_twice_falls_back_to_the_generic_search() -> None:
    """Not a valid position (the Ace of Clubs twice): the phase masks would be wrong, so
    the plug-in searches engine positions instead, and still answers soundly."""
    state = GAME.initial_state(1)
    piles = list(state.piles)
    piles[0] = (1,)
    piles[1] = (1,)
    for redeals in range(4):
        dup = State(tuple(piles), (redeals,), 1)
        plug = solve(strategy_for(GAME, dup), Limits(5, 10**6))
        plain = solve(Strategy(GAME, dup), Limits(5, 10**6))
        assert plug.result is plain.result is not Outcome.UNKNOWN
