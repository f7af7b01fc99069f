"""The Penguin family's move rule is stated once (``why_illegal`` and the rule parts it
reads: ``tableau_parent``, ``foundation_takes``, ``empty_pile_takes``, ``run_length``,
``run_limit``); every fast path must agree with it exactly. On many random positions of
the five presets and of odd option mixes, for every (source, destination, count):
listed by ``legal_moves`` iff ``is_legal`` iff ``check_move`` is None iff
``why_illegal`` is None. The tables the fast paths read, and the solver plug-in's run
length, are checked against the rule parts they stand for."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from service.engine.cards import ALL_CARDS, ALL_RANKS, CARD_SLOTS, rank_of, suit_of
from service.engine.core import Action, Move, State
from service.engine.penguin import PenguinFamily
from service.engine.registry import get_game
from service.solver.plugins.penguin import RUN, RUN_BOTTOM, PenguinStrategy
from tests.helpers import built_position

# (game id, options): the five presets, then mixes no preset uses
MIXES: list[tuple[str, dict[str, Any]]] = [
    ("penguin", {}),
    ("penguin-ii", {}),
    ("opus", {}),
    ("pelican", {}),
    ("penguin-freecell-moves", {}),
    ("penguin", {"cells": 0}),
    ("penguin", {"cells": 1, "runs": "free-cell-limit"}),
    ("penguin", {"cells": 2, "runs": "single", "empty_pile": "any"}),
    ("pelican", {"cells": 3, "runs": "free-cell-limit", "empty_pile": "below-base"}),
    ("pelican", {"cells": 10, "runs": "single"}),
    ("pelican", {"cells": 0, "empty_pile": "below-base"}),
]


def game_of(gid: str, options: dict[str, Any]) -> PenguinFamily:
    game = get_game(gid, options) if options else get_game(gid)
    assert isinstance(game, PenguinFamily)
    return game


def playout_positions(game: PenguinFamily, rng: random.Random, deals: int, steps: int) -> Iterator[State]:
    """Positions of random games: half the moves chosen among those that send a card
    home or empty a pile, so that the games reach spaces and full foundations."""
    for _ in range(deals):
        state = game.initial_state(rng.randrange(1, 10**6))
        for _ in range(steps):
            yield state
            moves = game.legal_moves(state)
            if not moves:
                break
            eager = [m for m in moves if m.dst in game.F or m.count == len(state.piles[m.src])]
            state = game.apply(state, rng.choice(eager if eager and rng.random() < 0.5 else moves))


def positions(game: PenguinFamily, rng: random.Random, built: int) -> Iterator[State]:
    """``built`` made-up positions, then every eighth of four random games."""
    for _ in range(built):
        yield built_position(game, rng)
    for i, state in enumerate(playout_positions(game, rng, deals=4, steps=120)):
        if i % 8 == 0:
            yield state


def triples(state: State) -> Iterator[Move]:
    """Every (source, destination, count), counts from 0 to one more than the source holds."""
    n = len(state.piles)
    for s in range(n):
        for d in range(n):
            for k in range(len(state.piles[s]) + 2):
                yield Move(Action.MOVE, s, d, k)


def basic_checks_pass(state: State, m: Move) -> bool:
    """What every game checks before asking the game's own rule (core.check_move)."""
    return m.src != m.dst and 1 <= m.count <= len(state.piles[m.src])


