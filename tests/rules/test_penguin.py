"""One test per rule of the Penguin family (docs/rules.md, "The Penguin family")."""

from __future__ import annotations

from collections import Counter

import pytest

from service.engine.cards import format_card, parse_card, rank_of
from service.engine.core import Action, Move, RulesError, Status
from service.engine.penguin import Opus, Pelican, Penguin, PenguinFreecellMoves, PenguinII
from service.engine.registry import get_game
from tests.helpers import mv, position, refs

PENGUIN = get_game("penguin")
PENGUIN_II = get_game("penguin-ii")
OPUS = get_game("opus")
PELICAN = get_game("pelican")
FCM = get_game("penguin-freecell-moves")


def cards(text: str) -> tuple[int, ...]:
    return tuple(parse_card(t) for t in text.split())


# --- deals ------------------------------------------------------------------------
@pytest.mark.parametrize("game", [PENGUIN, PENGUIN_II, OPUS, FCM], ids=lambda g: g.id)
def test_beak_deal_shape_49_tableau_cards_three_base_cards(game):
    for deal in (1, 2, 3, 31999, 32000, 10**19):
        s = game.initial_state(deal)
        tab = [s.piles[t] for t in game.T]
        assert [len(p) for p in tab] == [7] * 7
        f = [s.piles[i] for i in game.F]
        assert [len(p) for p in f] == [1, 1, 1, 0], "three base cards, foundation 3 waits for the beak"
        beak = tab[0][0]
        assert {rank_of(c) for p in f[:3] for c in p} == {rank_of(beak)}, "base cards share the beak's rank"
        assert game.base_rank(s) == rank_of(beak)
        assert all(not s.piles[c] for c in game.C)
        assert Counter(c for p in s.piles for c in p) == Counter(game.deck())


def test_penguin_deal_1_matches_pysolfc():
    """Deal 1 as PySolFC deals it (docs/pysolfc-deals.md): the beak is the deepest of
    the four Jacks put on top of the talon."""
    s = PENGUIN.initial_state(1)
    assert [format_card(p[0]) for p in s.piles[:3]] == ["JD", "JC", "JS"]
    t = [" ".join(format_card(c) for c in s.piles[i]) for i in PENGUIN.T]
    assert t[0] == "JH KD 3H 3C 4D 2C 3D"
    assert t[6] == "5H KH AH AC 8H 6C 6H"


def test_penguin_deal_123456_matches_pysolfc_mersenne_twister():
    s = PENGUIN.initial_state(123456)
    assert [format_card(p[0]) for p in s.piles[:3]] == ["3D", "3S", "3C"]
    assert " ".join(format_card(c) for c in s.piles[PENGUIN.T[0]]) == "3H KC 2S 8H 6S 7D JH"


def test_opus_deals_as_penguin_with_five_cells():
    a, b = PENGUIN.initial_state(77), OPUS.initial_state(77)
    assert [a.piles[t] for t in PENGUIN.T] == [b.piles[t] for t in OPUS.T]
    assert len(OPUS.C) == 5 and len(PENGUIN.C) == 7


def test_pelican_deal_8_8_8_7_7_7_7_and_empty_foundations():
    s = PELICAN.initial_state(5)
    assert [len(s.piles[t]) for t in PELICAN.T] == [8, 8, 8, 7, 7, 7, 7]
    assert all(not s.piles[f] for f in PELICAN.F)
    assert PELICAN.base_rank(s) == 1


def test_same_deal_number_gives_same_deal():
    for game in (PENGUIN, PELICAN):
        assert game.initial_state(424242) == game.initial_state(424242)
        assert game.initial_state(1) != game.initial_state(2)


# --- foundations --------------------------------------------------------------------
def test_foundation_builds_up_in_suit_wrapping_king_to_ace():
    s = position(PENGUIN, foundation=["JC QC KC", "JD", "JH", "JS"], tableau=["AC", "AD", "2C"])
    assert ("tableau:0", "foundation:0", 1) in refs(PENGUIN, PENGUIN.legal_moves(s))
    assert ("tableau:1", "foundation:1", 1) not in refs(PENGUIN, PENGUIN.legal_moves(s))
    assert ("tableau:2", "foundation:0", 1) not in refs(PENGUIN, PENGUIN.legal_moves(s))
    r = PENGUIN.check_move(s, mv(PENGUIN, "tableau:2", "foundation:0"))
    assert r and r.rule == "foundation-builds-up-in-suit"


def test_foundation_full_at_13_cards_takes_nothing_more():
    full = "5C 6C 7C 8C 9C TC JC QC KC AC 2C 3C 4C"
    s = position(PENGUIN, foundation=[full, "5D", "5H", ""], tableau=["5S"])
    assert ("tableau:0", "foundation:3", 1) in refs(PENGUIN, PENGUIN.legal_moves(s))
    assert all(m.dst != 0 for m in PENGUIN.legal_moves(s))


