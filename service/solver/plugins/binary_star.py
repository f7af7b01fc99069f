"""Knowledge of Binary Star: ranks only, the stars as one string, star shuffling folded in.

- Stars build up or down by one regardless of suit (Ace and King consecutive) and fans
  never take a card, so a card's suit never matters: search nodes hold ranks only, and
  which fan holds a stack does not matter (the key sorts the fans).
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
  induction the same futures, so the key is exactly these: sound to merge.
- **Macro moves.** A child is one fan card played: in a free position preceded by the
  star-to-star moves that bring the split to the chosen gap (the nearest occurrence of
  its kind), all legal because every pair on the way is consecutive. Moves between the
  stars are never searched on their own: they only move the split inside a free
  position (same key) and are legal nowhere in a stuck one.
- No automatic move (the engine has none: no move is harmless in every position).
- Search: best-first (:meth:`score`) for half the time, then depth-first from
  scratch (it wins some deals best-first misses at once, and it alone can prove a
  loss: best-first drops open positions when they get too many). Children in order: those
  where a fan card (the uncovered one included) then frees the position first, then
  those where one fits a top, each from the fullest fan first (the deepest cards are
  the hardest to free).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from operator import itemgetter

from service.engine.core import Action, Game, Move, State

from ..search import Child, Knowledge, MoveLike

MOVE = int(Action.MOVE)
Piles = tuple[bytes, ...]
FIRST = itemgetter(0)
# CONS[a][b]: ranks a and b (1..13) one apart, Ace and King consecutive
CONS = tuple(tuple((a - b) % 13 in (1, 12) for b in range(14)) for a in range(14))
# KIND[a][b]: for consecutive a, b the index 0..12 of the pair kind {r, r+1} (r = lower)
KIND = tuple(tuple((a - 1 if (b - a) % 13 == 1 else b - 1) for b in range(14)) for a in range(14))
# A node: (string of ranks, split, fans (ranks, in pile order), counts of pair kinds)
Node = tuple[bytes, int, tuple[bytes, ...], bytes]


class BinaryStarKnowledge(Knowledge):
    strategy = "best-first+dfs"
    first_share = 0.5
    notes = "Binary Star: ranks only, fans interchangeable, star moves folded into macro moves"

    def __init__(self, game: Game, root: State) -> None:
        super().__init__(game, root)
        self.S = tuple(game.group_range("star"))
        self.FN = tuple(game.group_range("fan"))
        self.f0, self.f1 = self.FN[0], self.FN[-1] + 1
        self.ncards = len(game.deck())

    def start(self) -> Node:
        p = self._from_state(self.root)
        s0, s1 = self.S
        s = p[s0] + p[s1][::-1]
        counts = [0] * 13
        for i in range(1, len(s)):
            if CONS[s[i - 1]][s[i]]:
                counts[KIND[s[i - 1]][s[i]]] += 1
        return s, len(p[s0]), p[self.f0 : self.f1], bytes(counts)

    def key(self, node: Node) -> Hashable:
        s, k, fans, counts = node
        a, b = s[k - 1], s[k]
        mode = b"F" if CONS[a][b] else bytes((min(a, b), max(a, b)))
        return counts + mode + b"|" + b"\0".join(sorted(fans))

    def score(self, node: Node) -> float:
        """Cards played, the tallest fans (the deepest cards) dug down, and how many
        fan cards fit a top now (a stuck position with few is close to a dead end)."""
        s, k, fans, _ = node
        tall = sum(len(fp) * len(fp) for fp in fans)
        a, b = s[k - 1], s[k]
        if CONS[a][b]:
            fit = 4
        else:
            ca, cb = CONS[a], CONS[b]
            fit = sum(1 for fp in fans if fp and (ca[fp[-1]] or cb[fp[-1]]))
        return -10.0 * len(s) + 0.5 * tall - 50.0 * min(fit, 4)

    def is_won(self, node: Node) -> bool:
        return len(node[0]) == self.ncards

    def children(self, node: Node) -> Iterator[Child]:
        s, k, fans, counts = node
        s0, s1 = self.S
        f0 = self.f0
        a, b = s[k - 1], s[k]
        tops = [fp[-1] if fp else 0 for fp in fans]
        out: list[tuple[int, tuple[MoveLike, ...], Node]] = []
        if not CONS[a][b]:
            for i, c in enumerate(tops):
                if not c:
                    continue
                fp = fans[i]
                nf = (*fans[:i], fp[:-1], *fans[i + 1 :])
                ns = s[:k] + bytes((c,)) + s[k:]
                cnt = bytearray(counts)
                if CONS[c][a]:
                    cnt[KIND[a][c]] += 1
                    m: MoveLike = (MOVE, f0 + i, s0, 1)
                    nk = k + 1
                    if CONS[c][b]:
                        cnt[KIND[c][b]] += 1
                        out.append((-100 - len(fp), (m,), (ns, nk, nf, bytes(cnt))))
                        continue
                    x, y = c, b
                elif CONS[c][b]:
                    cnt[KIND[c][b]] += 1
                    m = (MOVE, f0 + i, s1, 1)
                    nk = k
                    x, y = a, c
                else:
                    continue
                out.append((self._rank(x, y, tops, i, nf[i], fp), (m,), (ns, nk, nf, bytes(cnt))))
        else:
            # the nearest gap of each pair kind
            best: dict[int, int] = {}
            for g in range(1, len(s)):
                t = KIND[s[g - 1]][s[g]]
                old = best.get(t)
                if old is None or abs(g - k) < abs(old - k):
                    best[t] = g
            for g in best.values():
                x, y = s[g - 1], s[g]
                shift: tuple[MoveLike, ...] = (
                    ((MOVE, s0, s1, 1),) * (k - g) if g < k else ((MOVE, s1, s0, 1),) * (g - k)
                )
                t = KIND[x][y]
                for i, c in enumerate(tops):
                    if not c:
                        continue
                    if CONS[c][x]:
                        m, nk, near, far = (MOVE, f0 + i, s0, 1), g + 1, x, y
                    elif CONS[c][y]:
                        m, nk, near, far = (MOVE, f0 + i, s1, 1), g, y, x
                    else:
                        continue
                    fp = fans[i]
                    nf = (*fans[:i], fp[:-1], *fans[i + 1 :])
                    cnt = bytearray(counts)
                    cnt[t] -= 1
                    cnt[KIND[near][c]] += 1
                    ns = s[:g] + bytes((c,)) + s[g:]
                    out.append((self._rank(c, far, tops, i, nf[i], fp), (*shift, m), (ns, nk, nf, bytes(cnt))))
        out.sort(key=FIRST)
        for _, moves, child in out:
            yield moves, child

    @staticmethod
    def _rank(x: int, y: int, tops: list[int], i: int, below: bytes, fp: bytes) -> int:
        """Lower is tried first: a stuck result with tops ``x``, ``y`` where some fan
        card (the uncovered one counts) bridges them, else at least fits one; from a
        tall fan."""
        cx, cy = CONS[x], CONS[y]
        best = 2000
        nxt = below[-1] if below else 0
        for j, c in enumerate(tops):
            if j == i:
                c = nxt
            if not c:
                continue
            if cx[c] and cy[c]:
                best = 0
                break
            if cx[c] or cy[c]:
                best = 1000
        return best - 10 * len(fp)

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
