"""Strategy of Forty Thieves: its own fast move generation on ``bytes`` piles, and its
own search (beam passes over the stock, and slices of an exhaustive depth-first search).

The rules come from the engine (:mod:`service.engine.forty_thieves`): the orders of
building (``ABOVE``, ``BELOW``), which foundations take a card (``foundation_takers``),
the autoplay condition (``autoplays``) and the pile layout. The plug-in caches what it
derives from them per set of foundations.

Pruning (each is sound: it never removes a position's last way to win):

- **Safe moves**: exactly the engine's autoplay (an Ace always; a card of rank r once
  both cards of rank r-1 of its suit are home: nothing else could ever be put on it).
- **Canonical key** (compared only within one search, from one root): tableau piles
  sorted (every pile has the same rules, a space takes any card), the stock by its
  length (it is only ever dealt from the top, so its length says which cards are left),
  and the waste in full. The foundations are left out: no card enters or leaves the
  game, so the cards home are exactly the cards found nowhere else, and the
  multiset of the cards home of a suit fixes the heights of its two foundations (rank r
  is home twice up to the lower one, once up to the higher one); which foundation holds
  which height does not matter (foundations holding the same cards are interchangeable).
  Its bytes read back one way only: the stock's length (one byte), the waste, then each
  pile after a zero byte (no card is 0).
- **Merged moves**: to a foundation, the first one that takes the card (two holding the
  same top are interchangeable); to a space, the first empty pile.
- **No undoing**: both searches leave out the one move that would undo a tableau move
  just made (it gives back the position before it, already seen).
- **Lost positions** (:func:`is_lost`, :class:`_Frozen`): both searches leave out
  the moves of a position in which some card can never move again (it never reaches
  a foundation). Let S be a set of tableau, waste and stock cards (in each tableau
  pile and in the waste a bottom part: a card under one of S is in S) and O a set of
  waste and stock cards, such that every tableau pile holds a card of S, and:

  - (tableau) no x of O, and no x of S that is the top one of S in its pile or the
    waste or lies in the stock, can go on a tableau card: no copy of the card one rank
    higher in its suit lies in the tableau not under a card of S (a copy above x in
    x's own pile counts only if that copy could itself go on such a card, as it has to
    leave first), or in the waste or the stock outside O (a waste card under one of S
    is in O);
  - (home) no such x of S can go home: for each foundation of its suit below it, some
    rank between has no copy outside S and the foundations; with only one foundation
    left and x's other copy above it in its own pile or the waste, that copy takes it
    (it has to leave first, and as it goes on the same cards as x, only home);
  - (deadlines) a card of S in the stock covers for good, once dealt, every card still
    in the waste: so for x in the waste, or in the stock, with a card of S dealt after
    it, both conditions count only the stock cards dealt before that card.

  Then no card of S ever moves and no card of O ever enters the tableau: the first
  move that broke this would move a card on top, so the top one of S in its pile or
  the waste (or one just dealt), or a card of O from the waste top, and each of its
  ways is shut (the cards it would need at home came from outside S and the
  foundations, a copy it would go on is under a card of S or still in the waste or
  stock, and no pile is empty: each keeps its card of S). So if S is not empty the
  game is lost. The largest such S and O are a greatest fixpoint: all cards start in
  both, and a card leaves when it fails a condition, until none does (a tableau pile
  that is or could become empty frees every card: such a position is never called
  lost). The beam passes test only the positions they keep, and only below
  :attr:`~FortyThievesStrategy.beam_lost_below` stock cards (cost); a pass that left
  out only lost positions still proves a loss.
- **Order** (never pruning): foundation moves; builds from the waste; builds that
  uncover a card, the ones that empty a pile first; a deal; then moves into a space,
  and last the moves of a card off its suit's next-higher card (they only swap
  copies).

Search (strategy "own", :meth:`FortyThievesStrategy.own_search`): beam passes
(:class:`BeamPass`, in the order of :attr:`FortyThievesStrategy.schedule`), and between
them slices of one exhaustive depth-first search that pauses and resumes
(:class:`_Dfs`; it keeps :attr:`~FortyThievesStrategy.dfs_share` of the positions, and
its first slice, the probe, decides small end games at once); it has whatever positions
the passes leave. Every share is counted in positions, never read off the clock, so the
same request gets the same answer under any load (the clock is only the safety cap of
:func:`~service.solver.search.overrun_deadline`).

Why beams: a depth-first search deals early (a deal is the one move always available)
and then spends its time on the end-game rearrangements of its first, usually lost,
line. A beam pass keeps the best few positions at every stock level instead, so every
deal decision is revisited. At each level it looks around best first (within a budget
of expansions) at the positions reachable without dealing, then keeps the ``width``
best positions one deal further on. A pass wins, when it does, only at its last
levels, so a pass starts only when the positions per beam slot of the passes so far
say it can end within the positions left, and while it runs it narrows its beam when
the positions of its last levels say the rest would not fit (a pass cut off loses all
its work; a narrower end may still win).

Each pass weighs the waste in its score its own way, and may choose its beam with the
buried term: the positions one deal on are ranked by the score plus ``bury`` times the
cards lying above the cards the foundations need next, in the tableau and the waste
(:meth:`~FortyThievesStrategy.buried`). The look-around within a level keeps the plain
score. The schedule, the weights and the shares are tuning; their measurements are in
the benchmark documentation.

Compiled parts (``_forty_thieves_native.c``, built by ``make``; used when built, unless
the strategy is made with ``native=False``): the look-around of a beam level
(:meth:`_BeamRun._look_around`: the move generation, autoplay, keys, scores and best-first
order), the depth-first search (:class:`_Dfs`) and :func:`is_lost`. They visit the same
positions, in the same order, with the same scores, and answer the same moves as the
Python code here, which stays the reference (tests/solver/test_forty_thieves_native.py
compares them); the rules reach them as tables built here from the engine
(:func:`_compiled_parts`, and :meth:`~FortyThievesStrategy.home_tables` for the
foundations a position has). The pass schedule, its pace and the choice of the beam
stay in Python.

Soundness of the answers: "unsolvable" comes from the depth-first search once it has
run out of positions, or from a pass that dropped nothing but lost positions
(:attr:`PassEnd.EXHAUSTED`: at every level its look-around ran dry within its budget,
and every position one deal on not found lost was kept). Such a pass is a breadth-first search by stock level: every position
reachable from the root with the same stock length is in that level's look-around
(induction over the levels: a deal only ever goes one level down, every other move
stays in the level), up to the pruning above, so it saw every reachable position. Any
other pass only ever answers "solved" (its solution replays through the engine like
any other).
"""

