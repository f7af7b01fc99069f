"""Forty Thieves solver: its pruning never changes a verdict, its beam passes only ever
find wins, and its solutions replay through the engine.

On small end games (random ones, mostly won, and deals played out at random to an
empty stock, mostly lost) the plug-in and the generic search (every legal move, exact
positions, engine autoplay only) must agree on solved versus proved unsolvable."""

from __future__ import annotations

import random
import time

import pytest

from service.engine.cards import make_card, rank_of, suit_of
from service.engine.core import Action, Move, State
from service.engine.registry import get_game
from service.solver import Limits
from service.solver.plugins import strategy_for
from service.solver.plugins.forty_thieves import BeamPass, FortyThievesStrategy, PassEnd, _Dfs
from service.solver.search import Strategy, depth_first, solve, verify

GAME = get_game("forty-thieves")
F = GAME.group_range("foundation")
T = GAME.group_range("tableau")
STOCK = GAME.group_start["stock"]
WASTE = GAME.group_start["waste"]
FOUNDATIONS = slice(F.start, F.stop)
TABLEAU = slice(T.start, T.stop)
# A pass with the strategy's default weights and buried term, width and look-around
# wide enough to drop nothing on the small end games below.
WIDE = BeamPass(10**6, 10**6, 5.0, 2.0, False)


def random_end_game(rng: random.Random, left: int) -> State:
    """The 8 foundations built from the Ace to random heights (both of a suit alike),
    the ``left`` or so other cards shared at random: 20 to 24 to the 10 piles (two each
    first, so that a space has to be earned), the rest between the stock and the waste."""
    heights = [rng.randint(0, 13) for _ in range(4)] * 2
    while len(GAME.deck()) - sum(heights) > left:
        i = rng.randrange(4)
        heights[i] = heights[i + 4] = min(13, heights[i] + 1)
    found = [[make_card(r, f % 4) for r in range(1, h + 1)] for f, h in enumerate(heights)]
    rest = [make_card(r, f % 4) for f, h in enumerate(heights) for r in range(h + 1, 14)]
    rng.shuffle(rest)
    if rng.random() < 0.5:  # low cards under high ones
        rest.sort(key=lambda c: rank_of(c) + rng.randint(0, 3))
    n_tableau = min(len(rest), 20 + rng.randint(0, 4))
    cards, rest = rest[:n_tableau], rest[n_tableau:]
    n_stock = rng.randint(0, len(rest))
    waste, stock = rest[: len(rest) - n_stock], rest[len(rest) - n_stock :]
    tableau: list[list[int]] = [[] for _ in T]
    for i, c in enumerate(cards):
        pile = i % len(T) if i < 20 else rng.choice([t for t in range(len(T)) if len(tableau[t]) < 4])
        tableau[pile].append(c)
    piles = (*(tuple(f) for f in found), *(tuple(t) for t in tableau), tuple(stock), tuple(waste))
    return State(piles, (), 1)


def played_out(rng: random.Random, deal: int, keep: int) -> State:
    """Deal ``deal`` played at random (a foundation move when there is one, else a
    tableau move or a deal) until ``keep`` stock cards are left: usually a lost end."""
    state = GAME.initial_state(deal)
    for _ in range(400):
        if len(state.piles[STOCK]) <= keep:
            break
        moves = GAME.legal_moves(state)
        home = [m for m in moves if m.action == Action.MOVE and m.dst in F]
        others = [m for m in moves if m.action == Action.MOVE and m.dst not in F]
        if home:
            m = home[0]
        elif others and rng.random() < 0.6:
            m = rng.choice(others)
        else:
            m = next(m for m in moves if m.action == Action.DEAL)
        state = GAME.apply(state, m)
    return state


def positions() -> list[State]:
    rng = random.Random("forty-thieves")
    out = [random_end_game(rng, rng.randint(20, 30)) for _ in range(30)]
    out += [played_out(rng, deal, rng.randint(0, 1)) for deal in range(1, 31)]
    return out


POSITIONS = positions()


@pytest.mark.parametrize("probe", [FortyThievesStrategy.probe_states, 0])
def test_pruning_agrees_with_generic_search(probe: int) -> None:
    """With the probe off (``probe`` 0) the beam passes run first: still the same
    verdicts (a pass that finds nothing leaves the verdict to the depth-first search)."""
    verdicts = {"solved": 0, "unsolvable": 0}
    for state in POSITIONS:
        assert not GAME.validate(state)
        kn = strategy_for(GAME, state)
        assert isinstance(kn, FortyThievesStrategy)
        kn.probe_states = probe
        plug = solve(kn, Limits(10, 2000))
        plain = solve(Strategy(GAME, state), Limits(10, 1000))
        if "unknown" in (plug.result, plain.result):
            continue
        assert plug.result == plain.result, state
        if plug.result == "solved":
            assert verify(GAME, state, plug.moves)
        verdicts[plug.result] += 1
    assert verdicts["solved"] >= 15 and verdicts["unsolvable"] >= 15, verdicts