def test_empty_foundation_takes_only_base_rank():
    s = position(PENGUIN, foundation=["5C", "5D", "5H", ""], tableau=["5S", "6S"])
    moves = refs(PENGUIN, PENGUIN.legal_moves(s))
    assert ("tableau:0", "foundation:3", 1) in moves
    r = PENGUIN.check_move(s, mv(PENGUIN, "tableau:1", "foundation:3"))
    assert r and r.rule == "foundation-base"


def test_pelican_any_empty_foundation_takes_an_ace_each_listed():
    s = position(PELICAN, tableau=["AS"])
    targets = {m.dst for m in PELICAN.legal_moves(s) if PELICAN.group_of[m.dst] == "foundation"}
    assert targets == set(PELICAN.F)


def test_foundation_cards_stay():
    s = position(PENGUIN, foundation=["5C 6C", "5D", "5H", ""], tableau=["", "7C"])
    assert all(PENGUIN.group_of[m.src] != "foundation" for m in PENGUIN.legal_moves(s))
    r = PENGUIN.check_move(s, mv(PENGUIN, "foundation:0", "cell:0"))
    assert r and r.rule == "foundation-cards-stay"


def test_foundation_takes_one_card_at_a_time():
    s = position(PENGUIN, foundation=["5C", "5D", "5H", ""], tableau=["7C 6C"])
    r = PENGUIN.check_move(s, mv(PENGUIN, "tableau:0", "foundation:0", 2))
    assert r and r.rule == "foundation-one-card"


# --- cells ---------------------------------------------------------------------------
def test_any_available_card_to_every_empty_cell():
    s = position(PENGUIN, foundation=["5C", "5D", "5H"], cell=["9H", "", "TD"], tableau=["8S 3D"])
    to_cells = {dst for src, dst, _ in refs(PENGUIN, PENGUIN.legal_moves(s)) if src == "tableau:0" and dst.startswith("cell")}
    assert to_cells == {f"cell:{i}" for i in (1, 3, 4, 5, 6)}


def test_cell_holds_one_card():
    s = position(PENGUIN, foundation=["5C", "5D", "5H"], cell=["9H"], tableau=["8S 3D"])
    r = PENGUIN.check_move(s, mv(PENGUIN, "tableau:0", "cell:0"))
    assert r and r.rule == "cell-occupied"
    s2 = position(PENGUIN, foundation=["5C", "5D", "5H"], tableau=["4D 3D"])
    r2 = PENGUIN.check_move(s2, mv(PENGUIN, "tableau:0", "cell:0", 2))
    assert r2 and r2.rule == "cell-one-card"


def test_a_card_never_moves_from_cell_to_cell():
    s = position(PENGUIN, foundation=["5C", "5D", "5H"], cell=["9H"])
    assert all(not (PENGUIN.group_of[m.src] == "cell" and PENGUIN.group_of[m.dst] == "cell") for m in PENGUIN.legal_moves(s))
    r = PENGUIN.check_move(s, mv(PENGUIN, "cell:0", "cell:1"))
    assert r and r.rule == "cell-to-cell"


def test_cell_card_goes_to_tableau_or_foundation():
    s = position(PENGUIN, foundation=["5C 6C", "5D", "5H"], cell=["7C", "8H"], tableau=["9H"])
    moves = refs(PENGUIN, PENGUIN.legal_moves(s))
    assert ("cell:0", "foundation:0", 1) in moves
    assert ("cell:1", "tableau:0", 1) in moves


def test_opus_has_five_cells():
    assert OPUS.group("cell").count == 5


# --- tableau -------------------------------------------------------------------------
def test_tableau_builds_down_in_suit_by_one_relative_rank():
    s = position(PENGUIN, foundation=["5C", "5D", "5H"], tableau=["9H", "8H", "8D", "7H"])
    moves = refs(PENGUIN, PENGUIN.legal_moves(s))
    assert ("tableau:1", "tableau:0", 1) in moves
    assert ("tableau:2", "tableau:0", 1) not in moves
    assert ("tableau:3", "tableau:0", 1) not in moves
    r = PENGUIN.check_move(s, mv(PENGUIN, "tableau:2", "tableau:0"))
    assert r and r.rule == "tableau-builds-down-in-suit"


def test_tableau_wraps_ace_under_two_but_nothing_on_a_base_card():
    # base 5: King goes on Ace (relative ranks), a 4 (rank below base) never goes on a 5.
    s = position(PENGUIN, foundation=["5C", "5D", "5H"], tableau=["AS", "KS", "5S", "4S"])
    moves = refs(PENGUIN, PENGUIN.legal_moves(s))
    assert ("tableau:1", "tableau:0", 1) in moves
    assert ("tableau:3", "tableau:2", 1) not in moves


