"""Amazons (docs/rules.md "Amazons"): one test per rule (its golden deals are in
tests/golden/deals.json)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.amazons import GAME
from service.engine.cards import parse_card, rank_of
from service.engine.core import DEAL, REDEAL, Action, EventKind, Move, State, Status
from service.engine.shuffle import pysol_deck, pysol_shuffle

game = GAME()
F0 = game.group_start["foundation"]
R0 = game.group_start["reserve"]
STOCK = game.group_start["stock"]


def cards(text: str) -> tuple[int, ...]:
    return tuple(parse_card(t) for t in text.split())


def position(
    foundations: tuple[str, ...] = ("", "", "", ""),
    reserves: tuple[str, ...] = ("", "", "", ""),
    stock: str = "",
    progress: int = 0,
    idle: int = 0,
) -> State:
    piles = tuple(cards(t) for t in (*foundations, *reserves, stock))
    return State(piles, (progress, idle), 1)


def mv(src: int, dst: int, count: int = 1) -> Move:
    return Move(Action.MOVE, src, dst, count)


def card_moves(s: State) -> list[Move]:
    return [m for m in game.legal_moves(s) if m.action == Action.MOVE]


def suit_run(suit: str, n: int = 7) -> str:
    return " ".join(r + suit for r in "A789TJQ"[:n])


# --- description -------------------------------------------------------------------
def test_amazons_groups_and_counters() -> None:
    assert [(g.name, g.count) for g in game.groups] == [("foundation", 4), ("reserve", 4), ("stock", 1)]
    assert game.group("stock").face_down
    assert [(c.name, c.minimum, c.maximum) for c in game.counter_specs] == [
        ("progress_this_pass", 0, 1),
        ("idle_passes", 0, 1),
    ]
    assert game.has_deal and game.has_redeal
    for phrase in ("reserve 0 first", "bottom to top", "last two complete passes", "pass"):
        assert phrase in " ".join(game.rules_text.split())


# --- the deal -------------------------------------------------------------------------
def test_amazons_deck_stripped_to_a_7_to_q() -> None:
    deck = game.deck()
    assert len(deck) == 28
    assert sorted({rank_of(c) for c in deck}) == [1, 7, 8, 9, 10, 11, 12]
    # PySolFC creation order (input of the shuffle): C S H D, A 7 8 9 T J Q
    assert [parse_card(n) for n in pysol_deck(ranks="A789TJQ")] == list(deck)


def test_amazons_deal_one_card_to_each_reserve_the_rest_in_the_stock() -> None:
    for deal in (1, 2, 31999, 32000, 10**20 - 1):
        s = game.initial_state(deal)
        talon = pysol_shuffle(game.deck(), deal)
        assert [s.piles[R0 + i] for i in range(4)] == [(talon[-1 - i],) for i in range(4)]
        assert s.piles[STOCK] == tuple(talon[:24])
        assert all(s.piles[F0 + i] == () for i in range(4))
        assert s.counters == (0, 0)
        assert game.validate(s) == []


# --- foundations --------------------------------------------------------------------------
def test_amazons_foundations_build_up_in_suit_a_7_8_9_t_j_q() -> None:
    s = position(foundations=("AH", "", "", ""), reserves=("7H", "", "", ""))
    assert card_moves(s) == [mv(R0, F0)]
    s = game.apply(s, mv(R0, F0))
    assert s.piles[F0] == cards("AH 7H")
    for bad in ("8C", "9H", "TH"):
        t = position(foundations=("AH 7H", "", "", ""), reserves=(bad, "", "", ""))
        rej = game.check_move(t, mv(R0, F0))
        assert rej is not None and rej.rule == "foundation-builds-up-in-suit"


def test_amazons_complete_foundation_takes_nothing() -> None:
    s = position(foundations=(suit_run("H"), "", "", ""), reserves=("7C", "", "", ""))
    rej = game.check_move(s, mv(R0, F0))
    assert rej is not None and rej.rule in ("foundation-complete", "foundation-builds-up-in-suit")


def test_amazons_foundation_cards_stay() -> None:
    s = position(foundations=("AH", "", "", ""), reserves=("7H", "", "", ""))
    rej = game.check_move(s, mv(F0, R0))
    assert rej is not None and rej.rule == "foundation-cards-stay"


def test_amazons_ace_goes_to_the_first_empty_foundation_only() -> None:
    s = position(foundations=("AH", "", "", ""), reserves=("", "", "", "AS"))
    assert card_moves(s) == [mv(R0 + 3, F0 + 1)]
    for dst in (F0, F0 + 2, F0 + 3):
        rej = game.check_move(s, mv(R0 + 3, dst))
        assert rej is not None and rej.rule == "ace-to-first-empty-foundation"
    s = game.apply(s, mv(R0 + 3, F0 + 1))
    assert s.piles[F0 + 1] == cards("AS")


def test_amazons_reserve_card_goes_only_to_the_foundation_above() -> None:
    s = position(foundations=("AH", "AC", "", ""), reserves=("", "7C", "7H", ""))
    # 7C sits under foundation 1 (AC): it goes there; 7H sits under foundation 2, so it
    # cannot go to foundation 0 (AH) even though it fits there
    assert card_moves(s) == [mv(R0 + 1, F0 + 1)]
    rej = game.check_move(s, mv(R0 + 2, F0))
    assert rej is not None and rej.rule == "reserve-feeds-foundation-above"
    rej = game.check_move(s, mv(R0 + 1, F0))
    assert rej is not None and rej.rule == "reserve-feeds-foundation-above"


def test_amazons_only_the_top_reserve_card_moves_one_at_a_time() -> None:
    s = position(foundations=("AH", "", "", ""), reserves=("7H 8H", "", "", ""))
    assert card_moves(s) == []
    rej = game.check_move(s, mv(R0, F0, 2))
    assert rej is not None and rej.rule == "one-card-at-a-time"


def test_amazons_reserves_and_stock_take_no_cards() -> None:
    s = position(reserves=("7H", "8H", "", ""), stock="9C")
    rej = game.check_move(s, mv(R0, R0 + 1))
    assert rej is not None and rej.rule == "reserves-take-only-deals"
    rej = game.check_move(s, mv(R0, R0 + 2))
    assert rej is not None and rej.rule == "reserves-take-only-deals"
    rej = game.check_move(s, mv(R0, STOCK))
    assert rej is not None and rej.rule == "stock-takes-no-cards"
    rej = game.check_move(s, mv(STOCK, R0 + 2))
    assert rej is not None and rej.rule == "stock-is-dealt"


# --- the stock --------------------------------------------------------------------------
def test_amazons_deal_puts_one_card_on_each_reserve() -> None:
    s = game.initial_state(1)
    new, events = game.play(s, DEAL)
    talon = s.piles[STOCK]
    for i in range(4):
        assert new.piles[R0 + i] == s.piles[R0 + i] + (talon[-1 - i],)
    assert new.piles[STOCK] == talon[:-4]
    assert [(e.kind, e.src, e.dst) for e in events] == [
        (EventKind.DEAL, STOCK, R0 + i) for i in range(4)
    ]


def test_amazons_deal_skips_a_reserve_whose_foundation_is_complete() -> None:
    s = position(
        foundations=("AC", suit_run("S"), "", ""),
        reserves=("9H", "", "8H", "TH"),
        stock="AD 7D 8D 9D AH 7H",
    )
    new = game.apply(s, DEAL)
    assert new.piles[R0] == cards("9H 7H")
    assert new.piles[R0 + 1] == ()
    assert new.piles[R0 + 2] == cards("8H AH")
    assert new.piles[R0 + 3] == cards("TH 9D")
    assert new.piles[STOCK] == cards("AD 7D 8D")


def test_amazons_deal_goes_as_far_as_the_stock_goes() -> None:
    s = position(reserves=("9H", "8H", "TH", "JH"), stock="AD 7D")
    new = game.apply(s, DEAL)
    assert [new.piles[R0 + i] for i in range(4)] == [cards("9H 7D"), cards("8H AD"), cards("TH"), cards("JH")]
    assert new.piles[STOCK] == ()
    assert DEAL not in game.legal_moves(new)
    rej = game.check_move(new, DEAL)
    assert rej is not None and rej.rule == "stock-empty"


# --- redeals -----------------------------------------------------------------------------
def test_amazons_redeal_only_when_the_stock_is_empty() -> None:
    s = game.initial_state(4)
    assert REDEAL not in game.legal_moves(s)
    rej = game.check_move(s, REDEAL)
    assert rej is not None and rej.rule == "redeal-needs-empty-stock"


def test_amazons_redeal_gathers_reserve_0_first_bottom_to_top_without_shuffle() -> None:
    s = position(reserves=("9H 7D", "8H AD", "TH", "JH QS"), stock="")
    new, events = game.play(s, REDEAL)
    assert [new.piles[R0 + i] for i in range(4)] == [()] * 4
    # the next deal starts with the bottom card of reserve 0, then the card above it...
    assert new.piles[STOCK][::-1] == cards("9H 7D 8H AD TH JH QS")
    assert [e.kind for e in events] == [EventKind.REDEAL]
    dealt = game.apply(new, DEAL)
    assert [dealt.piles[R0 + i] for i in range(4)] == [cards(c) for c in ("9H", "7D", "8H", "AD")]


def test_amazons_redeal_needs_a_pass_with_progress_in_the_last_two() -> None:
    s = position(reserves=("9H", "8H", "TH", "JH"), stock="")
    # first idle pass: a redeal is still allowed, and it is counted
    assert REDEAL in game.legal_moves(s)
    s = game.apply(s, REDEAL)
    assert s.counters == (0, 1)
    # second idle pass: no redeal
    while s.piles[STOCK]:
        s = game.apply(s, DEAL)
    assert REDEAL not in game.legal_moves(s)
    rej = game.check_move(s, REDEAL)
    assert rej is not None and rej.rule == "two-idle-passes"


def test_amazons_a_foundation_move_counts_for_the_pass_and_clears_idle() -> None:
    s = position(foundations=("AC", "", "", ""), reserves=("7C 9H", "8H", "TH", "AS"), stock="", idle=1)
    assert REDEAL not in game.legal_moves(s)
    s = game.apply(s, mv(R0 + 3, F0 + 1))  # AS home: this pass moved a card
    assert s.counters == (1, 1)
    assert REDEAL in game.legal_moves(s)
    s = game.apply(s, REDEAL)
    assert s.counters == (0, 0)


def test_amazons_a_pass_includes_moves_before_its_first_deal() -> None:
    s = position(foundations=("AC", "", "", ""), reserves=("9H", "", "", ""), stock="7C 8H", idle=1)
    s = game.apply(s, DEAL)  # 8H to reserve 0, 7C to reserve 1: nothing can go home
    assert game.legal_moves(s) == [] and game.status(s) == Status.LOST
    t = position(foundations=("AC", "", "", ""), reserves=("7C", "", "", ""), stock="9H 8H", idle=1)
    t = game.apply(t, mv(R0, F0))
    t = game.apply(t, DEAL)
    assert REDEAL in game.legal_moves(t)


def test_amazons_no_redeal_once_won() -> None:
    full = tuple(suit_run(x) for x in "CSHD")
    s = position(foundations=full)
    assert game.is_won(s) and game.legal_moves(s) == []
    rej = game.check_move(s, REDEAL)
    assert rej is not None and rej.rule == "game-over"


# --- won and lost --------------------------------------------------------------------------
def test_amazons_won_when_all_28_cards_are_on_the_foundations() -> None:
    full = tuple(suit_run(x) for x in "CSHD")
    s = position(foundations=full, progress=1)
    assert game.status(s) == Status.WON
    assert game.validate(s) == []
    t = position(foundations=(full[0][:-3], *full[1:]), reserves=("QC", "", "", ""))
    assert game.status(game.apply(t, mv(R0, F0))) == Status.WON


def test_amazons_lost_after_two_idle_passes_with_no_move() -> None:
    s = position(foundations=("AC", "", "", ""), reserves=("9H", "8H", "TH", "JH"), idle=1)
    assert game.legal_moves(s) == []
    assert game.status(s) == Status.LOST
    assert game.status(s._replace(counters=(0, 0))) == Status.PLAYING


# --- autoplay ---------------------------------------------------------------------------------
def test_amazons_autoplay_makes_no_move() -> None:
    s = position(foundations=("AH", "", "", ""), reserves=("7H", "", "", "AS"))
    assert game.autoplay_move(s) is None
    assert game.autoplay_rule.startswith("none")


# --- validation --------------------------------------------------------------------------------
def test_amazons_validate_foundations() -> None:
    s = game.initial_state(1)
    assert game.validate(s) == []
    gap = position(foundations=("", "AC", "", ""))
    assert any("leftmost" in p.message for p in game.validate_piles(gap))
    order = position(foundations=("AC 8C", "", "", ""))
    assert any("A 7 8 9 T J Q" in p.message for p in game.validate_piles(order))
    base = position(foundations=("7C", "", "", ""))
    assert any("starts with an Ace" in p.message for p in game.validate_piles(base))


def test_amazons_validate_progress_counter() -> None:
    s = game.initial_state(1)
    assert any("progress" in p.where for p in game.validate(s._replace(counters=(1, 0))))
    assert any("idle_passes" in p.where for p in game.validate(s._replace(counters=(0, 2))))


# --- every legal move is accepted, random play stays valid ---------------------------------
@settings(max_examples=40, deadline=None)
@given(deal=st.integers(0, 10**20 - 1), seed=st.integers(0, 2**32))
def test_amazons_random_play_keeps_states_valid(deal: int, seed: int) -> None:
    rng = random.Random(seed)
    s = game.initial_state(deal)
    for _ in range(400):
        moves = game.legal_moves(s)
        assert len(set(moves)) == len(moves)
        if not moves:
            assert game.status(s) in (Status.WON, Status.LOST)
            break
        for m in moves:
            assert game.check_move(s, m) is None
        s = game.apply(s, rng.choice(moves))
        assert game.validate(s) == []


def test_amazons_illegal_moves_always_get_a_reason() -> None:
    s = position(foundations=("AC", "", "", ""), reserves=("7C", "8H", "AS", "TH"), stock="9C")
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
