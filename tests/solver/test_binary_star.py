"""The Binary Star plug-in (service/solver/plugins/binary_star.py) against the generic
search, which tries every legal engine move on exact positions: on many small random
end games both must agree on solved versus proved unsolvable, and every solution the
plug-in finds must replay through the engine.

Two kinds of position: valid end games of the real game (the stars hold most of the
deck, so every pair kind is plentiful), and positions of a test-only variant whose
stars start short and which is won when the fans are empty: there pair kinds are
scarce, which exercises the counts in the key and the gaps of free positions.
Each check runs twice: with the plug-in's restart budget as shipped, and with a tiny
one, so that runs are cut short, restarted and the set of dead positions reused.
Besides: along random paths the plug-in's children are exactly the engine's
one-card-away positions (less dead ends) with the right counts and tops, and the
packed key is equal exactly for equal abstract nodes.
"""

from __future__ import annotations

import random

import pytest

import service.solver.plugins.binary_star as plugin
from service.engine.binary_star import FAN_CARDS, FAN_RANGE, FANS, STAR_BASES, STAR_RANGE, BinaryStar
from service.engine.core import State
from service.engine.registry import get_game
from service.solver.plugins import strategy_for
from service.solver.search import Limits, Outcome, SolveResult, Strategy, solve, verify
from tests.helpers import grow_stars

STAR_CARDS = tuple(c for c in BinaryStar().deck() if c not in STAR_BASES) + STAR_BASES


class ShortBinaryStar(BinaryStar):
    """Binary Star on a part of the deck: won when every fan is empty."""

    id = "binary-star"  # the plug-in and the generic search treat it as Binary Star

    def is_won(self, state: State) -> bool:
        return not any(state.piles[f] for f in FAN_RANGE)


def deal_fans(rng: random.Random, cards: list[int], used: int = 17) -> list[list[int]]:
    """``cards`` dealt at random to ``used`` of the 17 fans (fewer fans: more cards
    covered by others, so more orders forced)."""
    fans: list[list[int]] = [[] for _ in range(FANS)]
    some = rng.sample(fans, used)
    for c in cards:
        rng.choice([f for f in some if len(f) < FAN_CARDS] or [f for f in fans if len(f) < FAN_CARDS]).append(c)
    return fans


def end_game(rng: random.Random, left: int) -> tuple[BinaryStar, State]:
    """A valid position of the real game with about ``left`` cards still in the fans."""
    game = get_game("binary-star", {})
    assert isinstance(game, BinaryStar)
    pool = list(game.deck())
    for star_base in STAR_BASES:
        pool.remove(star_base)
    stars = [[STAR_BASES[0]], [STAR_BASES[1]]]
    grow_stars(rng, pool, stars, left)
    state = State(tuple(tuple(p) for p in (*stars, *deal_fans(rng, pool, rng.randint(3, 17)))), (), 1)
    assert not game.validate(state)
    return game, state


def short_game(rng: random.Random, star_cards: int, left: int) -> tuple[BinaryStar, State]:
    """Stars of a few cards (pair kinds scarce) and ``left`` cards in the fans: the
    stars are grown by a random walk, then their last cards go back to the fans in
    random order, with up to two other cards of the deck; the rest is left out."""
    pool = list(STAR_CARDS[:-2])
    stars = [[STAR_BASES[0]], [STAR_BASES[1]]]
    grow_stars(rng, pool, stars, len(pool) - star_cards - left)
    back: list[int] = []
    while len(back) < left and max(len(s) for s in stars) > 1:
        star = rng.choice([s for s in stars if len(s) > 1])
        back.append(star.pop())
    back += rng.sample(pool, rng.randint(0, 2))
    rng.shuffle(back)
    fans = deal_fans(rng, back, rng.randint(2, 6))
    return ShortBinaryStar(), State(tuple(tuple(p) for p in (*stars, *fans)), (), 1)


