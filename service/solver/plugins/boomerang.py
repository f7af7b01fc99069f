"""Strategy of Boomerang: own move generation on ``bytes`` piles, a lost-position test.

Pruning, each sound (it never hides a solution, so "unsolvable" stays a proof):

- **Safe moves**: exactly the engine's autoplay (a suit's second Seven or last Ace goes
  home from the waste, or from the tableau once the stock is empty); the engine's rules
  text argues why that never hurts.
- **Canonical key**: the stock by its length (it only ever loses its top card, to the
  waste or to a refill, so it is always the root's stock cut to that length), the waste
  in full, and the tableau piles sorted (all 12 have the same rules and the same
  refill). Foundations are left out: they hold exactly the cards found nowhere else,
  in their fixed order, and which foundation holds which suit changes nothing.
- **Merged moves**: a Seven goes only to the first empty foundation (empty ones are
  alike, see the key). Every other engine move is generated.
- **Lost positions** (:meth:`BoomerangStrategy.dead`): let S be a set of tableau and
  waste cards none of which could make the first move out of S while all the others
  stay put. Then no card of S ever moves (the first to move would need an earlier
  one), none reaches a foundation, and the game is lost. The largest such S is found
  as a fixpoint: start from every tableau and waste card and drop each card that
  could move, until none can. A card x stays in S when it lies under a card of S, or
  when all of these hold: (a) x can go onto no card z of its suit one rank away, since
  each copy of z lies under a card of S, or stays in the waste (z in S), or stays in
  its pile (z in S) whose direction, read from the card under z, refuses x, or, not in
  S, could take x only after moving onto the card that makes the direction right (a
  tableau card moves only onto a card), every copy of which lies under S; (b) x cannot
  go home: for some rank of which k copies must go home before x can, fewer than k
  copies are neither in S nor under S; (c) for a waste card, no refill can take it:
  every pile holds a card of S, so none ever empties. A stock card never joins S (a
  deal can always take it) and counts as free everywhere.

The rules come from the engine (:mod:`service.engine.boomerang`): the building rule
through its table ``TABLEAU_TAKES``, the foundation sequence, the dead slots of its
autoplay and the pile layout. The fast foundation test (:meth:`BoomerangStrategy._need`)
restates ``foundation_takers`` and is checked against it by a test.

Search (strategy "own"): short best-first flares, each with its own score weights and
share of the positions, then depth-first with the positions left; each pass is exhaustive unless
stopped by a limit, so each proves a loss on its own.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Hashable, Iterator
from operator import itemgetter
from typing import Final, NamedTuple

from service.engine.boomerang import (
    CARDS,
    DEAD_SLOTS,
    DISTINCT_CARDS,
    FOUNDATION_RANGE,
    FOUNDATION_SEQUENCE,
    STOCK,
    SUIT_CARDS,
    TABLEAU_RANGE,
    TABLEAU_TAKES,
    WASTE,
    foundation_card,
)
from service.engine.cards import CARD_SLOTS, SUIT_OF, rank_of, suit_of
from service.engine.core import Action, Game, Move, State

from ..search import (
    Child,
    Limits,
    MoveLike,
    Outcome,
    SearchPlan,
    SolveResult,
    StopReason,
    Strategy,
    best_first,
    depth_first,
    remaining,
)

MOVE = int(Action.MOVE)
DEAL: MoveLike = (int(Action.DEAL), -1, -1, 0)
Piles = tuple[bytes, ...]
F = FOUNDATION_RANGE
T = TABLEAU_RANGE
FOUNDATIONS = slice(F.start, F.stop)
TABLEAU = slice(T.start, T.stop)
SOURCES = (*T, WASTE)
PILES = WASTE + 1
FIRST = itemgetter(0)
SEQ = FOUNDATION_SEQUENCE

# FOUNDATION_CARD[suit][height]: the engine's foundation_card, as a table for the same
# reason as cards.py's SUIT_OF (the move generator reads it for every foundation of
# every position).
FOUNDATION_CARD: Final = tuple(tuple(foundation_card(s, n) for n in range(SUIT_CARDS)) for s in range(4))

# The engine's building rule, keyed by a pile's last one or two cards as bytes (a pile
# here is bytes, so tp[-2:] is the key).
ACCEPTS: Final[dict[bytes, tuple[int, ...]]] = {bytes(top): takes for top, takes in TABLEAU_TAKES.items()}
# NEIGHBOURS[c]: the cards one rank from c in its suit (what a pile of c alone takes).
NEIGHBOURS: Final[dict[int, tuple[int, ...]]] = {c: TABLEAU_TAKES[(c,)] for c in DISTINCT_CARDS}

# A pair of cards is indexed x << 6 | z (every card is below CARD_SLOTS, 64).
# CONT[b << 6 | z]: the one card a pile ending b, z takes, or -1.
# MIRROR[x << 6 | z]: for z one rank from x, the card z must sit on to take x (a
# tableau card can be moved only onto a card; only the waste and the stock refill a
# space), or -1. Both read the engine's rule; by its symmetry they hold the same cards.
MIRROR: list[int] = [-1] * CARD_SLOTS**2
CONT: list[int] = [-1] * CARD_SLOTS**2
for _x in DISTINCT_CARDS:
    for _z in NEIGHBOURS[_x]:
        _takes = TABLEAU_TAKES[(_x, _z)]
        CONT[_x << 6 | _z] = _takes[0] if _takes else -1
        MIRROR[_x << 6 | _z] = next((w for w in NEIGHBOURS[_z] if _x in TABLEAU_TAKES[(w, _z)]), -1)
ANY = -2  # CONT of a pile's bottom card: alone, it takes either neighbour
NO_INST: tuple[tuple[int, int, int], ...] = ()


def _due_before(height: int, card: int) -> tuple[tuple[int, int], ...]:
    """(card z, k) for each card z of ``card``'s suit of which k more copies must go
    home before the next copy of ``card`` can, on a foundation holding ``height``."""
    suit, rank = suit_of(card), rank_of(card)
    first = next((i for i in range(height, SUIT_CARDS) if SEQ[i] == rank), SUIT_CARDS)
    need: dict[int, int] = {}
    for i in range(height, first):
        z = foundation_card(suit, i)
        need[z] = need.get(z, 0) + 1
    return tuple(need.items())


# BEFORE[height][card]: _due_before(height, card), read by the lost-position test.
BEFORE: Final = tuple(
    tuple(_due_before(n, c) if c in NEIGHBOURS else () for c in range(CARD_SLOTS)) for n in range(SUIT_CARDS + 1)
)


class Flare(NamedTuple):
    """One best-first pass of the search: its score weights and its share of the positions."""

    weights: tuple[float, float, float]
    share: float


class BoomerangStrategy(Strategy):
    heuristic = (
        "it prefers foundation moves, then moves of a pile's only card (the refill brings "
        "a new card into play), builds from the waste, then other builds; a deal comes last"
    )
    plan = SearchPlan.OWN
    #: The positions a second of budget buys (bench/positions-budget.md); at least
    #: SAMPLED_POSITIONS_PER_SECOND, so that a sample stops on its share of the positions.
    positions_per_second = 10_000
    #: Score weights: cards in the waste, cards in the stock, single-card piles (a
    #: flare searches with its own, see :meth:`scored_by`).
    weights: tuple[float, float, float] = (0.25, 0.2, 0.0)
    #: The flares: best-first passes, each from scratch with its own score weights and
    #: share of the positions, then depth-first with what is left.
    FLARES: tuple[Flare, ...] = (
        Flare((0.25, 0.2, 0.0), 0.1),
        Flare((0.4, 0.2, 0.0), 0.1),
        Flare((0.25, 0.2, 0.1), 0.1),
        Flare((0.2, 0.1, 0.0), 0.1),
        Flare((0.3, 0.3, 0.0), 0.1),
    )

    def __init__(self, game: Game, root: State) -> None:
        super().__init__(game, root)
        assert (game.group_range("foundation"), game.group_range("tableau")) == (F, T)
        assert (game.group_start["stock"], game.group_start["waste"]) == (STOCK, WASTE)
        stock = bytes(root.piles[STOCK])
        self._stock_counts: list[list[int]] = []
        counts = [0] * CARD_SLOTS
        for n in range(len(stock) + 1):
            self._stock_counts.append(counts[:])
            if n < len(stock):
                counts[stock[n]] += 1

    def dead(self, p: Piles) -> bool:
        """True when a set of cards provably never moves: the position is lost (the
        fixpoint of the module docstring, "Lost positions"). One function although
        long: it runs on every position the search expands, and its steps share the
        fixpoint's running state (``top``, ``stuck``, ``refill``) as locals."""
        lengths = [0, 0, 0, 0]  # per suit: its foundation's height
        for f in F:
            fp = p[f]
            if fp:
                lengths[SUIT_OF[fp[0]]] = len(fp)
        loose = self._stock_counts[len(p[STOCK])]
        inst: dict[int, list[tuple[int, int, int]]] = {}  # card -> (pile, index, what it takes)
        top = [-1] * PILES  # per pile (and the waste): the highest stuck card's index
        stuck: list[list[bool]] = [[]] * PILES
        cand: list[tuple[int, int, int]] = []
        refill = False  # a pile may empty (it holds no stuck card): the waste may refill it
        for t in T:
            tp = p[t]
            n = len(tp)
            if not n:
                refill = True
                continue
            top[t] = n - 1
            stuck[t] = [True] * n
            for i in range(n - 1, -1, -1):  # top first: a freed top unburies the next
                c = tp[i]
                inst.setdefault(c, []).append((t, i, CONT[tp[i - 1] << 6 | c] if i else ANY))
                cand.append((t, i, c))
        waste = p[WASTE]
        if waste:
            top[WASTE] = len(waste) - 1
            for i, c in enumerate(waste):
                inst.setdefault(c, []).append((WASTE, i, -1))
            waste_cand = [(WASTE, i, waste[i]) for i in range(len(waste) - 1, -1, -1)]
        changed = True
        while changed:
            changed = False
            if waste:
                if refill:
                    top[WASTE] = -1
                    waste = b""
                else:
                    cand.extend(waste_cand)
                    waste_cand = []
            keep: list[tuple[int, int, int]] = []
            for t, i, x in cand:
                if i < top[t]:  # buried under a stuck card: cannot move while that stays
                    keep.append((t, i, x))
                    continue
                if (t == WASTE and refill) or self._could_move(x, loose, inst, top, lengths):
                    changed = True
                    if t == WASTE:  # the waste's stuck cards are always its bottom ones
                        top[WASTE] = min(top[WASTE], i - 1)
                        continue
                    row = stuck[t]
                    row[i] = False
                    if top[t] == i:
                        j = i - 1
                        while j >= 0 and not row[j]:
                            j -= 1
                        top[t] = j
                        if j < 0:
                            refill = True
                else:
                    keep.append((t, i, x))
            cand = keep
            if not cand:
                return False
        return bool(cand)

    @staticmethod
    def _could_move(
        x: int,
        loose: list[int],
        inst: dict[int, list[tuple[int, int, int]]],
        top: list[int],
        lengths: list[int],
    ) -> bool:
        """Whether ``x`` (not buried) could ever move while the stuck cards stay: onto a
        card of the next rank up or down, or home."""
        for z in NEIGHBOURS[x]:
            # x could go onto z unless z stays buried under a stuck card, or stays in the
            # waste, or stays where its pile's direction refuses x
            if loose[z]:
                return True
            for t2, i2, takes in inst.get(z, NO_INST):
                tz = top[t2]
                if i2 < tz:
                    continue
                if t2 == WASTE:
                    if i2 > tz:  # may be refilled into a pile of its own
                        return True
                    continue
                # z where it is (a pile's bottom takes either way) ...
                if takes in (x, ANY):
                    return True
                # ... or, if z may move, put on the card that makes x fit
                if i2 > tz:
                    w = MIRROR[x << 6 | z]
                    if w >= 0:
                        if loose[w]:
                            return True
                        for tw, j, _ in inst.get(w, NO_INST):
                            if j >= top[tw]:
                                return True
        # x could go home unless too few copies of a card due before it are free
        for z, k in BEFORE[lengths[SUIT_OF[x]]][x]:
            avail = loose[z]
            for t2, i2, _ in inst.get(z, NO_INST):
                if i2 > top[t2]:
                    avail += 1
            if avail < k:
                return False
        return True

    def scored_by(self, weights: tuple[float, float, float]) -> BoomerangStrategy:
        """This strategy with other score weights, for one flare (a shallow copy: the
        strategy itself is left as it is)."""
        flare = copy.copy(self)
        flare.weights = weights
        return flare

    def own_search(self, limits: Limits, first: tuple[MoveLike, ...], root: Piles, started: float) -> SolveResult:
        """Short best-first flares with different weights (the search is chaotic: one
        score can find at once what another misses for long), then depth-first with the
        positions left. Each pass is exhaustive unless stopped, so each proves loss alone."""
        states = 0
        share = 0.0
        for flare in self.FLARES:
            share += flare.share  # the flares so far may spend this share of the positions
            upto = Limits(limits.max_seconds, math.floor(share * limits.max_states))
            r = best_first(self.scored_by(flare.weights), remaining(upto, states), first, root, started)
            states += r.states
            if r.result is not Outcome.UNKNOWN or r.stopped_by not in (StopReason.STATES, StopReason.MEMORY):
                r.states = states
                return r
        r = depth_first(self, remaining(limits, states), first, root, started)
        r.states += states
        return r

    def start(self) -> Piles:
        return tuple(bytes(p) for p in self.root.piles)

    def key(self, p: Piles) -> Hashable:
        """Stock length, waste, sorted piles (see the module docstring); no card is 0,
        so b"\\0" separates unambiguously."""
        return bytes((len(p[STOCK]),)) + p[WASTE] + b"\0" + b"\0".join(sorted(p[TABLEAU]))

    def is_won(self, p: Piles) -> bool:
        return sum(map(len, p[FOUNDATIONS])) == CARDS

    def score(self, p: Piles) -> float:
        """Cards home count most; cards still in the talon (most of all in the waste,
        where they are buried) count against: a refill beats a deal."""
        home = sum(map(len, p[FOUNDATIONS]))
        w = self.weights
        singles = sum(1 for t in T if len(p[t]) == 1) if w[2] else 0
        return -float(home) + w[0] * len(p[WASTE]) + w[1] * len(p[STOCK]) + w[2] * singles

    @staticmethod
    def _need(p: Piles) -> dict[int, int]:
        """card -> the first foundation that takes it now: the engine's
        ``foundation_takers`` (a test checks the two agree), restated here without its
        lists and calls because it runs for every position expanded."""
        need: dict[int, int] = {}
        started = 0
        empty = -1
        for f in F:
            fp = p[f]
            n = len(fp)
            if not n:
                if empty < 0:
                    empty = f
                continue
            suit = SUIT_OF[fp[0]]
            started |= 1 << suit
            if n < SUIT_CARDS:
                need[FOUNDATION_CARD[suit][n]] = f
        if empty >= 0:
            for suit in range(4):
                if not started >> suit & 1:
                    need[FOUNDATION_CARD[suit][0]] = empty
        return need

    def auto(self, p: Piles) -> tuple[tuple[MoveLike, ...], Piles]:
        """The engine's autoplay: a dead card (next on its foundation at a height in
        ``DEAD_SLOTS``) goes home from the waste, or from the tableau once the stock is
        empty."""
        moves: list[MoveLike] = []
        while True:
            dead: dict[int, int] = {}
            for f in F:
                fp = p[f]
                n = len(fp)
                if n in DEAD_SLOTS:
                    dead[FOUNDATION_CARD[SUIT_OF[fp[0]]][n]] = f
            if not dead:
                break
            w = p[WASTE]
            m: MoveLike | None = None
            if w and w[-1] in dead:
                m = (MOVE, WASTE, dead[w[-1]], 1)
            elif not p[STOCK]:
                for t in T:
                    tp = p[t]
                    if tp and tp[-1] in dead:
                        m = (MOVE, t, dead[tp[-1]], 1)
                        break
            if m is None:
                break
            moves.append(m)
            p = self._move(p, m[1], m[2])
        return tuple(moves), p

    @staticmethod
    def _move(p: Piles, s: int, t: int) -> Piles:
        """Move the top card of ``s`` to ``t``; an emptied tableau pile is refilled from
        the stock, else the waste (as the engine does)."""
        lst = list(p)
        sp = lst[s]
        lst[s] = sp[:-1]
        lst[t] = lst[t] + sp[-1:]
        if len(sp) == 1 and s in T:
            stock = lst[STOCK]
            if stock:
                lst[s] = stock[-1:]
                lst[STOCK] = stock[:-1]
            else:
                w = lst[WASTE]
                if w:
                    lst[s] = w[-1:]
                    lst[WASTE] = w[:-1]
        return tuple(lst)

    def candidates(self, p: Piles) -> list[tuple[int, MoveLike]]:
        """(order, move) for every move, lowest first: foundation moves; moves of a
        pile's only card (the refill brings a new card into play); builds from the
        waste; other builds; a deal last."""
        need = self._need(p)
        takers: dict[int, list[int]] = {}
        for t in T:
            tp = p[t]
            if tp:
                for c in ACCEPTS[tp[-2:]]:
                    takers.setdefault(c, []).append(t)
        out: list[tuple[int, MoveLike]] = []
        for s in SOURCES:
            sp = p[s]
            if not sp:
                continue
            card = sp[-1]
            f = need.get(card)
            if f is not None:
                out.append((0, (MOVE, s, f, 1)))
            dsts = takers.get(card)
            if dsts:
                if s == WASTE:
                    score = 15
                elif len(sp) == 1:
                    score = 10
                else:
                    score = 30
                for t in dsts:
                    if t != s:
                        out.append((score, (MOVE, s, t, 1)))
        if p[STOCK]:
            out.append((40, DEAL))
        out.sort(key=FIRST)
        return out

    def ordered_moves(self, state: State) -> list[Move]:
        return [Move(*m) for _, m in self.candidates(tuple(bytes(x) for x in state.piles))]

    def children(self, p: Piles) -> Iterator[Child]:
        if self.dead(p):
            return
        auto = self.auto
        for _, m in self.candidates(p):
            if m[0] == MOVE:
                child = self._move(p, m[1], m[2])
            else:
                lst = list(p)
                stock = lst[STOCK]
                lst[STOCK] = stock[:-1]
                lst[WASTE] = lst[WASTE] + stock[-1:]
                child = tuple(lst)
            more, child = auto(child)
            yield (m, *more), child
