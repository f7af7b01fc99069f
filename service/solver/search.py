"""The search core: one depth-first search with a visited set, for every game.

The core knows nothing about cards. A :class:`Strategy` object (one per game, see
:mod:`service.solver.plugins`) tells it how to list a position's children in a good
order, which moves are safe to make without searching them, and how to merge
equivalent positions (its canonical key). A strategy may use macro moves internally;
every child carries the engine moves that produce it, so the solution the core returns
is a plain list of engine moves, and :func:`verify` replays it through
``game.legal_moves`` before anyone sees it.

The passes (:class:`SearchPlan`): :func:`depth_first` (optionally a depth-bounded
pass first), :func:`best_first` (lowest :meth:`Strategy.score` first), or a plug-in's
own search built from them. Every pass of one solve shares its position limit.

Budgets are counted in positions, never read off the clock, so that the same request
gets the same answer however busy the machine is: a search's time budget is the
positions it buys at its game's reference pace (:attr:`Strategy.positions_per_second`,
:func:`budget_of`), within ``max_states``; every pass, and every share of a budget
between passes, is a count of positions. The clock is read only for the ``seconds``
an answer reports and for the wall-clock safety cap (:func:`wall_clock_cap`): a search
still running at that cap raises :class:`SearchOverrun` (the HTTP layer answers 503
with ``Retry-After``), it never answers what it found so far.

A strategy may carry compiled forms of the two passes (:class:`NativeSearch`, the
Penguin family's ``_penguin_native.c``); :func:`depth_first_pass` and :func:`best_first`
then run those, which visit the same positions and answer the same moves as the Python
loops below (the loops stay the reference their tests compare them with).

Soundness: ``unsolvable`` is answered only when a pass exhausted every position
reachable from the start, up to the strategy's pruning (canonical keys, safe
automatic moves, merged equivalent moves), which each plug-in documents and argues.
The core itself prunes nothing else: a position is skipped only when its key is
already in the visited set, so it was (or is being) searched; a depth-bounded pass
that cut a line, and a best-first pass that dropped open positions to bound memory,
answer ``unknown``, never ``unsolvable``.
"""

from __future__ import annotations

import contextlib
import gc
import heapq
import math
import threading
import time
from collections.abc import Hashable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from service.engine.core import Game, Move, State

MoveLike = tuple[int, int, int, int]  # a Move, or a plain tuple of its fields (faster to make)
# A search node: the engine's State, or a plug-in's own compact form of it (Strategy.start).
Node = Any
Child = tuple[tuple[MoveLike, ...], Node]
# What a compiled pass answers (see NativeSearch): the values of Outcome and StopReason,
# the positions visited, the solution's steps after the root's automatic moves, and the
# positions a depth-first solution runs through when it is longer than long_path (else None).
NativeAnswer = tuple[str, str | None, int, list[tuple[MoveLike, ...]], list[Node] | None]


class NativeSearch(Protocol):
    """A plug-in's compiled form of :func:`depth_first_pass` and :func:`best_first`: the
    same search, position for position and move for move, as those passes over the
    plug-in's Python methods (which stay the reference its tests compare it with).
    ``deadline`` is the wall-clock safety cap (:func:`overrun_deadline`): a pass that
    reaches it answers stopped by "time", which the core raises as :class:`SearchOverrun`."""

    def depth_first(self, root: Node, deadline: float, max_states: int, max_depth: int, long_path: int) -> NativeAnswer:
        """:func:`depth_first_pass` from ``root`` (``max_depth`` 0: no bound)."""
        ...

    def best_first(self, root: Node, deadline: float, max_states: int, max_open: int) -> NativeAnswer:
        """:func:`best_first` from ``root``, keeping at most ``max_open`` open positions."""
        ...


class SearchOverrun(Exception):
    """The search was still running at its wall-clock safety cap (:func:`wall_clock_cap`):
    it did not get the CPU its budget in positions needs. Raised, never answered as an
    ``unknown``: an answer cut by the clock would differ from run to run."""


