"""Forty Thieves (docs/rules.md "Forty Thieves"): one test per rule, random play (its golden
deals are in tests/golden/deals.json)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from service.engine.cards import format_card, parse_card
from service.engine.core import DEAL, REDEAL, Action, EventKind, Move, State, Status
from service.engine.forty_thieves import GAME
from service.engine.shuffle import pysol_deck, pysol_shuffle
from tests.helpers import check_against_reference

game = GAME()
F = game.group_start["foundation"]
T = game.group_start["tableau"]
STOCK = game.group_start["stock"]
WASTE = game.group_start["waste"]


def cards(text: str) -> tuple[int, ...]:
    return tuple(parse_card(t) for t in text.split())


def make(
    foundation: list[str] | None = None,
    tableau: list[str] | None = None,
    stock: str = "",
    waste: str = "",
) -> State:
    fnd = (foundation or []) + [""] * (8 - len(foundation or []))
    tab = (tableau or []) + [""] * (10 - len(tableau or []))
    piles = [cards(p) for p in fnd] + [cards(p) for p in tab] + [cards(stock), cards(waste)]
    return State(tuple(piles), (), 0)


def mv(src: int, dst: int, count: int = 1) -> Move:
    return Move(Action.MOVE, src, dst, count)


def rule(state: State, move: Move) -> str | None:
    r = game.check_move(state, move)
    return None if r is None else r.rule


# Piles whose top cards take nothing from the tests' other cards.
FILL = ["KC", "KC", "QC", "QC", "JC", "JC", "TC", "TC", "8C", "8C"]


def up_to(rank: str, suit: str) -> str:
    ranks = "A23456789TJQK"
    return " ".join(r + suit for r in ranks[: ranks.index(rank) + 1])


# --- deck and deal ------------------------------------------------------------------
def test_forty_thieves_deck_is_two_full_decks() -> None:
    deck = game.deck()
    assert len(deck) == 104
    assert set(Counter(deck).values()) == {2}
    assert [format_card(c) for c in deck] == pysol_deck(decks=2)


def test_forty_thieves_deal_10_piles_of_4_and_a_stock_of_64() -> None:
    s = game.initial_state(5)
    assert [len(s.piles[T + i]) for i in range(10)] == [4] * 10
    assert all(not s.piles[F + i] for i in range(8))
    assert len(s.piles[STOCK]) == 64
    assert s.piles[WASTE] == ()
    assert not game.validate(s)


@pytest.mark.parametrize("deal", [0, 1, 2, 617, 31999, 32000, 100000, 10**20 - 1])
def test_forty_thieves_deal_is_row_by_row_as_pysolfc(deal: int) -> None:
    # docs/pysolfc-deals.md section 6: pile i = D[i], D[i+10], D[i+20], D[i+30];
    # stock = L[:64] (PySolFC's first waste card stays on top of the stock).
    talon = pysol_shuffle(pysol_deck(decks=2), deal)
    dealt = talon[::-1]
    s = game.initial_state(deal)
    for i in range(10):
        assert [format_card(c) for c in s.piles[T + i]] == dealt[i:40:10]
    assert [format_card(c) for c in s.piles[STOCK]] == talon[:64]


# --- foundations --------------------------------------------------------------------
def test_forty_thieves_any_ace_starts_any_empty_foundation_each_listed() -> None:
    s = make(["AC", "AC 2C"], ["5D AH"], stock="9D")
    targets = [m.dst for m in game.legal_moves(s) if m.src == T and m.dst < T]
    assert targets == [F + 2, F + 3, F + 4, F + 5, F + 6, F + 7]


def test_forty_thieves_empty_foundation_takes_only_an_ace() -> None:
    s = make([], ["5D 2H"], stock="9D")
    assert rule(s, mv(T, F)) == "foundation-starts-with-ace"


def test_forty_thieves_foundations_build_up_in_suit_to_king() -> None:
    s = make(["AH", up_to("Q", "S")], ["2H", "2D", "3H", "KS", *FILL[4:]], stock="9D")
    assert rule(s, mv(T, F)) is None
    assert rule(s, mv(T + 1, F)) == "foundation-builds-up-in-suit"
    assert rule(s, mv(T + 2, F)) == "foundation-builds-up-in-suit"
    assert rule(s, mv(T + 3, F + 1)) is None
    assert [m.dst for m in game.legal_moves(s) if m.src == T and m.dst < T] == [F]


def test_forty_thieves_foundation_cards_stay() -> None:
    s = make(["AH 2H"], ["3H"], stock="9D")
    assert rule(s, mv(F, T)) == "foundation-cards-stay"
    assert rule(s, mv(F, F + 1)) == "foundation-cards-stay"


# --- tableau ------------------------------------------------------------------------
def test_forty_thieves_tableau_builds_down_in_suit_by_one() -> None:
    s = make([], ["9H", "8H", "8S", "7H", "TH"], stock="9D")
    assert rule(s, mv(T + 1, T)) is None
    assert rule(s, mv(T + 2, T)) == "tableau-builds-down-in-suit"
    assert rule(s, mv(T + 3, T)) == "tableau-builds-down-in-suit"
    assert rule(s, mv(T + 4, T)) == "tableau-builds-down-in-suit"  # up is not allowed


def test_forty_thieves_tableau_does_not_wrap_nothing_goes_on_an_ace() -> None:
    s = make([], ["AH", "KH"], stock="9D")
    assert rule(s, mv(T + 1, T)) == "tableau-builds-down-in-suit"


def test_forty_thieves_only_one_card_moves_at_a_time() -> None:
    s = make([], ["3C 9H 8H", "TH", "9H"], stock="9D")
    assert rule(s, mv(T, T + 1, 2)) == "one-card-at-a-time"
    assert rule(s, mv(T, T + 2, 1)) is None


def test_forty_thieves_empty_pile_takes_any_card() -> None:
    s = make([], ["3C 9H", "", "5D"], stock="9D", waste="QS")
    legal = game.legal_moves(s)
    assert mv(T, T + 1) in legal
    assert mv(WASTE, T + 1) in legal
    assert rule(s, mv(T + 2, T + 1)) == "pointless-move"  # a pile's only card


def test_forty_thieves_every_empty_pile_is_a_separate_target() -> None:
    s = make([], ["3C 9H", "", "5D", "", *FILL[4:]], stock="9D")
    assert [m.dst for m in game.legal_moves(s) if m.src == T] == [T + 1, T + 3]


# --- stock and waste ----------------------------------------------------------------
def test_forty_thieves_deal_turns_one_card_onto_the_waste() -> None:
    s = game.initial_state(9)
    new, events = game.play(s, DEAL)
    assert new.piles[WASTE] == s.piles[STOCK][-1:]
    assert len(new.piles[STOCK]) == 63
    assert events[0].kind == EventKind.DEAL


def test_forty_thieves_has_no_redeal() -> None:
    s = make([], ["9D"], waste="KH QC")
    assert DEAL not in game.legal_moves(s)
    assert rule(s, DEAL) == "stock-empty"
    assert rule(s, REDEAL) == "no-redeal"


def test_forty_thieves_waste_top_plays_to_foundation_and_tableau() -> None:
    s = make(["AS"], ["3S"], stock="9D", waste="KD 2S")
    assert rule(s, mv(WASTE, F)) is None
    assert rule(s, mv(WASTE, T)) is None
    assert rule(s, mv(T, WASTE)) == "waste-takes-only-deals"
    assert rule(s, mv(T, STOCK)) == "stock-takes-no-cards"
    assert rule(s, mv(STOCK, T)) == "stock-deals-only"


# --- end of game --------------------------------------------------------------------
def test_forty_thieves_won_when_all_104_cards_are_on_the_foundations() -> None:
    s = make([up_to("K", x) for x in "CCDDHHSS"])
    assert not game.validate(s)
    assert game.status(s) == Status.WON


def test_forty_thieves_lost_when_no_move_is_left() -> None:
    s = make([], ["9C", "JC", "KC", "9D", "JD", "KD", "9H", "JH", "KH", "9S"], waste="QD KS")
    assert game.legal_moves(s) == []
    assert game.status(s) == Status.LOST


# --- autoplay -----------------------------------------------------------------------
def test_forty_thieves_autoplay_always_moves_an_ace() -> None:
    s = make([], ["5D AH"], stock="9D")
    assert game.autoplay_move(s) == mv(T, F)


def test_forty_thieves_autoplay_moves_a_card_once_both_lower_cards_of_its_suit_are_home() -> None:
    s = make(["AH", "AH 2H"], ["5D 2H", "3H"], stock="9D")
    assert game.autoplay_move(s) == mv(T, F)  # both AH home: 2H is safe
    s = make(["AH 2H", "AH"], ["5D 3H"], stock="9D")
    assert game.autoplay_move(s) is None  # only one 2H home: 3H could hold the other
    s = make(["AH 2H", "AH 2H"], ["5D 9C"], stock="9D", waste="3H")
    assert game.autoplay_move(s) == mv(WASTE, F)


# --- validation ---------------------------------------------------------------------
def test_forty_thieves_validate_refuses_bad_foundations_and_piles() -> None:
    s = game.initial_state(1)
    piles = list(s.piles)
    piles[F] = piles[T]  # 3D AS KD 7D on a foundation
    piles[T] = ()
    assert any(p.where.startswith("/piles/foundation/0") for p in game.validate(State(tuple(piles), (), 1)))
    piles = list(s.piles)
    piles[T] = piles[T] + piles[T + 1]  # 8 unbuilt cards in one pile
    piles[T + 1] = ()
    assert any(p.where == "/piles/tableau/0" for p in game.validate(State(tuple(piles), (), 1)))


# --- random play --------------------------------------------------------------------
RANKS = "A23456789TJQK"


def reference_moves(s: State) -> set[Move]:
    """Every legal move, read straight from docs/rules.md (slow, independent of the engine)."""
    out: set[Move] = set()
    names = [[format_card(c) for c in p] for p in s.piles]
    for src in [*range(T, T + 10), WASTE]:
        if not names[src]:
            continue
        card = names[src][-1]
        r = RANKS.index(card[0])
        for f in range(F, F + 8):
            fp = names[f]
            if (not fp and r == 0) or (fp and fp[-1][1] == card[1] and RANKS.index(fp[-1][0]) == r - 1):
                out.add(mv(src, f))
        for t in range(T, T + 10):
            tp = names[t]
            if t == src:
                continue
            if not tp:
                if src == WASTE or len(names[src]) > 1:  # a lone card moving changes nothing
                    out.add(mv(src, t))
            elif tp[-1][1] == card[1] and RANKS.index(tp[-1][0]) == r + 1:
                out.add(mv(src, t))
    if names[STOCK]:
        out.add(DEAL)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_forty_thieves_random_play_keeps_states_valid_and_moves_checked(seed: int) -> None:
    rng = random.Random(seed)
    s = game.initial_state(rng.randrange(10**6))
    for _ in range(400):
        moves = check_against_reference(game, s, reference_moves(s), rng)
        auto = game.autoplay_move(s)
        if auto is not None:
            assert auto in moves
        if not moves:
            assert game.status(s) in (Status.WON, Status.LOST)
            break
        home = [m for m in moves if m.action == Action.MOVE and m.dst < T]
        s = game.apply(s, rng.choice(home) if home and rng.random() < 0.7 else rng.choice(moves))
