"""Strategy of the Penguin family (Penguin, Penguin II, Opus, Pelican, Penguin with
free-cell moves, and any other combination of the family's options).

Pruning, each sound (it never hides a solution):

- **Safe foundation moves.** Any card that is the next card of its suit's foundation
  goes there at once, from a cell or a tableau top. One deck, tableau building down in
  suit: the only card that could ever be put on it is the same suit's card one rank
  lower, which is already home (that is why this card is next). So nothing can ever be
  built on it, and moving it home only frees its place: the move can never hurt.
- **Canonical key.** Cells are interchangeable, and so are tableau piles (every pile
  has the same rules; an empty one takes what any empty one takes): the key is the
  sorted cells and the sorted piles. Foundations are the cards found nowhere else.
- **Merged moves.** A card goes to the first free cell only, a card or run to the first
  empty pile only (the others give the same key). A card moves from a cell or a pile
  onto a tableau card only as the one card that fits (one deck: it is unique), and a
  run onto a pile moves exactly the cards down to the fitting one.
- **Runs are not split** where a split cannot help: a run goes to the cells only as a
  whole, and in whole-run games moves only as a whole (see :meth:`candidates`). The
  part left behind would have a top card that only the card just moved off it fits.
- **Cell cards join their parents.** A card in a cell whose tableau parent (same suit,
  one relative rank higher) is a top card goes onto it at once. The two positions reach
  each other in one move (any top card may go to a free cell, and the move frees one), so
  they are won or lost together; and the position with the card in the cell is a run
  split into the cells, which the moves below never need (a split is never better than
  the whole run). Consequently a card is never moved into a cell while it fits a top
  card: it would come straight back. (The trap this avoids: joining without the
  whole-run macro into the cells would leave some runs impossible to park card by card.)
  Measured on deals 1-1000 of all five presets: the same verdict on every deal with and
  without joining; on deals 1-300, 0.36x (Penguin II) to 0.73x (Pelican) the positions.
- **Digging macro.** The cards above a card its foundation takes next go into the
  cells in one macro move, when there are cells enough (as Freecell Solver's "put
  non-top stack cards in the foundations"). Its end is a position the single moves
  reach too; being one step, it is tried early and costs one position, not several.

Moves are generated from tables built once per search (they depend on the base rank),
without calling the engine; every one is a move the engine lists (``verify`` replays the solution).
Search nodes are tuples of ``bytes`` piles (cards are small ints): slicing, joining and
hashing bytes is what makes the key and the children cheap.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Iterator
from operator import itemgetter

from service.engine.core import Action, Move, State
from service.engine.penguin import PenguinFamily

from ..search import Child, MoveLike, SearchPlan, Strategy

MOVE = int(Action.MOVE)
Piles = tuple[bytes, ...]
FIRST = itemgetter(0)
PileInfo = tuple[int, int, int, int, int, int, int, int, int, int]
PileEntry = tuple[int, int, bytes, PileInfo]  # (pile, top run length, pile, its info)
Scored = list[tuple[int, tuple[MoveLike, ...]]]  # (score, engine moves): lower first
CellStage = tuple[list[PileEntry], list[int], set[int]]  # piles, free cells, piles that fit
# Every move into the cells scores at least this; every move that needs no cell and
# scores less is tried before any of them, without listing them.
CELL_SCORES = 70
NO_DIG = 99  # a pile with no card below its top run: nothing to dig for
# How soon digging into a pile pays: the least ``LAG_WEIGHT * (relative rank - rank its
# foundation wants) + depth`` of its buried cards. A buried card far from its turn rarely
# pays (weights 1-5 measured on deals 1-300: 3 needs the fewest positions).
LAG_WEIGHT = 3


class PenguinStrategy(Strategy):
    heuristic = (
        "it prefers digging out a card a foundation takes next, then building on the "
        "tableau (moves that empty a pile first), then moves into a space; cards go into "
        "the cells last, those that dig towards the cards the foundations want next first"
    )

    def __init__(self, game: PenguinFamily, root: State) -> None:
        super().__init__(game, root)
        base = game.base_rank(root)
        self.F = tuple(game.F)
        self.C = tuple(game.C)
        self.T = tuple(game.T)
        self.c0, self.c1 = game.C.start, game.C.stop
        self.t0, self.t1 = game.T.start, game.T.stop
        self.runs = game.runs
        self.any_empty = game.any_empty
        # rel[card]: relative rank (base = 0, rank below base = 12); -1 for non-cards.
        rel = [-1] * 64
        up = [-1] * 64  # card one relative rank higher, same suit (its foundation successor)
        for suit in range(4):
            for rank in range(1, 14):
                c = suit << 4 | rank
                r = (rank - base) % 13
                rel[c] = r
                if r < 12:
                    up[c] = suit << 4 | ((rank % 13) + 1)
        self.rel = rel
        self.up = up
        # down[card]: the card that goes on it in the tableau (same suit, one relative rank
        # lower); -2 for a base-rank card, on which nothing is built.
        self.down = [-2] * 64
        for c in range(64):
            if rel[c] > 0:
                self.down[c] = (c >> 4) << 4 | ((c & 15) - 2) % 13 + 1
        self.base_cards = tuple(s << 4 | base for s in range(4))
        self.one = [bytes((c,)) for c in range(64)]  # each card as a one-card pile
        self.CT = self.C + self.T  # where a card may go home from
        self.ncells = len(self.C)
        assert self.c1 <= self.t0, "cells come before the tableau (a pile index below t0 is a cell)"
        # the engine's run limits by free cells and empty piles, once for all positions
        self.run_limits = [[game.run_limits(f, e) for e in range(len(self.T) + 1)] for f in range(len(self.C) + 1)]

        self._info: dict[bytes, PileInfo] = {}
        # A solution runs through about 25 positions (deals 1-40: median 23-29, the longest
        # 42, with free-cell moves 99); a search that goes past 100 is wandering
        # (Penguin with free-cell moves deal 278: 14,531 positions and a 9,084-move line
        # unbounded, 1,527 positions and 182 moves bounded), so depth-first first tries
        # lines of at most 100 positions. On deals 1-150 of Penguin II and Opus no line
        # is that long, and nothing changes.
        self.max_depth = 100
        # One card at a time makes deep dead ends common: after half the time, a
        # best-first search takes a second, different look.
        self.plan = SearchPlan.DEPTH_THEN_BEST_FIRST if game.runs == "single" else SearchPlan.DEPTH_FIRST

    # --- keys and safe moves ----------------------------------------------------------
    def start(self) -> Piles:
        return tuple(bytes(p) for p in self.root.piles)

    def key(self, p: Piles) -> Hashable:
        # A cell holds one card at most: sorting the cells sorts their cards.
        return b"\0".join(sorted(p[self.t0 : self.t1])) + b"\0\0" + b"".join(sorted(p[self.c0 : self.c1]))

    def score(self, p: Piles) -> float:
        """For best-first search: cards home, then free cells, spaces and built order."""
        home = len(p[0]) + len(p[1]) + len(p[2]) + len(p[3])
        cells = sum(1 for c in p[self.c0 : self.c1] if c)
        breaks = 0
        spaces = 0
        down = self.down
        for tp in p[self.t0 : self.t1]:
            if not tp:
                spaces += 1
                continue
            prev = -1
            for c in tp:
                if prev < 0 or down[prev] != c:
                    breaks += 1
                prev = c
        return -5.0 * home + 1.0 * cells + 1.0 * breaks - 2.0 * spaces

    def is_won(self, p: Piles) -> bool:
        return len(p[0]) + len(p[1]) + len(p[2]) + len(p[3]) == 52

    def _needed(self, piles: Piles) -> dict[int, int]:
        """card -> foundation that takes it now."""
        need: dict[int, int] = {}
        empty = -1
        started = 0
        up = self.up
        for f in self.F:
            fp = piles[f]
            if fp:
                started |= 1 << (fp[0] >> 4)
                nxt = up[fp[-1]]
                if nxt >= 0:
                    need[nxt] = f
            elif empty < 0:
                empty = f
        if empty >= 0:
            for c in self.base_cards:
                if not started >> (c >> 4) & 1:
                    need[c] = empty
        return need

    def auto(self, piles: Piles) -> tuple[tuple[MoveLike, ...], Piles]:
        moves, piles = self._home(piles)
        joins, piles = self._join(piles)
        return (moves + joins if joins else moves), piles

    def _join(self, piles: Piles) -> tuple[tuple[MoveLike, ...], Piles]:
        """Put every cell card whose tableau parent is a top card onto it (cascading: the
        card it then takes may come from a cell too). Sound: see the module docstring."""
        up = self.up
        waiting: dict[int, int] = {}  # parent card -> the cell holding its child
        for c in self.C:
            x = piles[c]
            if x and up[x[0]] >= 0:
                waiting[up[x[0]]] = c
        if not waiting:
            return (), piles
        lst: list[bytes] | None = None
        moves: list[MoveLike] = []
        for t in self.T:
            tp = piles[t]
            if not tp:
                continue
            c = waiting.pop(tp[-1], -1)
            while c >= 0:
                if lst is None:
                    lst = list(piles)
                x = lst[c]
                lst[c] = b""
                lst[t] += x
                moves.append((MOVE, c, t, 1))
                c = waiting.pop(x[0], -1)
        if lst is None:
            return (), piles
        return tuple(moves), tuple(lst)

    def _home(self, piles: Piles) -> tuple[tuple[MoveLike, ...], Piles]:
        """Every safe move to the foundations (see the module docstring), to a fixpoint.
        A card becomes playable when it is a top card (of a cell or a pile) and its
        foundation wants it: each is noticed once, when the second of these happens."""
        need = self._needed(piles)
        at: dict[int, int] = {}  # top card -> its cell or pile
        for s in self.CT:
            sp = piles[s]
            if sp:
                at[sp[-1]] = s
        ready = [c for c in need if c in at]
        if not ready:
            return (), piles
        up = self.up
        lst = list(piles)
        moves: list[MoveLike] = []
        while ready:
            card = ready.pop()
            s = at.pop(card)
            f = need.pop(card)
            sp = lst[s][:-1]
            lst[s] = sp
            lst[f] += self.one[card]
            moves.append((MOVE, s, f, 1))
            if sp:
                top = sp[-1]
                at[top] = s
                if top in need:
                    ready.append(top)
            if card in self.base_cards:  # the next empty foundation takes base cards
                need = self._needed(tuple(lst))
                ready = [c for c in need if c in at]
                continue
            nxt = up[card]
            if nxt >= 0:
                need[nxt] = f
                if nxt in at:
                    ready.append(nxt)
        return tuple(moves), tuple(lst)

    # --- moves ---------------------------------------------------------------------------
    def _pile_info(self, pile: bytes) -> PileInfo:
        """(length of the suit run at the top, that run's bottom card, and per suit the
        least ``LAG_WEIGHT * relative rank + depth`` of its cards below the run, depth 1
        for the card just under it: with the foundations' wanted ranks it says how soon
        digging into the pile pays; then the part of a move into the cells' score that is the
        pile's own, the top card's relative rank and suit, and the one card that fits on
        the top card). Memoized: piles recur."""
        rel = self.rel
        n = len(pile)
        k = 1
        while k < n:
            upper, lower = pile[n - k], pile[n - k - 1]
            if upper >> 4 != lower >> 4 or rel[lower] - rel[upper] != 1:
                break
            k += 1
        below = n - k
        dig = [NO_DIG + 13 * LAG_WEIGHT] * 4
        for i in range(below):
            c = pile[i]
            v = LAG_WEIGHT * rel[c] + below - i
            if v < dig[c >> 4]:
                dig[c >> 4] = v
        top = pile[-1]
        # the parts of a move into the cells' score that need no foundation
        cell_score = CELL_SCORES + (k < n) + 2 * k if k > 1 else CELL_SCORES + (n > 1)
        info = (k, pile[below], dig[0], dig[1], dig[2], dig[3], cell_score, rel[top], top >> 4, self.down[top])
        if len(self._info) > 200_000:
            self._info.clear()
        self._info[pile] = info
        return info

    def _next_wanted(self, piles: Piles) -> list[int]:
        """Per suit, the relative rank its foundation takes next (13 when complete).
        An unstarted suit wants its base card: with four foundations for four suits, an
        empty foundation is always there for it."""
        rel = self.rel
        nxt = [0, 0, 0, 0]
        for f in self.F:
            fp = piles[f]
            if fp:
                c = fp[-1]
                nxt[c >> 4] = rel[c] + 1
        return nxt

    def candidates(self, piles: Piles, nxt: list[int]) -> list[tuple[int, tuple[MoveLike, ...]]]:
        """(score, engine moves) for every (macro) move worth trying; lower scores first
        (the two stages of :meth:`_tableau_candidates` and :meth:`_cell_candidates`)."""
        out, later = self._tableau_candidates(piles, nxt)
        out += self._cell_candidates(later, nxt)
        return out

    def _tableau_candidates(self, piles: Piles, nxt: list[int]) -> tuple[Scored, CellStage]:
        """The moves that need no cell: (score, engine moves) for each, and what
        :meth:`_cell_candidates` needs to list the moves into the cells (every one of
        which scores at least :data:`CELL_SCORES`).

        A card can only go onto the one tableau card that fits it (one deck), so only a
        run's bottom card (or a cell's card) can move onto another pile: every other card
        of a run already sits on the card that fits it.
        Whole-run games (``runs == "whole"``): a run moves only as a whole, onto the card
        that fits its bottom card, into an empty pile, or card by card into the cells
        (one macro move): splitting a run leaves its lower part with nothing that could
        ever go on it but the part just moved, so a split is never better than the whole.
        One-card games (``runs == "single"``): a run goes to the cells only as a whole
        (the same argument), and may move as a macro through the free cells (the cards
        go up one by one, the bottom card moves, the others come back), as a player
        would do it. Free-cell-limit games: every legal move, except that a run goes to
        the cells only as a whole (one macro move). (tests/solver/test_soundness.py checks these rules against
        the generic search, which tries every legal move, on random end games.)
        Order: cell cards onto the tableau, digging to a card a foundation takes next
        (the shallowest first), runs onto the tableau (those that empty a pile first),
        runs into a space, cell cards into a space, cards into cells (those that dig
        towards the cards the foundations want next first).
        """
        rel = self.rel
        runs = self.runs
        whole = runs == "whole"
        single = runs == "single"
        any_empty = self.any_empty
        free_cells: list[int] = []
        empty_pile = -1
        nempty = 0
        # movable units onto a tableau card: bottom card -> its pile or cell
        where: dict[int, int] = {}
        runlen: list[PileEntry] = []
        info_of = self._info.get
        for t in self.T:
            tp = piles[t]
            if not tp:
                nempty += 1
                if empty_pile < 0:
                    empty_pile = t
                continue
            info = info_of(tp) or self._pile_info(tp)
            runlen.append((t, info[0], tp, info))
            where[info[1]] = t
        for c in self.C:
            x = piles[c]
            if x:
                where[x[0]] = c
            else:
                free_cells.append(c)
        nfree = len(free_cells)
        lim_full, lim_empty = self.run_limits[nfree][nempty]
        out: Scored = []
        t0 = self.t0
        # onto a tableau card: only the one card that fits
        fits: set[int] = set()  # tableau piles whose top run fits on another pile's top
        for t, _, _, info in runlen:
            s = where.get(info[9], -1)
            if s < 0:
                continue
            fits.add(s)
            if s < t0:  # a cell
                out.append((0, ((MOVE, s, t, 1),)))
                continue
            if s == t:
                continue
            sp = piles[s]
            k = (info_of(sp) or self._pile_info(sp))[0]
            if k <= lim_full:
                out.append((11 if k < len(sp) else 10, ((MOVE, s, t, k),)))
            elif single and k - 1 <= nfree:
                out.append((21 if k < len(sp) else 20, self._via_cells(s, t, k, free_cells)))
        # dig to a card its foundation takes next: the cards above it into the cells, one
        # macro move (the card then goes home by itself); one card deep is an ordinary move
        if nfree > 1:
            for s, _, sp, _ in runlen:
                n = len(sp)
                for d in range(2, min(nfree, n - 1) + 1):
                    c = sp[n - 1 - d]
                    if rel[c] == nxt[c >> 4]:
                        out.append((5 + d, tuple([(MOVE, s, free_cells[i], 1) for i in range(d)])))
                        break
        # into the first empty pile
        if empty_pile >= 0:
            e = empty_pile
            for c in self.C:
                if piles[c]:
                    card = piles[c][0]
                    if any_empty or rel[card] == 12:
                        out.append((72 - rel[card], ((MOVE, c, e, 1),)))
            for s, r, sp, _ in runlen:
                n = len(sp)
                if r == n and (whole or not any_empty):
                    continue  # the whole pile: nothing changes
                if any_empty:
                    if whole:
                        # a King-like run settles for good in a space; others only park
                        out.append((31 if rel[sp[n - r]] == 12 else 45, ((MOVE, s, e, r),)))
                    else:
                        for k in range(min(r, lim_empty, n - 1), 0, -1):
                            out.append((41 + (r - k) * 3, ((MOVE, s, e, k),)))
                        if single and 1 < r < n and r - 1 <= nfree:
                            out.append((36, self._via_cells(s, e, r, free_cells)))
                elif rel[sp[n - r]] == 12:
                    if r <= lim_empty:
                        out.append((31, ((MOVE, s, e, r),)))
                    elif single and r - 1 <= nfree:
                        out.append((31, self._via_cells(s, e, r, free_cells)))
        return out, (runlen, free_cells, fits)

    def _cell_candidates(self, later: CellStage, nxt: list[int]) -> Scored:
        """Moves into the free cells (second stage: scores from :data:`CELL_SCORES` up)."""
        runlen, free_cells, fits = later
        nfree = len(free_cells)
        out: Scored = []
        if nfree:
            c0 = free_cells[0]
            n0, n1, n2, n3 = LAG_WEIGHT * nxt[0], LAG_WEIGHT * nxt[1], LAG_WEIGHT * nxt[2], LAG_WEIGHT * nxt[3]
            for s, r, _, (_, _, d0, d1, d2, d3, score, top_rel, suit, _) in runlen:
                if s in fits:
                    continue  # the cells' cards would go straight back onto that top
                # how soon digging into this pile reaches a card its foundation wants
                dig = min(d0 - n0, d1 - n1, d2 - n2, d3 - n3, NO_DIG) // 2
                if r > 1:
                    if r <= nfree:
                        moves = tuple([(MOVE, s, fc, 1) for fc in free_cells[:r]])
                        out.append((score + dig, moves))
                    continue
                out.append((score + (top_rel - nxt[suit]) // 3 + dig, ((MOVE, s, c0, 1),)))
        return out

    @staticmethod
    def _via_cells(s: int, t: int, k: int, free_cells: list[int]) -> tuple[MoveLike, ...]:
        """Move the top k cards of s onto t one at a time through k-1 free cells."""
        up = [(MOVE, s, free_cells[i], 1) for i in range(k - 1)]
        down = [(MOVE, free_cells[i], t, 1) for i in range(k - 2, -1, -1)]
        return (*up, (MOVE, s, t, 1), *down)

    def ordered_moves(self, state: State) -> list[Move]:
        piles = tuple(bytes(p) for p in state.piles)
        cand = self.candidates(piles, self._next_wanted(piles))
        cand.sort(key=FIRST)
        return [Move(*ms[0]) for _, ms in cand]

    def children(self, piles: Piles) -> Iterator[Child]:
        nxt = self._next_wanted(piles)
        cand, later = self._tableau_candidates(piles, nxt)
        cand.sort(key=FIRST)
        first = bisect_left(cand, CELL_SCORES, key=FIRST)  # the first that waits for the cells' moves
        wanted_tops: set[int] = set()  # parents of the cards in cells
        if len(later[1]) < self.ncells:
            up = self.up
            wanted_tops = {up[piles[c][0]] for c in self.C if piles[c]}
            wanted_tops.discard(-1)
        yield from self._build(piles, cand[:first], nxt, wanted_tops)
        # the moves into the cells are listed only once the others did not win
        rest = cand[first:] + self._cell_candidates(later, nxt)
        rest.sort(key=FIRST)
        yield from self._build(piles, rest, nxt, wanted_tops)

    def _build(self, piles: Piles, cand: Scored, nxt: list[int], wanted_tops: set[int]) -> Iterator[Child]:
        """The child of each candidate in turn, after its automatic moves."""
        rel = self.rel
        for _, moves in cand:
            lst = list(piles)
            if len(moves) == 1:
                _, src, dst, k = moves[0]
                sp = lst[src]
                lst[src] = sp = sp[:-k]
                lst[dst] += piles[src][-k:]
            else:
                for _, s, dst, k in moves:
                    sp = lst[s]
                    lst[s] = sp[:-k]
                    lst[dst] += sp[-k:]
                sp = lst[moves[0][1]]
            child = tuple(lst)
            # Only the card a move uncovers can have become wanted by a foundation (the
            # position it came from had every wanted top card played already), and only
            # the uncovered card or a card moved out of a cell can be a cell card's parent.
            if sp and rel[sp[-1]] == nxt[sp[-1] >> 4]:
                more, child = self.auto(child)
                yield moves + more, child
            elif wanted_tops and (
                len(moves) > 1 or (sp and sp[-1] in wanted_tops) or piles[moves[0][1]][-1] in wanted_tops
            ):
                more, child = self._join(child)
                yield moves + more, child
            else:
                yield moves, child