from __future__ import annotations

import heapq
import math
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final, NamedTuple

from service.engine.cards import ALL_CARDS, CARD_SLOTS, KING, RANK_OF, SUIT_OF, make_card, suit_of
from service.engine.core import Action, Game, Move, State
from service.engine.forty_thieves import (
    BELOW,
    CARDS,
    FOUNDATION_RANGE,
    STOCK,
    TABLEAU_RANGE,
    WASTE,
    FortyThieves,
    autoplays,
    foundation_takers,
)

from ..search import (
    Child,
    Limits,
    MoveLike,
    Outcome,
    SearchOverrun,
    SearchPlan,
    SolveResult,
    StopReason,
    Strategy,
    check_clock,
    overrun_deadline,
)

try:  # the compiled search parts (_forty_thieves_native.c), built by `make`; Python's otherwise
    from . import _forty_thieves_native
except ImportError:  # pragma: no cover - a checkout nobody built (tests/solver/test_native_build.py fails then)
    _forty_thieves_native = None  # type: ignore[assignment]

MOVE = int(Action.MOVE)
DEAL: MoveLike = (int(Action.DEAL), -1, -1, 0)
Piles = tuple[bytes, ...]
F = FOUNDATION_RANGE
T = TABLEAU_RANGE
FOUNDATIONS = slice(F.start, F.stop)
TABLEAU = slice(T.start, T.stop)
AUTO_SOURCES = (*T, WASTE)
# UNDO[m]: the move that would undo the tableau move m (one card from pile to pile).
UNDO: Final[dict[MoveLike, MoveLike]] = {(MOVE, s, t, 1): (MOVE, t, s, 1) for s in T for t in T if s != t}
BYTE = [bytes((i,)) for i in range(256)]
# The compiled parts' tables (see _compiled_parts): a card's suit and rank index card_at,
# SUITS rows of RANK_SLOTS ranks; NO_ENTRY stands for "none" (no card, no foundation).
SUITS: Final = 4
RANK_SLOTS: Final = 16
NO_ENTRY: Final = 0xFF
# A beam entry: score, tie-break counter, position, trail (moves, parent trail) or None.
Trail = Any
Entry = tuple[float, int, Piles, Trail]
Finder = Callable[[bytes, int], list[bytes]]  # a compiled pattern's findall(text, pos)


class ScoreWeights(NamedTuple):
    """The weights of :meth:`FortyThievesStrategy.score` (lower scores are better)."""

    home: float  # a card on a foundation (counts for the position)
    runs: float  # a run in the tableau (each run above a pile's first is a card to dig out)
    waste: float  # a card in the waste (buried)
    spaces: float  # an empty tableau pile (a resource; counts for the position)


class BeamPass(NamedTuple):
    """The settings of one beam pass (an entry of the schedule)."""

    width: int  # positions kept at each stock level
    per_slot: int  # expansions per stock level and per beam slot in the look-around
    waste: float  # the score's weight of a waste card (see ScoreWeights)
    bury: float  # the buried term's weight in the choice of the beam (0: not computed)
    bury_both: bool  # whether the buried term counts the rank above the higher foundation too

    @property
    def slot_cost(self) -> float:
        """Positions a beam slot costs, relative to a pass of 8 expansions per slot or
        fewer (more expansions per slot cost about half as much again)."""
        return 1.5 if self.per_slot > 8 else 1.0


class PassEnd(StrEnum):
    """How a beam pass ended."""

    WON = "won"  # it found a win (its moves come with it)
    DROPPED = "dropped"  # it reached its end, but dropped positions on the way: proves nothing
    EXHAUSTED = "exhausted"  # it dropped only lost positions: it saw every other one, a proof of loss
    TIME = "time"  # the compiled look-around reached the safety cap (raised as SearchOverrun)
    STATES = "states"  # its budget of positions ran out


class PassResult(NamedTuple):
    """What a beam pass returns."""

    moves: list[MoveLike] | None  # the winning moves after the root (end WON), else None
    positions: int  # the positions it saw
    end: PassEnd
    narrowest: int  # the narrowest width it had to take for lack of positions (0: none)


def _undo(moves: tuple[MoveLike, ...]) -> MoveLike | None:
    """The move that would only undo ``moves`` (a single move from pile to pile), or
    None: the searches leave it out (it leads back to a position already seen)."""
    return UNDO.get(moves[0]) if len(moves) == 1 else None


