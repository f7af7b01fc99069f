"""Boomerang (docs/rules.md "Boomerang"): one test per rule, random play (its golden deals
are in tests/golden/deals.json)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from service.engine.boomerang import GAME
from service.engine.cards import format_card, parse_card
from service.engine.core import DEAL, REDEAL, Action, EventKind, Move, State, Status
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
    fnd = (foundation or []) + [""] * (4 - len(foundation or []))
    tab = (tableau or []) + [""] * (12 - len(tableau or []))
    piles = [cards(p) for p in fnd] + [cards(p) for p in tab] + [cards(stock), cards(waste)]
    return State(tuple(piles), (), 0)


def mv(src: int, dst: int, count: int = 1) -> Move:
    return Move(Action.MOVE, src, dst, count)


def rule(state: State, move: Move) -> str | None:
    r = game.check_move(state, move)
    return None if r is None else r.rule


def suit_sequence(suit: str, n: int) -> str:
    """The first ``n`` cards of a ``suit`` foundation."""
    return " ".join(r + suit for r in "789TJQKAKQJT987A"[:n])


# --- deck and deal ------------------------------------------------------------------
def test_boomerang_deck_is_two_decks_stripped_to_ace_and_seven_to_king() -> None:
    deck = game.deck()
    assert len(deck) == 64
    counts = Counter(deck)
    assert set(counts.values()) == {2}
    assert {format_card(c)[0] for c in counts} == set("A789TJQK")
    assert [format_card(c) for c in deck] == pysol_deck(decks=2, ranks="A789TJQK")


def test_boomerang_deal_one_card_to_each_of_12_piles_rest_is_the_stock() -> None:
    s = game.initial_state(7)
    assert [len(s.piles[T + i]) for i in range(12)] == [1] * 12
    assert all(not s.piles[F + i] for i in range(4))
    assert len(s.piles[STOCK]) == 52
    assert s.piles[WASTE] == ()
    assert not game.validate(s)


@pytest.mark.parametrize("deal", [0, 1, 2, 617, 31999, 32000, 100000, 10**20 - 1])
def test_boomerang_deal_matches_pysolfc_procedure(deal: int) -> None:
    # docs/pysolfc-deals.md section 4: tableau pile i = D[i]; stock = L[:52]; the card
    # PySolFC turns onto the waste stays on top of the stock.
    talon = pysol_shuffle(pysol_deck(decks=2, ranks="A789TJQK"), deal)
    dealt = talon[::-1]
    s = game.initial_state(deal)
    assert [format_card(s.piles[T + i][0]) for i in range(12)] == dealt[:12]
    assert [format_card(c) for c in s.piles[STOCK]] == talon[:52]


# --- foundations --------------------------------------------------------------------
def test_boomerang_foundation_sequence_is_seven_up_to_ace_and_back_down_then_ace() -> None:
    assert suit_sequence("C", 16) == "7C 8C 9C TC JC QC KC AC KC QC JC TC 9C 8C 7C AC"
    for n in range(16):
        want = suit_sequence("C", n + 1).split()[-1]
        for r in "A789TJQK":
            card = r + "C"
            s = make([suit_sequence("C", n)], ["8D", "9D"], waste=card) if n else None
            if s is None:
                continue
            legal = rule(s, mv(WASTE, F)) is None
            assert legal == (card == want), (n, card)


def test_boomerang_empty_foundation_takes_a_seven_of_an_unstarted_suit_on_every_empty_one() -> None:
    s = make(["7H 8H"], ["7S", "7H"], stock="9D")
    moves = game.legal_moves(s)
    assert [m.dst for m in moves if m.src == T and m.dst < T] == [F + 1, F + 2, F + 3]
    # 7H: hearts already started on foundation 0 (and it is not the second Seven's turn)
    assert [m for m in moves if m.src == T + 1 and m.dst < T] == []
    assert rule(s, mv(T + 1, F + 1)) == "one-foundation-per-suit"


def test_boomerang_empty_foundation_refuses_anything_but_a_seven() -> None:
    s = make([], ["8S", "AS"], stock="9D")
    assert rule(s, mv(T, F)) == "foundation-starts-with-seven"
    assert rule(s, mv(T + 1, F)) == "foundation-starts-with-seven"


def test_boomerang_foundation_builds_in_suit() -> None:
    s = make(["7H"], ["8S", "8H"], stock="9D")
    assert rule(s, mv(T, F)) == "foundation-in-suit"
    assert rule(s, mv(T + 1, F)) is None


def test_boomerang_foundation_refuses_the_wrong_rank() -> None:
    s = make(["7H 8H"], ["TH", "7H"], stock="9D")
    assert rule(s, mv(T, F)) == "foundation-sequence"
    assert rule(s, mv(T + 1, F)) == "foundation-sequence"


def test_boomerang_second_seven_goes_on_the_descending_eight() -> None:
    s = make([suit_sequence("S", 14)], ["7S"], stock="9D")
    assert rule(s, mv(T, F)) is None
    assert rule(s, mv(T, F + 1)) == "one-foundation-per-suit"


def test_boomerang_foundation_cards_stay() -> None:
    s = make(["7H 8H"], ["9H"], stock="9D")
    assert rule(s, mv(F, T)) == "foundation-cards-stay"


# --- tableau ------------------------------------------------------------------------
def test_boomerang_tableau_single_card_takes_one_up_or_down_in_suit() -> None:
    s = make([], ["9S", "TS", "8S", "TH", "JS"], stock="9D")
    assert rule(s, mv(T + 1, T)) is None  # T on 9: up
    assert rule(s, mv(T + 2, T)) is None  # 8 on 9: down
    assert rule(s, mv(T + 3, T)) == "tableau-builds-in-suit"
    assert rule(s, mv(T + 4, T)) == "tableau-builds-by-one"


def test_boomerang_tableau_direction_is_read_from_the_top_two_cards() -> None:
    s = make([], ["8S 9S", "TS", "8S", "QH JH", "TH", "QH"], stock="9D")
    assert rule(s, mv(T + 1, T)) is None  # going up: T on 9
    assert rule(s, mv(T + 2, T)) == "tableau-direction"  # 8 would turn it down
    assert rule(s, mv(T + 4, T + 3)) is None  # going down: T on J
    assert rule(s, mv(T + 5, T + 3)) == "tableau-direction"


def test_boomerang_tableau_rank_order_puts_ace_above_king_without_wrapping() -> None:
    s = make([], ["KC", "AC", "7C", "AD", "AD KD", "QD KD"], stock="9D")
    assert rule(s, mv(T + 1, T)) is None  # A on K
    assert rule(s, mv(T, T + 1)) is None  # K on A
    assert rule(s, mv(T + 2, T + 1)) == "tableau-builds-by-one"  # 7 on A: no wrap
    assert rule(s, mv(T + 1, T + 2)) == "tableau-builds-by-one"  # A on 7: no wrap
    assert rule(s, mv(T + 3, T + 4)) == "tableau-direction"  # A on A K (going down)
    assert rule(s, mv(T + 3, T + 5)) is None  # A on Q K (going up)


def test_boomerang_only_the_top_card_moves_one_at_a_time() -> None:
    s = make([], ["8S 9S", "TS"], stock="9D")
    assert rule(s, mv(T, T + 1, 2)) == "one-card-at-a-time"


def test_boomerang_players_cannot_fill_an_empty_pile() -> None:
    s = make([], ["8S 9S", ""])  # stock and waste empty: the space stays empty
    assert rule(s, mv(T, T + 1)) == "no-filling-spaces"
    assert all(m.dst != T + 1 for m in game.legal_moves(s))


def test_boomerang_emptied_pile_is_refilled_from_the_stock_at_once() -> None:
    s = make([], ["7S", "9D"], stock="KH QC", waste="8D")
    new, events = game.play(s, mv(T, F))
    assert new.piles[T] == cards("QC")
    assert new.piles[STOCK] == cards("KH")
    assert [e.kind for e in events] == [EventKind.MOVE, EventKind.AUTO]
    assert events[1].src == STOCK and events[1].dst == T and events[1].cards == cards("QC")


def test_boomerang_emptied_pile_is_refilled_from_the_waste_when_the_stock_is_empty() -> None:
    s = make([], ["8S", "TS 9S"], waste="KH QC")
    new, events = game.play(s, mv(T, T + 1))  # a pile's only card builds elsewhere
    assert new.piles[T + 1] == cards("TS 9S 8S")
    assert new.piles[T] == cards("QC")
    assert new.piles[WASTE] == cards("KH")
    assert events[-1].kind == EventKind.AUTO and events[-1].src == WASTE


def test_boomerang_pile_stays_empty_when_stock_and_waste_are_empty() -> None:
    s = make([], ["7S", "9D"])
    new, events = game.play(s, mv(T, F))
    assert new.piles[T] == ()
    assert [e.kind for e in events] == [EventKind.MOVE]


# --- stock and waste ----------------------------------------------------------------
def test_boomerang_deal_turns_one_card_onto_the_waste() -> None:
    s = game.initial_state(3)
    new, events = game.play(s, DEAL)
    assert new.piles[WASTE] == s.piles[STOCK][-1:]
    assert new.piles[STOCK] == s.piles[STOCK][:-1]
    assert events[0].kind == EventKind.DEAL


def test_boomerang_has_no_redeal() -> None:
    s = make([], ["9D"], waste="KH QC")
    assert DEAL not in game.legal_moves(s)
    assert rule(s, DEAL) == "stock-empty"
    assert rule(s, REDEAL) == "no-redeal"
    assert not game.has_redeal


def test_boomerang_waste_top_plays_to_foundation_and_tableau() -> None:
    s = make(["7S"], ["9D", "QC"], stock="AC", waste="8S")
    assert rule(s, mv(WASTE, F)) is None
    s = make([], ["9D", "QC"], stock="AC", waste="8D")
    assert rule(s, mv(WASTE, T)) is None
    assert rule(s, mv(WASTE, T + 1)) == "tableau-builds-in-suit"


def test_boomerang_waste_and_stock_take_no_cards() -> None:
    s = make([], ["9D", "QC"], stock="AC", waste="8D")
    assert rule(s, mv(T, WASTE)) == "waste-takes-only-deals"
    assert rule(s, mv(T, STOCK)) == "stock-takes-no-cards"
    assert rule(s, mv(STOCK, T)) == "stock-deals-only"


# --- end of game ----------------------------------------------------------------------
def test_boomerang_won_when_all_64_cards_are_on_the_foundations() -> None:
    s = make([suit_sequence(x, 16) for x in "CDHS"])
    assert not game.validate(s)
    assert game.status(s) == Status.WON
    assert rule(s, DEAL) == "game-over"


def test_boomerang_lost_when_no_move_is_left() -> None:
    s = make([], ["9C", "JC", "KC", "9D", "JD", "KD", "9H", "JH", "KH", "9S", "JS", "KS"],
             waste="QD KC")
    assert game.legal_moves(s) == []
    assert game.status(s) == Status.LOST
    s2 = State((*s.piles[:STOCK], cards("8C"), *s.piles[WASTE:]), (), 0)
    assert game.status(s2) == Status.PLAYING  # a deal is still a move


# --- autoplay -------------------------------------------------------------------------
def test_boomerang_autoplay_moves_a_dead_second_seven_from_the_waste() -> None:
    s = make([suit_sequence("H", 14)], ["9D"], stock="KC", waste="7H")
    assert game.autoplay_move(s) == mv(WASTE, F)


def test_boomerang_autoplay_moves_a_dead_last_ace_from_a_pile_only_once_the_stock_is_empty() -> None:
    s = make([suit_sequence("H", 15)], ["AH", "9D"], stock="KC", waste="QD")
    assert game.autoplay_move(s) is None  # the refill would take the stock's top card
    s = make([suit_sequence("H", 15)], ["AH", "9D"], waste="QD")
    assert game.autoplay_move(s) == mv(T, F)


def test_boomerang_autoplay_never_moves_a_card_that_could_still_hold_another() -> None:
    # first Ace (a King is still out), first Seven, a descending Eight (a Seven is out)
    for n, card in ((7, "AH"), (0, "7H"), (13, "8H")):
        fnd = [suit_sequence("H", n)] if n else []
        s = make(fnd, ["9D"], stock="KC", waste=card)
        assert rule(s, mv(WASTE, F)) is None
        assert game.autoplay_move(s) is None, card


def test_boomerang_autoplay_rule_is_stated() -> None:
    assert "dead" in game.autoplay_rule
    assert "Decided" in game.rules_text


# --- validation -----------------------------------------------------------------------
def test_boomerang_validate_refuses_foundations_out_of_sequence() -> None:
    s = game.initial_state(1)
    piles = list(s.piles)
    # move a 9C from the tableau to a foundation without the 7C 8C under it
    piles[T + 7] = ()
    piles[F] = cards("9C")
    problems = game.validate(State(tuple(piles), (), 1))
    assert any("foundation" in p.where for p in problems)


def test_boomerang_validate_refuses_an_empty_pile_while_the_stock_has_cards() -> None:
    s = game.initial_state(1)
    piles = list(s.piles)
    piles[STOCK] = piles[STOCK] + piles[T]
    piles[T] = ()
    problems = game.validate(State(tuple(piles), (), 1))
    assert any("refilled" in p.message for p in problems)


def test_boomerang_validate_refuses_a_pile_that_changes_direction() -> None:
    s = game.initial_state(1)
    piles = list(s.piles)
    stock = list(piles[STOCK])
    for c in cards("7S 8S"):
        stock.remove(c)
    piles[STOCK] = tuple(stock)
    piles[T + 2] = cards("8S 7S 8S")  # 8S dealt there, then 7S and 8S: down then up
    problems = game.validate(State(tuple(piles), (), 1))
    assert any("single direction" in p.message for p in problems)


# --- random play --------------------------------------------------------------------
ORDER = "789TJQKA"


def reference_moves(s: State) -> set[Move]:
    """Every legal move, read straight from docs/rules.md (slow, independent of the engine)."""
    out: set[Move] = set()
    names = [[format_card(c) for c in p] for p in s.piles]
    for src in [*range(T, T + 12), WASTE]:
        if not names[src]:
            continue
        card = names[src][-1]
        for f in range(F, F + 4):
            fp = names[f]
            if not fp:
                others = {names[g][0][1] for g in range(F, F + 4) if names[g]}
                ok = card[0] == "7" and card[1] not in others
            else:
                ok = (
                    card[1] == fp[0][1]
                    and len(fp) < 16
                    and card[0] == "789TJQKAKQJT987A"[len(fp)]
                )
            if ok:
                out.add(mv(src, f))
        for t in range(T, T + 12):
            tp = names[t]
            if t == src or not tp or tp[-1][1] != card[1]:
                continue
            step = ORDER.index(card[0]) - ORDER.index(tp[-1][0])
            # a single card either way; else the direction of the top two
            want = (1, -1) if len(tp) == 1 else (ORDER.index(tp[-1][0]) - ORDER.index(tp[-2][0]),)
            if step in want:
                out.add(mv(src, t))
    if names[STOCK]:
        out.add(DEAL)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_boomerang_random_play_keeps_states_valid_and_moves_checked(seed: int) -> None:
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
        # prefer foundation moves so games get somewhere
        home = [m for m in moves if m.action == Action.MOVE and m.dst < T]
        s = game.apply(s, rng.choice(home) if home and rng.random() < 0.7 else rng.choice(moves))
