"""Strategy of Binary Star: ranks only, the stars as one string, star shuffling folded in.

- Stars build up or down by one regardless of suit (Ace and King consecutive) and fans
  never take a card, so a card's suit never matters: search nodes hold ranks only, and
  which fan holds a stack does not matter (the key counts the fans' contents as a
  multiset).
- **The stars as one string** (see :func:`service.engine.binary_star.reachable_tops`):
  ``s`` = star 0 bottom to top then star 1 top to bottom, split ``k`` = len(star 0).
  Inside a star neighbours are consecutive (in every valid position: the API checks
  ``Game.validate`` before it solves), so the only pair of ``s`` that may not be
  consecutive is the one at the split, ``(s[k-1], s[k])`` (the two tops). If it is not
  consecutive the position is **stuck**: no move between the stars, and a fan card goes
  into that gap (onto the top it fits). If it is, the position is **free**: moves
  between the stars reach every split ``1..len(s)-1`` and back (every pair is
  consecutive), so a fan card ``c`` may go into any gap ``(x, y)`` of ``s`` next to a
  neighbour it fits. A free gap ``(x, y)`` has ``x``, ``y`` one apart, so ``c`` never
  fits both (``±1 ± 1`` is never ``±1`` modulo 13): the position becomes stuck with
  tops ``(c, y)``. A stuck gap ``(a, b)`` becomes free when ``c`` fits both ``a`` and
  ``b`` (then playing it onto either star gives the same string, free: one child).
- **Key (exact merge).** So every future move depends only on: the fans (as a
  multiset), whether the position is free or stuck with tops ``{a, b}`` (unordered:
  both stars take cards alike), and how many consecutive pairs of each of the 13 kinds
  ``{r, r+1}`` ``s`` holds (a free move consumes one pair of a kind and adds one;
  which occurrence does not matter, as all give the same counts and the same tops).
  Positions equal in these have the same moves with the same effects on them, by
  induction the same futures, so the key is exactly these (packed into one int in
  disjoint bit fields, :func:`pack`): sound to merge.
- **Children.** A child is one fan card ``c`` played. Stuck with tops ``{a, b}``: onto
  the top it fits (one child: if it fits both, the result is free either way). Free:
  into a gap of some kind, next to the neighbour it fits; for ``c`` of rank ``r`` that
  gives tops ``(r, r-2)`` (a gap ``{r-2, r-1}`` used up, a ``{r-1, r}`` made), ``(r,
  r+2)`` (``{r+1, r+2}`` used up, ``{r, r+1}`` made) or ``(r, r)`` (a gap ``{r-1, r}``
  or ``{r, r+1}``: the pair used up is made again, counts unchanged, one child), each
  when ``s`` holds a pair of the kind used up. Moves between the stars are never
  searched on their own: they only move the split inside a free position (same key)
  and are legal nowhere in a stuck one. The engine moves of a winning path are
  rebuilt at the end (:meth:`BinaryStarStrategy._replay`): for a free step, the
  star-to-star moves that bring the split to the nearest gap of the kind (of either
  kind for tops ``(r, r)``), all legal because every pair on the way is consecutive,
  then the card.
- **Dead ends.** A stuck child where no fan top fits either top (the uncovered card
  included) has no legal move at all, and cards left: lost, so it is not searched.
- No automatic move (the engine has none: no move is harmless in every position).
- **Search** (strategy "own", :class:`_Search`): depth-first runs from the root, run
  ``i`` cut off after ``LUBY_UNIT * luby(i)`` positions (restarts on the Luby
  sequence 1 1 2 1 1 2 4 ...: a deal is usually won at once or else after a bad early
  choice that the depth-first search buries under a huge lost subtree; a fresh run with
  other choices escapes it). The first run orders children by the heuristic below,
  later ones add random noise to it (seeded by a hash of the position's cards, which
  Python does not randomise for ints: answers repeat). Children
  in order: those that make the position free first, then those where some fan card
  (the uncovered one included) bridges the new tops, then those where one fits a top;
  the fullest fan first within each (its deepest cards are the hardest to free).
- **Soundness of ``unsolvable``.** A key goes into the set :attr:`_Search.dead`, shared
  by all runs, only when a run has finished every child of it (each skipped as dead,
  left out as a dead end, or itself finished); a run that is cut off marks nothing
  more. By induction on the cards left (every move plays one, so no cycles), every
  position of a dead key is lost. ``unsolvable`` is answered only when a run finishes
  the root (a run is cut off only by its budget, so some run eventually is not).
"""