class _Dfs:
    """The exhaustive depth-first search of :func:`depth_first`, able to pause (at a
    number of positions) and to resume where it stopped; compiled when the strategy's
    parts are (the same positions and moves: the loop here is the reference)."""

    def __init__(self, strategy: FortyThievesStrategy, first: tuple[MoveLike, ...], root: Piles) -> None:
        self.strategy = strategy
        self.first = first  # the root's automatic moves
        self.result: Outcome | None = None  # SOLVED or UNSOLVABLE once decided
        self.seconds = 0.0  # spent so far
        kn = strategy.compiled
        self.compiled = kn.depth_first(root, strategy.home_tables, strategy.prune_lost) if kn is not None else None
        # the Python search's state (unused when compiled)
        self.visited = {strategy.key(root)} if self.compiled is None else set()
        self.stack: list[Iterator[Child]] = [strategy.children(root)] if self.compiled is None else []
        self.path: list[tuple[MoveLike, ...]] = [first]

    @property
    def positions(self) -> int:
        """The positions visited so far, the root included."""
        return len(self.visited) if self.compiled is None else self.compiled.positions

    def run(self, max_states: int) -> Outcome | None:
        """Search on until decided (the result), or None once ``max_states`` positions
        are visited; raises :class:`~service.solver.search.SearchOverrun` at the safety cap."""
        resumed = time.monotonic()
        deadline = overrun_deadline()
        try:
            if self.compiled is None:
                return self._run(deadline, max_states)
            if self.result is None:
                got = self.compiled.run(deadline, max_states)
                self.result = Outcome(got) if got is not None else None
                if self.result is None and self.compiled.positions < max_states:
                    check_clock(deadline)  # paused short of its positions: only the cap does that
            return self.result
        finally:
            self.seconds += time.monotonic() - resumed

    def _run(self, deadline: float, max_states: int) -> Outcome | None:
        if self.result is not None:
            return self.result
        key, is_won, children = self.strategy.key, self.strategy.is_won, self.strategy.children
        lost = self.strategy.lost
        visited, stack, path = self.visited, self.stack, self.path
        check_clock(deadline)
        if len(visited) >= max_states:
            return None
        tick = 0
        while stack:
            for moves, child in stack[-1]:
                k = key(child)
                if k in visited:
                    continue
                visited.add(k)
                path.append(moves)
                if is_won(child):
                    self.result = Outcome.SOLVED
                    return self.result
                # a lost position is a dead end: its line is popped at once
                stack.append(iter(()) if lost(child) else children(child, _undo(moves)))
                tick += 1
                if tick & 63 == 0:
                    check_clock(deadline)
                if len(visited) >= max_states:
                    return None
                break
            else:
                stack.pop()
                path.pop()
        self.result = Outcome.UNSOLVABLE
        return self.result

    def verdict(self) -> tuple[Outcome, list[Move]]:
        """Once decided: the result and, when solved, the winning moves."""
        assert self.result is not None
        if self.result is Outcome.SOLVED:
            path = self.path if self.compiled is None else [self.first, *self.compiled.moves()]
            return Outcome.SOLVED, [Move(*m) for step in path for m in step]
        return Outcome.UNSOLVABLE, []


def _unwind(trail: Trail) -> list[MoveLike]:
    """The moves of a trail, first move first."""
    steps: list[tuple[MoveLike, ...]] = []
    while trail is not None:
        steps.append(trail[0])
        trail = trail[1]
    return [m for step in reversed(steps) for m in step]


@dataclass
class SearchLog:
    """What one :meth:`FortyThievesStrategy.own_search` saw, part by part (for tests and
    benchmarks; the search never reads it)."""

    probe: int = 0  # positions of the depth-first search's first slice
    passes: list[tuple[BeamPass, PassResult]] = field(default_factory=list)  # in turn
    skipped: list[BeamPass] = field(default_factory=list)  # passes that would not end within the positions left
    #: the depth-first search at the end: its result, positions and seconds
    dfs: tuple[Outcome, int, float] | None = None


class _PassPace:
    """The positions of the beam passes of one search so far: whether a pass can end
    within the positions left (a pass cut off loses all its work)."""

    def __init__(self) -> None:
        self.positions = 0  # seen by the passes so far
        self.per_slot = 0.0  # positions per beam slot of the widest finished pass
        self.widest = 0

    def would_overrun(self, plan: BeamPass, positions: int, overshoot: float) -> bool:
        """Whether ``plan``'s estimated positions exceed ``overshoot`` times ``positions``
        (never before a pass has run to its end at full width)."""
        return self.per_slot * plan.width * plan.slot_cost > overshoot * positions

    def record(self, plan: BeamPass, result: PassResult) -> None:
        """Count a pass; one that ran to its end at full width tells the cost of a slot
        (it falls with the width, so the widest such pass says most)."""
        self.positions += result.positions
        if result.end is PassEnd.DROPPED and plan.width >= self.widest and not result.narrowest:
            self.widest = plan.width
            self.per_slot = result.positions / plan.width / plan.slot_cost


