"""Abandon Hope (docs/rules.md "Abandon Hope"): one test per rule (its golden deals are in
tests/golden/deals.json)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.abandon_hope import GAME, deal_layout
from service.engine.cards import CLUBS, parse_card, suit_of
from service.engine.core import DEAL, REDEAL, Action, EventKind, Move, State, Status
from service.engine.reshuffle import reshuffle, reshuffle_seed
from service.engine.shuffle import pysol_shuffle

game = GAME()
T0 = game.group_start["tableau"]
STOCK = game.group_start["stock"]
WASTE = game.group_start["waste"]
ALL_CLUBS = " ".join(r + "C" for r in "A23456789TJQK")


def cards(text: str) -> tuple[int, ...]:
    return tuple(parse_card(t) for t in text.split())


def position(tableau: dict[int, str], stock: str = "", waste: str = "", redeals: int = 0) -> State:
    piles = [cards(tableau.get(i, "")) for i in range(24)]
    return State((*piles, cards(stock), cards(waste)), (redeals,), 1)


def mv(src: int, dst: int, count: int = 1) -> Move:
    return Move(Action.MOVE, src, dst, count)


def discards(s: State) -> list[Move]:
    return [m for m in game.legal_moves(s) if m.action == Action.MOVE]


# --- description ------------------------------------------------------------------
def test_abandon_hope_groups_and_counters() -> None:
    assert [(g.name, g.count) for g in game.groups] == [("tableau", 24), ("stock", 1), ("waste", 1)]
    assert game.group("tableau").per_row == 6
    assert game.group("stock").face_down
    assert [(c.name, c.minimum, c.maximum) for c in game.counter_specs] == [("redeals_used", 0, 3)]
    assert game.has_redeal and not game.has_deal
    text = " ".join(game.rules_text.split())
    for phrase in ("4 rows of 6", "never deals", "gathered cards in that order", "each from its bottom card to its top card", "one card to each pile", "waste is untouched"):
        assert phrase in text


# --- the deal -----------------------------------------------------------------------
def test_abandon_hope_one_deck_of_52() -> None:
    assert len(game.deck()) == 52 and len(set(game.deck())) == 52


def test_abandon_hope_deal_2_cards_a_pile_one_at_a_time_row_by_row_4_to_the_stock() -> None:
    for deal in (1, 2, 31999, 32000, 10**20 - 1):
        s = game.initial_state(deal)
        talon = pysol_shuffle(game.deck(), deal)
        order = talon[::-1]
        for i in range(24):
            assert s.piles[T0 + i] == (order[i], order[24 + i])
        assert s.piles[STOCK] == tuple(talon[:4])  # the 4 left over, top card last
        assert s.piles[WASTE] == ()
        assert s.counters == (0,)
        assert game.validate(s) == []


# --- discards -------------------------------------------------------------------------
def test_abandon_hope_every_available_club_may_be_discarded() -> None:
    s = position({0: "KD 4C", 3: "2C", 5: "AC 9H", 7: "5C 6C"}, stock="2D")
    assert discards(s) == [mv(T0, WASTE), mv(T0 + 3, WASTE), mv(T0 + 7, WASTE)]
    new, events = game.play(s, mv(T0 + 7, WASTE))
    assert new.piles[WASTE] == cards("6C") and new.piles[T0 + 7] == cards("5C")
    assert [(e.kind, e.src, e.dst) for e in events] == [(EventKind.MOVE, T0 + 7, WASTE)]


def test_abandon_hope_clubs_are_discarded_in_any_order() -> None:
    s = position({0: "3C", 1: "KC", 2: "7C"})
    a = game.apply(game.apply(s, mv(T0 + 1, WASTE)), mv(T0, WASTE))
    assert a.piles[WASTE] == cards("KC 3C")
    assert mv(T0 + 2, WASTE) in discards(a)


def test_abandon_hope_only_clubs_are_discarded() -> None:
    s = position({0: "4C 9H"})
    rej = game.check_move(s, mv(T0, WASTE))
    assert rej is not None and rej.rule == "only-clubs-discarded"


def test_abandon_hope_only_the_top_card_of_a_pile_is_available() -> None:
    s = position({0: "4C 9H", 1: "5C 6C"})
    assert discards(s) == [mv(T0 + 1, WASTE)]
    rej = game.check_move(s, mv(T0 + 1, WASTE, 2))
    assert rej is not None and rej.rule == "one-card-at-a-time"


def test_abandon_hope_no_other_moves() -> None:
    s = position({0: "4C", 1: "5D", 2: ""}, stock="9C")
    for dst in (T0 + 1, T0 + 2, STOCK):
        rej = game.check_move(s, mv(T0, dst))
        assert rej is not None and rej.rule == "discard-only"
    rej = game.check_move(s, mv(T0 + 1, T0 + 2))
    assert rej is not None and rej.rule == "discard-only"


def test_abandon_hope_discarded_clubs_stay() -> None:
    s = position({0: "4D"}, waste="5C")
    rej = game.check_move(s, mv(WASTE, T0))
    assert rej is not None and rej.rule == "discards-stay"


def test_abandon_hope_the_stock_is_never_dealt_or_played() -> None:
    s = game.initial_state(1)
    assert DEAL not in game.legal_moves(s)
    rej = game.check_move(s, DEAL)
    assert rej is not None and rej.rule == "stock-never-dealt"
    rej = game.check_move(s, mv(STOCK, WASTE))  # the stock's top card is 6S; 9C lies in it
    assert rej is not None and rej.rule == "stock-not-played"
    t = position({0: "4D"}, stock="9C")
    rej = game.check_move(t, mv(STOCK, WASTE))
    assert rej is not None and rej.rule == "stock-not-played"


# --- redeals ------------------------------------------------------------------------------
def test_abandon_hope_redeal_gathers_tableau_and_stock_and_reshuffles() -> None:
    s = game.initial_state(5)
    s = game.apply(s, discards(s)[0])
    new, events = game.play(s, REDEAL)
    gathered = [c for i in range(24) for c in s.piles[T0 + i]] + list(s.piles[STOCK])
    assert len(gathered) == 51
    talon = pysol_shuffle(sorted(gathered), reshuffle_seed(gathered, 5, 1))  # piles 0-23 then stock
    assert talon == reshuffle(gathered, 5, 1)
    order = talon[::-1]
    for i in range(24):
        assert new.piles[T0 + i] == (order[i], order[24 + i])
    assert new.piles[STOCK] == tuple(talon[:3])
    assert new.piles[WASTE] == s.piles[WASTE]
    assert new.counters == (1,)
    assert [e.kind for e in events] == [EventKind.REDEAL]
    assert game.validate(new) == []


def test_abandon_hope_redeal_deals_2_a_pile_as_far_as_the_cards_go() -> None:
    layout = deal_layout(list(range(40)))
    assert [len(p) for p in layout[:24]] == [2] * 16 + [1] * 8
    assert layout[24] == ()
    assert layout[0] == (39, 15)
    layout = deal_layout(list(range(50)))
    assert [len(p) for p in layout[:24]] == [2] * 24 and layout[24] == (0, 1)


def test_abandon_hope_redeals_are_numbered_and_deterministic() -> None:
    s = game.initial_state(123456)
    a = game.apply(s, REDEAL)
    assert a == game.apply(s, REDEAL)
    b = game.apply(a, REDEAL)
    gathered = [c for i in range(25) for c in a.piles[i]]
    assert b.piles[:25] == deal_layout(reshuffle(gathered, 123456, 2))
    assert b.counters == (2,)


def test_abandon_hope_at_most_three_redeals() -> None:
    s = game.initial_state(2)
    for n in range(1, 4):
        assert REDEAL in game.legal_moves(s)
        s = game.apply(s, REDEAL)
        assert s.counters == (n,)
    assert REDEAL not in game.legal_moves(s)
    rej = game.check_move(s, REDEAL)
    assert rej is not None and rej.rule == "redeal-limit"


# --- won and lost ------------------------------------------------------------------------------
def test_abandon_hope_won_when_all_13_clubs_are_in_the_waste() -> None:
    s = game.initial_state(1)
    rest = [c for c in game.deck() if suit_of(c) != CLUBS]
    piles = [tuple(rest[2 * i : 2 * i + 2]) for i in range(24)]
    won = State((*piles, tuple(rest[48:]), cards(ALL_CLUBS)), (1,), s.deal)
    assert len(rest[48:]) == 0
    assert game.is_won(won) and game.status(won) == Status.WON
    assert game.legal_moves(won) == []
    assert game.validate(won) == []
    almost = position({0: "KC"}, waste=ALL_CLUBS[:-3])
    assert game.status(game.apply(almost, mv(T0, WASTE))) == Status.WON


def test_abandon_hope_lost_when_no_club_is_available_and_no_redeal_left() -> None:
    s = position({0: "4C 9H", 1: "5D"}, stock="6C", redeals=3)
    assert game.legal_moves(s) == []
    assert game.status(s) == Status.LOST
    assert game.status(s._replace(counters=(2,))) == Status.PLAYING


# --- autoplay ------------------------------------------------------------------------------------
def test_abandon_hope_autoplay_discards_once_no_redeal_is_left() -> None:
    s = position({0: "4C 9H", 1: "5C"}, stock="6C", redeals=2)
    assert game.autoplay_move(s) is None
    assert game.autoplay_move(s._replace(counters=(3,))) == mv(T0 + 1, WASTE)


def test_abandon_hope_autoplay_discards_when_that_wins_outright() -> None:
    s = position({0: "9H 4C", 1: "5D KC", 2: "QC"}, waste=ALL_CLUBS[:-6].replace("4C ", ""))
    assert s.counters == (0,)
    assert game.autoplay_move(s) == mv(T0, WASTE)
    while (m := game.autoplay_move(s)) is not None:
        s = game.apply(s, m)
    assert game.is_won(s)


# --- validation ----------------------------------------------------------------------------------
def test_abandon_hope_validate() -> None:
    s = game.initial_state(1)
    assert game.validate(s) == []
    piles = list(s.piles)
    piles[T0] = piles[T0] + piles[T0 + 1]
    piles[T0 + 1] = ()
    assert any("2 cards" in p.message for p in game.validate(State(tuple(piles), (0,), 1)))
    piles = list(s.piles)
    piles[WASTE], piles[T0] = piles[T0][1:], piles[T0][:1]  # JD stays, 4C discarded: fine
    assert game.validate(State(tuple(piles), (0,), 1)) == []
    piles[WASTE], piles[T0] = piles[T0], piles[WASTE]  # JD in the waste
    assert any("only Clubs" in p.message for p in game.validate(State(tuple(piles), (0,), 1)))
    piles = list(s.piles)
    piles[T0 + 1] = piles[T0 + 1] + piles[STOCK][:1]
    piles[STOCK] = piles[STOCK][1:]
    bad = State(tuple(piles), (0,), 1)
    assert any("4 cards" in p.message for p in game.validate_piles(bad))
    assert any("Club" in p.message for p in game.validate_piles(bad._replace(counters=(1,))))


# --- every legal move is accepted, random play stays valid -----------------------------------------
@settings(max_examples=40, deadline=None)
@given(deal=st.integers(0, 10**20 - 1), seed=st.integers(0, 2**32))
def test_abandon_hope_random_play_keeps_states_valid(deal: int, seed: int) -> None:
    rng = random.Random(seed)
    s = game.initial_state(deal)
    for _ in range(100):
        moves = game.legal_moves(s)
        assert len(set(moves)) == len(moves)
        if not moves:
            assert game.status(s) in (Status.WON, Status.LOST)
            break
        for m in moves:
            assert game.check_move(s, m) is None
        s = game.apply(s, rng.choice(moves))
        assert game.validate(s) == []


def test_abandon_hope_illegal_moves_always_get_a_reason() -> None:
    s = game.initial_state(1)
    legal = set(game.legal_moves(s))
    n = len(s.piles)
    for src in range(n):
        for dst in range(n):
            for count in (1, 2):
                m = mv(src, dst, count)
                rej = game.check_move(s, m)
                assert (rej is None) == (m in legal)
                if rej is not None:
                    assert rej.rule != "not-allowed"
