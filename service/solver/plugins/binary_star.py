"""Knowledge of Binary Star: ranks only, fans sorted, own fast move generation.

- Stars build up or down by one regardless of suit (Ace and King consecutive) and fans
  never take a card, so a card's suit never matters: search nodes hold ranks only
  (``bytes``), and the key sorts the fans (which fan holds a stack does not matter).
- No automatic move (the engine has none: no move is harmless in every position).
- Order: fan cards first, from the fullest fan (the deepest cards are the hardest to
  free), preferring a card whose successor (either way) is waiting on some fan top;
  moves between the stars last.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from operator import itemgetter

from service.engine.core import Action, Game, Move, State

from ..search import Child, Knowledge, MoveLike

MOVE = int(Action.MOVE)
Piles = tuple[bytes, ...]
FIRST = itemgetter(0)


class BinaryStarKnowledge(Knowledge):
    notes = "Binary Star: ranks only, fans interchangeable"

    def __init__(self, game: Game, root: State) -> None:
        super().__init__(game, root)
        self.S = tuple(game.group_range("star"))
        self.FN = tuple(game.group_range("fan"))
        self.f0, self.f1 = self.FN[0], self.FN[-1] + 1
        self.ncards = len(game.deck())

    def start(self) -> Piles:
        return tuple(bytes(c & 15 for c in p) for p in self.root.piles)

    def key(self, p: Piles) -> Hashable:
        s0, s1 = self.S
        return p[s0] + b"\0" + p[s1] + b"\1" + b"\0".join(sorted(p[self.f0 : self.f1]))

    def score(self, p: Piles) -> float:
        """Cards played, and the tallest fans (the deepest cards) dug down."""
        s0, s1 = self.S
        tall = sum(len(fp) * len(fp) for fp in p[self.f0 : self.f1])
        return -10.0 * (len(p[s0]) + len(p[s1])) + 0.5 * tall

    def is_won(self, p: Piles) -> bool:
        s0, s1 = self.S
        return len(p[s0]) + len(p[s1]) == self.ncards

    def candidates(self, p: Piles) -> list[tuple[int, MoveLike]]:
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
            if len(fp) > 1:
                below = fp[-2]
                if (below - r) % 13 in (1, 12):
                    follow = -2  # the card below follows at once
            base = 10 - len(fp) + follow
            if (r - a) % 13 in (1, 12):
                out.append((base, (MOVE, f, s0, 1)))
            if (r - b) % 13 in (1, 12):
                out.append((base, (MOVE, f, s1, 1)))
        if (a - b) % 13 in (1, 12):
            if len(p[s0]) > 1:
                out.append((100, (MOVE, s0, s1, 1)))
            if len(p[s1]) > 1:
                out.append((100, (MOVE, s1, s0, 1)))
        out.sort(key=FIRST)
        return out

    def ordered_moves(self, state: State) -> list[Move]:
        return [Move(*m) for _, m in self.candidates(self._from_state(state))]

    @staticmethod
    def _from_state(state: State) -> Piles:
        return tuple(bytes(c & 15 for c in p) for p in state.piles)

    def auto(self, p: Piles) -> tuple[tuple[MoveLike, ...], Piles]:
        return (), p

    def children(self, p: Piles) -> Iterator[Child]:
        for _, m in self.candidates(p):
            _, s, t, _ = m
            lst = list(p)
            sp = lst[s]
            lst[s] = sp[:-1]
            lst[t] = lst[t] + sp[-1:]
            yield (m,), tuple(lst)