from __future__ import annotations

import random
from collections import Counter
from operator import getitem, itemgetter
from typing import Any

from service.engine.binary_star import N_RANKS, ONE_APART
from service.engine.cards import ALL_RANKS, rank_above, rank_below, rank_of
from service.engine.core import Action, Game, Move, State

from ..search import (
    Limits,
    MoveLike,
    SearchPlan,
    SolveResult,
    StopReason,
    Strategy,
    check_clock,
    depth_first,
    overrun_deadline,
)

MOVE = int(Action.MOVE)
Piles = tuple[bytes, ...]
FIRST = itemgetter(0)
# The search holds ranks only (suits never matter): 1..13, and 0 for no card (an empty
# fan's top; the tops of a free position). Every table below is indexed by these slots,
# and ONE_APART[a][b] (the engine's) says whether ranks a and b fit on each other.
RANK_SLOTS = range(N_RANKS + 1)
# KIND[a][b]: for consecutive a, b the index 0..12 of the pair kind {r, r+1} (r = lower)
KIND = tuple(tuple((a - 1 if (b - a) % N_RANKS == 1 else b - 1) for b in RANK_SLOTS) for a in RANK_SLOTS)
# Restarts: run i (from 1) may visit LUBY_UNIT * luby(i) positions; the random spread
# added to a child's order in every run after the first (FIRST_NOISE in the first)
LUBY_UNIT = 200
NOISE = 5000
FIRST_NOISE = 0


def luby(i: int) -> int:
    """The i-th term (from 1) of the Luby sequence 1 1 2 1 1 2 4 1 1 2 ..."""
    k = 1
    while (1 << k) - 1 < i:
        k += 1
    while True:
        if i == (1 << k) - 1:
            return 1 << (k - 1)
        i -= (1 << (k - 1)) - 1
        k = 1
        while (1 << k) - 1 < i:
            k += 1


Step = tuple[int, int, int]  # (fan, near rank, far rank): see BinaryStarStrategy._replay
# UP[r], DN[r]: the ranks one above and one below r (1..13, wrapping); 0 stays 0
UP = bytes((0, *map(rank_above, ALL_RANKS)))
DN = bytes((0, *map(rank_below, ALL_RANKS)))
# BRIDGE[x][y]: the ranks that fit both x and y; FITS[x][y]: those that fit x or y
BRIDGE = tuple(
    tuple(bytes(c for c in ALL_RANKS if ONE_APART[c][x] and ONE_APART[c][y]) for y in RANK_SLOTS) for x in RANK_SLOTS
)
FITS = tuple(
    tuple(bytes(c for c in ALL_RANKS if ONE_APART[c][x] or ONE_APART[c][y]) for y in RANK_SLOTS) for x in RANK_SLOTS
)


# Counts of the 13 pair kinds as one int, COUNT_BITS each from bit 8 (a key is this plus
# the tops in bits 0..7 plus the fans from bit FANS_SHIFT): SH[k] the shift of kind k
COUNT_BITS = 6
COUNT_MASK = (1 << COUNT_BITS) - 1
SH = tuple(8 + COUNT_BITS * k for k in range(N_RANKS))
ONE = tuple(1 << s for s in SH)
FANS_SHIFT = 88
# Each distinct fan content has FAN_BITS bits there, counting the fans that hold it
# (at most the game's 17 fans)
FAN_BITS = 5
# A rank held more often than this might overflow a pair count (node_of refuses it)
MAX_RANK_COPIES = 31
# The order of children (lower first, see _Search.children): the last card (a win);
# a card that frees the position; a stuck child where a fan card bridges the new tops;
# one where a fan card fits only one top; and per card of the fan's height, earlier
ORDER_WINS = -1000
ORDER_FREES = -100
ORDER_BRIDGED = 0
ORDER_FITS_ONE = 1000
ORDER_PER_HEIGHT = 10
# An option of one card played: (shift of the pair kind used up, or -1 for none, or -2
# for tops (c, c) in a free position, where the two kinds that allow it have their
# shifts in the 2nd and 6th places; change of counts; new tops x <= y (0, 0: free);
# near; far)
Option = tuple[int, int, int, int, int, int]