class _BeamRun:
    """One beam pass in progress (:meth:`FortyThievesStrategy.beam_pass`): its settings
    and budget of positions, and what it carries from level to level. The strategy is
    only read."""

    def __init__(self, strategy: FortyThievesStrategy, plan: BeamPass, max_states: int) -> None:
        self.strategy = strategy
        self.plan = plan
        self.weights = strategy.weights._replace(waste=plan.waste)
        self.deadline = overrun_deadline()  # the safety cap only
        self.max_states = max_states
        self.width = plan.width  # the width now (narrower when positions are short)
        self.narrowest = 0  # the narrowest width taken so far (0: none)
        self.count = 0  # children made so far: the entries' tie-break
        self.seen = 0  # positions of the levels done
        self.tick = 0  # expansions so far (the safety cap is read every 16)
        self.level_ends = [0]  # the positions seen when each level ended

    def run(self, root: Piles) -> PassResult:
        """Level by level down the stock: look around, stop at a win, fit the width to
        the positions left, keep the best positions one deal on."""
        beam: list[Entry] = [(self.strategy.weighted_score(root, self.weights), 0, root, None)]
        complete = True  # no position dropped so far
        while beam:
            level = self._look_around(beam)
            if isinstance(level, PassResult):
                return level
            deals, unexpanded = level
            if deals:
                self._fit_width(deals)
            beam, dropped = self._choose(deals)
            if unexpanded or dropped:
                complete = False  # positions not lost are dropped
        return PassResult(None, self.seen, PassEnd.EXHAUSTED if complete else PassEnd.DROPPED, self.narrowest)

    def _look_around(self, beam: list[Entry]) -> tuple[dict[bytes, Entry], bool] | PassResult:
        """One stock level: expand best first (lowest score), within the level's
        budget, the positions reachable from the beam without dealing. Returns the
        positions one deal on (by key) and whether positions of the level were left
        unexpanded, or the pass's end (a win, within the level or one deal on, the
        position budget); raises :class:`~service.solver.search.SearchOverrun` at the
        safety cap. A child's score is the parent's changed by the
        one card moved (see
        :meth:`FortyThievesStrategy.score`), or computed afresh after autoplay. One
        function although long: it is the pass's inner loop, which keeps its counts in
        locals."""
        kn = self.strategy
        if kn.compiled is not None:
            return self._look_around_compiled(kn.compiled, beam)
        key, is_won, children, score = kn.key, kn.is_won, kn.children, kn.weighted_score
        weights = self.weights
        w_home, w_runs, w_waste, w_space = weights
        deadline, max_states, seen = self.deadline, self.max_states, self.seen
        count, tick = self.count, self.tick
        layer = {key(e[2]) for e in beam}
        heap = list(beam)
        heapq.heapify(heap)
        deals: dict[bytes, Entry] = {}
        budget = self._budget(beam)
        while heap and budget > 0:
            budget -= 1
            sc, _, node, trail = heapq.heappop(heap)
            back = _undo(trail[0]) if trail is not None else None
            tick += 1
            if tick & 15 == 0:
                check_clock(deadline)
            if seen + len(layer) + len(deals) >= max_states:
                return PassResult(None, seen + len(layer) + len(deals), PassEnd.STATES, self.narrowest)
            for moves, child in children(node, back):
                count += 1
                k = key(child)
                m = moves[0]
                if m[0] != MOVE:  # a deal: the next level
                    if k not in deals:
                        sc2 = sc + w_waste if len(moves) == 1 else score(child, weights)
                        deals[k] = (sc2, count, child, (moves, trail))
                    continue
                if k in layer:
                    continue
                layer.add(k)
                if len(moves) == 1:
                    s, t = m[1], m[2]
                    sc2 = sc
                    if s == WASTE:
                        sc2 -= w_waste
                    else:
                        sp = node[s]
                        if len(sp) == 1:
                            sc2 -= w_runs + w_space
                        elif BELOW[sp[-2]] != sp[-1]:  # it began a run
                            sc2 -= w_runs
                    if t in F:
                        sc2 -= w_home
                        if is_won(child):
                            return PassResult(
                                _unwind((moves, trail)), seen + len(layer) + len(deals), PassEnd.WON, self.narrowest
                            )
                    elif not node[t]:
                        sc2 += w_runs + w_space
                else:
                    if is_won(child):
                        return PassResult(
                            _unwind((moves, trail)), seen + len(layer) + len(deals), PassEnd.WON, self.narrowest
                        )
                    sc2 = score(child, weights)
                heapq.heappush(heap, (sc2, count, child, (moves, trail)))
        self.count, self.tick = count, tick
        self.seen = seen + len(layer)
        for e in deals.values():  # a deal whose autoplay took every card home
            if is_won(e[2]):
                return PassResult(_unwind(e[3]), self.seen + len(deals), PassEnd.WON, self.narrowest)
        return deals, bool(heap)

    def _budget(self, beam: list[Entry]) -> int:
        """The level's expansions: per beam slot, times the width (the final level's
        more), within :attr:`~FortyThievesStrategy.max_expansions`."""
        kn = self.strategy
        factor = 1 if beam[0][2][STOCK] else kn.final_factor
        return min(self.plan.per_slot * self.width * factor, kn.max_expansions)

    def _look_around_compiled(
        self, native: _forty_thieves_native.Searcher, beam: list[Entry]
    ) -> tuple[dict[bytes, Entry], bool] | PassResult:
        """:meth:`_look_around` run by the compiled search (the same positions, scores,
        order and answers; the Python loop is the reference)."""
        end, layer, found, deals, won, won_deal, self.count, self.tick, unexpanded = native.look_around(
            beam,
            self.strategy.home_tables,
            (self.weights.home, self.weights.runs, self.weights.waste, self.weights.spaces),
            self._budget(beam),
            self.deadline,
            self.max_states,
            self.seen,
            self.count,
            self.tick,
        )
        positions = self.seen + layer + found
        if won is not None:
            return PassResult(_unwind(won), positions, PassEnd.WON, self.narrowest)
        if deals is None:
            if end == PassEnd.TIME:
                raise SearchOverrun(f"a compiled beam level reached its safety cap after {positions} positions")
            return PassResult(None, positions, PassEnd(end), self.narrowest)
        self.seen += layer
        if won_deal >= 0:
            return PassResult(_unwind(deals[won_deal][1][3]), self.seen + found, PassEnd.WON, self.narrowest)
        return dict(deals), unexpanded

    def _fit_width(self, deals: dict[bytes, Entry]) -> None:
        """Narrow the beam when the positions of the last levels say the levels left
        would not fit in the positions left (a pass cut off loses all its work; a
        narrower end may still win); back to the full width when it fits."""
        kn = self.strategy
        now = self.seen
        ends = self.level_ends
        ends.append(now)
        levels = len(next(iter(deals.values()))[2][STOCK]) + 2  # the final level counts twice
        recent = min(len(ends) - 1, 8)  # the positions of the last 8 levels (the middle ones cost most)
        need = (now - ends[-1 - recent]) / recent * levels if recent else 0.0
        width = self.plan.width
        fit = int(self.width * kn.pace_margin * (self.max_states - now) / need) if need > 0 else width
        self.width = min(width, max(kn.min_width, fit))
        if self.width < width:
            self.narrowest = min(self.narrowest or width, self.width)

    def _choose(self, deals: dict[bytes, Entry]) -> tuple[list[Entry], bool]:
        """The next beam and whether positions not lost were left out of it: the best
        positions one deal on by the score, plus the buried term when the pass has one,
        leaving out lost ones (:func:`is_lost`), up to the width."""
        width, bury = self.width, self.plan.bury
        level = len(next(iter(deals.values()))[2][STOCK]) if deals else 0
        lost = self.strategy.lost if level < self.strategy.beam_lost_below else _never_lost
        if len(deals) <= width:
            return [e for e in deals.values() if not lost(e[2])], False  # the order does not matter
        if bury:
            # chosen with the buried term; kept with the plain score (the look-around's)
            buried, both = self.strategy.buried, self.plan.bury_both
            ranked = [(e[0] + bury * buried(k, e[2][FOUNDATIONS], both), e[1], e) for k, e in deals.items()]
        else:
            ranked = [(e[0], e[1], e) for e in deals.values()]
        heapq.heapify(ranked)
        beam: list[Entry] = []
        while ranked and len(beam) < width:
            e = heapq.heappop(ranked)[2]
            if not lost(e[2]):
                beam.append(e)
        return beam, bool(ranked)


