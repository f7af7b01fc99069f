"""The Boomerang plug-in reads the engine's rules: its pile layout is the game's, its
tables are the engine's building rule, its fast foundation test agrees with the
engine's ``foundation_takers`` on every arrangement of the foundations, and its
autoplay is the engine's."""

from __future__ import annotations

import itertools
import random

from service.engine.boomerang import (
    DISTINCT_CARDS,
    GAME,
    POS,
    SUIT_CARDS,
    TABLEAU_TAKES,
    foundation_card,
    foundation_takers,
)
from service.engine.cards import rank_of, suit_of
from service.engine.core import Action, State
from service.solver.plugins import boomerang as plugin
from service.solver.search import Strategy
from tests.helpers import autoplay_matches_engine

game = GAME()


def test_layout_is_the_games() -> None:
    assert game.group_range("foundation") == plugin.F
    assert game.group_range("tableau") == plugin.T
    assert (game.group_start["stock"], game.group_start["waste"]) == (plugin.STOCK, plugin.WASTE)
    assert len(game.pile_refs) == plugin.PILES


def test_building_rule_reads_the_rules_text() -> None:
    """For every pile top of one or two cards (a valid pile) and every card: taken
    exactly when it is in suit, one position away in 7 8 9 T J Q K A, and continues
    the direction of the top two."""
    checked = 0
    for top in [(a,) for a in DISTINCT_CARDS] + [
        (a, b) for a in DISTINCT_CARDS for b in DISTINCT_CARDS if b in TABLEAU_TAKES[(a,)]
    ]:
        last = top[-1]
        for card in DISTINCT_CARDS:
            step = POS[rank_of(card)] - POS[rank_of(last)]
            fits = suit_of(card) == suit_of(last) and abs(step) == 1
            if len(top) == 2:
                fits = fits and step == POS[rank_of(last)] - POS[rank_of(top[0])]
            assert (card in TABLEAU_TAKES[top]) == fits, (top, card)
            assert (card in plugin.ACCEPTS[bytes(top)]) == fits, (top, card)
            checked += 1
    assert checked > 2000


def test_lost_position_tables_follow_the_building_rule() -> None:
    """CONT is what a pile of two takes; MIRROR[x, z] is the card under z that makes
    z take x; NEIGHBOURS is what a lone card takes."""
    for x in DISTINCT_CARDS:
        assert plugin.NEIGHBOURS[x] == TABLEAU_TAKES[(x,)]
        for z in plugin.NEIGHBOURS[x]:
            cont = plugin.CONT[x << 6 | z]
            assert TABLEAU_TAKES[(x, z)] == ((cont,) if cont >= 0 else ())
            w = plugin.MIRROR[x << 6 | z]
            under = [w2 for w2 in DISTINCT_CARDS if w2 in TABLEAU_TAKES[(z,)] and x in TABLEAU_TAKES[(w2, z)]]
            assert under == ([w] if w >= 0 else [])


def _foundations(slots: tuple[int | None, ...], heights: tuple[int, ...]) -> tuple[bytes, ...]:
    """Piles whose foundations hold suit ``slots[i]`` (None: empty) to ``heights[i]``."""
    fnd = [
        bytes(foundation_card(s, i) for i in range(h)) if s is not None else b""
        for s, h in zip(slots, heights, strict=True)
    ]
    return (*fnd, *(b"" for _ in range(len(game.pile_refs) - len(fnd))))


def test_fast_foundation_test_is_the_engines_rule() -> None:
    """On every assignment of suits to the four foundations (some empty), and with
    every foundation at every height: the plug-in's card -> foundation is the engine's
    ``foundation_takers`` with its first foundation."""
    checked = 0
    for k in range(5):
        for slots in itertools.permutations([*range(4), None, None, None, None], 4):
            if sum(s is not None for s in slots) != k:
                continue
            for h in range(SUIT_CARDS):
                heights = tuple((h + 5 * i) % SUIT_CARDS + 1 for i in range(4))
                p = _foundations(slots, heights)
                want = {card: fs[0] for card, fs in foundation_takers(p).items()}
                assert plugin.BoomerangStrategy._need(p) == want, (slots, heights)
                checked += 1
    assert checked > 3000


def test_autoplay_is_the_engines() -> None:
    """On positions of random play: the plug-in's autoplay makes the moves the engine's
    autoplay makes, and reaches the same position."""
    rng = random.Random("boomerang-auto")
    for deal in range(1, 9):
        state = game.initial_state(deal)
        for _ in range(250):
            autoplay_matches_engine(game, plugin.BoomerangStrategy(game, state), state)
            moves = game.legal_moves(state)
            if not moves:
                break
            cards = [m for m in moves if m.action == Action.MOVE]
            state = game.apply(state, rng.choice(cards) if cards and rng.random() < 0.8 else rng.choice(moves))


def test_dead_cards_are_found_in_random_end_games() -> None:
    """Random play seldom meets a dead card: in end games with foundations at the dead
    slots and the other cards in the waste, the plug-in's autoplay moves them as the
    engine's does."""
    rng = random.Random("boomerang-dead-slots")
    moved = 0
    for _ in range(200):
        heights = tuple(rng.choice((13, 14, 15, 16)) for _ in range(4))
        p = _foundations((0, 1, 2, 3), heights)
        rest = [foundation_card(s, i) for s in range(4) for i in range(heights[s], SUIT_CARDS)]
        rng.shuffle(rest)
        piles = [tuple(x) for x in p]
        waste = tuple(rest)
        piles[plugin.WASTE] = waste
        state = State(tuple(piles), (), 1)
        kn = plugin.BoomerangStrategy(game, state)
        mine, _ = kn.auto(kn.start())
        theirs, _ = Strategy(game, state).auto(state)
        assert [tuple(m) for m in theirs] == [tuple(m) for m in mine], state
        moved += bool(mine)
    assert moved >= 20, moved