# The wall-clock safety cap of the searches running in this context (a solver process runs
# one search at a time; a search in a request thread has none: infinity).
_OVERRUN_AT: ContextVar[float] = ContextVar("overrun_at", default=math.inf)


@contextlib.contextmanager
def wall_clock_cap(seconds: float) -> Iterator[None]:
    """Within the block, a search still running ``seconds`` from now raises
    :class:`SearchOverrun` (a safety net: budgets are counted in positions)."""
    token = _OVERRUN_AT.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _OVERRUN_AT.reset(token)


def overrun_deadline() -> float:
    """The ``time.monotonic()`` of the safety cap in force (infinity when none is)."""
    return _OVERRUN_AT.get()


def check_clock(deadline: float) -> None:
    """Raise :class:`SearchOverrun` once ``deadline`` (:func:`overrun_deadline`) has passed."""
    if time.monotonic() > deadline:
        raise SearchOverrun(f"the search was still running {time.monotonic() - deadline:.1f} s past its safety cap")


# Best-first keeps whole positions open (about 1 KB each): past this many, the worst
# half is dropped (and the search can no longer prove a loss).
MAX_OPEN_NODES = 100_000
# Separators of packed keys: no card is 0xfd or above.
PILE_SEP, GROUP_SEP, COUNTERS_SEP = b"\xff", b"\xfd", b"\xfe"


def pack_piles(piles: Iterable[Sequence[int]]) -> bytes:
    """Piles of cards (small ints) as one bytes key part."""
    return PILE_SEP.join(map(bytes, piles))


def pack_counters(packed: bytes, counters: Sequence[int]) -> bytes:
    """``packed`` followed by the state's counters, when it has any."""
    return packed + COUNTERS_SEP + str(tuple(counters)).encode() if counters else packed


@dataclass(frozen=True)
class Limits:
    """What one search may spend: ``max_seconds`` of search, counted in positions at the
    game's reference pace (:func:`budget_of`), and at most ``max_states`` distinct
    positions (a bound on memory)."""

    max_seconds: float
    max_states: int

    def spent(self, states: int, pace: float) -> Limits:
        """What is left once ``states`` positions are spent, at ``pace`` positions per
        second of budget (both bounds shrink by the same positions)."""
        return Limits(self.max_seconds - states / pace, self.max_states - states)


class Outcome(StrEnum):
    """What a search decided (the API's ``result``)."""

    SOLVED = "solved"  # the moves win
    UNSOLVABLE = "unsolvable"  # proved: every reachable position was seen (up to sound pruning)
    UNKNOWN = "unknown"  # a limit stopped the search first


class StopReason(StrEnum):
    """Why a search answered ``unknown`` (the API's ``stopped_by``)."""

    TIME = "time"  # the positions its time budget buys at the game's pace (budget_of) were spent
    STATES = "states"  # max_states positions were visited
    MEMORY = "memory"  # best-first dropped open positions, so it can no longer prove a loss
    INVALID_SOLUTION = "invalid-solution"  # a plug-in's solution failed the engine's replay
    DEPTH = "depth"  # only inside depth_first: the bounded pass cut a line


class SearchPlan(StrEnum):
    """Which passes :func:`solve` runs for a strategy."""

    DEPTH_FIRST = "depth-first"  # one depth-first search, children in order
    DEPTH_THEN_BEST_FIRST = "depth-first+best-first"  # see Strategy.first_share
    OWN = "own"  # the strategy's own_search


@dataclass
class SolveResult:
    """A search's answer: ``moves`` win when ``result`` is ``SOLVED``."""

    result: Outcome
    moves: list[Move] = field(default_factory=list)
    states: int = 0
    seconds: float = 0.0
    stopped_by: StopReason | None = None  # set when result is UNKNOWN

    @classmethod
    def solved(cls, moves: list[Move], states: int, started: float) -> SolveResult:
        """``moves`` win; the search began at ``started`` (``time.monotonic()``)."""
        return cls(Outcome.SOLVED, moves, states, time.monotonic() - started)

    @classmethod
    def unsolvable(cls, states: int, started: float) -> SolveResult:
        """Proved unsolvable: every reachable position was seen (up to sound pruning)."""
        return cls(Outcome.UNSOLVABLE, [], states, time.monotonic() - started)

    @classmethod
    def unknown(cls, reason: StopReason, states: int, started: float) -> SolveResult:
        """Unknown: ``reason`` stopped the search after ``states`` positions."""
        return cls(Outcome.UNKNOWN, [], states, time.monotonic() - started, reason)


