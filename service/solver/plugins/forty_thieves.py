"""Knowledge of Forty Thieves: its own fast move generation on ``bytes`` piles, and its
own search (beam passes over the stock, then the exhaustive depth-first search).

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
- **Merged moves**: to a foundation, the first one that takes the card (two holding the
  same top are interchangeable); to a space, the first empty pile.
- **Order** (never pruning): foundation moves; builds from the waste; builds that
  uncover a card, the ones that empty a pile first; a deal; then moves into a space,
  and last the moves of a card off its suit's next-higher card (they only swap
  copies).

Search (strategy "own", :meth:`FortyThievesKnowledge.own_search`): a short exhaustive
depth-first probe (it decides small end games at once), then beam passes of growing
width over the stock levels for 60% of the time, then the exhaustive depth-first search
for the time left (from scratch: it wins some deals no pass wins, e.g. deal 49 in 5.5 s).
A beam pass drops positions, so it only ever answers "solved" (its solution replays
through the engine like any other); "unsolvable" comes only from a depth-first search
that ran out of positions, which the pruning above keeps sound.

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
ones (12 between them), so the schedule alternates the waste weight: with 150,000
positions a deal it won 8 of 1-30 and 14 of 31-60. Other weights (cards home, runs,
spaces), a cap per group of positions with the same waste and foundations, and a wider
beam early in the game changed little or lost deals.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Hashable, Iterator, Sequence
from operator import itemgetter
from typing import Any

from service.engine.core import Action, Game, Move, State

from ..search import Child, Knowledge, Limits, MoveLike, SolveResult, depth_first

MOVE = int(Action.MOVE)
DEAL = (int(Action.DEAL), -1, -1, 0)
Piles = tuple[bytes, ...]
F = range(0, 8)
T = range(8, 18)
STOCK, WASTE = 18, 19
FIRST = itemgetter(0)
SOURCES = (*T, WASTE)
# A beam entry: score, tie-break counter, position, trail (moves, parent trail) or None.
Trail = Any
Entry = tuple[float, int, Piles, Trail]


def _unwind(trail: Trail) -> list[MoveLike]:
    """The moves of a trail, first move first."""
    steps: list[tuple[MoveLike, ...]] = []
    while trail is not None:
        steps.append(trail[0])
        trail = trail[1]
    return [m for step in reversed(steps) for m in step]


class FortyThievesKnowledge(Knowledge):
    """Forty Thieves' knowledge and search (see the module docstring)."""

    notes = "Forty Thieves: engine autoplay, sorted piles, stock by its length, beam passes then depth-first"

    strategy = "own"
    #: States the first depth-first probe may visit (small end games are decided there).
    probe_states = 1500
    #: Beam passes in turn: (width, expansions per stock level and per beam slot, the
    #: score's weight of a waste card). Passes with other weights win other deals, so
    #: they alternate (see the module docstring for the figures behind this choice).
    schedule: tuple[tuple[int, int, float], ...] = (
        (16, 32, 5.0),
        (16, 8, 8.0),
        (64, 8, 5.0),
        (256, 8, 5.0),
        (64, 8, 1.0),
        (64, 8, 3.0),
        (256, 8, 1.0),
        (256, 32, 5.0),
        (1024, 32, 5.0),
        (1024, 32, 1.0),
        (4096, 32, 5.0),
    )
    #: The beam passes stop at this share of the time; the depth-first search has the
    #: rest (it wins some deals no pass wins, and only it can prove a loss).
    beam_share = 0.6
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

    def start(self) -> Piles:
        return tuple(bytes(p) for p in self.root.piles)

    def key(self, p: Piles) -> Hashable:
        return b"\0".join(sorted(p[8:18])) + b"\1" + bytes((len(p[STOCK]),)) + p[WASTE]

    def own_search(self, limits: Limits, first: tuple[MoveLike, ...], root: Piles, t0: float) -> SolveResult:
        """The probe, the beam passes (they can only find wins) for a share of the
        time, then the exhaustive depth-first search for the time left; ``stats``
        records what each part saw."""
        deadline = t0 + limits.max_seconds
        probe = Limits(limits.max_seconds, min(self.probe_states, limits.max_states))
        r = depth_first(self, probe, first, root, t0)
        states = r.states
        self.stats = {"probe": (r.result, r.states), "passes": []}
        if r.result != "unknown" or r.stopped_by != "states" or states >= limits.max_states:
            return r
        beam_deadline = t0 + limits.max_seconds * self.beam_share
        for width, per, waste in self.schedule:
            if time.monotonic() > beam_deadline:
                break
            self.weights = (5.0, 2.0, waste, 1.0)
            found, n, why = self._beam(root, width, per, beam_deadline, limits.max_states - states)
            states += n
            self.stats["passes"].append((width, per, waste, n, why))
            if found is not None:
                moves = [Move(*m) for m in first] + [Move(*m) for m in found]
                return SolveResult("solved", moves, states, time.monotonic() - t0)
            if why == "states":
                return SolveResult("unknown", [], states, time.monotonic() - t0, why)
        left = Limits(max(0.0, deadline - time.monotonic()), max(1, limits.max_states - states))
        r = depth_first(self, left, first, root, time.monotonic())
        r.states += states
        r.seconds = time.monotonic() - t0
        self.stats["dfs"] = (r.result, r.states)
        return r

    def _beam(
        self, root: Piles, width: int, per: int, deadline: float, max_states: int
    ) -> tuple[list[MoveLike] | None, int, str]:
        """One beam pass: at each stock level, a best-first look (``per * width``
        expansions, within ``max_expansions``) at the positions reachable without
        dealing from the ``width`` kept ones, then the ``width`` best positions one deal
        further on. Returns the winning moves (or None), the positions seen, and "done",
        "time" or "states". It drops positions, so finding nothing proves nothing."""
        key, score, is_won, children = self.key, self.score, self.is_won, self.children
        count = 0
        seen = 0
        beam: list[Entry] = [(score(root), 0, root, None)]
        while beam:
            layer = {key(e[2]) for e in beam}
            heap = list(beam)
            heapq.heapify(heap)
            deals: dict[Hashable, Entry] = {}
            budget = min(per * width * (1 if beam[0][2][STOCK] else self.final_factor), self.max_expansions)
            while heap and budget > 0:
                budget -= 1
                _, _, node, trail = heapq.heappop(heap)
                if time.monotonic() > deadline:
                    return None, seen + len(layer) + len(deals), "time"
                if seen + len(layer) + len(deals) >= max_states:
                    return None, seen + len(layer) + len(deals), "states"
                for moves, child in children(node):
                    count += 1
                    k = key(child)
                    if moves[0][0] != MOVE:
                        if k not in deals:
                            deals[k] = (score(child), count, child, (moves, trail))
                        continue
                    if k in layer:
                        continue
                    layer.add(k)
                    if is_won(child):
                        return _unwind((moves, trail)), seen + len(layer) + len(deals), "done"
                    heapq.heappush(heap, (score(child), count, child, (moves, trail)))
            seen += len(layer)
            for e in deals.values():
                if is_won(e[2]):
                    return _unwind(e[3]), seen + len(deals), "done"
            beam = heapq.nsmallest(width, deals.values())
        return None, seen, "done"

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

    #: score weights: cards home, runs, waste cards, spaces
    weights: tuple[float, float, float, float] = (5.0, 2.0, 5.0, 1.0)

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
        while True:
            home = self._targets(lst)
            for s in (*T, WASTE):
                sp = lst[s]
                if not sp:
                    continue
                card = sp[-1]
                f = home.get(card, -1)
                if f >= 0 and self._safe(lst, card):
                    lst[s] = sp[:-1]
                    lst[f] = lst[f] + bytes((card,))
                    moves.append((MOVE, s, f, 1))
                    break
            else:
                break
        if not moves:
            return (), p
        return tuple(moves), tuple(lst)

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

    def candidates(self, p: Piles) -> list[tuple[int, MoveLike]]:
        return self._candidates(p, self._targets(p))

    @staticmethod
    def _candidates(p: Piles, home: dict[int, int]) -> list[tuple[int, MoveLike]]:
        """Legal moves (merged as the module says) with their order: lower first."""
        out: list[tuple[int, MoveLike]] = []
        add = out.append
        # which tableau piles take which card: card -> piles
        takers: dict[int, list[int]] = {}
        empty = -1
        for t in T:
            tp = p[t]
            if tp:
                want = tp[-1] - 1
                if want & 15:
                    if want in takers:
                        takers[want].append(t)
                    else:
                        takers[want] = [t]
            elif empty < 0:
                empty = t
        for s in SOURCES:
            sp = p[s]
            if not sp:
                continue
            card = sp[-1]
            f = home.get(card, -1)
            if f >= 0:
                add((0, (MOVE, s, f, 1)))
            if s == WASTE:
                for t in takers.get(card, ()):
                    add((10, (MOVE, s, t, 1)))
                if empty >= 0:
                    add((60, (MOVE, s, empty, 1)))
                continue
            n = len(sp)
            if n > 1:
                below = sp[-2]
                if below == card + 1:  # on its parent: the move only swaps copies
                    for t in takers.get(card, ()):
                        add((80, (MOVE, s, t, 1)))
                    if empty >= 0:
                        add((90, (MOVE, s, empty, 1)))
                    continue
                score = 20 if below in home else 23
                for t in takers.get(card, ()):
                    if t != s:
                        add((score, (MOVE, s, t, 1)))
                if empty >= 0:
                    add((65, (MOVE, s, empty, 1)))
            else:
                for t in takers.get(card, ()):
                    if t != s:
                        add((15, (MOVE, s, t, 1)))
        if p[STOCK]:
            add((50, DEAL))
        out.sort(key=FIRST)
        return out

    def ordered_moves(self, state: State) -> list[Move]:
        return [Move(*m) for _, m in self.candidates(tuple(bytes(x) for x in state.piles))]

    def children(self, p: Piles) -> Iterator[Child]:
        home = self._targets(p)
        for _, m in self._candidates(p, home):
            lst = list(p)
            action, s, t, _ = m
            if action == MOVE:
                sp = lst[s]
                card = sp[-1]
                lst[s] = sp[:-1]
                lst[t] = lst[t] + bytes((card,))
                exposed = sp[-2] if len(sp) > 1 else -1
            else:
                stock = lst[STOCK]
                lst[STOCK] = stock[:-1]
                lst[WASTE] = lst[WASTE] + stock[-1:]
                t = -1
                exposed = stock[-1]
            child = tuple(lst)
            # the foundations are the parent's unless the move went home
            if t in F or (exposed in home and self._safe(child, exposed)):
                more, child = self.auto(child)
                yield (m, *more), child
            else:
                yield (m,), child
