"""Strategy of Forty Thieves: its own fast move generation on ``bytes`` piles, and its
own search (beam passes over the stock, and slices of an exhaustive depth-first search).

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
- **Order** (never pruning): foundation moves; builds from the waste; builds that
  uncover a card, the ones that empty a pile first; a deal; then moves into a space,
  and last the moves of a card off its suit's next-higher card (they only swap
  copies).

Search (strategy "own", :meth:`FortyThievesStrategy.own_search`): beam passes of
growing width over the stock levels, and between them slices of one exhaustive
depth-first search that pauses and resumes (:class:`_Dfs`; it keeps
:attr:`~FortyThievesStrategy.dfs_share` of the time, and its first slice, 1,500
positions, decides small end games at once); it has whatever time the passes leave.
Each pass weighs the waste in its score its own way, and may choose its beam with
the buried term below. The depth-first search's share is small (5%): the 40% of the
fixed 60/40 split before left the 1024-wide
pass too little time, and it only ever won deal 49 alone (in 100k positions).
A pass starts only when the positions per beam slot of the widest finished pass, times
its width, fit the time left at the pace so far (with some overshoot); while it runs it
narrows its beam when the pace of its last level says the levels left would not end in
time (a pass cut off loses all its work, while a narrower end game still wins deals:
38, 40 and 12 were won by a 1024-wide pass narrowed to 340-960).

"Unsolvable" comes from the depth-first search once it has run out of positions, or
from a pass that dropped nothing ("exhausted": at every level its look-around ran dry
within its budget, and every position one deal on was kept). Such a pass is a
breadth-first search by stock level: every position reachable from the root with the
same stock length is in that level's look-around (induction over the levels: a deal
only ever goes one level down, every other move stays in the level), up to the pruning
above, so it saw every reachable position. Any other pass only ever answers "solved"
(its solution replays through the engine like any other). Both searches leave out the
one move that would undo the move just made (it gives back the position before it,
already seen).

Why beams: a depth-first search deals early (a deal is the one move always available)
and then spends its time on the end-game rearrangements of its first, usually lost,
line: on deals 3-5, 99% of the positions it visited had 0-7 stock cards left. A beam
pass keeps the best few positions at every stock level instead, so every deal decision
is revisited; most of its positions still lie late (deals 3-5, width 64: 41% with 0-7
stock cards, 35% with 8-15), because early levels have few rearrangements and their
look-around is exhausted well within its budget. The final levels usually end in a
dead end whose rearrangements are all seen (16 to 115 positions): it is the earlier
choices that lose, hence more width rather than a deeper end game.

What the passes' shapes and weights won (deals 31-60 as a check against fitting 1-30):
a single pass 16x32 with a waste card weighted 1 (as much as a space) won 7 of deals
1-30 (209k positions in all) and 5 of 31-60 (478k); weighted 5, 7 (135k) and 9
(146k). 64x8 with weights 1, 3, 5 and 8 won 7, 8, 9 and 9 of 31-60, but not the same
ones (12 between them). Each pass alone, from the root (deals 1-24): the 16-, 64- and
256-wide passes with waste weights 1, 3, 5 and 8 won the same 5 to 6 deals (2, 7, 8,
10, 13, 14, 23; noise added to the scores changed nothing either), but a 1024x8 pass
(weight 5, 50k to 250k positions) won 11 and 12 of 1-30 and 38, 40 and 54 of 31-60,
which no narrower pass won, and it also won 7, 8, 10 and 35 (the 64-wide pass wins
everything the 16-wide ones won on 1-30). 1024x6 won the same 7 deals tried (8, 11,
12, 35, 38, 40, 54) with 1-20% fewer positions (1024x4: 30-50% fewer, but lost 11 and
38). The cheap passes on all of 31-60: 16x32 weight 5 won 9 deals, 16x8 weight 8 won
8, 64x8 weights 5, 1, 3 and 8 won 9, 7, 8 and 9, 12 between them; 45 fell only to
16x32, 16x8 and 64x8 weight 1, 53 to 16x8 and 64x8 weights 3 and 8, 60 to 64x8 weight
1 (on 1-30 they all won the same 7). So the schedule ran 16x32, 16x8 and 64x8 (12k
to 28k positions in all), then 1024x6 (some 200k positions when it wins, 6-8 s here:
any slower and it has to narrow), then the other shapes and weights, until the buried
term below replaced the cheap passes. The winning passes find their win only at the
last levels, so a pass is worth starting only if it can end. Other weights (cards
home, runs, spaces), a cap per group of positions with the same waste and foundations,
and a wider beam early in the game changed little or lost deals.

The buried term: the positions one deal on (the beam) are chosen by the score plus
``bury`` times the cards lying above the cards the foundations need next, in the
tableau and the waste (:meth:`~FortyThievesStrategy.buried`: for each suit the
outside copies of the rank above its lower foundation, an Ace while it has fewer than
two; in a "both" pass the rank above its higher foundation too; a card in the stock
counts nothing). It is read off the position's key (see the cost below). The
look-around within a level keeps the plain score (the term there too, weight 1, won 15
of deals 1-60 at 64x8, against 17 for the beam's choice alone). Each pass alone on
deals 1-60 (wins, positions in all): 64x8 waste weight 5: plain 16 (619k), bury 1, 2
and 3: 17, 18 (611k) and 16; "both" with bury 1, 2 and 4: 16, 18 (757k) and 17. The
term mostly changes which deals fall: at 64x8, bury 2 wins 38 and 53 (before only
1024x6 won 38), "both" wins 33, 45 and 49 (before only the depth-first search won 49),
weight 1 with bury 2 wins 12 (before only 1024x6); 256x8 "both" wins 22 (plain 18,
bury 2 19), 52 among them, which nothing else won; 1024x6 wins 25 plain and 25 with
bury 2, but not the same (bury 2 wins 33 and 53, loses 12 and 40). The six cheap
passes of the old schedule won 19 deals of 1-60 between them, four 64-wide ones with
the term (waste 5, 8 "both", 1, 3) won 23. The schedule was chosen on these per-pass
figures (a deal counts as won when a pass that wins it fits the positions left, 200k
to 500k a deal, the depth-first search left out): the old one wins 24 to 27, this one
28 to 30 (at 350k: 33, 49 and 52 more, all in 31-60; deals 1-30 gave up only 2, 7, 8,
10-14, 23 and 27 to any pass tried). With the 1024-wide pass "both" instead of plain:
28 to 29 (it wins 26 alone, 40 and 45 among them, but not 11 or 12, in 9.4M positions
against 7.8M). Counting the two ranks above the lower foundation (bury 1) won 16
rather than 17 at 64x8 and 15 rather than 17 at 16x32. The term is computed only when
a level has more positions one deal on than the beam keeps (otherwise all are kept
whatever their scores), with one regular expression per set of needed cards (1.9-2.4
us a position, against 3.5-4.5 us for a loop of ``bytes.find``). The whole search,
deals 1-60 at 10 s each, the old schedule and this one run deal by deal in turn on a
shared machine: 27 against 30 solved (33, 49 and 52 more, as the per-pass figures
foretold; 12 and 38 now fall in 1.5 and 0.2 s rather than 7 s), none proved lost, 34k
against 32k positions a second (the term and the "both" passes cost some 6%).

Where the time goes (cProfile on deals 1 and 3, and timings without it on 22k
positions of 64-wide passes): an expansion costs some 25 us and builds 3.4 children:
the move generator (``_candidates``) 6-7 us, building the children (autoplay
included) some 8 us, their keys 1.4 us each, the beam's scores and heap the rest
(under cProfile: ``_candidates`` 30% of the time, ``_beam`` 15%, ``children`` 14%,
``key`` 13%, ``auto`` 7%). Two children in three are positions already seen, mostly
through moves that commute; nothing cheaper than the key was found to tell them.

Exhaustive proofs of whole deals are out of reach: on deal 5 (a pass never gets past
21 cards home) the positions one deal on grow from 4 to 47,520 per level by stock 15
(300k positions and not done), mostly independent choices multiplying.
"""