class FortyThievesStrategy(Strategy):
    """Forty Thieves' move generation, pruning and search (see the module docstring)."""

    heuristic = (
        "it prefers foundation moves, then builds from the waste, builds that empty a pile "
        "or uncover a card (one that can go home first), then a deal; moves into a space, "
        "and moves of a card off its suit's next-higher card, come last"
    )

    plan = SearchPlan.OWN
    positions_per_second = 100_000  # the positions a second of budget buys (bench/positions-budget.md)
    #: States the first depth-first probe may visit (small end games are decided there).
    probe_states = 1500
    #: The beam passes, in turn: the cheap ones that win deals no other wins, the
    #: 1024-wide one (it wins deals no narrower one wins), then the rest.
    schedule: tuple[BeamPass, ...] = (
        BeamPass(16, 32, 5.0, 2.0, False),
        BeamPass(64, 8, 5.0, 2.0, False),
        BeamPass(64, 8, 8.0, 2.0, True),
        BeamPass(64, 8, 1.0, 2.0, False),
        BeamPass(1024, 6, 5.0, 0.0, False),
        BeamPass(256, 8, 5.0, 2.0, True),
        BeamPass(64, 8, 3.0, 2.0, False),
        BeamPass(256, 8, 5.0, 2.0, False),
        BeamPass(64, 8, 8.0, 0.0, False),
        BeamPass(1024, 6, 5.0, 2.0, False),
        BeamPass(4096, 6, 5.0, 2.0, True),
    )
    #: The depth-first search's share of the positions (it wins some deals no pass wins,
    #: and only it can prove a loss); the beam passes have the rest.
    dfs_share = 0.05
    #: A pass starts if its estimated positions are at most this many times the
    #: positions left for it (it narrows its beam to end within them).
    overshoot = 1.5
    #: The last stock level (the end game) gets this many times the expansions.
    final_factor = 8
    #: At most this many expansions per stock level: a level's positions are all held
    #: at once (some 15 children an expansion, some hundreds of bytes each).
    max_expansions = 8192
    #: A pass narrows its beam when the positions of its last levels say that the
    #: levels left would take more than this share of its positions left (never below
    #: min_width).
    pace_margin = 0.9
    min_width = 8
    #: Whether the searches leave out positions :func:`is_lost` recognises (off: the
    #: plain search of before, for comparisons).
    prune_lost = True
    #: The beam passes test only positions with fewer stock cards than this (with more,
    #: the test seldom finds one lost and costs more than the rest of the pass).
    beam_lost_below = 24
    #: The score's weights; a pass replaces the waste's with its own.
    weights = ScoreWeights(home=5.0, runs=2.0, waste=5.0, spaces=1.0)

    def __init__(self, game: Game, root: State, native: bool = True) -> None:
        """``native``: run the compiled parts of the search when they are built (the
        beam passes' look-around, the depth-first search and the lost-position test;
        False: the Python ones, the reference they are tested against)."""
        super().__init__(game, root)
        assert (game.group_range("foundation"), game.group_range("tableau")) == (F, T)
        assert (game.group_start["stock"], game.group_start["waste"]) == (STOCK, WASTE)
        self.log = SearchLog()  # what the last own_search saw
        self._runs: dict[bytes, int] = {}  # a tableau pile -> how many runs it holds (score)
        self._homes: dict[Piles, tuple[dict[int, int], dict[int, int]]] = {}  # see _homes_of
        # foundations -> see buried; one table without and one with bury_both
        self._needs: tuple[dict[Piles, Finder | None], dict[Piles, Finder | None]] = ({}, {})
        self._finders: dict[tuple[int, ...], Finder] = {}  # cards needed -> see buried
        # the compiled parts, if any (not the core's ``native``: this search is the plug-in's own)
        self.compiled = _NATIVE if native else None
        self._is_lost: Callable[[Piles], bool] = self.compiled.is_lost if self.compiled is not None else is_lost

    def start(self) -> Piles:
        return tuple(bytes(p) for p in self.root.piles)

    def key(self, p: Piles) -> bytes:
        # the stock's length (one byte), the waste (no zero byte: every card is at least 1)
        # and the sorted piles, each after a zero byte: read back in one way only
        return BYTE[len(p[STOCK])] + p[WASTE] + b"\0" + b"\0".join(sorted(p[TABLEAU]))

    def own_search(self, limits: Limits, first: tuple[MoveLike, ...], root: Piles, started: float) -> SolveResult:
        """One exhaustive depth-first search, run in slices between beam passes (it keeps
        :attr:`dfs_share` of the positions; its first slice, the probe, decides small end
        games at once); a pass starts only if it should end within the positions left.
        Every share is a count of positions (``limits.max_states`` in all), never the
        clock's. :attr:`log` records what each part saw."""
        max_states = limits.max_states
        dfs = _Dfs(self, first, root)
        pace = _PassPace()
        log = self.log = SearchLog()

        def finish(result: Outcome, moves: list[Move], why: StopReason | None = None) -> SolveResult:
            """The search's answer, with what the depth-first search saw recorded."""
            log.dfs = (result if dfs.result is not None else Outcome.UNKNOWN, dfs.positions, dfs.seconds)
            return SolveResult(result, moves, pace.positions + dfs.positions, time.monotonic() - started, why)

        if dfs.run(min(self.probe_states, max_states)) is not None:
            return finish(*dfs.verdict())
        log.probe = dfs.positions
        keep = self.dfs_share / (1 - self.dfs_share)  # the depth-first positions per beam position
        for plan in self.schedule:
            # the depth-first search's slice: its share of the positions so far
            want = math.floor(keep * pace.positions)
            if want > dfs.positions and dfs.run(min(want, max_states - pace.positions)) is not None:
                return finish(*dfs.verdict())
            left = math.floor((max_states - pace.positions - dfs.positions) * (1 - self.dfs_share))
            if pace.would_overrun(plan, left, self.overshoot):
                log.skipped.append(plan)
                continue  # it would be cut off: its work lost
            if left < 1:
                break
            r = self.beam_pass(root, plan, left)
            pace.record(plan, r)
            log.passes.append((plan, r))
            if r.moves is not None:
                return finish(Outcome.SOLVED, [Move(*m) for m in first] + [Move(*m) for m in r.moves])
            if r.end is PassEnd.EXHAUSTED:
                return finish(Outcome.UNSOLVABLE, [])
            # a pass that ran out of its positions (PassEnd.STATES) goes on as one that dropped some
        if dfs.run(max_states - pace.positions) is not None:
            return finish(*dfs.verdict())
        return finish(Outcome.UNKNOWN, [], StopReason.STATES)

    def beam_pass(self, root: Piles, plan: BeamPass, max_states: int) -> PassResult:
        """One beam pass with the settings ``plan``: at each stock level, a best-first
        look (``plan.per_slot`` expansions per beam slot, within ``max_expansions``) at
        the positions reachable without dealing from the kept ones, then the
        ``plan.width`` best positions one deal further on. It drops positions, so
        finding nothing proves nothing, unless it dropped none (``EXHAUSTED``: a
        breadth-first search by stock level that saw every reachable position, see the
        module docstring)."""
        return _BeamRun(self, plan, max_states).run(root)

    def buried(self, k: bytes, fnd: Piles, both: bool) -> int:
        """How many cards lie above the next cards the foundations need (for each suit,
        the outside copies of the rank above its lower foundation, and with ``both``
        above its higher one too), in the tableau and the waste, read off the key ``k``
        of a position with foundations ``fnd`` (a card in the stock counts nothing: it
        comes when it comes). One regular expression finds them all: at each needed card
        (after the key's first byte, the stock's length, which could equal a card), the
        rest of its pile or waste up to the next zero byte, without consuming it (two
        needed cards may share a pile); faster than a loop of ``bytes.find``."""
        needs = self._needs[both]
        if fnd in needs:
            finder = needs[fnd]
        else:
            need = _needed(fnd, both)
            finder = self._finders.get(need) if need else None
            if need and finder is None:
                cards = b"".join(re.escape(BYTE[c]) for c in need)
                finder = re.compile(b"[" + cards + rb"](?=([^\x00]*))").findall
                if len(self._finders) < 10_000:  # a few hundred in a search
                    self._finders[need] = finder
            if len(needs) < 100_000:
                needs[fnd] = finder
        return sum(map(len, finder(k, 1))) if finder is not None else 0

    def score(self, p: Piles) -> float:
        """Lower is better: cards home count most; then runs in the tableau (each run
        above a pile's first is a card to dig out), waste cards (buried), and spaces (a
        resource), weighted by :attr:`weights`."""
        return self.weighted_score(p, self.weights)

    def weighted_score(self, p: Piles, w: ScoreWeights) -> float:
        """:meth:`score` with the weights ``w`` (a pass's)."""
        home = sum(map(len, p[FOUNDATIONS]))
        runs = 0
        spaces = 0
        cache = self._runs
        for t in T:
            tp = p[t]
            if not tp:
                spaces += 1
                continue
            n = cache.get(tp)
            if n is None:
                n = 0
                prev = 0
                for c in tp:
                    if c != BELOW[prev]:  # not built on the card under it: a new run
                        n += 1
                    prev = c
                if len(cache) < 200_000:  # bounds memory
                    cache[tp] = n
            runs += n
        return -w[0] * home + w[1] * runs + w[2] * len(p[WASTE]) - w[3] * spaces

    def is_won(self, p: Piles) -> bool:
        return sum(map(len, p[FOUNDATIONS])) == CARDS

    def lost(self, p: Piles) -> bool:
        """Whether ``p`` is recognised as lost (:func:`is_lost`, compiled when
        :attr:`compiled` is set, unless :attr:`prune_lost` is off): both searches leave
        its moves out."""
        return self.prune_lost and self._is_lost(p)

    def auto(self, p: Piles) -> tuple[tuple[MoveLike, ...], Piles]:
        moves: list[MoveLike] = []
        lst = list(p)
        homes = self._homes_of
        while True:
            safe = homes(tuple(lst[FOUNDATIONS]))[1]
            for s in AUTO_SOURCES:
                sp = lst[s]
                if sp:
                    f = safe.get(sp[-1], -1)
                    if f >= 0:
                        lst[s] = sp[:-1]
                        lst[f] = lst[f] + sp[-1:]
                        moves.append((MOVE, s, f, 1))
                        break
            else:
                break
        if not moves:
            return (), p
        return tuple(moves), tuple(lst)

    def _homes_of(self, fnd: Piles) -> tuple[dict[int, int], dict[int, int]]:
        """For these foundations: card -> the first foundation that takes it now, and the
        same for the cards the engine's autoplay would move (both cached)."""
        got = self._homes.get(fnd)
        if got is None:
            home = self._targets(fnd)
            safe = {c: f for c, f in home.items() if autoplays(fnd, c)}
            got = (home, safe)
            if len(self._homes) < 100_000:
                self._homes[fnd] = got
        return got

    def home_tables(self, fnd: Piles) -> bytes:
        """:meth:`_homes_of` as the compiled search reads it: for each card slot the
        foundation that takes it now, then the same for the engine's autoplay
        (:data:`NO_ENTRY`: none)."""
        home, safe = self._homes_of(fnd)
        return bytes(home.get(c, NO_ENTRY) for c in range(CARD_SLOTS)) + bytes(
            safe.get(c, NO_ENTRY) for c in range(CARD_SLOTS)
        )

    @staticmethod
    def _targets(p: Piles) -> dict[int, int]:
        """card -> the first foundation that takes it now (the engine's
        ``foundation_takers``, merged: see the module docstring)."""
        return {card: fs[0] for card, fs in foundation_takers(p).items()}

    def candidates(self, p: Piles) -> list[MoveLike]:
        """Legal moves (merged as the module says), in the order the search tries them."""
        return _candidates(p, self._targets(p))

    def ordered_moves(self, state: State) -> list[Move]:
        return [Move(*m) for m in self.candidates(tuple(bytes(x) for x in state.piles))]

    def children(self, p: Piles, back: MoveLike | None = None) -> Iterator[Child]:
        """As the base class says; ``back`` (a move that would only undo the move that
        made ``p``, so it leads to a position already seen) is left out."""
        home, safe = self._homes_of(p[FOUNDATIONS])
        for m in _candidates(p, home):
            if m == back:
                continue
            lst = list(p)
            action, s, t, _ = m
            if action == MOVE:
                sp = lst[s]
                lst[s] = sp[:-1]
                lst[t] = lst[t] + sp[-1:]
                exposed = sp[-2] if len(sp) > 1 else -1
            else:
                stock = lst[STOCK]
                lst[STOCK] = stock[:-1]
                lst[WASTE] = lst[WASTE] + stock[-1:]
                t = -1
                exposed = stock[-1]
            child = tuple(lst)
            # the foundations are the parent's unless the move went home
            if t in F or exposed in safe:
                more, child = self.auto(child)
                yield (m, *more), child
            else:
                yield (m,), child


