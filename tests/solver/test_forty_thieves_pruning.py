"""Forty Thieves' lost-position test (:func:`is_lost`) against the plain search: a
position it calls lost is never won by the generic search (every legal move, exact
positions, engine autoplay only), and no position on a winning line is called lost."""

from __future__ import annotations

from collections.abc import Iterator

from service.engine.core import Game, Move, State
from service.engine.registry import get_game
from service.solver import Limits
from service.solver.plugins.forty_thieves import STOCK, FortyThievesStrategy, Piles, _Dfs, is_lost
from service.solver.search import Child, MoveLike, Outcome, Strategy, solve, verify
from tests.solver.test_forty_thieves import POSITIONS, _search_sample

GAME = get_game("forty-thieves")


def _state(p: Piles) -> State:
    """A plug-in position as an engine state."""
    return State(tuple(tuple(x) for x in p), (), 1)


def test_lost_positions_are_lost_for_the_plain_search() -> None:
    """Positions reached from the small end games: each one called lost is proved
    unsolvable by the generic search whenever that search decides it, and each one the
    generic search wins is not called lost."""
    checked = {"lost": 0, "won": 0}
    for state in POSITIONS:
        for p in _search_sample(state, 60)[::3]:
            lost = is_lost(p)
            plain = solve(Strategy(GAME, _state(p)), Limits(10, 1000))
            if plain.result is Outcome.UNKNOWN:
                continue
            if lost:
                assert plain.result is Outcome.UNSOLVABLE, p
                checked["lost"] += 1
            elif plain.result is Outcome.SOLVED:
                checked["won"] += 1
    assert checked["lost"] >= 30 and checked["won"] >= 30, checked


def _line(state: State, moves: list[Move]) -> list[Piles]:
    """The positions a winning line goes through, the start included."""
    out = [tuple(bytes(x) for x in state.piles)]
    for m in moves:
        state = GAME.apply(state, m)
        out.append(tuple(bytes(x) for x in state.piles))
    return out


def test_no_position_on_a_winning_line_is_lost() -> None:
    """Every position on a verified win is winnable: none may be called lost. Wins of
    whole deals (found with the pruning off, so that they do not depend on it) and of
    the small end games the generic search wins."""
    checked = 0
    for deal in (2, 7, 14, 32, 36, 41):  # each won in well under a second
        state = GAME.initial_state(deal)
        kn = FortyThievesStrategy(GAME, state)
        kn.prune_lost = False
        r = solve(kn, Limits(60, 10**6))
        assert r.result is Outcome.SOLVED and verify(GAME, state, r.moves), deal
        for p in _line(state, r.moves):
            assert not is_lost(p), (deal, p)
            checked += 1
    for state in POSITIONS:
        plain = solve(Strategy(GAME, state), Limits(10, 1000))
        if plain.result is Outcome.SOLVED:
            for p in _line(state, plain.moves):
                assert not is_lost(p), p
                checked += 1
    assert checked >= 1000, checked


def test_lost_pruning_keeps_the_verdicts() -> None:
    """The whole plug-in search with and without the pruning of lost positions reaches
    the same verdicts on the small end games (beam passes first, no probe, so that both
    searches use it), and the generic search agrees with both."""
    pruned = 0
    for state in POSITIONS:
        verdicts = []
        for prune in (True, False):
            kn = FortyThievesStrategy(GAME, state)
            kn.prune_lost, kn.probe_states = prune, 0
            r = solve(kn, Limits(10, 2000))
            if r.result is Outcome.SOLVED:
                assert verify(GAME, state, r.moves)
            verdicts.append(r.result)
        plain = solve(Strategy(GAME, state), Limits(10, 1000)).result
        if Outcome.UNKNOWN in (*verdicts, plain):
            continue
        assert verdicts[0] == verdicts[1] == plain, state
        pruned += 1
    assert pruned >= 30, pruned


class _Counting(FortyThievesStrategy):
    """The plug-in's Python search, recording the stock length of each position it
    expands."""

    def __init__(self, game: Game, root: State) -> None:
        super().__init__(game, root, native=False)
        self.levels: list[int] = []

    def children(self, p: Piles, back: MoveLike | None = None) -> Iterator[Child]:
        self.levels.append(len(p[STOCK]))
        return super().children(p, back)


def test_lost_pruning_cuts_the_depth_first_search() -> None:
    """The pruning is used: on deal 5 the depth-first search without it runs down to
    an empty stock within 20,000 positions, while with it every line it tries is
    recognised as lost well before (its lowest stock level is higher)."""
    lowest = []
    for prune in (True, False):
        kn = _Counting(GAME, GAME.initial_state(5))
        kn.prune_lost = prune
        first, root = kn.auto(kn.start())
        _Dfs(kn, first, root).run(20_000)
        lowest.append(min(kn.levels))
    assert lowest[0] > lowest[1] == 0, lowest