def _exact(p: tuple[bytes, ...]) -> tuple[object, ...]:
    """A position up to the order of its tableau piles and of its foundations."""
    return (sorted(p[FOUNDATIONS]), sorted(p[TABLEAU]), p[STOCK], p[WASTE])


def _search_sample(state: State, limit: int = 300) -> list[tuple[bytes, ...]]:
    """Up to ``limit`` distinct positions reached from ``state`` through the plug-in's
    children, breadth first (told apart exactly, not by the key under test)."""
    kn = strategy_for(GAME, state)
    seen = {repr(_exact(kn.start()))}
    out = [kn.start()]
    for p in out:
        if len(out) >= limit:
            break
        for _, child in kn.children(p):
            e = repr(_exact(child))
            if e not in seen:
                seen.add(e)
                out.append(child)
    return out


def test_key_merges_only_equivalent_positions() -> None:
    """Within one search, positions with the same key are the same position up to the
    order of the tableau piles and of the foundations (the key leaves the foundations
    out: the rest fixes them)."""
    for state in POSITIONS[::3]:
        kn = strategy_for(GAME, state)
        full: dict[object, object] = {}
        for p in _search_sample(state):
            exact = _exact(p)
            assert full.setdefault(kn.key(p), exact) == exact


def test_moves_are_the_engines_up_to_merging() -> None:
    """The plug-in's moves are the engine's legal moves, except that of several
    foundations (or spaces) that take a card, only one is tried: the same set once each
    move is written as (source, kind of target or tableau pile)."""

    def merged(piles: tuple[tuple[int, ...], ...], m: Move) -> tuple[int, int]:
        if m.src < 0:
            return (-1, -1)
        if m.dst in F:
            return (m.src, -2)
        return (m.src, -3 if not piles[m.dst] else m.dst)

    for state in POSITIONS[::3]:
        kn = strategy_for(GAME, state)
        for p in _search_sample(state, 100):
            st = State(tuple(tuple(x) for x in p), (), 1)
            engine = {merged(st.piles, m) for m in GAME.legal_moves(st)}
            mine = [merged(st.piles, m) for m in kn.ordered_moves(st)]
            assert len(mine) == len(set(mine)) and set(mine) == engine, st


def test_beam_finds_deal_and_never_claims_a_loss() -> None:
    """Deal 2 is won by the first beam pass (no probe), and a beam pass that finds
    nothing in a short budget answers "unknown", not "unsolvable"."""
    state = GAME.initial_state(2)
    kn = strategy_for(GAME, state)
    assert isinstance(kn, FortyThievesStrategy)
    kn.probe_states = 0
    r = solve(kn, Limits(5, 10**6))
    assert r.result == "solved" and verify(GAME, state, r.moves)
    assert len(kn.log.passes) == 1
    state = GAME.initial_state(1)
    kn = strategy_for(GAME, state)
    r = solve(kn, Limits(0.3, 10**6))
    assert r.result == "unknown" and r.stopped_by == "time"


@pytest.mark.slow
def test_exhausted_beam_pass_is_a_sound_proof() -> None:
    """A beam pass that dropped no position ("exhausted") searched every reachable
    position: on the small end games its verdicts match the generic search's, and a
    pass that had to drop positions never says "exhausted"."""
    verdicts = {"solved": 0, "exhausted": 0}
    for state in POSITIONS:
        kn = FortyThievesStrategy(GAME, state)
        kn.max_expansions = 10**6
        first, root = kn.auto(kn.start())
        if kn.is_won(root):
            continue
        r = kn.beam_pass(root, WIDE, 3000)
        plain = solve(Strategy(GAME, state), Limits(10, 1000))
        if plain.result == "unknown" or r.end in (PassEnd.TIME, PassEnd.STATES):
            continue
        if r.moves is not None:
            assert plain.result == "solved" and r.end is PassEnd.WON
            assert verify(GAME, state, [Move(*m) for m in (*first, *r.moves)])
            verdicts["solved"] += 1
        else:
            assert r.end is PassEnd.EXHAUSTED and plain.result == "unsolvable", state
            verdicts["exhausted"] += 1
        narrow = FortyThievesStrategy(GAME, state)
        r = narrow.beam_pass(root, WIDE._replace(width=1, per_slot=1), 3000)
        assert r.end is not PassEnd.EXHAUSTED or plain.result == "unsolvable"
    assert verdicts["solved"] >= 10 and verdicts["exhausted"] >= 10, verdicts
    kn = FortyThievesStrategy(GAME, GAME.initial_state(1))
    first, root = kn.auto(kn.start())
    assert kn.beam_pass(root, WIDE._replace(width=4, per_slot=2), 100_000).end is PassEnd.DROPPED