def _needed(fnd: Piles, both: bool) -> tuple[int, ...]:
    """The cards the foundations ``fnd`` need next: for each suit, the rank above its
    lower foundation (an Ace while a suit has fewer than two foundations), and with
    ``both`` the rank above its higher one too."""
    low = [0, 0, 0, 0]
    high = [0, 0, 0, 0]
    seen = [0, 0, 0, 0]
    for fp in fnd:
        if fp:
            s = suit_of(fp[0])
            low[s] = len(fp) if not seen[s] else min(low[s], len(fp))
            high[s] = max(high[s], len(fp))
            seen[s] += 1
    out = []
    for s in range(4):
        r = low[s] + 1 if seen[s] == 2 else 1
        if r <= KING:
            out.append(make_card(r, s))
        if both and seen[s] and high[s] + 1 not in (r, KING + 1):
            out.append(make_card(high[s] + 1, s))
    return tuple(out)


def _tableau_takers(p: Piles) -> tuple[dict[int, list[int]], int]:
    """card -> the tableau piles that take it (the engine's ``BELOW``), and the first
    empty pile (-1: none)."""
    takers: dict[int, list[int]] = {}
    empty = -1
    for t in T:
        tp = p[t]
        if tp:
            want = BELOW[tp[-1]]
            if want >= 0:
                lt = takers.get(want)
                if lt is None:
                    takers[want] = [t]
                else:
                    lt.append(t)
        elif empty < 0:
            empty = t
    return takers, empty