from __future__ import annotations

import heapq
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from service.engine.core import Action, Game, Move, State

from ..search import Child, Limits, MoveLike, Outcome, SearchPlan, SolveResult, StopReason, Strategy

MOVE = int(Action.MOVE)
DEAL = (int(Action.DEAL), -1, -1, 0)
Piles = tuple[bytes, ...]
F = range(0, 8)
T = range(8, 18)
STOCK, WASTE = 18, 19
# A beam entry: score, tie-break counter, position, trail (moves, parent trail) or None.
Trail = Any
Entry = tuple[float, int, Piles, Trail]
Finder = Callable[[bytes, int], list[bytes]]  # a compiled pattern's findall(text, pos)


class _Dfs:
    """The exhaustive depth-first search of :func:`depth_first`, able to pause (at a
    deadline or a number of positions) and to resume where it stopped."""

    def __init__(self, kn: FortyThievesStrategy, first: tuple[MoveLike, ...], root: Piles) -> None:
        self.kn = kn
        self.visited = {kn.key(root)}
        self.stack: list[Iterator[Child]] = [kn.children(root)]
        self.path: list[tuple[MoveLike, ...]] = [first]
        self.result: Outcome | None = None  # SOLVED or UNSOLVABLE once decided
        self.seconds = 0.0  # spent so far

    def run(self, deadline: float, max_states: int) -> Outcome | None:
        """Search on until decided (the result), or None at the deadline or once
        ``max_states`` positions are visited."""
        t0 = time.monotonic()
        try:
            return self._run(deadline, max_states)
        finally:
            self.seconds += time.monotonic() - t0

    def _run(self, deadline: float, max_states: int) -> Outcome | None:
        if self.result is not None:
            return self.result
        key, is_won, children = self.kn.key, self.kn.is_won, self.kn.children
        visited, stack, path = self.visited, self.stack, self.path
        if len(visited) >= max_states or time.monotonic() > deadline:
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
                m = moves[0]
                if len(moves) == 1 and 8 <= m[1] < 18 and 8 <= m[2] < 18:
                    stack.append(children(child, (MOVE, m[2], m[1], 1)))  # not straight back
                else:
                    stack.append(children(child))
                tick += 1
                if len(visited) >= max_states or (tick & 63 == 0 and time.monotonic() > deadline):
                    return None
                break
            else:
                stack.pop()
                path.pop()
        self.result = Outcome.UNSOLVABLE
        return self.result

    def answer(self) -> tuple[Outcome, list[Move]]:
        """The result and, when solved, the winning moves."""
        assert self.result is not None
        if self.result is Outcome.SOLVED:
            return Outcome.SOLVED, [Move(*m) for step in self.path for m in step]
        return Outcome.UNSOLVABLE, []