def test_depth_first_search_resumes_where_it_paused() -> None:
    """The depth-first search run in slices of 7 positions visits the same positions
    and reaches the same verdict as the search core's depth-first search in one go
    (which knows nothing of lost positions: their pruning is off here)."""
    for state in POSITIONS[::2]:
        kn = FortyThievesStrategy(GAME, state)
        kn.prune_lost = False
        first, root = kn.auto(kn.start())
        if kn.is_won(root):
            continue
        whole = depth_first(kn, Limits(60, 3000), first, root, time.monotonic())
        dfs = _Dfs(kn, first, root)
        result = None
        while result is None and dfs.positions < 3000:
            result = dfs.run(min(3000, dfs.positions + 7))
        assert (result or "unknown") == whole.result
        assert dfs.positions == whole.states
        if result == "solved":
            assert dfs.verdict()[1] == whole.moves


def test_narrowed_pass_only_proves_what_it_saw_in_full() -> None:
    """A pass told that time is short (``pace_margin`` near 0) narrows its beam to
    ``min_width`` after the first level: it may still win (the win replays) and says
    "exhausted" only when the generic search proves the loss too."""
    narrowed = 0
    for state in POSITIONS[::2]:
        kn = FortyThievesStrategy(GAME, state)
        kn.pace_margin, kn.min_width = 1e-12, 1
        first, root = kn.auto(kn.start())
        if kn.is_won(root):
            continue
        r = kn.beam_pass(root, WIDE, 3000)
        narrowed += r.narrowest == 1
        plain = solve(Strategy(GAME, state), Limits(10, 1000))
        if r.moves is not None:
            assert verify(GAME, state, [Move(*m) for m in (*first, *r.moves)])
        if r.end is PassEnd.EXHAUSTED:
            assert plain.result == "unsolvable", state
    assert narrowed >= 5
    kn = FortyThievesStrategy(GAME, GAME.initial_state(1))
    kn.pace_margin, kn.min_width = 1e-12, 1
    first, root = kn.auto(kn.start())
    r = kn.beam_pass(root, WIDE, 100_000)
    assert r.end is PassEnd.DROPPED and r.narrowest == 1


def test_buried_counts_the_cards_above_the_next_needed_ones() -> None:
    """The buried term (read off the key) equals a plain count over the piles: for each
    suit, the outside copies of the rank above its lower foundation (an Ace while the
    suit has fewer than two), and with ``both`` of the rank above its higher one,
    each counting the cards above it in its pile or the waste."""
    checked = 0
    for both in (False, True):
        for state in POSITIONS[::3] + [GAME.initial_state(d) for d in (1, 5)]:
            kn = FortyThievesStrategy(GAME, state)
            for p in _search_sample(state, 100):
                needed: set[int] = set()
                for suit in range(4):
                    heights = sorted(len(f) for f in p[FOUNDATIONS] if f and suit_of(f[0]) == suit)
                    needed.add(make_card(heights[0] + 1 if len(heights) == 2 else 1, suit))
                    if both and heights:
                        needed.add(make_card(heights[-1] + 1, suit))
                want = 0
                for pile in (*p[TABLEAU], p[WASTE]):
                    for i, c in enumerate(pile):
                        if c in needed:
                            want += len(pile) - 1 - i
                assert kn.buried(kn.key(p), p[FOUNDATIONS], both) == want, p
                checked += want > 0
    assert checked >= 100


@pytest.mark.parametrize(
    ("deal", "width", "per", "waste", "both"),
    [(38, 16, 32, 5.0, False), (49, 64, 8, 8.0, True)],
)
def test_buried_term_changes_which_deals_a_pass_wins(deal: int, width: int, per: int, waste: float, both: bool) -> None:
    """The buried term is used: deal 38 falls to a 16x32 pass with it and not without
    it, deal 49 to a 64x8 pass counting both foundations and not to one counting the
    lower one; each win replays through the engine."""
    state = GAME.initial_state(deal)
    wins = []
    for bury, count_both in ((2.0, both), (0.0 if not both else 2.0, False)):
        kn = FortyThievesStrategy(GAME, state)
        first, root = kn.auto(kn.start())
        found = kn.beam_pass(root, BeamPass(width, per, waste, bury, count_both), 100_000).moves
        if found is not None:
            assert verify(GAME, state, [Move(*m) for m in (*first, *found)])
        wins.append(found is not None)
    assert wins == [True, False]