def _candidates(p: Piles, home: dict[int, int]) -> list[MoveLike]:
    """Legal moves (merged as the module says), lower kinds first: foundation moves,
    builds from the waste, builds that empty a pile, that uncover a card that can go
    home or another card, a deal, moves into a space from the waste or a pile, moves
    off the card's next-higher card onto another or into a space; within a kind, by
    source then target pile. One function although long: each kind is a list filled in
    one sweep over the sources, for every position expanded."""
    home_moves: list[MoveLike] = []
    waste_builds: list[MoveLike] = []
    emptying: list[MoveLike] = []
    uncover_home: list[MoveLike] = []
    uncover: list[MoveLike] = []
    to_space: list[MoveLike] = []
    swaps: list[MoveLike] = []
    swaps_space: list[MoveLike] = []
    takers, empty = _tableau_takers(p)
    for s in T:
        sp = p[s]
        if not sp:
            continue
        card = sp[-1]
        f = home.get(card, -1)
        if f >= 0:
            home_moves.append((MOVE, s, f, 1))
        lt = takers.get(card)
        if len(sp) > 1:
            below = sp[-2]
            if BELOW[below] == card:  # on its parent: the move only swaps copies
                if lt:
                    for t in lt:
                        swaps.append((MOVE, s, t, 1))
                if empty >= 0:
                    swaps_space.append((MOVE, s, empty, 1))
                continue
            if lt:
                out = uncover_home if below in home else uncover
                for t in lt:
                    out.append((MOVE, s, t, 1))
            if empty >= 0:
                to_space.append((MOVE, s, empty, 1))
        elif lt:
            for t in lt:
                emptying.append((MOVE, s, t, 1))
    waste_space: list[MoveLike] = []
    wp = p[WASTE]
    if wp:
        card = wp[-1]
        f = home.get(card, -1)
        if f >= 0:
            home_moves.append((MOVE, WASTE, f, 1))
        lt = takers.get(card)
        if lt:
            for t in lt:
                waste_builds.append((MOVE, WASTE, t, 1))
        if empty >= 0:
            waste_space.append((MOVE, WASTE, empty, 1))
    home_moves += waste_builds
    home_moves += emptying
    home_moves += uncover_home
    home_moves += uncover
    if p[STOCK]:
        home_moves.append(DEAL)
    home_moves += waste_space
    home_moves += to_space
    home_moves += swaps
    home_moves += swaps_space
    return home_moves


NEVER: Final = 1 << 30  # a deadline that never comes (see _Frozen)