def _stuck_options(a: int, b: int, c: int) -> tuple[Option, ...]:
    """Card ``c`` played in a stuck position with tops ``a``, ``b``."""
    if ONE_APART[c][a] and ONE_APART[c][b]:
        return ((-1, ONE[KIND[a][c]] + ONE[KIND[c][b]], 0, 0, a, b),)
    if ONE_APART[c][a] or ONE_APART[c][b]:
        near, far = (a, b) if ONE_APART[c][a] else (b, a)
        return ((-1, ONE[KIND[near][c]], min(c, far), max(c, far), near, far),)
    return ()


def _free_options(c: int) -> tuple[Option, ...]:
    """Card ``c`` played in a free position: into a gap {c-2, c-1} (next to c-1: tops c,
    c-2), {c+1, c+2} (tops c, c+2), or {c-1, c} or {c, c+1} (tops c, c; same counts)."""
    lo, up = DN[c], UP[c]
    lo2, up2 = DN[lo], UP[up]
    return (
        (SH[KIND[lo2][lo]], ONE[KIND[lo][c]] - ONE[KIND[lo2][lo]], min(c, lo2), max(c, lo2), lo, lo2),
        (SH[KIND[up][up2]], ONE[KIND[c][up]] - ONE[KIND[up][up2]], min(c, up2), max(c, up2), up, up2),
        (-2, SH[KIND[lo][c]], c, c, 0, SH[KIND[c][up]]),
    )


STUCK = tuple(tuple(tuple(_stuck_options(a, b, c) for c in RANK_SLOTS) for b in RANK_SLOTS) for a in RANK_SLOTS)
FREE = tuple(_free_options(c) if c else () for c in RANK_SLOTS)


def pack(fans: int, counts: int, a: int, b: int) -> int:
    """A node's key: its tops in bits 0..7 (4 bits each), its counts (bits 8..85, as
    kept) and its fans (from bit 88, as kept): disjoint fields, so equal keys are equal
    nodes."""
    return fans + counts + (a << 4 | b)