class Strategy:
    """How the search treats one game: move order, safe moves, canonical keys, passes.

    This base class is the generic one: it works for any game through the engine
    interface alone, and each method is a hook a game's plug-in overrides where it pays."""

    #: DEPTH_FIRST (children in order), OWN (the plug-in's :meth:`own_search`) or
    #: DEPTH_THEN_BEST_FIRST (depth-first for :attr:`first_share` of the positions, then
    #: best-first, lowest :meth:`score` first, from scratch: two different looks, as
    #: Freecell Solver's flares). Each pass keeps every visited key and stops only when
    #: the reachable space is exhausted, so each proves loss soundly on its own.
    plan: SearchPlan = SearchPlan.DEPTH_FIRST
    #: Under DEPTH_THEN_BEST_FIRST, the share of the positions the depth-first pass gets.
    first_share: float = 0.5
    #: The positions one second of budget buys (:func:`budget_of`): about half this
    #: strategy's pace on one idle core, fixed here so that the answer depends neither on
    #: the machine nor on its load (the measurements: bench/positions-budget.md). The
    #: generic strategy's is Amazons'.
    positions_per_second: int = 55_000
    #: A depth-first solution through more positions than this is shortened before it
    #: is answered (see :func:`shorten`); a typical one is far shorter.
    long_path: int = 150
    #: When set, depth-first search first tries lines of at most this many positions
    #: (a search that wanders deep finds the short lines sooner), then, only if that
    #: pass cut a line and found nothing, searches again without the bound.
    max_depth: int | None = None
    #: What :meth:`ordered_moves` prefers, in words: a hint chosen by it says so.
    heuristic: str = (
        "it prefers moves to a foundation, then moves that empty their pile, then the "
        "others; moves into an empty pile, and deals or redeals, come last"
    )

    #: The compiled passes, when the plug-in has them (:class:`NativeSearch`); the
    #: search core then runs them instead of its Python loops.
    native: NativeSearch | None = None

    def __init__(self, game: Game, root: State) -> None:
        self.game = game
        self.root = root

    def start(self) -> Node:
        """The root as a search node (plug-ins may use a faster form than State)."""
        return self.root

    def score(self, state: Node) -> float:
        """How far from won a node looks (best-first search only; lower is better)."""
        return 0.0

    def key(self, state: Node) -> Hashable:
        """Equal for positions with the same future (here: identical ones). Packed into
        bytes (cards are small ints): a third of the memory of the tuples, and the visited
        set holds up to ``max_states`` of them."""
        return pack_counters(pack_piles(state.piles), state.counters)

    def is_won(self, state: Node) -> bool:
        return self.game.is_won(state)

    def auto(self, state: Node) -> tuple[tuple[MoveLike, ...], Node]:
        """Make every safe move (the engine's autoplay, which it documents as harmless)."""
        moves: list[Move] = []
        game = self.game
        for _ in range(512):
            m = game.autoplay_move(state)
            if m is None:
                break
            moves.append(m)
            state = game.apply(state, m)
        return tuple(moves), state

    def ordered_moves(self, state: State) -> list[Move]:
        """Legal moves, most promising first (generic: foundation moves, then moves that
        empty or uncover a pile, then the rest; deals and redeals last)."""
        game = self.game
        piles = state.piles
        found = set(game.group_range("foundation")) if game.has_group("foundation") else set()

        def score(m: Move) -> int:
            if m.src < 0:
                return 50
            s = 0
            if m.dst in found:
                s -= 100
            if len(piles[m.src]) == m.count:
                s -= 10
            if not piles[m.dst]:
                s += 20
            return s

        return sorted(game.legal_moves(state), key=score)

    def own_search(self, limits: Limits, first: tuple[MoveLike, ...], root: Node, started: float) -> SolveResult:
        """A plug-in's own search (plan OWN), from ``root`` after the ``first``
        automatic moves, for a solve that began at ``started`` (``time.monotonic()``,
        for the seconds it reports). Its budget is ``limits.max_states`` positions
        (:func:`solve` has counted the time budget in them): it must stop on positions,
        never on the clock, except at the safety cap (:func:`overrun_deadline`, raising
        :class:`SearchOverrun`), answer an exhausted budget as stopped by "states", and
        answer ``unsolvable`` only after an exhaustive pass. It may use
        :func:`depth_first` and :func:`best_first` as building blocks."""
        raise NotImplementedError

    def children(self, state: Node) -> Iterator[Child]:
        """The positions one (macro) move away, best first, built only when asked for,
        each after its safe automatic moves (their moves included)."""
        apply = self.game.apply
        auto = self.auto
        for m in self.ordered_moves(state):
            more, child = auto(apply(state, m))
            yield (m, *more), child