def _unwind(trail: Trail) -> list[MoveLike]:
    """The moves of a trail, first move first."""
    steps: list[tuple[MoveLike, ...]] = []
    while trail is not None:
        steps.append(trail[0])
        trail = trail[1]
    return [m for step in reversed(steps) for m in step]


class FortyThievesStrategy(Strategy):
    """Forty Thieves' knowledge and search (see the module docstring)."""

    heuristic = (
        "it prefers foundation moves, then builds from the waste, builds that empty a pile "
        "or uncover a card (one that can go home first), then a deal; moves into a space, "
        "and moves of a card off its suit's next-higher card, come last"
    )

    plan = SearchPlan.OWN
    #: States the first depth-first probe may visit (small end games are decided there).
    probe_states = 1500
    #: Beam passes in turn: (width, expansions per stock level and per beam slot, the
    #: score's weight of a waste card, the buried term's weight, whether it counts the
    #: rank above the higher foundation too): the cheap ones that win deals no other
    #: wins, the 1024-wide one (it wins deals no narrower one wins), then the rest (see
    #: the module docstring for the figures).
    schedule: tuple[tuple[int, int, float, float, bool], ...] = (
        (16, 32, 5.0, 2.0, False),
        (64, 8, 5.0, 2.0, False),
        (64, 8, 8.0, 2.0, True),
        (64, 8, 1.0, 2.0, False),
        (1024, 6, 5.0, 0.0, False),
        (256, 8, 5.0, 2.0, True),
        (64, 8, 3.0, 2.0, False),
        (256, 8, 5.0, 2.0, False),
        (64, 8, 8.0, 0.0, False),
        (1024, 6, 5.0, 2.0, False),
        (4096, 6, 5.0, 2.0, True),
    )
    #: The depth-first search's share of the time (it wins some deals no pass wins, and
    #: only it can prove a loss); the beam passes have the rest.
    dfs_share = 0.05
    #: A pass starts if its estimated positions are at most this many times what the
    #: time left allows at the pace so far (it narrows its beam to finish in time).
    overshoot = 1.5
    #: The last stock level (the end game) gets this many times the expansions.
    final_factor = 8
    #: At most this many expansions per stock level: a level's positions are all held
    #: at once (some 15 children an expansion, about 600 bytes each: some 75 MB).
    max_expansions = 8192

    def __init__(self, game: Game, root: State) -> None:
        super().__init__(game, root)
        assert game.group_range("tableau") == T and game.group_range("waste").start == WASTE
        self.stats: dict[str, Any] = {}
        self._runs: dict[bytes, int] = {}  # a tableau pile -> how many runs it holds (score)
        self._homes: dict[Piles, tuple[dict[int, int], dict[int, int]]] = {}  # see _homes_of
        self._needs: dict[Piles, Finder | None] = {}  # foundations -> see buried
        self._finders: dict[tuple[int, ...], Finder] = {}  # cards needed -> see buried

    def start(self) -> Piles:
        return tuple(bytes(p) for p in self.root.piles)

    def key(self, p: Piles) -> bytes:
        # the stock's length (one byte), the waste (no zero byte: every card is at least 1)
        # and the sorted piles, each after a zero byte: read back in one way only
        return BYTE[len(p[STOCK])] + p[WASTE] + b"\0" + b"\0".join(sorted(p[8:18]))

    def own_search(self, limits: Limits, first: tuple[MoveLike, ...], root: Piles, t0: float) -> SolveResult:
        """One exhaustive depth-first search, run in slices between beam passes (it keeps
        :attr:`dfs_share` of the time; its first slice, the probe, decides small end
        games at once); a pass starts only if it should end in time. ``stats`` records
        what each part saw."""
        deadline = t0 + limits.max_seconds
        max_states = limits.max_states
        dfs = _Dfs(self, first, root)
        self.stats = {"passes": [], "skipped": []}

        def answer(result: Outcome, moves: list[Move], why: StopReason | None = None) -> SolveResult:
            self.stats["dfs"] = (result if dfs.result is not None else Outcome.UNKNOWN, len(dfs.visited), dfs.seconds)
            return SolveResult(result, moves, beam_states + len(dfs.visited), time.monotonic() - t0, why)

        beam_states = 0
        beam_seconds = 0.0
        if dfs.run(deadline, min(self.probe_states, max_states)) is not None:
            return answer(*dfs.answer())
        self.stats["probe"] = len(dfs.visited)
        per_width = 0.0  # positions per beam slot in the widest finished pass
        widest = 0
        for width, per, waste, bury, both in self.schedule:
            now = time.monotonic()
            # the depth-first search's slice: its share of the time so far
            want = self.dfs_share * (now - t0) - dfs.seconds
            if want > 0:
                budget = max_states - beam_states
                if dfs.run(min(deadline, now + want), budget) is not None:
                    return answer(*dfs.answer())
                now = time.monotonic()
            left = (deadline - now) * (1 - self.dfs_share)
            rate = beam_states / beam_seconds if beam_seconds > 0 else 0.0
            if rate and per_width * width * (1.5 if per > 8 else 1.0) > self.overshoot * rate * left:
                self.stats["skipped"].append((width, per, waste, bury, both))
                continue  # it would be cut off: its work lost
            if left <= 0.01:
                break
            self.weights = (5.0, 2.0, waste, 1.0)
            self.bury_weight = bury
            if both != self.bury_both:
                self.bury_both = both
                self._needs.clear()
            budget = max_states - beam_states - len(dfs.visited)
            self.narrowed = 0
            found, n, why = self._beam(root, width, per, now + left, budget)
            beam_states += n
            beam_seconds += time.monotonic() - now
            self.stats["passes"].append((width, per, waste, bury, both, n, why, self.narrowed))
            if found is not None:
                return answer(Outcome.SOLVED, [Move(*m) for m in first] + [Move(*m) for m in found])
            if why == "exhausted":
                return answer(Outcome.UNSOLVABLE, [])
            if why == "states":
                return answer(Outcome.UNKNOWN, [], StopReason.STATES)
            if why == "done" and width >= widest and not self.narrowed:
                # positions a slot costs: it falls with the width, so the widest pass says most
                widest = width
                per_width = n / width / (1.5 if per > 8 else 1.0)
        budget = max_states - beam_states
        if dfs.run(deadline, budget) is not None:
            return answer(*dfs.answer())
        return answer(
            Outcome.UNKNOWN,
            [],
            StopReason.STATES if beam_states + len(dfs.visited) >= max_states else StopReason.TIME,
        )

    def _beam(
        self, root: Piles, width: int, per: int, deadline: float, max_states: int
    ) -> tuple[list[MoveLike] | None, int, str]:
        """One beam pass: at each stock level, a best-first look (``per * width``
        expansions, within ``max_expansions``) at the positions reachable without
        dealing from the ``width`` kept ones, then the ``width`` best positions one deal
        further on. Returns the winning moves (or None), the positions seen, and "done",
        "time", "states" or "exhausted". It drops positions, so finding nothing proves
        nothing, unless it dropped none ("exhausted": a breadth-first search by stock
        level that saw every reachable position, see the module docstring)."""
        key, score, is_won, children, buried = self.key, self.score, self.is_won, self.children, self.buried
        w_home, w_runs, w_waste, w_space = self.weights
        w_bury = self.bury_weight
        count = 0
        seen = 0
        tick = 0
        complete = True  # no position dropped so far
        beam: list[Entry] = [(score(root), 0, root, None)]
        cur = width  # the width now (narrower when time is short)
        ends = [time.monotonic()]  # when each level ended
        while beam:
            layer = {key(e[2]) for e in beam}
            heap = list(beam)
            heapq.heapify(heap)
            deals: dict[bytes, Entry] = {}
            budget = min(per * cur * (1 if beam[0][2][STOCK] else self.final_factor), self.max_expansions)
            while heap and budget > 0:
                budget -= 1
                sc, _, node, trail = heapq.heappop(heap)
                back = None
                if trail is not None and len(trail[0]) == 1:
                    m = trail[0][0]
                    if 8 <= m[1] < 18 and 8 <= m[2] < 18:
                        back = (MOVE, m[2], m[1], 1)
                tick += 1
                if tick & 15 == 0 and time.monotonic() > deadline:
                    return None, seen + len(layer) + len(deals), "time"
                if seen + len(layer) + len(deals) >= max_states:
                    return None, seen + len(layer) + len(deals), "states"
                for moves, child in children(node, back):
                    count += 1
                    k = key(child)
                    m = moves[0]
                    if m[0] != MOVE:
                        if k not in deals:
                            sc2 = sc + w_waste if len(moves) == 1 else score(child)
                            deals[k] = (sc2, count, child, (moves, trail))
                        continue
                    if k in layer:
                        continue
                    layer.add(k)
                    if len(moves) == 1:
                        # the score's change, from the one card moved (see score)
                        s, t = m[1], m[2]
                        sc2 = sc
                        if s == WASTE:
                            sc2 -= w_waste
                        else:
                            sp = node[s]
                            if len(sp) == 1:
                                sc2 -= w_runs + w_space
                            elif sp[-2] != sp[-1] + 1:
                                sc2 -= w_runs
                        if t < 8:
                            sc2 -= w_home
                            if is_won(child):
                                return _unwind((moves, trail)), seen + len(layer) + len(deals), "done"
                        elif not node[t]:
                            sc2 += w_runs + w_space
                    else:
                        if is_won(child):
                            return _unwind((moves, trail)), seen + len(layer) + len(deals), "done"
                        sc2 = score(child)
                    heapq.heappush(heap, (sc2, count, child, (moves, trail)))
            seen += len(layer)
            for e in deals.values():
                if is_won(e[2]):
                    return _unwind(e[3]), seen + len(deals), "done"
            if deals:
                # narrow the beam if this level's pace would not finish the pass in time
                # (a pass cut off loses all its work; a narrower end may still win)
                now = time.monotonic()
                ends.append(now)
                levels = len(next(iter(deals.values()))[2][STOCK]) + 2  # the final level counts twice
                recent = min(len(ends) - 1, 8)  # the pace of the last 8 levels (the middle ones cost most)
                need = (now - ends[-1 - recent]) / recent * levels if recent else 0.0
                fit = int(cur * self.pace_margin * (deadline - now) / need) if need > 0 else width
                cur = min(width, max(self.min_width, fit))  # back to the full width when it fits
                if cur < width:
                    self.narrowed = min(self.narrowed or width, cur)
            if heap or len(deals) > cur:
                complete = False  # positions are dropped
            if len(deals) <= cur:
                beam = list(deals.values())  # all kept: the order does not matter
            elif w_bury:
                # chosen with the buried term; kept with the plain score (the look-around's)
                chosen = [(e[0] + w_bury * buried(k, e[2][0:8]), e[1], e) for k, e in deals.items()]
                beam = [e for _, _, e in heapq.nsmallest(cur, chosen)]
            else:
                beam = heapq.nsmallest(cur, deals.values())
        return None, seen, "exhausted" if complete else "done"

    def buried(self, k: bytes, fnd: Piles) -> int:
        """How many cards lie above the next cards the foundations need (for each suit,
        the outside copies of the rank above its lower foundation), in the tableau and
        the waste, read off the key ``k`` of a position with foundations ``fnd`` (a card
        in the stock counts nothing: it comes when it comes). One regular expression
        finds them all: at each needed card (after the key's first byte, the stock's
        length, which could equal a card), the rest of its pile or waste up to the next
        zero byte, without consuming it (two needed cards may share a pile); half the
        time of a loop of ``bytes.find``."""
        if fnd in self._needs:
            finder = self._needs[fnd]
        else:
            need = _needed(fnd, self.bury_both)
            finder = self._finders.get(need) if need else None
            if need and finder is None:
                cards = b"".join(re.escape(BYTE[c]) for c in need)
                finder = re.compile(b"[" + cards + rb"](?=([^\x00]*))").findall
                if len(self._finders) < 10_000:  # a few hundred in a search
                    self._finders[need] = finder
            if len(self._needs) < 100_000:
                self._needs[fnd] = finder
        return sum(map(len, finder(k, 1))) if finder is not None else 0

    def score(self, p: Piles) -> float:
        """Lower is better: cards home count most; then runs in the tableau (each run
        above a pile's first is a card to dig out), waste cards (buried), and spaces (a
        resource). The waste's weight matters most (a pass sets it); the others, tried
        on deals 1-30, changed little."""
        home = sum(map(len, p[0:8]))
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
                    if c != prev - 1:
                        n += 1
                    prev = c
                if len(cache) < 200_000:  # bounds memory (about 30 MB)
                    cache[tp] = n
            runs += n
        w = self.weights
        return -w[0] * home + w[1] * runs + w[2] * len(p[WASTE]) - w[3] * spaces

    #: A pass narrows its beam when the pace of its last level says that the levels
    #: left would take more than this share of its time left (never below min_width).
    pace_margin = 0.9
    min_width = 8
    narrowed = 0  # the narrowest width the last pass had to take (0: none)
    #: score weights: cards home, runs, waste cards, spaces
    weights: tuple[float, float, float, float] = (5.0, 2.0, 5.0, 1.0)
    #: the weight of a card above a card the foundations need next (see :meth:`buried`),
    #: in the choice of the positions one deal on only
    bury_weight = 2.0
    #: whether the buried term also counts the rank above each suit's higher foundation
    bury_both = False

    def is_won(self, p: Piles) -> bool:
        return sum(map(len, p[0:8])) == 104

    @staticmethod
    def _home(p: Piles, card: int) -> int:
        """The foundation that takes ``card`` now, or -1."""
        if card & 15 == 1:
            for f in F:
                if not p[f]:
                    return f
            return -1
        below = card - 1
        for f in F:
            fp = p[f]
            if fp and fp[-1] == below:
                return f
        return -1

    @staticmethod
    def _safe(p: Sequence[bytes], card: int) -> bool:
        """The engine's autoplay condition (its foundation is found by _home)."""
        r = card & 15
        if r == 1:
            return True
        suit = card >> 4
        n = 0
        for f in F:
            fp = p[f]
            if fp and fp[0] >> 4 == suit and len(fp) >= r - 1:
                n += 1
        return n == 2

    def auto(self, p: Piles) -> tuple[tuple[MoveLike, ...], Piles]:
        moves: list[MoveLike] = []
        lst = list(p)
        homes = self._homes_of
        while True:
            safe = homes(tuple(lst[0:8]))[1]
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
            safe = {c: f for c, f in home.items() if self._safe(fnd, c)}
            got = (home, safe)
            if len(self._homes) < 100_000:
                self._homes[fnd] = got
        return got

    @staticmethod
    def _targets(p: Sequence[bytes]) -> dict[int, int]:
        """card -> the first foundation that takes it now (Aces: the first empty one)."""
        out: dict[int, int] = {}
        ace = False
        for f in F:
            fp = p[f]
            if fp:
                nxt = fp[-1] + 1
                if nxt & 15 <= 13 and nxt not in out:
                    out[nxt] = f
            elif not ace:
                ace = True
                for suit in range(4):
                    out[suit << 4 | 1] = f
        return out

    def candidates(self, p: Piles) -> list[MoveLike]:
        """Legal moves (merged as the module says), in the order the search tries them."""
        return _candidates(p, self._targets(p))

    def ordered_moves(self, state: State) -> list[Move]:
        return [Move(*m) for m in self.candidates(tuple(bytes(x) for x in state.piles))]

    def children(self, p: Piles, back: MoveLike | None = None) -> Iterator[Child]:
        """As the base class says; ``back`` (a move that would only undo the move that
        made ``p``, so it leads to a position already seen) is left out."""
        home, safe = self._homes_of(p[0:8])
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
            if 0 <= t < 8 or exposed in safe:
                more, child = self.auto(child)
                yield (m, *more), child
            else:
                yield (m,), child


