"""Binary Star (docs/rules.md "Binary Star"): one test per rule, exact loss, random play
(its golden deals are in tests/golden/deals.json)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.binary_star import GAME, consecutive, reachable_tops
from service.engine.cards import RANKS, format_card, make_card, parse_card, rank_above, rank_below, rank_of
from service.engine.core import DEAL, REDEAL, Action, Move, State, Status
from service.engine.shuffle import pysol_deck, pysol_shuffle
from tests.helpers import check_against_reference

game = GAME()
S = game.group_start["star"]
FAN = game.group_start["fan"]


def cards(text: str) -> tuple[int, ...]:
    return tuple(parse_card(t) for t in text.split())


def make(stars: tuple[str, str] = ("AS", "KH"), fans: list[str] | None = None) -> State:
    fan_piles = (fans or []) + [""] * (17 - len(fans or []))
    return State(tuple(cards(p) for p in (*stars, *fan_piles)), (), 0)


def mv(src: int, dst: int, count: int = 1) -> Move:
    return Move(Action.MOVE, src, dst, count)


def rule(state: State, move: Move) -> str | None:
    r = game.check_move(state, move)
    return None if r is None else r.rule


# --- deck and deal ------------------------------------------------------------------
def test_binary_star_deck_is_two_full_decks() -> None:
    deck = game.deck()
    assert len(deck) == 104
    assert set(Counter(deck).values()) == {2}
    assert [format_card(c) for c in deck] == pysol_deck(decks=2)


def test_binary_star_ace_of_spades_and_king_of_hearts_start_the_stars() -> None:
    for deal in (1, 2, 40000):
        s = game.initial_state(deal)
        assert s.piles[S] == cards("AS") and s.piles[S + 1] == cards("KH")


def test_binary_star_deal_17_fans_of_6() -> None:
    s = game.initial_state(11)
    assert [len(s.piles[FAN + i]) for i in range(17)] == [6] * 17
    assert not game.validate(s)


@pytest.mark.parametrize("deal", [0, 1, 2, 617, 31999, 32000, 240000, 10**20 - 1])
def test_binary_star_deal_takes_the_first_decks_star_cards_as_pysolfc(deal: int) -> None:
    # docs/pysolfc-deals.md section 5: creation indices 13 (AS) and 38 (KH) of deck 0
    # go to the stars; the other 102 cards are dealt row by row to the 17 fans.
    names = pysol_deck(decks=2)
    order = pysol_shuffle(range(104), deal)
    dealt = [names[i] for i in order if i not in (13, 38)][::-1]
    s = game.initial_state(deal)
    for i in range(17):
        assert [format_card(c) for c in s.piles[FAN + i]] == dealt[i::17]


# --- stars --------------------------------------------------------------------------
def test_binary_star_stars_build_up_or_down_by_one_regardless_of_suit() -> None:
    s = make(("AS 2C", "KH"), ["3D", "AH", "4S", "2S"])
    assert rule(s, mv(FAN, S)) is None  # 3 on 2: up
    assert rule(s, mv(FAN + 1, S)) is None  # A on 2: down
    assert rule(s, mv(FAN + 2, S)) == "star-builds-up-or-down-by-one"
    assert rule(s, mv(FAN + 3, S)) == "star-builds-up-or-down-by-one"  # same rank


def test_binary_star_ace_and_king_are_consecutive() -> None:
    s = make(("AS", "KH"), ["KC", "AD", "QD", "2H"])
    assert rule(s, mv(FAN, S)) is None  # K on A
    assert rule(s, mv(FAN + 1, S + 1)) is None  # A on K
    assert rule(s, mv(FAN + 2, S + 1)) is None  # Q on K
    assert rule(s, mv(FAN + 3, S)) is None  # 2 on A
    assert rule(s, mv(FAN + 3, S + 1)) == "star-builds-up-or-down-by-one"


def test_binary_star_each_fitting_star_is_a_separate_target() -> None:
    s = make(("AS 2S", "KH"), ["AD"])  # A fits on 2 and on K
    assert [m.dst for m in game.legal_moves(s) if m.src == FAN] == [S, S + 1]


def test_binary_star_top_of_one_star_moves_to_the_other_when_it_fits() -> None:
    s = make(("AS 2S", "KH 2D"), ["7C"])
    assert rule(s, mv(S, S + 1)) == "star-builds-up-or-down-by-one"
    s = make(("AS 2S", "KH AD"), ["7C"])
    assert rule(s, mv(S, S + 1)) is None
    assert rule(s, mv(S + 1, S)) is None


def test_binary_star_a_stars_starting_card_never_moves() -> None:
    s = make(("AS", "KH QD KC"), ["7C"])
    assert rule(s, mv(S + 1, S)) is None
    assert rule(s, mv(S, S + 1)) == "star-base-stays"
    assert mv(S, S + 1) not in game.legal_moves(s)


def test_binary_star_star_cards_never_go_back_to_the_fans() -> None:
    s = make(("AS 2S", "KH"), ["3C"])
    assert rule(s, mv(S, FAN)) == "star-cards-stay"
    assert rule(s, mv(S, FAN + 5)) == "star-cards-stay"


# --- fans ---------------------------------------------------------------------------
def test_binary_star_fans_allow_no_building() -> None:
    s = make(("AS", "KH"), ["3C", "2C"])
    assert rule(s, mv(FAN + 1, FAN)) == "fans-take-no-cards"
    assert rule(s, mv(FAN, FAN + 2)) == "fans-take-no-cards"  # not even an empty fan


def test_binary_star_only_a_fans_top_card_moves_one_at_a_time() -> None:
    s = make(("AS", "KH"), ["2C 7D"])
    assert rule(s, mv(FAN, S)) == "star-builds-up-or-down-by-one"  # 2C is under 7D
    assert rule(s, mv(FAN, S, 2)) == "one-card-at-a-time"


def test_binary_star_has_no_stock() -> None:
    s = game.initial_state(1)
    assert rule(s, DEAL) == "no-deal"
    assert rule(s, REDEAL) == "no-redeal"


# --- end of game --------------------------------------------------------------------
def full_stars() -> tuple[str, str]:
    # 52 cards each: A 2 .. K repeated around the circle, in any suits
    names = [format_card(c) for c in game.deck()]
    left = Counter(names)
    for base in ("AS", "KH"):
        left[base] -= 1
    star0, star1 = ["AS"], ["KH"]
    for star, start in ((star0, 1), (star1, 11)):
        r = start
        while len(star) < 52:
            pick = next(n for n in sorted(left) if n[0] == RANKS[r] and left[n] > 0)
            left[pick] -= 1
            star.append(pick)
            r = (r + 1) % 13 if star is star0 else (r - 1) % 13
    return " ".join(star0), " ".join(star1)


def test_binary_star_won_when_all_104_cards_are_on_the_stars() -> None:
    s = make(full_stars())
    assert not game.validate(s)
    assert game.status(s) == Status.WON


def test_binary_star_playing_while_star_moves_can_open_a_fan_play() -> None:
    # no fan card fits a star top (3S, 5H) and the tops are not consecutive, so no
    # star-to-star move is possible either: lost.
    s = make(("AS 2C 3S", "KH QD JC TD 9S 8H 7C 6D 5H"), ["9C"])
    assert game.legal_moves(s) == []
    assert game.status(s) == Status.LOST
    # tops 3S and 4H are consecutive: the stars can shuttle cards; moving star 1's
    # 4H 5H 6D 7C onto star 0 exposes its 8H, which the fan's 9D fits.
    s = make(("AS 2C 3S", "KH QD JC TD 9S 8H 7C 6D 5H 4H"), ["9D"])
    assert all(m.src < FAN for m in game.legal_moves(s))  # only star-to-star moves
    assert game.status(s) == Status.PLAYING


def test_binary_star_lost_when_no_fan_card_can_ever_reach_a_star() -> None:
    # tops consecutive, star moves listed, but no fan card fits any star card
    s = make(("AS 2C", "KH AD"), ["6D", "7S 8C"])
    moves = game.legal_moves(s)
    assert moves and all(m.src < FAN and m.dst < FAN for m in moves)
    assert game.status(s) == Status.LOST


def test_binary_star_status_loss_is_exact_against_brute_force() -> None:
    rng = random.Random(5)
    checked = 0
    for _ in range(300):
        s = random_position(rng)
        want = brute_force_can_play(s)
        got = game.status(s)
        assert got == (Status.PLAYING if want else Status.LOST), s
        checked += 1
    assert checked == 300


# --- the reachable star tops --------------------------------------------------------
def brute_force_tops(a: tuple[int, ...], b: tuple[int, ...]) -> set[int]:
    seen = {(a, b)}
    todo = [(a, b)]
    tops: set[int] = set()
    while todo:
        x, y = todo.pop()
        tops.update((x[-1], y[-1]))
        nxt = []
        if len(x) > 1 and consecutive(x[-1], y[-1]):
            nxt.append((x[:-1], y + x[-1:]))
        if len(y) > 1 and consecutive(x[-1], y[-1]):
            nxt.append((x + y[-1:], y[:-1]))
        for p in nxt:
            if p not in seen:
                seen.add(p)
                todo.append(p)
    return tops


def brute_force_can_play(s: State) -> bool:
    tops = brute_force_tops(s.piles[S], s.piles[S + 1])
    return any(fp and any(consecutive(fp[-1], t) for t in tops) for fp in s.piles[FAN:])


def star_strategy(base: int) -> st.SearchStrategy[tuple[int, ...]]:
    steps = st.lists(st.sampled_from((rank_above, rank_below)), max_size=12)
    suits = st.lists(st.integers(0, 3), min_size=12, max_size=12)

    def build(args: tuple[list[Callable[[int], int]], list[int]]) -> tuple[int, ...]:
        ds, ss = args
        out = [base]
        for step, suit in zip(ds, ss, strict=False):
            out.append(make_card(step(rank_of(out[-1])), suit))
        return tuple(out)

    return st.tuples(steps, suits).map(build)


@settings(max_examples=300, deadline=None)
@given(star_strategy(parse_card("AS")), star_strategy(parse_card("KH")))
def test_binary_star_reachable_tops_equal_brute_force_search(
    a: tuple[int, ...], b: tuple[int, ...]
) -> None:
    assert set(reachable_tops(a, b)) == brute_force_tops(a, b)


def random_position(rng: random.Random) -> State:
    stars = []
    for base in ("AS", "KH"):
        star = [parse_card(base)]
        for _ in range(rng.randrange(8)):
            step = rng.choice((rank_above, rank_below))
            star.append(make_card(step(rank_of(star[-1])), rng.randrange(4)))
        stars.append(tuple(star))
    fans = [
        tuple(make_card(rng.randrange(1, 14), rng.randrange(4)) for _ in range(rng.randrange(2)))
        for _ in range(17)
    ]
    return State((*stars, *fans), (), 0)


# --- autoplay -----------------------------------------------------------------------
def test_binary_star_autoplay_is_none() -> None:
    s = game.initial_state(240000)
    assert game.legal_moves(s)
    assert game.autoplay_move(s) is None
    assert game.autoplay_rule.startswith("none")


# --- validation ---------------------------------------------------------------------
def test_binary_star_validate_refuses_bad_stars_and_fans() -> None:
    s = game.initial_state(1)
    piles = list(s.piles)
    piles[S], piles[S + 1] = piles[S + 1], piles[S]  # KH under star 0
    assert any(p.where.startswith("/piles/star/0") for p in game.validate(State(tuple(piles), (), 1)))
    piles = list(s.piles)
    piles[S] = piles[S] + piles[FAN][-1:]  # QD on AS: not consecutive
    piles[FAN] = piles[FAN][:-1]
    assert any(p.where == "/piles/star/0/1" for p in game.validate(State(tuple(piles), (), 1)))
    piles = list(s.piles)
    piles[FAN] = piles[FAN] + piles[FAN + 1]
    piles[FAN + 1] = ()
    assert any(p.where == "/piles/fan/0" for p in game.validate(State(tuple(piles), (), 1)))


# --- random play --------------------------------------------------------------------
def reference_moves(s: State) -> set[Move]:
    """Every legal move, read straight from docs/rules.md (slow, independent of the engine)."""
    out: set[Move] = set()
    names = [[format_card(c) for c in p] for p in s.piles]

    def fits(a: str, b: str) -> bool:
        return (RANKS.index(a[0]) - RANKS.index(b[0])) % 13 in (1, 12)

    for src in range(len(names)):
        if not names[src] or (src < FAN and len(names[src]) == 1):
            continue
        for dst in (S, S + 1):
            if dst != src and fits(names[src][-1], names[dst][-1]):
                out.add(mv(src, dst))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_binary_star_random_play_keeps_states_valid_and_moves_checked(seed: int) -> None:
    rng = random.Random(seed)
    s = game.initial_state(rng.randrange(10**6))
    for _ in range(300):
        moves = check_against_reference(game, s, reference_moves(s), rng)
        status = game.status(s)
        assert (status == Status.PLAYING) == brute_force_can_play(s)
        if status != Status.PLAYING:
            break
        fan_moves = [m for m in moves if m.src >= FAN]
        s = game.apply(s, rng.choice(fan_moves) if fan_moves and rng.random() < 0.8 else rng.choice(moves))