def test_pelican_builds_down_without_wrapping():
    s = position(PELICAN, tableau=["AS", "KS"])
    assert ("tableau:1", "tableau:0", 1) not in refs(PELICAN, PELICAN.legal_moves(s))


def test_penguin_whole_run_moves_as_one_and_any_upper_part_alone():
    s = position(PENGUIN, foundation=["5C", "5D", "5H"], tableau=["2H 9S 8S 7S 6S", "TS", "8D 7S"], cell=[])
    # Two decks are not involved: 7S appears twice only to test targets separately.
    moves = refs(PENGUIN, PENGUIN.legal_moves(s))
    assert ("tableau:0", "tableau:1", 4) in moves, "the whole run 9S-6S goes on the TS"
    assert ("tableau:0", "tableau:2", 1) in moves, "the 6S alone goes on the 7S"


def test_run_must_be_in_suit_and_descending():
    s = position(PENGUIN, foundation=["5C", "5D", "5H"], tableau=["9S 8H", "TS"])
    r = PENGUIN.check_move(s, mv(PENGUIN, "tableau:0", "tableau:1", 2))
    assert r and r.rule == "run-not-in-suit"


@pytest.mark.parametrize("game", [PENGUIN_II, OPUS], ids=lambda g: g.id)
def test_one_card_at_a_time(game):
    s = position(game, foundation=["5C", "5D", "5H"], tableau=["9S 8S", "TS", ""])
    assert all(m.count == 1 for m in game.legal_moves(s))
    r = game.check_move(s, mv(game, "tableau:0", "tableau:1", 2))
    assert r and r.rule == "one-card-at-a-time"


def test_empty_pile_takes_only_rank_below_base_or_run_starting_with_it():
    s = position(PENGUIN, foundation=["5C", "5D", "5H"], tableau=["", "9D 4S 3S", "8H", "2D 4H"])
    moves = refs(PENGUIN, PENGUIN.legal_moves(s))
    assert ("tableau:1", "tableau:0", 2) in moves, "a run starting with a Four (below base Five)"
    assert ("tableau:3", "tableau:0", 1) in moves
    assert ("tableau:1", "tableau:0", 1) not in moves
    assert ("tableau:2", "tableau:0", 1) not in moves
    r = PENGUIN.check_move(s, mv(PENGUIN, "tableau:2", "tableau:0"))
    assert r and r.rule == "empty-pile-takes-below-base"


def test_ace_base_empty_pile_takes_king_when_options_ask():
    game = get_game("pelican", {"empty_pile": "below-base"})
    s = position(game, tableau=["", "3C QS", "3C KS"])
    moves = refs(game, game.legal_moves(s))
    assert ("tableau:2", "tableau:0", 1) in moves and ("tableau:1", "tableau:0", 1) not in moves


@pytest.mark.parametrize("game", [PELICAN, FCM], ids=lambda g: g.id)
def test_empty_pile_takes_any_card_or_run(game):
    base = "AC" if game is PELICAN else "5C"
    s = position(game, foundation=[base], tableau=["", "2C 9D 8D", "2C 8H"])
    moves = refs(game, game.legal_moves(s))
    assert ("tableau:2", "tableau:0", 1) in moves
    assert ("tableau:1", "tableau:0", 2) in moves


def test_whole_pile_into_empty_pile_is_not_a_move():
    s = position(PELICAN, tableau=["", "9D 8D"])
    assert ("tableau:1", "tableau:0", 2) not in refs(PELICAN, PELICAN.legal_moves(s))
    r = PELICAN.check_move(s, mv(PELICAN, "tableau:1", "tableau:0", 2))
    assert r and r.rule == "pointless-move"


def test_free_cell_moves_run_limit():
    # 2 free cells (5 of 7 full), 1 empty pile besides the destination -> (2+1)*2 = 6.
    full = ["2C", "3C", "4C", "6C", "7C"]
    s = position(FCM, foundation=["5D", "5H", "5S"], cell=full, tableau=["KD QD JD TD 9D 8D 7D", "", "", "AH"])
    moves = refs(FCM, FCM.legal_moves(s))
    to_empty = {n for src, dst, n in moves if src == "tableau:0" and dst == "tableau:1"}
    # to an empty pile the destination does not count: (2+1) * 2^(2-1) = 6
    assert max(to_empty) == 6
    r = FCM.check_move(s, mv(FCM, "tableau:0", "tableau:1", 7))
    assert r and r.rule in ("run-too-long", "pointless-move")
    # to a non-empty pile both empty piles count: (2+1) * 2^2 = 12 >= the whole run
    s2 = position(FCM, foundation=["5D", "5H", "5S"], cell=full, tableau=["QD JD TD 9D 8D 7D 6D", "", "", "KD"])
    assert ("tableau:0", "tableau:3", 7) in refs(FCM, FCM.legal_moves(s2))
    s3 = position(FCM, foundation=["5D", "5H", "5S"], cell=[*full, "8C", "9C"], tableau=["QD JD TD", "KD", "2S", "3S", "4S", "6S", "7S"])
    r3 = FCM.check_move(s3, mv(FCM, "tableau:0", "tableau:1", 3))
    assert r3 and r3.rule == "run-too-long"
    assert ("tableau:0", "tableau:1", 1) not in refs(FCM, FCM.legal_moves(s3))