@pytest.mark.parametrize(("gid", "options"), MIXES, ids=lambda v: v if isinstance(v, str) else str(v))
def test_every_move_path_agrees_with_the_rule(gid: str, options: dict[str, Any]) -> None:
    game = game_of(gid, options)
    rng = random.Random(f"{gid} {options}")
    kinds: set[str] = set()
    for state in positions(game, rng, built=25):
        legal = game.legal_moves(state)
        listed = set(legal)
        assert len(listed) == len(legal), "each legal move is listed once"
        for m in triples(state):
            in_list = m in listed
            assert game.is_legal(state, m) is in_list, m
            assert (game.check_move(state, m, legal) is None) is in_list, m
            if basic_checks_pass(state, m):
                refusal = game.why_illegal(state, m)
                assert (refusal is None) is in_list, (m, refusal)
                if refusal is not None:
                    kinds.add(refusal.rule)
        auto = game.autoplay_move(state)
        assert auto is None or (auto in listed and auto.dst in game.F)
    assert {"tableau-builds-down-in-suit", "foundation-builds-up-in-suit", "run-not-in-suit"} <= kinds, kinds
    if len(game.C) > 1:
        assert {"cell-to-cell", "cell-occupied"} <= kinds, kinds
    expected = {"single": "one-card-at-a-time", "free-cell-limit": "run-too-long", "whole": "pointless-move"}
    assert expected[game.runs] in kinds, kinds
    if not game.any_empty:
        assert "empty-pile-takes-below-base" in kinds, kinds


@pytest.mark.parametrize(("gid", "options"), MIXES, ids=lambda v: v if isinstance(v, str) else str(v))
def test_tables_stand_for_the_rule_parts(gid: str, options: dict[str, Any]) -> None:
    game = game_of(gid, options)
    for base in ALL_RANKS:
        parents, empty_takes = game.parent_table(base), game.empty_pile_table(base)
        assert len(parents) == len(empty_takes) == CARD_SLOTS
        for c in range(CARD_SLOTS):
            if c not in ALL_CARDS:
                assert parents[c] == -1 and not empty_takes[c]
                continue
            parent = game.tableau_parent(c, base)
            assert parents[c] == (-1 if parent is None else parent)
            assert empty_takes[c] == game.empty_pile_takes(c, base)
            # the parent: same suit, one relative rank higher, never a base-rank card
            rel = game.relative_rank(c, base)
            if parent is None:
                assert rel == 12
            else:
                assert suit_of(parent) == suit_of(c) and game.relative_rank(parent, base) == rel + 1
    for free in range(len(game.C) + 1):
        for empty in range(len(game.T) + 1):
            onto, into_empty = game.run_limits(free, empty)
            assert onto == game.run_limit(free, empty, False)
            if empty:
                assert into_empty == game.run_limit(free, empty, True)
            assert 1 <= into_empty <= onto


@pytest.mark.parametrize(("gid", "options"), MIXES[:5], ids=lambda v: v if isinstance(v, str) else str(v))
def test_run_length_is_the_cards_each_on_their_parent(gid: str, options: dict[str, Any]) -> None:
    """The engine's run length against the parent rule, and the plug-in's (which search
    reads) against the engine's."""
    game = game_of(gid, options)
    rng = random.Random(gid)
    for state in positions(game, rng, built=30):
        base = game.base_rank(state)
        plugin = PenguinStrategy(game, state)
        for t in game.T:
            pile = state.piles[t]
            if not pile:
                continue
            k = game.run_length(pile, base)
            assert all(game.tableau_parent(pile[j], base) == pile[j - 1] for j in range(len(pile) - k + 1, len(pile)))
            below = len(pile) - k - 1
            assert below < 0 or game.tableau_parent(pile[below + 1], base) != pile[below]
            info = plugin._pile_info(bytes(pile))
            assert (info[RUN], info[RUN_BOTTOM]) == (k, pile[-k])


def test_foundation_rule_reads_ranks_relative_to_the_base() -> None:
    game = game_of("penguin", {})
    for base in ALL_RANKS:
        for c in ALL_CARDS:
            assert game.foundation_takes((), c, base) is (rank_of(c) == base)
            started = tuple(x for x in ALL_CARDS if suit_of(x) == suit_of(c) and rank_of(x) == base)
            wants = game.foundation_wants(started)
            assert game.foundation_takes(started, c, base) is (c == wants)
            assert wants is not None and game.relative_rank(wants, base) == 1