class _Search:
    """Depth-first search over abstract nodes (fan heights, pair-kind counts, and the
    unordered stuck tops or "free"), with do/undo on one list of heights.

    Every key whose subtree was searched in full is kept in :attr:`dead` (no move
    sequence from it wins); runs restart from the root with budgets of positions on the
    Luby sequence and noise in the order of children, all sharing :attr:`dead`; a run
    that ends within its budget has searched everything not already dead: a proof of
    loss.
    """

    def __init__(self, fans: tuple[bytes, ...], counts: int, a: int, b: int, limits: Limits) -> None:
        self.fans = fans
        # the fans as a multiset of contents: an int holding, from bit FANS_SHIFT, how many
        # fans hold each content in FAN_BITS bits; z[i][h] is fan i cut to height h.
        # Shorter contents get lower places, so late positions (most of them) have short keys.
        contents = sorted({fp[:h] for fp in fans for h in range(len(fp) + 1)}, key=lambda c: (len(c), c))
        ids = {c: n for n, c in enumerate(contents)}
        self.z = [[1 << (FANS_SHIFT + FAN_BITS * ids[fp[:h]]) for h in range(len(fp) + 1)] for fp in fans]
        # topt[i][h]: the rank on top of fan i at height h (0: empty)
        self.topt = [bytes((0, *fp)) for fp in fans]
        self.root = (counts, a, b)
        self.deadline = overrun_deadline()  # the safety cap only: the budget is max_states
        self.max_states = max(1, limits.max_states)
        self.dead: set[int] = set()
        self.states = 0
        self.stopped: StopReason | None = None

    def fans_part(self, h: list[int]) -> int:
        """The fans at heights ``h`` as a multiset of contents (see :func:`pack`)."""
        return sum(zi[hi] for zi, hi in zip(self.z, h, strict=True))

    def key(self, h: list[int], counts: int, a: int, b: int) -> int:
        """The key of the abstract node: fans at heights ``h``, pair-kind counts, tops."""
        return pack(self.fans_part(h), counts, a, b)

    def run(self, seed: int) -> list[Step] | None:
        """A winning path, or None (lost when :attr:`stopped` is None)."""
        rng = random.Random(seed)
        noise = FIRST_NOISE
        n = 1
        while True:
            out = self.dfs(LUBY_UNIT * luby(n), noise, rng)
            if out is not None or self.stopped is not None:
                return out
            if not self.aborted:
                return None
            n += 1
            noise = NOISE

    def children(
        self, h: list[int], counts: int, a: int, b: int, left: int, noise: int, rng: random.Random
    ) -> list[tuple[int, int, int, int, int, Step]]:
        """(order, fan, counts, tops a, b (0, 0 when free), step) of each child worth
        searching, best first: a stuck child where no fan card fits either top is lost
        and left out (unless it is won). The order is the ORDER_* constants' plus the
        noise. One function, not split into steps: it runs for every position the
        search visits, and a call per fan card would cost measurably."""
        topt = self.topt
        tops = list(map(getitem, topt, h))
        hist = [0] * len(RANK_SLOTS)
        mask = COUNT_MASK
        for c in tops:
            hist[c] += 1
        out: list[tuple[int, int, int, int, int, Step]] = []
        last = left == 1
        rnd = rng.random
        table = STUCK[a][b] if a else FREE
        for i, c in enumerate(tops):
            if not c:
                continue
            opts = table[c]
            if not opts:
                continue
            hi = h[i]
            nxt = topt[i][hi - 1]
            hist[c] -= 1
            hist[nxt] += 1
            for sub, add, x, y, near, far in opts:
                if sub >= 0:  # a pair of kind sub used up
                    if not counts >> sub & mask:
                        continue
                    cnt = counts + add
                elif sub == -2:  # free, tops (c, c): either pair kind next to c, counts unchanged
                    if counts >> add & mask:
                        near = DN[c]
                    elif counts >> far & mask:
                        near = UP[c]
                    else:
                        continue
                    far = c
                    cnt = counts
                else:
                    cnt = counts + add
                if not x:  # bridges: free
                    out.append((ORDER_FREES - hi, i, cnt, 0, 0, (i, near, far)))
                    continue
                if last:
                    out.append((ORDER_WINS, i, cnt, x, y, (i, near, far)))
                    continue
                for r in BRIDGE[x][y]:
                    if hist[r]:
                        score = ORDER_BRIDGED
                        break
                else:
                    for r in FITS[x][y]:
                        if hist[r]:
                            score = ORDER_FITS_ONE
                            break
                    else:
                        continue  # stuck with nothing to play: lost
                if noise:
                    score += int(rnd() * noise)
                out.append((score - ORDER_PER_HEIGHT * hi, i, cnt, x, y, (i, near, far)))
            hist[c] += 1
            hist[nxt] -= 1
        out.sort(key=FIRST)
        return out

    def dfs(self, budget: int, noise: int, rng: random.Random) -> list[Step] | None:
        """One run from the root: a winning path, or None (stopped, aborted or exhausted).

        Depth-first with an explicit stack of frames ``[children, next child, key, fan
        played, fans part before]`` and do/undo on one list of fan heights. One
        function, not split into steps: it is the search's inner loop, where a call per
        position would cost measurably."""
        self.aborted = False
        fans, z, dead = self.fans, self.z, self.dead
        h = [len(fp) for fp in fans]
        left = sum(h)
        counts, a, b = self.root
        if not left:
            return []
        children = self.children
        fs = self.fans_part(h)
        root = [children(h, counts, a, b, left, noise, rng), 0, pack(fs, counts, a, b), -1, fs]
        frames: list[list[Any]] = [root]
        path: list[Step] = []
        spent = 0
        while frames:
            fr = frames[-1]
            kids = fr[0]
            pos = fr[1]
            if pos < len(kids):
                fr[1] = pos + 1
                _, i, cnt, na, nb, step = kids[pos]
                if left == 1:
                    path.append(step)
                    self.states += spent + 1
                    return path
                hi = h[i]
                nfs = fs - z[i][hi] + z[i][hi - 1]
                k = pack(nfs, cnt, na, nb)
                if k in dead:
                    continue
                spent += 1
                if spent & 255 == 0 or spent >= budget:
                    check_clock(self.deadline)
                    if self.states + spent >= self.max_states:
                        self.stopped = StopReason.STATES
                    elif spent >= budget:
                        self.aborted = True
                    if self.stopped or self.aborted:
                        self.states += spent
                        return None
                h[i] = hi - 1
                ch = children(h, cnt, na, nb, left - 1, noise, rng)
                if not ch:
                    dead.add(k)
                    h[i] = hi
                    continue
                frames.append([ch, 0, k, i, fs])
                fs = nfs
                left -= 1
                path.append(step)
            else:
                dead.add(fr[2])
                frames.pop()
                i = fr[3]
                if i >= 0:
                    h[i] += 1
                    fs = fr[4]
                    left += 1
                    path.pop()
        self.states += spent
        return None


