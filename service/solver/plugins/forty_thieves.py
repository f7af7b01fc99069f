"""Knowledge of Forty Thieves: its own fast move generation on ``bytes`` piles.

- **Safe moves**: exactly the engine's autoplay (an Ace always; a card of rank r once
  both cards of rank r-1 of its suit are home: nothing else could ever be put on it).
- **Canonical key**: tableau piles sorted (every pile has the same rules, a space takes
  any card), foundations as the sorted multiset of their top cards, the stock by its
  length (it is only ever dealt from the top, so its length says which cards are left),
  and the waste in full.
- **Merged moves**: to a foundation, the first one that takes the card (two holding the
  same top are interchangeable); to a space, the first empty pile.
- **Order** (never pruning): foundation moves; builds from the waste; builds that
  uncover a card, the ones that empty a pile first; a deal; then moves into a space,
  and last the moves of a card off its suit's next-higher card (they only swap
  copies).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from operator import itemgetter

from service.engine.core import Action, Game, Move, State

from ..search import Child, Knowledge, MoveLike

MOVE = int(Action.MOVE)
DEAL = (int(Action.DEAL), -1, -1, 0)
Piles = tuple[bytes, ...]
F = range(0, 8)
T = range(8, 18)
STOCK, WASTE = 18, 19
FIRST = itemgetter(0)


class FortyThievesKnowledge(Knowledge):
    notes = "Forty Thieves: engine autoplay, sorted piles, stock by its length"

    def __init__(self, game: Game, root: State) -> None:
        super().__init__(game, root)
        assert game.group_range("tableau") == T and game.group_range("waste").start == WASTE

    def start(self) -> Piles:
        return tuple(bytes(p) for p in self.root.piles)

    def key(self, p: Piles) -> Hashable:
        tops = bytes(sorted(fp[-1] if fp else 0 for fp in p[0:8]))
        return tops + b"\1" + b"\0".join(sorted(p[8:18])) + b"\1" + bytes((len(p[STOCK]),)) + p[WASTE]

    # Depth-first with the order of ``candidates``: on deals 1-20 it solved more within
    # 2 s than best-first with this score (kept for experiments: set strategy).
    strategy = "dfs"

    def score(self, p: Piles) -> float:
        """Cards home count most; then tableau cards not built on their suit's next card
        (each is a card to dig out), waste cards (buried), and spaces (a resource)."""
        home = sum(len(p[f]) for f in F)
        breaks = 0
        spaces = 0
        for t in T:
            tp = p[t]
            if not tp:
                spaces += 1
                continue
            prev = 0
            for c in tp:
                if c != prev - 1:
                    breaks += 1
                prev = c
        return -5.0 * home + 2.0 * breaks + 0.2 * len(p[WASTE]) - 1.0 * spaces

    def is_won(self, p: Piles) -> bool:
        return sum(len(p[f]) for f in F) == 104

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
    def _safe(p: Piles, card: int) -> bool:
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
        changed = True
        while changed:
            changed = False
            for s in (*T, WASTE):
                sp = lst[s]
                if not sp:
                    continue
                card = sp[-1]
                cur = tuple(lst)
                f = self._home(cur, card)
                if f >= 0 and self._safe(cur, card):
                    lst[s] = sp[:-1]
                    lst[f] = lst[f] + bytes((card,))
                    moves.append((MOVE, s, f, 1))
                    changed = True
                    break
        if not moves:
            return (), p
        return tuple(moves), tuple(lst)

    def candidates(self, p: Piles) -> list[tuple[int, MoveLike]]:
        out: list[tuple[int, MoveLike]] = []
        # which tableau piles take which card: card -> piles
        takers: dict[int, list[int]] = {}
        empty = -1
        for t in T:
            tp = p[t]
            if tp:
                top = tp[-1]
                if top & 15 > 1:
                    takers.setdefault(top - 1, []).append(t)
            elif empty < 0:
                empty = t
        found_top = {fp[-1] for fp in p[0:8] if fp}
        has_empty_found = any(not p[f] for f in F)
        for s in (*T, WASTE):
            sp = p[s]
            if not sp:
                continue
            card = sp[-1]
            n = len(sp)
            from_waste = s == WASTE
            on_parent = not from_waste and n > 1 and sp[-2] == card + 1
            if ((card - 1) in found_top and card & 15 > 1) or (card & 15 == 1 and has_empty_found):
                out.append((0, (MOVE, s, self._home(p, card), 1)))
            for t in takers.get(card, ()):
                if t == s:
                    continue
                if from_waste:
                    score = 10
                elif on_parent:
                    score = 80
                else:
                    score = 15 if n == 1 else 20
                    below = sp[-2] if n > 1 else 0
                    if below and self._home(p, below) < 0:
                        score += 3
                out.append((score, (MOVE, s, t, 1)))
            if empty >= 0 and (from_waste or n > 1):
                out.append((60 if from_waste else (90 if on_parent else 65), (MOVE, s, empty, 1)))
        if p[STOCK]:
            out.append((50, DEAL))
        out.sort(key=FIRST)
        return out

    def ordered_moves(self, state: State) -> list[Move]:
        return [Move(*m) for _, m in self.candidates(tuple(bytes(x) for x in state.piles))]

    def children(self, p: Piles) -> Iterator[Child]:
        for _, m in self.candidates(p):
            lst = list(p)
            action, s, t, _ = m
            if action == MOVE:
                sp = lst[s]
                card = sp[-1]
                lst[s] = sp[:-1]
                lst[t] = lst[t] + bytes((card,))
                exposed = lst[s][-1] if lst[s] else -1
            else:
                stock = lst[STOCK]
                lst[STOCK] = stock[:-1]
                lst[WASTE] = lst[WASTE] + stock[-1:]
                t = -1
                exposed = stock[-1]
            child = tuple(lst)
            if t in F or (exposed >= 0 and self._home(child, exposed) >= 0 and self._safe(child, exposed)):
                more, child = self.auto(child)
                yield (m, *more), child
            else:
                yield (m,), child