# --- win, loss, autoplay ----------------------------------------------------------------
def test_won_when_all_52_cards_on_foundations():
    suits = "CDHS"
    order = ["5", "6", "7", "8", "9", "T", "J", "Q", "K", "A", "2", "3", "4"]
    s = position(PENGUIN, foundation=[" ".join(r + su for r in order) for su in suits])
    assert PENGUIN.is_won(s) and PENGUIN.status(s) == Status.WON
    r = PENGUIN.check_move(s, Move(Action.DEAL))
    assert r and r.rule == "game-over"


def test_lost_when_no_legal_move_is_left():
    game = get_game("penguin", {"cells": 0})
    s = position(game, foundation=["5C", "5D", "5H"], tableau=["9S", "9H", "9D", "9C", "KS", "KH", "KD"])
    assert game.legal_moves(s) == []
    assert game.status(s) == Status.LOST


def test_autoplay_makes_only_foundation_moves():
    s = position(PENGUIN, foundation=["5C", "5D", "5H", ""], tableau=["9S 6C", "5S"])
    m = PENGUIN.autoplay_move(s)
    assert m is not None and PENGUIN.group_of[m.dst] == "foundation"


def test_no_deal_or_redeal_in_the_penguin_family():
    s = PENGUIN.initial_state(1)
    assert PENGUIN.check_move(s, Move(Action.DEAL)).rule == "no-deal"
    assert PENGUIN.check_move(s, Move(Action.REDEAL)).rule == "no-redeal"


# --- options -------------------------------------------------------------------------
def test_presets_are_one_engine_with_knobs():
    assert {type(g).__mro__[1] for g in (PENGUIN, PENGUIN_II, OPUS, PELICAN, FCM)} == {Penguin.__mro__[1]}
    assert PENGUIN_II.runs == "single" and OPUS.ncells == 5 and PELICAN.any_empty and FCM.runs == "free-cell-limit"
    assert isinstance(PENGUIN_II, PenguinII) and isinstance(OPUS, Opus)
    assert isinstance(PELICAN, Pelican) and isinstance(FCM, PenguinFreecellMoves)


def test_client_may_combine_options():
    g = get_game("penguin", {"cells": 3, "runs": "free-cell-limit"})
    assert g.ncells == 3 and len(g.initial_state(9).piles) == 4 + 3 + 7


@pytest.mark.parametrize(
    "options",
    [{"cells": 11}, {"cells": -1}, {"cells": "7"}, {"runs": "some"}, {"deal": "pelican"}, {"color": "red"}, {"cells": True}],
)
def test_bad_options_are_refused_with_a_reason(options):
    with pytest.raises(RulesError) as e:
        get_game("penguin", options)
    assert str(e.value)


# --- validation ------------------------------------------------------------------------
def test_validate_accepts_a_fresh_deal():
    assert PENGUIN.validate(PENGUIN.initial_state(3)) == []


def test_validate_finds_foundation_out_of_order():
    s = PENGUIN.initial_state(1)
    t0 = PENGUIN.T[0]
    piles = list(s.piles)
    # Put a wrong card on foundation 0 and take it from the tableau.
    card = piles[t0 + 1][-1]
    piles[0] = (*piles[0], card)
    piles[t0 + 1] = piles[t0 + 1][:-1]
    problems = PENGUIN.validate(s._replace(piles=tuple(piles)))
    assert problems and problems[0].where.startswith("/piles/foundation/0")


def test_validate_finds_a_tableau_pile_too_long():
    s = PENGUIN.initial_state(1)
    piles = list(s.piles)
    t = PENGUIN.T
    moved = piles[t[1]] + piles[t[2]] + piles[t[3]][:6]
    piles[t[0]] += moved
    piles[t[1]] = ()
    piles[t[2]] = ()
    piles[t[3]] = piles[t[3]][6:]
    problems = PENGUIN.validate(s._replace(piles=tuple(piles)))
    assert any("at most 19" in p.message for p in problems)