def check(game: BinaryStar, state: State, verdicts: dict[Outcome, int]) -> None:
    """Both searches on ``state``; the generic one may run out of time (it walks every
    split of long stars), the plug-in must not."""
    plug = solve(strategy_for(game, state), Limits(5, 10**6))
    assert plug.result is not Outcome.UNKNOWN, state
    if plug.result is Outcome.SOLVED:
        assert verify(game, state, plug.moves), state
    plain = solve(Strategy(game, state), Limits(60, 5_000))  # positions, not seconds: machine-independent
    if plain.result is Outcome.UNKNOWN:
        verdicts[Outcome.UNKNOWN] += 1
        return
    assert plug.result == plain.result, state
    verdicts[plug.result] += 1


@pytest.fixture(params=["shipped", "tiny-budget"])
def budget(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "tiny-budget":
        monkeypatch.setattr(plugin, "LUBY_UNIT", 1)
    return str(request.param)


def test_end_games_agree_with_generic_search(budget: str) -> None:
    rng = random.Random("binary-star end games")
    verdicts = {Outcome.SOLVED: 0, Outcome.UNSOLVABLE: 0, Outcome.UNKNOWN: 0}
    for _ in range(80):
        check(*end_game(rng, rng.randint(3, 8)), verdicts)
    assert verdicts[Outcome.SOLVED] >= 10 and verdicts[Outcome.UNSOLVABLE] >= 10, verdicts


def test_short_stars_agree_with_generic_search(budget: str) -> None:
    rng = random.Random("binary-star short stars")
    verdicts = {Outcome.SOLVED: 0, Outcome.UNSOLVABLE: 0, Outcome.UNKNOWN: 0}
    for _ in range(80):
        check(*short_game(rng, rng.randint(0, 8), rng.randint(2, 8)), verdicts)
    assert verdicts[Outcome.SOLVED] >= 10 and verdicts[Outcome.UNSOLVABLE] >= 10, verdicts


def one_card_away(game: BinaryStar, state: State) -> set[tuple[object, ...]]:
    """The abstract nodes (plug-in form) one fan card away through the engine: every
    fan move after any series of moves between the stars."""
    strategy = strategy_for(game, state)
    assert isinstance(strategy, plugin.BinaryStarStrategy)
    seen = {state.piles}
    todo = [state]
    out: set[tuple[object, ...]] = set()
    while todo:
        st = todo.pop()
        for m in game.legal_moves(st):
            nxt = game.apply(st, m)
            if m.src in STAR_RANGE:  # between the stars
                if nxt.piles not in seen:
                    seen.add(nxt.piles)
                    todo.append(nxt)
            else:
                out.add(strategy.node_of(nxt))  # type: ignore[arg-type]
    return out


def dead_end(node: tuple[object, ...]) -> bool:
    """Stuck, cards left, and no fan top fits either top."""
    fans, _, a, b = node
    assert isinstance(fans, tuple) and isinstance(a, int) and isinstance(b, int)
    tops = [fp[-1] for fp in fans if fp]
    return bool(a) and bool(tops) and not any(plugin.ONE_APART[c][a] or plugin.ONE_APART[c][b] for c in tops)


@pytest.mark.parametrize("kind", ["end game", "short stars"])
def test_children_are_the_engine_moves(kind: str) -> None:
    """Along random paths: the plug-in's children are exactly the positions one fan card
    away through the engine (less dead ends), with the same counts and tops, and the
    moves it rebuilds for a path are legal and lead to that child."""
    rng = random.Random(kind)
    checked = 0
    for _ in range(60):
        if kind == "end game":
            game, state = end_game(rng, rng.randint(4, 10))
        else:
            game, state = short_game(rng, rng.randint(0, 8), rng.randint(3, 8))
        strategy = strategy_for(game, state)
        assert isinstance(strategy, plugin.BinaryStarStrategy)
        node = strategy.node_of(state)
        assert node is not None
        search = plugin._Search(*node, Limits(10, 10**6))
        fans, counts, a, b = node
        h = [len(fp) for fp in fans]
        path: list[tuple[int, int, int]] = []
        cur = state
        while sum(h):
            kids = search.children(h, counts, a, b, sum(h), 0, rng)
            got = set()
            for _, i, cnt, na, nb, step in kids:
                h2 = list(h)
                h2[i] -= 1
                child = (tuple(fp[:n] for fp, n in zip(fans, h2, strict=True)), cnt, na, nb)
                got.add(child)
                st = cur
                for m in strategy.moves_of(state, [*path, step])[len(strategy.moves_of(state, path)) :]:
                    assert m in game.legal_moves(st)
                    st = game.apply(st, m)
                assert strategy.node_of(st) == child
                checked += 1
            engine = one_card_away(game, cur)
            assert got <= engine
            assert all(dead_end(n) or not sum(map(len, n[0])) for n in engine - got)  # type: ignore[call-overload]
            if not kids:
                break
            _, i, counts, a, b, step = rng.choice(kids)
            h[i] -= 1
            for m in strategy.moves_of(state, [*path, step])[len(strategy.moves_of(state, path)) :]:
                cur = game.apply(cur, m)
            path.append(step)
    assert checked > 300, checked


def test_key_names_exactly_the_abstract_node() -> None:
    """Keys of random abstract nodes are equal exactly when the nodes are: the same
    fan contents (in any fans), counts and unordered tops."""
    # the fields do not overlap: tops (two 4-bit ranks), 13 counts of 6 bits, fans
    assert plugin.SH[0] >= 8 and all(plugin.SH[k + 1] - plugin.SH[k] >= 6 for k in range(12))
    assert plugin.SH[12] + 6 <= plugin.FANS_SHIFT
    rng = random.Random("binary-star keys")
    fans = (b"\x01\x02\x03", b"\x03\x02\x01", b"\x01\x02", b"\x01", b"\x05\x05\x05\x05\x05\x05") + (b"",) * 12
    search = plugin._Search(fans, 0, 0, 0, Limits(1, 1))
    named: dict[int, tuple[object, ...]] = {}
    bases = [sum(rng.choice((0, 1, 2, 60)) << plugin.SH[k] for k in range(13)) for _ in range(3)]
    for _ in range(20000):
        h = [rng.randint(0, len(fp)) for fp in fans]
        # few counts, so that nodes differing in one field only are often drawn
        counts = bases[rng.randrange(3)] + (rng.randint(0, 3) << plugin.SH[0]) + (rng.randint(0, 3) << plugin.SH[12])
        a = rng.randint(0, 13)
        b = rng.randint(a, 13) if a else 0
        node = (sorted(fp[:n] for fp, n in zip(fans, h, strict=True)), counts, a, b)
        assert named.setdefault(search.key(h, counts, a, b), node) == node
    # fan 0 cut to A 2 and fan 2 to A hold what fans 2 and 3 whole hold: one key
    assert search.key([2, 0, 1, 0, 0] + [0] * 12, 5, 3, 4) == search.key([0, 0, 2, 1, 0] + [0] * 12, 5, 3, 4)


def test_deals_solve_and_replay() -> None:
    """Whole deals: the solutions (with their moves between the stars) replay."""
    game = get_game("binary-star", {})
    for deal in (1, 2, 6, 7):
        state = game.initial_state(deal)
        r: SolveResult = solve(strategy_for(game, state), Limits(10, 10**6))
        assert r.result is Outcome.SOLVED, deal
        assert verify(game, state, r.moves)


def test_deals_lost_within_two_moves_are_unsolvable() -> None:
    """Deals whose every first move leaves no second one: both searches prove it."""
    game = get_game("binary-star", {})
    for deal in (42, 63, 77):
        state = game.initial_state(deal)
        assert solve(strategy_for(game, state), Limits(10, 10**6)).result is Outcome.UNSOLVABLE
        assert solve(Strategy(game, state), Limits(10, 10**6)).result is Outcome.UNSOLVABLE
