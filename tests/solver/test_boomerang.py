"""The Boomerang plug-in (own move generation, canonical key, lost-position test) never
changes a verdict: on many small random end games it agrees with the generic search
(every legal move, exact positions, the engine's autoplay only) on solved versus proved
unsolvable, its solutions replay through the engine, and its moves are the engine's."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from service.engine.boomerang import FOUNDATION_SEQUENCE, GAME, POS, SUIT_CARDS
from service.engine.cards import make_card, rank_of, suit_of
from service.engine.core import Action, Move, State
from service.solver import Limits, solve_position
from service.solver.plugins import strategy_for
from service.solver.plugins.boomerang import BoomerangStrategy
from service.solver.search import Strategy, solve, verify

game = GAME()
F = game.group_range("foundation")
PILES = len(game.group_range("tableau"))


def fits(pile: list[int], card: int) -> bool:
    """Whether the tableau ``pile`` takes ``card`` (in suit, by one, in its direction):
    the rules text read independently of the engine's ``tableau_takes``."""
    top = pile[-1]
    step = POS[rank_of(card)] - POS[rank_of(top)]
    if suit_of(top) != suit_of(card) or abs(step) != 1:
        return False
    return len(pile) == 1 or step == POS[rank_of(top)] - POS[rank_of(pile[-2])]


def random_end_game(rng: random.Random, lowest: int, talon: int, heights: list[int] | None = None) -> State:
    """Foundations built to random heights (at least ``lowest``, or ``heights``); the
    other cards spread over the tableau as valid piles (a card goes on a pile it fits
    about half the time), and ``talon`` of them, when the 12 piles can still be filled,
    in the stock and the waste (an empty pile exists only when both are empty)."""
    heights = heights or [rng.randint(lowest, SUIT_CARDS) for _ in range(4)]
    suits = rng.sample(range(4), 4)
    found = [tuple(make_card(r, s) for r in FOUNDATION_SEQUENCE[:h]) for s, h in zip(suits, heights, strict=True)]
    rest = [make_card(r, s) for s, h in zip(suits, heights, strict=True) for r in FOUNDATION_SEQUENCE[h:]]
    rng.shuffle(rest)
    n_talon = min(talon, max(0, len(rest) - PILES))
    talon_cards = rest[:n_talon]
    piles: list[list[int]] = []
    for c in rest[n_talon:]:
        targets = [p for p in piles if fits(p, c)]
        if targets and (rng.random() < 0.5 or len(piles) == PILES):
            rng.choice(targets).append(c)
        elif len(piles) < PILES:
            piles.append([c])
        else:
            talon_cards.append(c)
    while talon_cards and len(piles) < PILES:
        piles.append([talon_cards.pop()])
    cut = rng.randint(0, len(talon_cards))
    tableau = [tuple(p) for p in piles] + [()] * (PILES - len(piles))
    rng.shuffle(tableau)
    return State(tuple([*found, *tableau, tuple(talon_cards[:cut]), tuple(talon_cards[cut:])]), (), 1)


# Searches are bounded by positions, not seconds, so verdicts do not depend on the
# machine's speed: the generic search decides these small end games within PLAIN.
PLUG = Limits(60, 200_000)
PLAIN = Limits(60, 4_000)


def verdict(state: State, i: int) -> str | None:
    """The plug-in's verdict on ``state`` when both searches decide it (they must agree,
    and a solution must replay), else None."""
    assert not game.validate(state), state
    kn = strategy_for(game, state)
    assert isinstance(kn, BoomerangStrategy)
    plug = solve(kn, PLUG)
    plain = solve(Strategy(game, state), PLAIN)
    if plug.result == "solved":
        assert verify(game, state, plug.moves), (i, state)
    if "unknown" in (plug.result, plain.result):
        return None
    assert plug.result == plain.result, (i, state)
    return plug.result


@pytest.mark.slow
def test_plug_in_agrees_with_generic_search_on_random_end_games() -> None:
    rng = random.Random("boomerang")
    verdicts = Counter(verdict(random_end_game(rng, rng.randint(8, 13), rng.randint(0, 8)), i) for i in range(150))
    assert verdicts["solved"] >= 20 and verdicts["unsolvable"] >= 20, verdicts


@pytest.mark.slow
def test_lost_position_test_never_fires_on_a_winnable_position() -> None:
    """Where the plug-in's fixpoint calls a position lost at once, the generic search
    must not win it; and it must fire often enough to be tested."""
    rng = random.Random("boomerang-dead")
    confirmed = 0
    for i in range(250):
        state = random_end_game(rng, rng.randint(9, 13), rng.randint(0, 10))
        kn = BoomerangStrategy(game, state)
        if not kn.dead(kn.start()):
            continue
        plain = solve(Strategy(game, state), PLAIN)
        assert plain.result != "solved", (i, state)
        confirmed += plain.result == "unsolvable"
    assert confirmed >= 40, confirmed


@pytest.mark.slow
def test_early_suits_agree_with_generic_search() -> None:
    """One or two suits still low (their foundations going up), the others complete:
    the lost-position test then reasons about the way up, where both copies of a card
    are out. Verdicts must agree as above."""
    rng = random.Random("boomerang-up")
    verdicts: Counter[str | None] = Counter()
    for i in range(50):
        low = rng.sample(range(4), rng.choice((1, 2)))
        heights = [rng.randint(3, 12) if s in low else SUIT_CARDS for s in range(4)]
        verdicts[verdict(random_end_game(rng, 0, rng.randint(0, 8), heights), i)] += 1
    assert verdicts["solved"] >= 15 and verdicts["unsolvable"] >= 3, verdicts


def random_play_states(seed: int, deals: int) -> list[State]:
    """Positions met while playing random engine moves (deals less often) from deals."""
    rng = random.Random(seed)
    out: list[State] = []
    for deal in range(1, deals + 1):
        state = game.initial_state(deal)
        for _ in range(300):
            out.append(state)
            moves = game.legal_moves(state)
            if not moves:
                break
            card_moves = [m for m in moves if m.action == Action.MOVE]
            m = rng.choice(card_moves) if card_moves and rng.random() < 0.8 else rng.choice(moves)
            state = game.apply(state, m)
    return out


def test_moves_are_the_engines_with_sevens_to_one_empty_foundation() -> None:
    """Every engine move is generated, except a Seven to a second empty foundation (all
    empty foundations are alike), and nothing else; the key ignores the foundations'
    order but not the tableau's contents."""
    for state in random_play_states(7, 12):
        kn = BoomerangStrategy(game, state)
        ours = kn.ordered_moves(state)
        legal = game.legal_moves(state)
        assert len(set(ours)) == len(ours)
        assert set(ours) <= set(legal), state
        first_empty = next((f for f in F if not state.piles[f]), -1)
        for m in legal:
            if m not in ours:
                assert m.dst in F and not state.piles[m.dst] and m.dst != first_empty, (state, m)
        for m in ours:
            child = kn._move(kn.start(), m.src, m.dst) if m.action == Action.MOVE else None
            if child is not None:
                assert child == tuple(bytes(p) for p in game.apply(state, m).piles)


def test_solves_deals_and_solutions_replay() -> None:
    for deal in (1, 2, 3):
        state = game.initial_state(deal)
        result = solve_position(game, state, Limits(10, 10**6))
        assert result.result == "solved", deal
        assert verify(game, state, result.moves)
        assert all(isinstance(m, Move) for m in result.moves)
