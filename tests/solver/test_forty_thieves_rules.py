"""The Forty Thieves plug-in reads the engine's rules: its pile layout is the game's,
the engine's tables of building say what the rules text says, the move that undoes a
tableau move is the one the searches leave out, and the plug-in's autoplay (from its
cache of the engine's rule) is the engine's."""

from __future__ import annotations

import random

from service.engine.cards import ACE, ALL_CARDS, CARD_SLOTS, KING, rank_of, suit_of
from service.engine.core import Action, Move
from service.engine.forty_thieves import ABOVE, BELOW, GAME
from service.solver.plugins import forty_thieves as plugin
from tests.helpers import autoplay_matches_engine

game = GAME()


def test_layout_is_the_games() -> None:
    assert game.group_range("foundation") == plugin.F
    assert game.group_range("tableau") == plugin.T
    assert (game.group_start["stock"], game.group_start["waste"]) == (plugin.STOCK, plugin.WASTE)


def test_building_tables_read_the_rules_text() -> None:
    """For every pair of cards: ABOVE (foundations) is one rank up in suit, nothing on a
    King; BELOW (tableau) one rank down in suit, nothing on an Ace; -1 off the cards."""
    for c in range(CARD_SLOTS):
        if c not in ALL_CARDS:
            assert ABOVE[c] == BELOW[c] == -1
            continue
        for d in ALL_CARDS:
            same = suit_of(d) == suit_of(c)
            assert (ABOVE[c] == d) == (same and rank_of(d) == rank_of(c) + 1), (c, d)
            assert (BELOW[c] == d) == (same and rank_of(d) == rank_of(c) - 1), (c, d)
        assert (ABOVE[c] == -1) == (rank_of(c) == KING)
        assert (BELOW[c] == -1) == (rank_of(c) == ACE)


def test_undo_moves_undo() -> None:
    """UNDO pairs exactly the tableau-to-tableau moves with their reverse, and a
    single move's undo is the one left out."""
    assert len(plugin.UNDO) == len(plugin.T) * (len(plugin.T) - 1)
    for m, back in plugin.UNDO.items():
        assert m[1] in plugin.T and m[2] in plugin.T
        assert back == (m[0], m[2], m[1], 1)
        assert plugin._undo((m,)) == back
        assert plugin._undo((m, back)) is None
    assert plugin._undo((plugin.DEAL,)) is None
    assert plugin._undo(((int(Action.MOVE), plugin.WASTE, plugin.T.start, 1),)) is None


def test_autoplay_is_the_engines() -> None:
    """On positions of random play: the plug-in's autoplay makes the engine's autoplay
    moves, in the same order, and reaches the same position."""
    rng = random.Random("forty-thieves-auto")
    moved = 0
    for deal in range(1, 9):
        state = game.initial_state(deal)
        for _ in range(250):
            moved += autoplay_matches_engine(game, plugin.FortyThievesStrategy(game, state), state)
            moves = game.legal_moves(state)
            if not moves:
                break
            home = [m for m in moves if m.action == Action.MOVE and m.dst in plugin.F]
            m: Move = home[0] if home else rng.choice(moves)
            state = game.apply(state, m)
    assert moved >= 50, moved