class _GcPause:
    """Pauses the cyclic garbage collector while any search runs (searches in other
    threads of the process included): a search makes no reference cycles but very many
    small tuples, whose collections cost a measurable share of the time and, with a
    large visited set, pauses that delay the time check. The collector is process-wide, so
    the first search to start pauses it and the last to end restores it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._was_enabled = False

    def __enter__(self) -> None:
        with self._lock:
            if self._running == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._running += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._running -= 1
            if self._running == 0 and self._was_enabled:
                gc.enable()


gc_paused = _GcPause()


def budget_of(limits: Limits, pace: int) -> tuple[int, StopReason]:
    """The positions a search within ``limits`` may visit, at ``pace`` positions per second
    of budget (:attr:`Strategy.positions_per_second`), and what an ``unknown`` answer is then
    stopped by: "time" when the time budget's positions are the fewer, else "states".

    >>> budget_of(Limits(0.5, 1_000_000), 20_000)
    (10000, <StopReason.TIME: 'time'>)
    >>> budget_of(Limits(10, 1_000), 20_000)
    (1000, <StopReason.STATES: 'states'>)
    """
    timed = limits.max_seconds * pace  # a float: an infinite budget stays infinite
    if timed < limits.max_states:
        return max(1, math.floor(timed)), StopReason.TIME
    return max(1, limits.max_states), StopReason.STATES


def solve(strategy: Strategy, limits: Limits) -> SolveResult:
    """Search from ``strategy.root`` within ``limits`` (counted in positions,
    :func:`budget_of`), as the strategy's plan says, with the cyclic garbage collector
    paused (:class:`_GcPause`). The positions of every pass together stay within the
    budget: a later pass gets what the earlier ones left. Raises :class:`SearchOverrun`
    at the wall-clock safety cap (:func:`wall_clock_cap`)."""
    positions, binding = budget_of(limits, strategy.positions_per_second)
    with gc_paused:
        result = _solve(strategy, Limits(limits.max_seconds, positions))
    if result.stopped_by is StopReason.STATES:
        result.stopped_by = binding
    return result


def _solve(strategy: Strategy, limits: Limits) -> SolveResult:
    """:func:`solve` within ``limits.max_states`` positions (the whole budget, counted)."""
    started = time.monotonic()
    first, root = strategy.auto(strategy.start())
    if strategy.is_won(root):
        return SolveResult.solved([Move(*m) for m in first], 1, started)
    if strategy.plan is SearchPlan.OWN:
        return strategy.own_search(limits, first, root, started)
    if strategy.plan is SearchPlan.DEPTH_THEN_BEST_FIRST:
        share = max(1, math.floor(limits.max_states * strategy.first_share))
        deep = depth_first(strategy, Limits(limits.max_seconds, share), first, root, started)
        if deep.result is not Outcome.UNKNOWN or deep.stopped_by is not StopReason.STATES:
            return deep
        greedy = best_first(strategy, remaining(limits, deep.states), first, root, started)
        greedy.states += deep.states
        return greedy
    return depth_first(strategy, limits, first, root, started)


def remaining(limits: Limits, used: int) -> Limits:
    """What a later pass of one solve may visit: the positions earlier passes left
    (at least one, so that it stops at once with "states" when none are left)."""
    return Limits(limits.max_seconds, max(1, limits.max_states - used))


def depth_first(
    strategy: Strategy, limits: Limits, first: tuple[MoveLike, ...], root: Node, started: float
) -> SolveResult:
    """Depth-first search with a visited set (bounded first if ``strategy.max_depth`` says so)."""
    if strategy.max_depth is None:
        return depth_first_pass(strategy, limits, first, root, started, None)
    bounded = depth_first_pass(strategy, limits, first, root, started, strategy.max_depth)
    if bounded.stopped_by is not StopReason.DEPTH:
        return bounded
    again = depth_first_pass(strategy, remaining(limits, bounded.states), first, root, started, None)
    again.states += bounded.states
    return again


def depth_first_pass(
    strategy: Strategy, limits: Limits, first: tuple[MoveLike, ...], root: Node, started: float, max_depth: int | None
) -> SolveResult:
    """One depth-first pass; with ``max_depth``, lines longer than that are cut, and a
    pass that cut one and found nothing answers unknown, stopped by "depth"."""
    deadline = overrun_deadline()
    max_states = max(1, limits.max_states)
    if strategy.native is not None:
        outcome, stop, states, line_steps, line_nodes = strategy.native.depth_first(
            root, deadline, max_states, max_depth or 0, strategy.long_path
        )
        line = [first, *line_steps]
        if line_nodes is not None:
            line = shorten(strategy, line_nodes, line, deadline)
        return native_result(outcome, stop, states, line, started)
    key = strategy.key
    is_won = strategy.is_won
    visited = {key(root)}
    stack: list[Iterator[Child]] = [strategy.children(root)]
    path: list[tuple[MoveLike, ...]] = [first]
    nodes: list[Node] = [root]  # the positions path leads through (to shorten it)
    tick = 0
    depth_cap = max_depth or 1 << 62
    cut = False
    while stack:
        for moves, child in stack[-1]:
            tick += 1
            if tick & 127 == 0:
                check_clock(deadline)
            k = key(child)
            if k in visited:
                continue
            visited.add(k)
            path.append(moves)
            nodes.append(child)
            if is_won(child):
                if len(nodes) > strategy.long_path:
                    path = shorten(strategy, nodes, path, deadline)
                solution = [Move(*m) for step in path for m in step]
                return SolveResult.solved(solution, len(visited), started)
            if len(visited) >= max_states:
                return SolveResult.unknown(StopReason.STATES, len(visited), started)
            if len(stack) >= depth_cap:
                # not searched here: forget it, so that a shorter line may reach it
                cut = True
                visited.discard(k)
                path.pop()
                nodes.pop()
                continue
            stack.append(strategy.children(child))
            break
        else:
            stack.pop()
            path.pop()
            nodes.pop()
    if cut:
        return SolveResult.unknown(StopReason.DEPTH, len(visited), started)
    return SolveResult.unsolvable(len(visited), started)


def shorten(
    strategy: Strategy, nodes: list[Node], path: list[tuple[MoveLike, ...]], deadline: float
) -> list[tuple[MoveLike, ...]]:
    """A shorter line through the same won search path, or ``path`` itself.

    Depth-first search sometimes wanders: on rare deals its line runs through thousands
    of positions, most of them detours. Each position on
    the line is expanded once more, and the line jumps to the furthest later position
    that one of its children equals (by canonical key). The jumps are then replayed from
    the root, picking at each step a child with the next key, since equal keys may be
    different arrangements of the same position (moves name piles). If a step finds no
    such child, the original line is kept; at the safety cap ``deadline``, raises
    :class:`SearchOverrun`."""
    key = strategy.key
    node_keys = [key(n) for n in nodes]  # distinct: each was new to the visited set
    where = {k: i for i, k in enumerate(node_keys)}
    keys = [node_keys[0]]
    i, last = 0, len(nodes) - 1
    while i < last:
        check_clock(deadline)
        best = i + 1
        for _, child in strategy.children(nodes[i]):
            j = where.get(key(child), -1)
            if j > best:
                best = j
        keys.append(node_keys[best])
        i = best
    steps = [path[0]]
    node = nodes[0]
    for k in keys[1:]:
        check_clock(deadline)
        for moves, child in strategy.children(node):
            if key(child) == k:
                steps.append(moves)
                node = child
                break
        else:
            return path
    return steps if strategy.is_won(node) else path


def best_first(
    strategy: Strategy, limits: Limits, first: tuple[MoveLike, ...], root: Node, started: float
) -> SolveResult:
    """Greedy best-first: always expand the open node with the lowest score. Each key
    records its parent and the moves from it, to rebuild the solution."""
    deadline = overrun_deadline()
    max_states = max(1, limits.max_states)
    if strategy.native is not None:
        outcome, stop, states, line_steps, _ = strategy.native.best_first(root, deadline, max_states, MAX_OPEN_NODES)
        return native_result(outcome, stop, states, [first, *line_steps], started)
    key, score, is_won = strategy.key, strategy.score, strategy.is_won
    k0 = key(root)
    parent: dict[Hashable, tuple[Hashable, tuple[MoveLike, ...]]] = {k0: (None, first)}
    heap: list[tuple[float, int, Hashable, Node]] = [(score(root), 0, k0, root)]
    count = 0
    tick = 0
    pruned = False  # open nodes were dropped to bound memory: no proof of loss then
    while heap:
        if len(heap) > MAX_OPEN_NODES:
            heap = heapq.nsmallest(MAX_OPEN_NODES // 2, heap)
            heapq.heapify(heap)
            pruned = True
        _, _, pk, node = heapq.heappop(heap)
        for moves, child in strategy.children(node):
            tick += 1
            if tick & 127 == 0:
                check_clock(deadline)
            k = key(child)
            if k in parent:
                continue
            parent[k] = (pk, moves)
            if is_won(child):
                steps: list[tuple[MoveLike, ...]] = []
                cur: Hashable = k
                while cur is not None:
                    cur, step = parent[cur]
                    steps.append(step)
                solution = [Move(*m) for step in reversed(steps) for m in step]
                return SolveResult.solved(solution, len(parent), started)
            if len(parent) >= max_states:
                return SolveResult.unknown(StopReason.STATES, len(parent), started)
            count += 1
            heapq.heappush(heap, (score(child), count, k, child))
    if pruned:
        return SolveResult.unknown(StopReason.MEMORY, len(parent), started)
    return SolveResult.unsolvable(len(parent), started)


def native_result(
    outcome: str, stop: str | None, states: int, path: list[tuple[MoveLike, ...]], started: float
) -> SolveResult:
    """The :class:`SolveResult` of a compiled pass's answer (``path``: every step, the
    root's automatic moves first); a pass stopped at the safety cap raises
    :class:`SearchOverrun`."""
    result = Outcome(outcome)
    if result is Outcome.SOLVED:
        make = Move._make  # the steps' moves are 4-tuples: cheaper than Move(*m)
        return SolveResult.solved([make(m) for step in path for m in step], states, started)
    if result is Outcome.UNSOLVABLE:
        return SolveResult.unsolvable(states, started)
    if stop is None:
        raise ValueError("a compiled pass answered unknown without saying why")
    if stop == StopReason.TIME:
        raise SearchOverrun(f"a compiled pass reached its safety cap after {states} positions")
    return SolveResult.unknown(StopReason(stop), states, started)


def verify(game: Game, state: State, moves: list[Move]) -> bool:
    """True when every move is legal in turn and the last position is won."""
    for m in moves:
        if not game.is_legal(state, m):
            return False
        state = game.apply(state, m)
    return game.is_won(state)