class BinaryStarStrategy(Strategy):
    """Binary Star's search over abstract nodes (plan OWN; see the module docstring)."""

    plan = SearchPlan.OWN
    positions_per_second = 50_000  # the positions a second of budget buys (bench/positions-budget.md)
    heuristic = (
        "it prefers fan cards, from the fullest fan, and among them a card whose "
        "neighbouring rank waits on a fan's top; moves between the stars come last"
    )

    def __init__(self, game: Game, root: State) -> None:
        super().__init__(game, root)
        self.star_a, self.star_b = game.group_range("star")
        self.fan_piles = game.group_range("fan")
        # the noise's seed: a hash of ints and tuples, the same in every process
        self.seed = hash(root.piles) & 0xFFFF

    def start(self) -> State:
        """The root as it is: :meth:`own_search` builds its own abstract nodes."""
        return self.root

    def auto(self, state: State) -> tuple[tuple[MoveLike, ...], State]:
        """No automatic move: the engine has none (no move is harmless everywhere)."""
        return (), state

    # --- the search ---------------------------------------------------------------------
    def own_search(self, limits: Limits, first: tuple[MoveLike, ...], root: State, started: float) -> SolveResult:
        """Depth-first runs with restarts over abstract nodes; see the module docstring."""
        node = self.node_of(root)
        if node is None:
            return depth_first(Strategy(self.game, root), limits, first, root, started)  # not a valid position
        search = _Search(*node, limits)
        path = search.run(self.seed)
        if path is not None:
            moves = [Move(*m) for m in first] + self.moves_of(root, path)
            return SolveResult.solved(moves, search.states, started)
        if search.stopped:
            return SolveResult.unknown(search.stopped, search.states, started)
        return SolveResult.unsolvable(search.states, started)

    def _string(self, p: Piles) -> tuple[bytes, int]:
        """The stars as one string (star A bottom to top, then star B top to bottom) and
        the split (star A's length)."""
        return p[self.star_a] + p[self.star_b][::-1], len(p[self.star_a])

    def _fans(self, p: Piles) -> Piles:
        return p[self.fan_piles.start : self.fan_piles.stop]

    def node_of(self, state: State) -> tuple[Piles, int, int, int] | None:
        """The fans (ranks), the pair-kind counts and the tops (0, 0: free; else the
        two ranks, lower first) of ``state``; None when its stars are not valid (a
        star empty, or two neighbours in one not consecutive) or a rank is held more
        than MAX_RANK_COPIES times (a pair count might not fit its COUNT_BITS)."""
        p = self._from_state(state)
        s, k = self._string(p)
        if (
            not p[self.star_a]
            or not p[self.star_b]
            or any(not ONE_APART[s[i - 1]][s[i]] for i in range(1, len(s)) if i != k)
            or max(Counter(c for pile in p for c in pile).values()) > MAX_RANK_COPIES
        ):
            return None
        counts = 0
        for i in range(1, len(s)):
            if ONE_APART[s[i - 1]][s[i]]:
                counts += ONE[KIND[s[i - 1]][s[i]]]
        a, b = s[k - 1], s[k]
        if ONE_APART[a][b]:
            return self._fans(p), counts, 0, 0
        return self._fans(p), counts, min(a, b), max(a, b)

    def moves_of(self, state: State, path: list[Step]) -> list[Move]:
        """The engine moves that play an abstract path from ``state``."""
        p = self._from_state(state)
        return [Move(*m) for m in self._replay(*self._string(p), self._fans(p), path)]

    def _replay(self, s: bytes, k: int, fans: Piles, path: list[Step]) -> list[MoveLike]:
        """The engine moves of an abstract path: each step names the fan and the ranks of
        the gap its card goes into (``near`` the card it is put on, ``far`` the other);
        in a free position the split first walks to the nearest such gap."""
        star_a, star_b = self.star_a, self.star_b
        first_fan = self.fan_piles.start
        h = [len(fp) for fp in fans]
        out: list[MoveLike] = []
        for i, near, far in path:
            h[i] -= 1
            c = fans[i][h[i]]
            x, y = s[k - 1], s[k]
            if not ONE_APART[x][y]:
                if ONE_APART[c][x]:  # fits x only, or both (bridges: either star, same string)
                    out.append((MOVE, first_fan + i, star_a, 1))
                    s = s[:k] + bytes((c,)) + s[k:]
                    k += 1
                else:
                    out.append((MOVE, first_fan + i, star_b, 1))
                    s = s[:k] + bytes((c,)) + s[k:]
                continue
            # tops (c, c) come from a gap {c-1, c} or {c, c+1} alike: the nearer one
            gaps = [{near, far}, {DN[c], c}, {c, UP[c]}] if far == c else [{near, far}]
            g = min((g for g in range(1, len(s)) if {s[g - 1], s[g]} in gaps), key=lambda g: abs(g - k))
            if g < k:
                out.extend(((MOVE, star_a, star_b, 1),) * (k - g))
            else:
                out.extend(((MOVE, star_b, star_a, 1),) * (g - k))
            if ONE_APART[c][s[g - 1]]:  # the card goes next to the neighbour it fits
                out.append((MOVE, first_fan + i, star_a, 1))
                k = g + 1
            else:
                out.append((MOVE, first_fan + i, star_b, 1))
                k = g
            s = s[:g] + bytes((c,)) + s[g:]
        return out

    # --- hints: the engine's moves, ordered like before -----------------------------
    def ordered_moves(self, state: State) -> list[Move]:
        return [Move(*m) for _, m in self._candidates(self._from_state(state))]

    @staticmethod
    def _from_state(state: State) -> Piles:
        """Every pile as its ranks (the search never looks at suits)."""
        return tuple(bytes(map(rank_of, p)) for p in state.piles)

    def _candidates(self, p: Piles) -> list[tuple[int, MoveLike]]:
        """Fan cards first, from the fullest fan, preferring a card whose neighbour rank
        waits on some fan top; moves between the stars last."""
        star_a, star_b = self.star_a, self.star_b
        a, b = p[star_a][-1], p[star_b][-1]
        tops = {fp[-1] for fp in self._fans(p) if fp}
        out: list[tuple[int, MoveLike]] = []
        for f in self.fan_piles:
            fp = p[f]
            if not fp:
                continue
            r = fp[-1]
            # lower first: fuller fans; a card whose neighbouring rank waits on a fan top
            # (else 3 later), or better, whose own next card lies under it
            follow = 0 if (UP[r] in tops or DN[r] in tops) else 3
            if len(fp) > 1 and ONE_APART[fp[-2]][r]:
                follow = -2  # the card below follows at once
            order = 10 - len(fp) + follow
            if ONE_APART[r][a]:
                out.append((order, (MOVE, f, star_a, 1)))
            if ONE_APART[r][b]:
                out.append((order, (MOVE, f, star_b, 1)))
        if ONE_APART[a][b]:
            between_stars_last = 100
            if len(p[star_a]) > 1:
                out.append((between_stars_last, (MOVE, star_a, star_b, 1)))
            if len(p[star_b]) > 1:
                out.append((between_stars_last, (MOVE, star_b, star_a, 1)))
        out.sort(key=FIRST)
        return out