AUTO_SOURCES = (*T, WASTE)


def _needed(fnd: Piles, both: bool) -> tuple[int, ...]:
    """The cards the foundations ``fnd`` need next: for each suit, the rank above its
    lower foundation (an Ace while a suit has fewer than two foundations), and with
    ``both`` the rank above its higher one too."""
    low = [0, 0, 0, 0]
    high = [0, 0, 0, 0]
    seen = [0, 0, 0, 0]
    for fp in fnd:
        if fp:
            s = fp[0] >> 4
            low[s] = len(fp) if not seen[s] else min(low[s], len(fp))
            high[s] = max(high[s], len(fp))
            seen[s] += 1
    out = []
    for s in range(4):
        r = low[s] + 1 if seen[s] == 2 else 1
        if r <= 13:
            out.append(s << 4 | r)
        if both and seen[s] and high[s] + 1 not in (r, 14):
            out.append(s << 4 | (high[s] + 1))
    return tuple(out)
BYTE = [bytes((i,)) for i in range(256)]


def _candidates(p: Piles, home: dict[int, int]) -> list[MoveLike]:
    """Legal moves (merged as the module says), lower kinds first: foundation moves (0),
    builds from the waste (10), builds that empty a pile (15), that uncover a card that
    can go home (20) or another card (23), a deal (50), moves into a space from the
    waste (60) or a pile (65), moves off the card's next-higher card onto another (80)
    or into a space (90); within a kind, by source then target pile."""
    home_moves: list[MoveLike] = []
    waste_builds: list[MoveLike] = []
    emptying: list[MoveLike] = []
    uncover_home: list[MoveLike] = []
    uncover: list[MoveLike] = []
    to_space: list[MoveLike] = []
    swaps: list[MoveLike] = []
    swaps_space: list[MoveLike] = []
    # which tableau piles take which card: card -> piles
    takers: dict[int, list[int]] = {}
    empty = -1
    for t in T:
        tp = p[t]
        if tp:
            want = tp[-1] - 1
            if want & 15:
                lt = takers.get(want)
                if lt is None:
                    takers[want] = [t]
                else:
                    lt.append(t)
        elif empty < 0:
            empty = t
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
            if below == card + 1:  # on its parent: the move only swaps copies
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