class _Frozen:
    """The greatest fixpoint behind :func:`is_lost` (see the module docstring, "Lost
    positions"): the cards that never move, S (in each tableau pile and in the waste a
    bottom part, :attr:`cut` cards long; :attr:`stock_frozen` for the stock), and the
    waste and stock cards that never enter the tableau, O (:attr:`waste_no_entry`,
    :attr:`stock_no_entry`). Stock cards are indexed in deal order (0 is dealt next).
    Every card starts in both; a card leaves when it might move with what is left
    outside them, until nothing changes (:meth:`settle`)."""

    def __init__(self, p: Piles) -> None:
        self.stacks: list[bytes] = [p[t] for t in T] + [p[WASTE]]
        self.waste = len(T)  # the waste's index in stacks
        self.cut = [len(s) for s in self.stacks]
        self.deal = p[STOCK][::-1]
        n = len(self.deal)
        self.stock_frozen = [True] * n
        self.stock_no_entry = [True] * n
        self.waste_no_entry = [True] * len(p[WASTE])
        # card (an index) -> its copies outside the foundations: (stack, index), the stock as stack -1
        where: list[list[tuple[int, int]]] = [[] for _ in range(CARD_SLOTS)]
        for si, s in enumerate(self.stacks):
            for i, c in enumerate(s):
                where[c].append((si, i))
        for d, c in enumerate(self.deal):
            where[c].append((-1, d))
        self.where = where
        heights: list[list[int]] = [[], [], [], []]
        for f in F:
            fp = p[f]
            if fp:
                heights[suit_of(fp[0])].append(len(fp))
        for h in heights:
            h.extend([0] * (2 - len(h)))  # a suit's foundations not started yet (any empty one)
        self.heights = heights
        # [suit][foundation][rank]: from which deal on every rank between the
        # foundation's height and ``rank`` has a copy not frozen (-1: now; NEVER: not
        # before the end); renewed at each sweep of settle
        self.reach: list[list[list[int]]] = []

    def renew_reach(self) -> None:
        """Compute :attr:`reach` for the cards frozen now."""
        # card -> from which deal on some copy of it is not frozen (-1: one in the
        # tableau or the waste, NEVER: none)
        ready = [NEVER] * CARD_SLOTS
        cut = self.cut
        for si, s in enumerate(self.stacks):
            for c in s[cut[si]:]:
                ready[c] = -1
        stock_frozen = self.stock_frozen
        for d, c in enumerate(self.deal):
            if not stock_frozen[d] and ready[c] > d:
                ready[c] = d
        reach = []
        for suit, heights in enumerate(self.heights):
            base = make_card(0, suit)
            per_foundation = []
            for h in heights:
                row = [NEVER] * (KING + 2)
                worst = -1
                for rank in range(h + 1, KING + 1):
                    row[rank] = worst  # the ranks h+1 .. rank-1
                    if ready[base + rank] > worst:
                        worst = ready[base + rank]
                per_foundation.append(row)
            reach.append(per_foundation)
        self.reach = reach

    def takes(self, card: int, si: int, k: int, deadline: int) -> bool:
        """Whether some copy of the card one rank higher in suit might be a tableau top
        that ``card`` (below index ``k`` of stack ``si``; -1 for the stock) could go on
        before ``deadline``: a tableau copy not under a frozen card (one above ``card``
        in its own pile only if it might itself move onto another tableau card), or a
        waste or stock copy that might enter the tableau (a stock one dealt in time)."""
        if card & 15 == KING:
            return False
        higher = card + 1
        cut = self.cut
        for zs, zi in self.where[higher]:
            if zs < 0:
                if zi < deadline and not self.stock_no_entry[zi]:
                    return True
            elif zs == self.waste:
                if not self.waste_no_entry[zi]:
                    return True
            elif zs == si:
                if zi >= k and self.takes(higher, si, zi + 1, deadline):
                    return True
            elif zi >= cut[zs] - 1:
                return True
        return False

    def goes_home(self, card: int, si: int, k: int, deadline: int) -> bool:
        """Whether ``card`` might go home before ``deadline``: some foundation of its suit
        below it could reach the rank under it with available cards. With only one such
        foundation and the card's other copy above it in its own stack (which leaves
        first, and only home, as it goes on the same cards), that copy takes it."""
        rank = card & 15
        slots = 0
        for row in self.reach[card >> 4]:
            if row[rank] < deadline:  # a foundation at or above the rank: NEVER
                slots += 1
        if slots == 1 and si >= 0:
            return not any(zs == si and zi >= k for zs, zi in self.where[card])
        return slots > 0

    def settle(self) -> bool:
        """Free cards until nothing changes; True when some card stays frozen (the
        position is lost), False as soon as a tableau pile could empty (a space takes
        any card: then nothing stays frozen)."""
        cut, stacks, waste, deal = self.cut, self.stacks, self.waste, self.deal
        n = len(deal)
        stock_frozen, stock_no_entry, waste_no_entry = self.stock_frozen, self.stock_no_entry, self.waste_no_entry
        changed = True
        while changed:
            changed = False
            if 0 in cut[:waste]:
                return False
            self.renew_reach()
            # each stock card's deadline: the next frozen stock card dealt after it (it
            # would cover it for good); the waste's: the first frozen stock card
            deadline = [NEVER] * (n + 1)
            for d in range(n - 1, -1, -1):
                deadline[d] = d if stock_frozen[d] else deadline[d + 1]
            wp = stacks[waste]
            for i in range(max(0, cut[waste] - 1), len(wp)):
                if waste_no_entry[i] and self.takes(wp[i], waste, i + 1, deadline[0]):
                    waste_no_entry[i] = False
                    changed = True
            for d in range(n):
                if stock_no_entry[d] and self.takes(deal[d], -1, 0, deadline[d + 1]):
                    stock_no_entry[d] = False
                    changed = True
            for si in range(waste + 1):
                k = cut[si]
                if k:
                    card = stacks[si][k - 1]
                    if si == waste:
                        moves = not waste_no_entry[k - 1] or self.goes_home(card, si, k, deadline[0])
                    else:
                        moves = self.takes(card, si, k, NEVER) or self.goes_home(card, si, k, NEVER)
                    if moves:
                        cut[si] = k - 1
                        changed = True
            for d in range(n):
                if stock_frozen[d] and (not stock_no_entry[d] or self.goes_home(deal[d], -1, 0, deadline[d + 1])):
                    stock_frozen[d] = False
                    changed = True
        return any(cut) or any(stock_frozen)


def _never_lost(p: Piles) -> bool:
    """A lost-position test that tests nothing (for levels where testing does not pay)."""
    return False


def is_lost(p: Piles) -> bool:
    """Whether some card of ``p`` can never move, so the game is lost (see the module
    docstring, "Lost positions"). A position with an empty tableau pile never is."""
    for t in T:
        if not p[t]:
            return False
    return _Frozen(p).settle()


def _compiled_parts() -> _forty_thieves_native.Searcher | None:
    """The compiled search parts (None when the module is not built), given the
    engine's rules as tables (so no rule is restated in C): the layout; for each card
    the card that goes on it in the tableau (``BELOW``) and the card it goes on (its
    inverse), its suit and rank, the card of each suit and rank; the copies of each
    card (decks; as many foundations a suit), the cards of a won game and the engine's
    move codes."""
    if _forty_thieves_native is None:  # pragma: no cover - a checkout nobody built
        return None
    goes_on = [-1] * CARD_SLOTS
    for parent, child in enumerate(BELOW):
        if child >= 0:
            goes_on[child] = parent
    card_at = [-1] * (SUITS * RANK_SLOTS)
    for card in ALL_CARDS:
        card_at[SUIT_OF[card] * RANK_SLOTS + RANK_OF[card]] = card

    def table(values: list[int] | tuple[int, ...]) -> bytes:
        return bytes(NO_ENTRY if v < 0 else v for v in values)

    return _forty_thieves_native.Searcher(
        layout=(F.start, len(F), T.start, len(T), STOCK, WASTE),
        goes_on=table(goes_on),
        below=table(BELOW),
        suit=table(SUIT_OF),
        rank=table([RANK_OF[c] if c in ALL_CARDS else 0 for c in range(CARD_SLOTS)]),
        card_at=table(card_at),
        copies=FortyThieves.decks,
        cards=CARDS,
        move_action=MOVE,
        deal_action=DEAL[0],
    )


#: Made once: it holds only the rules' tables (so searches in several threads share it).
_NATIVE: Final = _compiled_parts()
