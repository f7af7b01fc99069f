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
import time
from collections import Counter
from operator import getitem, itemgetter
from typing import Any

from service.engine.core import Action, Game, Move, State

from ..search import Limits, MoveLike, Outcome, SearchPlan, SolveResult, StopReason, Strategy, depth_first

MOVE = int(Action.MOVE)
Piles = tuple[bytes, ...]
FIRST = itemgetter(0)
# CONS[a][b]: ranks a and b (1..13) one apart, Ace and King consecutive
CONS = tuple(tuple((a - b) % 13 in (1, 12) for b in range(14)) for a in range(14))
# KIND[a][b]: for consecutive a, b the index 0..12 of the pair kind {r, r+1} (r = lower)
KIND = tuple(tuple((a - 1 if (b - a) % 13 == 1 else b - 1) for b in range(14)) for a in range(14))
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
UP = bytes((0, *(r % 13 + 1 for r in range(1, 14))))
DN = bytes((0, *((r - 2) % 13 + 1 for r in range(1, 14))))
# BRIDGE[x][y]: the ranks that fit both x and y; FITS[x][y]: those that fit x or y
BRIDGE = tuple(tuple(bytes(c for c in range(1, 14) if CONS[c][x] and CONS[c][y]) for y in range(14)) for x in range(14))
FITS = tuple(tuple(bytes(c for c in range(1, 14) if CONS[c][x] or CONS[c][y]) for y in range(14)) for x in range(14))


# Counts of the 13 pair kinds as one int, 6 bits each from bit 8 (a key is this plus
# the tops in bits 0..7 plus the fans above bit 88): SH[k] the shift of kind k
SH = tuple(8 + 6 * k for k in range(13))
ONE = tuple(1 << s for s in SH)
FANS_SHIFT = 88
# An option of one card played: (shift of the pair kind used up, or -1 for none, or -2
# for tops (c, c) in a free position, where the two kinds that allow it have their
# shifts in the 2nd and 6th places; change of counts; new tops x <= y (0, 0: free);
# near; far)
Option = tuple[int, int, int, int, int, int]


def _stuck_options(a: int, b: int, c: int) -> tuple[Option, ...]:
    """Card ``c`` played in a stuck position with tops ``a``, ``b``."""
    if CONS[c][a] and CONS[c][b]:
        return ((-1, ONE[KIND[a][c]] + ONE[KIND[c][b]], 0, 0, a, b),)
    if CONS[c][a] or CONS[c][b]:
        near, far = (a, b) if CONS[c][a] else (b, a)
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


