"""Small Billee (docs/rules.md "Small Billee"): one test per rule (its golden deals are in
tests/golden/deals.json)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.cards import ACE, make_card, parse_card, rank_of
from service.engine.core import DEAL, REDEAL, Action, EventKind, Move, State, Status
from service.engine.reshuffle import reshuffle, reshuffle_seed
from service.engine.shuffle import pysol_shuffle
from service.engine.small_billee import GAME, deal_fans

game = GAME()
F0 = game.group_start["foundation"]
C0 = game.group_start["cell"]
N0 = game.group_start["fan"]


def cards(text: str) -> tuple[int, ...]:
    return tuple(parse_card(t) for t in text.split())


def position(
    foundations: tuple[str, ...] = ("AC", "AD", "AH", "AS"),
    cells: tuple[str, ...] = ("",) * 6,
    fans: tuple[str, ...] = ("",) * 12,
    redeals: int = 0,
    deal: int = 1,
) -> State:
    piles = tuple(cards(t) for t in (*foundations, *cells, *fans))
    return State(piles, (redeals,), deal)


def mv(src: int, dst: int, count: int = 1) -> Move:
    return Move(Action.MOVE, src, dst, count)


# --- description -----------------------------------------------------------------
def test_small_billee_groups_and_counters() -> None:
    assert [(g.name, g.count) for g in game.groups] == [("foundation", 4), ("cell", 6), ("fan", 12)]
    assert game.group("cell").capacity == 1
    assert game.group("fan").fan in ("down", "right")
    assert [(c.name, c.minimum, c.maximum) for c in game.counter_specs] == [("redeals_used", 0, 3)]
    assert game.has_redeal and not game.has_deal
    assert "**Decided" not in game.rules_text
    for phrase in ("58", "never", "gathered cards in that order", "each fan from its bottom card to its top card", "row by row", "up to 4"):
        assert phrase in " ".join(game.rules_text.split())


# --- the deal ----------------------------------------------------------------------
def test_small_billee_one_deck_of_52() -> None:
    assert sorted(game.deck()) == sorted({make_card(r, s) for s in range(4) for r in range(1, 14)})
    assert len(game.deck()) == 52


def test_small_billee_aces_start_on_the_foundations() -> None:
    for deal in (1, 2, 31999, 32000, 100000):
        s = game.initial_state(deal)
        assert [s.piles[F0 + i] for i in range(4)] == [(make_card(ACE, suit),) for suit in range(4)]


def test_small_billee_deal_one_card_to_each_cell_then_fans_row_by_row() -> None:
    for deal in (1, 7, 40000):
        s = game.initial_state(deal)
        order = [c for c in pysol_shuffle(game.deck(), deal)[::-1] if rank_of(c) != ACE]
        assert [s.piles[C0 + i] for i in range(6)] == [(c,) for c in order[:6]]
        rest = order[6:]
        for k in range(12):
            assert s.piles[N0 + k] == tuple(rest[k::12])
        assert [len(s.piles[N0 + k]) for k in range(12)] == [4] * 6 + [3] * 6
        assert s.counters == (0,)
        assert game.validate(s) == []


# --- fans ------------------------------------------------------------------------
def test_small_billee_fan_top_card_goes_to_its_foundation() -> None:
    s = position(fans=("3C 2C",) + ("",) * 11)
    assert mv(N0, F0) in game.legal_moves(s)
    new = game.apply(s, mv(N0, F0))
    assert new.piles[F0] == cards("AC 2C") and new.piles[N0] == cards("3C")


def test_small_billee_fan_top_card_goes_to_every_empty_cell() -> None:
    s = position(cells=("KD", "", "QD", "", "", ""), fans=("5H",) + ("",) * 11)
    targets = sorted(m.dst for m in game.legal_moves(s) if m.action == Action.MOVE and m.src == N0)
    assert targets == [C0 + 1, C0 + 3, C0 + 4, C0 + 5]


def test_small_billee_only_the_top_card_moves_one_at_a_time() -> None:
    s = position(fans=("3C 2C",) + ("",) * 11)
    rej = game.check_move(s, mv(N0, C0, 2))
    assert rej is not None and rej.rule == "one-card-at-a-time"
    assert all(m.count == 1 for m in game.legal_moves(game.initial_state(5)) if m.action == Action.MOVE)


def test_small_billee_fans_do_not_build() -> None:
    s = position(fans=("5H", "6H", "4H") + ("",) * 9)
    for dst in (N0 + 1, N0 + 2, N0 + 5):
        rej = game.check_move(s, mv(N0, dst))
        assert rej is not None and rej.rule == "fans-do-not-build"
    assert not [m for m in game.legal_moves(s) if m.action == Action.MOVE and m.dst >= N0]


def test_small_billee_an_emptied_fan_stays_empty() -> None:
    s = position(cells=("KH", "", "", "", "", ""), fans=("2C", "5H") + ("",) * 10)
    s = game.apply(s, mv(N0, F0))
    assert s.piles[N0] == ()
    assert not [m for m in game.legal_moves(s) if m.dst == N0]
    rej = game.check_move(s, mv(C0, N0))
    assert rej is not None and rej.rule == "cells-never-back-to-fans"


# --- cells -----------------------------------------------------------------------
def test_small_billee_cells_never_take_back_to_fans() -> None:
    s = position(cells=("4H", "", "", "", "", ""), fans=("5H", "") + ("",) * 10)
    for dst in (N0, N0 + 1):
        rej = game.check_move(s, mv(C0, dst))
        assert rej is not None and rej.rule == "cells-never-back-to-fans"
    assert [m for m in game.legal_moves(s) if m.src == C0] == []


def test_small_billee_cell_card_goes_to_its_foundation() -> None:
    s = position(cells=("", "2H", "", "", "", ""))
    assert game.legal_moves(s) == [mv(C0 + 1, F0 + 2)]
    assert game.apply(s, mv(C0 + 1, F0 + 2)).piles[F0 + 2] == cards("AH 2H")


def test_small_billee_a_card_never_moves_from_cell_to_cell() -> None:
    s = position(cells=("4H", "", "", "", "", ""))
    rej = game.check_move(s, mv(C0, C0 + 1))
    assert rej is not None and rej.rule == "cell-to-cell"


def test_small_billee_a_cell_holds_one_card() -> None:
    s = position(cells=("4H", "", "", "", "", ""), fans=("9C",) + ("",) * 11)
    rej = game.check_move(s, mv(N0, C0))
    assert rej is not None and rej.rule == "cell-occupied"
    bad = game.initial_state(1)
    piles = list(bad.piles)
    piles[C0] = piles[C0] + piles[C0 + 1]
    piles[C0 + 1] = ()
    assert any("at most 1" in p.message for p in game.validate(State(tuple(piles), (0,), 1)))


# --- foundations ----------------------------------------------------------------------
def test_small_billee_foundations_build_up_in_suit_to_king() -> None:
    s = position(
        foundations=("AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC", "AD", "AH", "AS"),
        cells=("3D", "2H", "", "", "", ""),
    )
    rej = game.check_move(s, mv(C0, F0 + 1))
    assert rej is not None and rej.rule == "foundation-builds-up-in-suit"
    rej = game.check_move(s, mv(C0 + 1, F0 + 3))
    assert rej is not None and rej.rule == "foundation-builds-up-in-suit"
    rej = game.check_move(s, mv(C0, F0))
    assert rej is not None and rej.rule == "foundation-complete"
    assert mv(C0 + 1, F0 + 2) in game.legal_moves(s)


def test_small_billee_foundation_cards_stay() -> None:
    s = position(foundations=("AC 2C", "AD", "AH", "AS"))
    rej = game.check_move(s, mv(F0, C0))
    assert rej is not None and rej.rule == "foundation-cards-stay"


# --- redeals -------------------------------------------------------------------------
def test_small_billee_redeal_reshuffles_the_fans_and_deals_them_again() -> None:
    s = game.initial_state(3)
    s = game.apply(s, mv(C0, F0)) if mv(C0, F0) in game.legal_moves(s) else s
    new, events = game.play(s, REDEAL)
    gathered = [c for k in range(12) for c in s.piles[N0 + k]]
    expected = pysol_shuffle(sorted(gathered), reshuffle_seed(gathered, 3, 1))  # fans 0-11, bottom to top
    assert expected == reshuffle(gathered, 3, 1)
    assert [new.piles[N0 + k] for k in range(12)] == [tuple(f) for f in deal_fans(list(expected))]
    assert new.piles[: N0] == s.piles[: N0]  # cells and foundations untouched
    assert new.counters == (1,)
    assert [e.kind for e in events] == [EventKind.REDEAL]
    assert game.validate(new) == []


def test_small_billee_redeal_deals_row_by_row_as_far_as_the_cards_go() -> None:
    s = position(fans=("2C 3C 4C", "5C", "6C 7C") + ("",) * 9, deal=77)
    new = game.apply(s, REDEAL)
    order = reshuffle(cards("2C 3C 4C 5C 6C 7C"), 77, 1)[::-1]
    assert [new.piles[N0 + k] for k in range(12)] == [(c,) for c in order] + [()] * 6


def test_small_billee_redeals_are_numbered_and_deterministic() -> None:
    s = position(fans=("2C 3C 4C 5C", "6C 7C 8C", "9C TC") + ("",) * 9, deal=12345)
    a = game.apply(s, REDEAL)
    assert a == game.apply(s, REDEAL)
    b = game.apply(a, REDEAL)
    gathered = [c for k in range(12) for c in a.piles[N0 + k]]
    assert [b.piles[N0 + k] for k in range(12)] == [
        tuple(f) for f in deal_fans(reshuffle(gathered, 12345, 2))
    ]
    assert b.counters == (2,)


def test_small_billee_at_most_three_redeals() -> None:
    s = game.initial_state(9)
    for n in range(1, 4):
        assert REDEAL in game.legal_moves(s)
        s = game.apply(s, REDEAL)
        assert s.counters == (n,)
    assert REDEAL not in game.legal_moves(s)
    rej = game.check_move(s, REDEAL)
    assert rej is not None and rej.rule == "redeal-limit"


def test_small_billee_redeal_only_while_a_fan_holds_a_card() -> None:
    s = position(cells=("2C", "3C", "", "", "", ""))
    assert REDEAL not in game.legal_moves(s)
    rej = game.check_move(s, REDEAL)
    assert rej is not None and rej.rule == "redeal-needs-fan-cards"


def test_small_billee_has_no_stock_to_deal() -> None:
    s = game.initial_state(1)
    assert DEAL not in game.legal_moves(s)
    rej = game.check_move(s, DEAL)
    assert rej is not None and rej.rule == "no-deal"


# --- won and lost ---------------------------------------------------------------------
def test_small_billee_won_when_all_52_cards_are_on_the_foundations() -> None:
    full = tuple(" ".join(f"{r}{s}" for r in "A23456789TJQK") for s in "CDHS")
    s = position(foundations=full)
    assert game.is_won(s) and game.status(s) == Status.WON
    assert game.validate(s) == []
    almost = position(foundations=(full[0][:-3], *full[1:]), cells=("KC", "", "", "", "", ""))
    assert not game.is_won(almost)
    assert game.status(game.apply(almost, mv(C0, F0))) == Status.WON


def test_small_billee_lost_when_no_move_and_no_redeal_is_left() -> None:
    full = " ".join(f"{r}C" for r in "A23456789TJQK")
    # every cell full, fan tops blocked, all redeals used
    s = position(
        foundations=(full, "AD", "AH", "AS"),
        cells=("KD", "QD", "JD", "KH", "QH", "JH"),
        fans=("2D 3D", "2H 3H", "2S 3S") + ("",) * 9,
        redeals=3,
    )
    assert game.legal_moves(s) == []
    assert game.status(s) == Status.LOST
    # with a redeal left the same position is still playing
    assert game.status(s._replace(counters=(2,))) == Status.PLAYING


# --- autoplay -----------------------------------------------------------------------------
def test_small_billee_autoplay_moves_cell_cards_home() -> None:
    s = position(cells=("", "2D", "", "", "", ""), fans=("2C",) + ("",) * 11)
    assert game.autoplay_move(s) == mv(C0 + 1, F0 + 1)


def test_small_billee_autoplay_moves_fan_cards_only_when_no_redeal_is_left() -> None:
    s = position(fans=("2C",) + ("",) * 11)
    assert game.autoplay_move(s) is None
    assert game.autoplay_move(s._replace(counters=(3,))) == mv(N0, F0)
    assert "redeal" in game.autoplay_rule


def test_small_billee_autoplay_moves_are_legal() -> None:
    rng = random.Random(4)
    for deal in range(30):
        s = game.initial_state(deal)
        while not game.is_won(s):
            a = game.autoplay_move(s)
            if a is not None:
                assert a in game.legal_moves(s)
                assert game.group_of[a.dst] == "foundation"
            moves = game.legal_moves(s)
            if not moves:
                break
            s = game.apply(s, rng.choice(moves))


# --- validation -----------------------------------------------------------------------------
def test_small_billee_validate_foundations_start_with_aces_and_build_in_suit() -> None:
    s = game.initial_state(1)
    piles = list(s.piles)
    piles[F0], piles[C0] = piles[C0], piles[F0]  # JD on foundation 0, AC in a cell
    assert any("Ace" in p.message for p in game.validate(State(tuple(piles), (0,), 1)))
    s = position(
        foundations=("AC 3C", "AD", "AH", "AS"),
    )
    assert any("build up in suit" in p.message for p in game.validate_piles(s))


def test_small_billee_validate_fan_sizes() -> None:
    s = game.initial_state(1)
    piles = list(s.piles)
    piles[N0 + 6] = piles[N0 + 6] + piles[C0]
    piles[C0] = ()
    bad = State(tuple(piles), (0,), 1)
    assert any("fan 6" in p.message for p in game.validate(bad))
    assert game.validate(bad._replace(counters=(1,))) == []  # a redeal may give fan 6 four
    piles[N0] = piles[N0] + piles[C0 + 1]
    piles[C0 + 1] = ()
    assert any("at most 4" in p.message for p in game.validate(State(tuple(piles), (1,), 1)))


# --- every legal move is accepted, random play stays valid -----------------------------
@settings(max_examples=40, deadline=None)
@given(deal=st.integers(0, 10**20 - 1), seed=st.integers(0, 2**32))
def test_small_billee_random_play_keeps_states_valid(deal: int, seed: int) -> None:
    rng = random.Random(seed)
    s = game.initial_state(deal)
    for _ in range(300):
        moves = game.legal_moves(s)
        assert len(set(moves)) == len(moves)
        if not moves:
            assert game.status(s) in (Status.WON, Status.LOST)
            break
        for m in moves:
            assert game.check_move(s, m) is None
        s = game.apply(s, rng.choice(moves))
        assert game.validate(s) == []


def test_small_billee_illegal_moves_always_get_a_reason() -> None:
    s = game.initial_state(11)
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
