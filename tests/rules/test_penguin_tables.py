"""The tables ``PenguinFamily.legal_moves`` and ``validate_piles`` read besides those of
test_penguin_move_rule.py stand for the rule parts they are built from: the run limits of
every count of free cells and empty piles (``run_limits``), each card's tableau child
(the inverse of ``tableau_parent``), and the foundations in order by base rank. test_penguin_move_rule.py checks the moves they give
against ``why_illegal``."""

from __future__ import annotations

from typing import Any

import pytest

from service.engine.cards import ALL_CARDS, ALL_RANKS, CARD_SLOTS
from service.engine.penguin import SUIT_RUNS
from tests.rules.test_penguin_move_rule import MIXES, game_of


@pytest.mark.parametrize(("gid", "options"), MIXES, ids=lambda v: v if isinstance(v, str) else str(v))
def test_run_limits_are_looked_up_as_the_rule_says(gid: str, options: dict[str, Any]) -> None:
    game = game_of(gid, options)
    for free in range(len(game.C) + 1):
        for empty in range(len(game.T) + 1):
            assert game._run_limits[free][empty] == game.run_limits(free, empty), (free, empty)


@pytest.mark.parametrize(("gid", "options"), MIXES, ids=lambda v: v if isinstance(v, str) else str(v))
def test_each_cards_child_is_the_card_whose_parent_it_is(gid: str, options: dict[str, Any]) -> None:
    game = game_of(gid, options)
    for base in ALL_RANKS:
        children = game._children[base]
        assert len(children) == CARD_SLOTS
        for card in range(CARD_SLOTS):
            whose = [c for c in ALL_CARDS if game.tableau_parent(c, base) == card]
            assert children[card] == (whose[0] if whose else -1), (base, card)
            assert len(whose) <= 1


@pytest.mark.parametrize(("gid", "options"), MIXES[:5], ids=lambda v: v if isinstance(v, str) else str(v))
def test_foundations_in_order_are_those_with_no_problem(gid: str, options: dict[str, Any]) -> None:
    """The foundation checks find nothing wrong with a foundation in the table of its base
    rank (``validate_piles`` passes those over), and the table holds every foundation a
    game can reach: empty, or a prefix of a base-rank card's suit run. Tried on each such
    prefix and each with a card changed, dropped or added."""
    game = game_of(gid, options)
    runs = [SUIT_RUNS[c][:k] for c in ALL_CARDS for k in range(1, 14)]
    candidates = {(), *runs, *((*r[:-1], r[-1] ^ 1) for r in runs), *(r[1:] for r in runs), *(r + r[:1] for r in runs)}
    for base in ALL_RANKS:
        table = game._foundations_in_order[base]
        for pile in candidates:
            piles = [()] * len(game.pile_refs)
            piles[game.F.start] = pile
            problems = game._foundation_problems(tuple(piles), base)
            if pile in table:
                assert not problems, (base, pile)
            reachable = not pile or (
                pile[0] in SUIT_RUNS and game.relative_rank(pile[0], base) == 0 and pile == SUIT_RUNS[pile[0]][: len(pile)]
            )
            assert (pile in table) is reachable, (base, pile)