STUCK = tuple(tuple(tuple(_stuck_options(a, b, c) for c in range(14)) for b in range(14)) for a in range(14))
FREE = tuple(_free_options(c) if c else () for c in range(14))


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

    def __init__(self, fans: tuple[bytes, ...], counts: int, a: int, b: int, limits: Limits, t0: float) -> None:
        self.fans = fans
        # the fans as a multiset of contents: an int holding, from bit 88, how many fans
        # hold each content in 5 bits (at most 17 fans); z[i][h] is fan i cut to height h.
        # Shorter contents get lower places, so late positions (most of them) have short keys.
        contents = sorted({fp[:h] for fp in fans for h in range(len(fp) + 1)}, key=lambda c: (len(c), c))
        ids = {c: n for n, c in enumerate(contents)}
        self.z = [[1 << (FANS_SHIFT + 5 * ids[fp[:h]]) for h in range(len(fp) + 1)] for fp in fans]
        # topt[i][h]: the rank on top of fan i at height h (0: empty)
        self.topt = [bytes((0, *fp)) for fp in fans]
        self.root = (counts, a, b)
        self.deadline = t0 + limits.max_seconds
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
        and left out (unless it is won)."""
        topt = self.topt
        tops = list(map(getitem, topt, h))
        hist = [0] * 14
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
                    if not counts >> sub & 63:
                        continue
                    cnt = counts + add
                elif sub == -2:  # free, tops (c, c): either pair kind next to c, counts unchanged
                    if counts >> add & 63:
                        near = DN[c]
                    elif counts >> far & 63:
                        near = UP[c]
                    else:
                        continue
                    far = c
                    cnt = counts
                else:
                    cnt = counts + add
                if not x:  # bridges: free
                    out.append((-100 - hi, i, cnt, 0, 0, (i, near, far)))
                    continue
                if last:
                    out.append((-1000, i, cnt, x, y, (i, near, far)))
                    continue
                for r in BRIDGE[x][y]:
                    if hist[r]:
                        score = 0
                        break
                else:
                    for r in FITS[x][y]:
                        if hist[r]:
                            score = 1000
                            break
                    else:
                        continue  # stuck with nothing to play: lost
                if noise:
                    score += int(rnd() * noise)
                out.append((score - 10 * hi, i, cnt, x, y, (i, near, far)))
            hist[c] += 1
            hist[nxt] -= 1
        out.sort(key=FIRST)
        return out

    def dfs(self, budget: int, noise: int, rng: random.Random) -> list[Step] | None:
        """One run from the root: a winning path, or None (stopped, aborted or exhausted)."""
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
                    if time.monotonic() > self.deadline:
                        self.stopped = StopReason.TIME
                    elif self.states + spent >= self.max_states:
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
    plan = SearchPlan.OWN
    heuristic = (
        "it prefers fan cards, from the fullest fan, and among them a card whose "
        "neighbouring rank waits on a fan's top; moves between the stars come last"
    )

    def __init__(self, game: Game, root: State) -> None:
        super().__init__(game, root)
        self.S = tuple(game.group_range("star"))
        self.FN = tuple(game.group_range("fan"))
        self.f0, self.f1 = self.FN[0], self.FN[-1] + 1
        # the noise's seed: a hash of ints and tuples, the same in every process
        self.seed = hash(root.piles) & 0xFFFF

    def start(self) -> State:
        """The root as it is: :meth:`own_search` builds its own abstract nodes."""
        return self.root

    def auto(self, state: State) -> tuple[tuple[MoveLike, ...], State]:
        """No automatic move: the engine has none (no move is harmless everywhere)."""
        return (), state

    def is_won(self, state: State) -> bool:
        return self.game.is_won(state)

    # --- the search ---------------------------------------------------------------------
    def own_search(self, limits: Limits, first: tuple[MoveLike, ...], root: State, t0: float) -> SolveResult:
        """Depth-first runs with restarts over abstract nodes; see the module docstring."""
        node = self.node_of(root)
        if node is None:
            return depth_first(Strategy(self.game, root), limits, first, root, t0)  # not a valid position
        search = _Search(*node, limits, t0)
        path = search.run(self.seed)
        seconds = time.monotonic() - t0
        if path is not None:
            moves = [Move(*m) for m in first] + self.moves_of(root, path)
            return SolveResult(Outcome.SOLVED, moves, search.states, seconds)
        if search.stopped:
            return SolveResult(Outcome.UNKNOWN, [], search.states, seconds, search.stopped)
        return SolveResult(Outcome.UNSOLVABLE, [], search.states, seconds)

    def node_of(self, state: State) -> tuple[tuple[bytes, ...], int, int, int] | None:
        """The fans (ranks), the pair-kind counts and the tops (0, 0: free; else the
        two ranks, lower first) of ``state``; None when its stars are not valid (a
        star empty, or two neighbours in one not consecutive) or a rank is held more
        than 31 times (a pair count might not fit its 6 bits)."""
        p = self._from_state(state)
        s0, s1 = self.S
        s = p[s0] + p[s1][::-1]
        k = len(p[s0])
        if (
            not p[s0]
            or not p[s1]
            or any(not CONS[s[i - 1]][s[i]] for i in range(1, len(s)) if i != k)
            or max(Counter(c for pile in p for c in pile).values()) > 31
        ):
            return None
        counts = 0
        for i in range(1, len(s)):
            if CONS[s[i - 1]][s[i]]:
                counts += ONE[KIND[s[i - 1]][s[i]]]
        a, b = s[k - 1], s[k]
        if CONS[a][b]:
            return p[self.f0 : self.f1], counts, 0, 0
        return p[self.f0 : self.f1], counts, min(a, b), max(a, b)

    def moves_of(self, state: State, path: list[Step]) -> list[Move]:
        """The engine moves that play an abstract path from ``state``."""
        p = self._from_state(state)
        s0, s1 = self.S
        return [Move(*m) for m in self._replay(p[s0] + p[s1][::-1], len(p[s0]), p[self.f0 : self.f1], path)]

    def _replay(self, s: bytes, k: int, fans: tuple[bytes, ...], path: list[Step]) -> list[MoveLike]:
        """The engine moves of an abstract path: each step names the fan and the ranks of
        the gap its card goes into (``near`` the card it is put on, ``far`` the other);
        in a free position the split first walks to the nearest such gap."""
        s0, s1 = self.S
        f0 = self.f0
        h = [len(fp) for fp in fans]
        out: list[MoveLike] = []
        for i, near, far in path:
            h[i] -= 1
            c = fans[i][h[i]]
            x, y = s[k - 1], s[k]
            if not CONS[x][y]:
                if CONS[c][x]:  # fits x only, or both (bridges: either star, same string)
                    out.append((MOVE, f0 + i, s0, 1))
                    s = s[:k] + bytes((c,)) + s[k:]
                    k += 1
                else:
                    out.append((MOVE, f0 + i, s1, 1))
                    s = s[:k] + bytes((c,)) + s[k:]
                continue
            # tops (c, c) come from a gap {c-1, c} or {c, c+1} alike: the nearer one
            gaps = [{near, far}, {DN[c], c}, {c, UP[c]}] if far == c else [{near, far}]
            g = min((g for g in range(1, len(s)) if {s[g - 1], s[g]} in gaps), key=lambda g: abs(g - k))
            if g < k:
                out.extend(((MOVE, s0, s1, 1),) * (k - g))
            else:
                out.extend(((MOVE, s1, s0, 1),) * (g - k))
            if CONS[c][s[g - 1]]:  # the card goes next to the neighbour it fits
                out.append((MOVE, f0 + i, s0, 1))
                k = g + 1
            else:
                out.append((MOVE, f0 + i, s1, 1))
                k = g
            s = s[:g] + bytes((c,)) + s[g:]
        return out

    # --- hints: the engine's moves, ordered like before -----------------------------
    def ordered_moves(self, state: State) -> list[Move]:
        return [Move(*m) for _, m in self._candidates(self._from_state(state))]

    @staticmethod
    def _from_state(state: State) -> Piles:
        return tuple(bytes(c & 15 for c in p) for p in state.piles)

    def _candidates(self, p: Piles) -> list[tuple[int, MoveLike]]:
        """Fan cards first, from the fullest fan, preferring a card whose neighbour rank
        waits on some fan top; moves between the stars last."""
        s0, s1 = self.S
        a, b = p[s0][-1], p[s1][-1]
        tops = {fp[-1] for fp in p[self.f0 : self.f1] if fp}
        out: list[tuple[int, MoveLike]] = []
        for f in self.FN:
            fp = p[f]
            if not fp:
                continue
            r = fp[-1]
            nxt_up, nxt_down = r % 13 + 1, (r - 2) % 13 + 1
            follow = 0 if (nxt_up in tops or nxt_down in tops) else 3
            if len(fp) > 1 and CONS[fp[-2]][r]:
                follow = -2  # the card below follows at once
            base = 10 - len(fp) + follow
            if CONS[r][a]:
                out.append((base, (MOVE, f, s0, 1)))
            if CONS[r][b]:
                out.append((base, (MOVE, f, s1, 1)))
        if CONS[a][b]:
            if len(p[s0]) > 1:
                out.append((100, (MOVE, s0, s1, 1)))
            if len(p[s1]) > 1:
                out.append((100, (MOVE, s1, s0, 1)))
        out.sort(key=FIRST)
        return out
