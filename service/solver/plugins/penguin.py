"""Search strategy of the Penguin family (Penguin, Penguin II, Opus, Pelican, Penguin
with free-cell moves, and any other combination of the family's options).

The plug-in generates moves itself, from the engine's rules (``tableau_parent``,
``run_length``, ``run_limits``, the empty-pile and foundation rules) turned into tables
once per search, on search nodes that are tuples of ``bytes`` piles: slicing, joining and
hashing bytes is what makes keys and children cheap. Every move it makes is one the
engine lists (tests/solver/test_penguin_strategy.py replays children through the
engine; ``verify`` replays every solution).

The search core runs this strategy's passes compiled (``_penguin_native.c``, given the
tables built here) when the extension is built: the same positions in the same order
and the same moves as the Python methods below, which stay the reference
(tests/solver/test_penguin_native.py compares the two).

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
  whole, and in whole-run games moves only as a whole (see
  :meth:`PenguinStrategy._tableau_candidates`). The part left behind would have a top
  card that only the card just moved off it fits.
- **Cell cards join their parents.** A card in a cell whose tableau parent (same suit,
  one relative rank higher) is a top card goes onto it at once. The two positions reach
  each other in one move (any top card may go to a free cell, and the move frees one), so
  they are won or lost together; and the position with the card in the cell is a run
  split into the cells, which the moves below never need (a split is never better than
  the whole run). Consequently a card is never moved into a cell while it fits a top
  card: it would come straight back. Joining relies on the whole-run macro into the
  cells: without it some runs could not be parked card by card.
- **Digging macro.** The cards above a card its foundation takes next go into the
  cells in one macro move, when there are cells enough (as Freecell Solver's "put
  non-top stack cards in the foundations"). Its end is a position the single moves
  reach too; being one step, it is tried early and costs one position, not several.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Iterator
from operator import itemgetter
from typing import Any

from service.engine.cards import ALL_CARDS, CARD_SLOTS, SUIT_OF, make_card
from service.engine.core import Action, Move, State
from service.engine.penguin import DECK_SIZE, RUN_RULES, PenguinFamily

from ..search import Child, MoveLike, SearchPlan, Strategy

try:  # the compiled search (_penguin_native.c), built by `make`; the Python search otherwise
    from . import _penguin_native
except ImportError:  # pragma: no cover - a checkout nobody built (tests/solver/test_native_build.py fails then)
    _penguin_native = None  # type: ignore[assignment]

MOVE = int(Action.MOVE)
# The family's ``runs`` option as _penguin_native.c's codes: their order in RUN_RULES
# (the C file's RUNS_WHOLE, RUNS_SINGLE, RUNS_LIMIT).
RUNS_CODES = {rule: code for code, rule in enumerate(RUN_RULES)}
# Compiled searchers by (game, options, base rank), and how many are kept (option mixes
# a client sends are many, but each searcher is a few hundred bytes).
_SEARCHERS: dict[tuple[object, ...], Any] = {}
MAX_SEARCHERS = 1024
Piles = tuple[bytes, ...]
FIRST = itemgetter(0)


# What move generation needs of one tableau pile, memoized (piles recur): a plain tuple
# read through these named indexes. Not a NamedTuple: its attribute reads and its
# unpacking (which CPython 3.11 specializes only for plain tuples) made the search
# measurably slower.
PileInfo = tuple[int, int, int, int, int, int, int, int, int, int]
RUN = 0  # length of the suit run at the top
RUN_BOTTOM = 1  # that run's bottom card
# 2-5, per suit (C, D, H, S): the least ``LAG_WEIGHT * relative rank + depth`` of the
# suit's cards below the run (depth 1 for the card just under it): with the
# foundations' wanted ranks, how soon digging into the pile reaches a card they take
DIG_CLUBS, DIG_DIAMONDS, DIG_HEARTS, DIG_SPADES = 2, 3, 4, 5
CELL_SCORE = 6  # the pile's own part of the score of a move into the cells
TOP_REL = 7  # the top card's relative rank
TOP_SUIT = 8  # the top card's suit
FITS_TOP = 9  # the one card that goes on the top card (NO_CARD: none)


PileEntry = tuple[int, int, bytes, PileInfo]  # (pile index, top run length, the pile, its info)
Scored = list[tuple[int, tuple[MoveLike, ...]]]  # (score, engine moves): lower first
CellStage = tuple[list[PileEntry], list[int], set[int]]  # piles, free cells, sources that fit a top

NO_CARD = -2  # in ``down``: no card goes on this one
RANK_BELOW_BASE = 12  # relative rank of the rank just below the base

# Scores: the order candidates are tried in, lowest first. Each names a kind of move;
# where a kind adds to its score the comment says by what.
CELL_ONTO_PARENT = 0  # a cell's card onto its tableau parent
DIG = 5  # + the cards moved: the cards above a card its foundation takes next into the cells
RUN_ONTO_PARENT_EMPTYING = 10  # a pile's top run onto its parent, emptying the pile
RUN_ONTO_PARENT = 11  # the same, leaving cards behind
RUN_VIA_CELLS_EMPTYING = 20  # one-card games: a run onto its parent through the cells, emptying its pile
RUN_VIA_CELLS = 21  # the same, leaving cards behind
RUN_SETTLES_IN_SPACE = 31  # a run starting with the rank below the base into a space: it stays there
RUN_VIA_CELLS_INTO_SPACE = 36  # one-card games, any-card spaces: a run through the cells into a space
PART_RUN_INTO_SPACE = 41  # any-card spaces: the top k cards of a run into a space,
PER_CARD_LEFT = 3  # + this for each card of the run left behind (the longest part first)
RUN_PARKS_IN_SPACE = 45  # whole-run games, any-card spaces: another run into a space
# Every move into the cells scores at least this; every move that needs no cell and
# scores less is tried before any of them, without listing them.
INTO_CELLS = 70
# + 1 when the pile keeps cards, + PER_CELL_CARD per card when a whole run goes up
PER_CELL_CARD = 2
CELL_INTO_SPACE = 72  # minus its relative rank: a cell's card into a space, high ranks first
NO_DIG = 99  # a pile with no card below its top run: nothing to dig for
# How much a buried card's distance from its foundation's turn weighs against its
# depth in the pile when choosing which pile to dig into.
LAG_WEIGHT = 3


class PenguinStrategy(Strategy):
    """Depth-first search (best-first as a second look in one-card games) over
    ``bytes``-pile nodes, with the module's sound pruning: safe moves home and cell
    joins as automatic moves, the canonical key, and candidate moves generated in two
    stages (:meth:`_tableau_candidates`, then :meth:`_cell_candidates` only once the
    cheaper ones did not win), tried in the order of their scores."""

    heuristic = (
        "it prefers digging out a card a foundation takes next, then building on the "
        "tableau (moves that empty a pile first), then moves into a space; cards go into "
        "the cells last, those that dig towards the cards the foundations want next first"
    )
    #: The positions a second of budget buys, with the compiled passes (bench/positions-budget.md).
    positions_per_second = 250_000

    def __init__(self, game: PenguinFamily, root: State, native: bool = True) -> None:
        """``native``: run the compiled passes when they are built (False: the Python
        search, the reference they are tested against)."""
        super().__init__(game, root)
        base = game.base_rank(root)
        self.F = tuple(game.F)
        self.C = tuple(game.C)
        self.T = tuple(game.T)
        self.f0, self.f1 = game.F.start, game.F.stop
        self.c0, self.c1 = game.C.start, game.C.stop
        self.t0, self.t1 = game.T.start, game.T.stop
        assert self.c1 <= self.t0, "cells come before the tableau (a pile index below t0 is a cell)"
        self.runs = game.runs
        self.any_empty = game.any_empty
        # The engine's rules as tables indexed by card, for this search's base rank.
        # rel: relative rank (base = 0, the rank below it 12); -1 for non-cards.
        self.rel = [-1] * CARD_SLOTS
        for c in ALL_CARDS:
            self.rel[c] = game.relative_rank(c, base)
        # up: a card's tableau parent, which is also its foundation successor (-1: none)
        self.up = list(game.parent_table(base))
        # down: the card that goes on a card in the tableau (NO_CARD: none)
        self.down = [NO_CARD] * CARD_SLOTS
        for c in ALL_CARDS:
            if self.up[c] >= 0:
                self.down[self.up[c]] = c
        self.empty_takes = game.empty_pile_table(base)
        self.base_cards = tuple(make_card(base, suit) for suit in range(4))
        self.one = [bytes((c,)) for c in range(CARD_SLOTS)]  # each card as a one-card pile
        self.CT = self.C + self.T  # where a card may go home from
        self.ncells = len(self.C)
        # the engine's run limits by free cells and empty piles, once for all positions
        self.run_limits = [[game.run_limits(f, e) for e in range(len(self.T) + 1)] for f in range(len(self.C) + 1)]
        self.run_length = game.run_length
        self.base = base

        self._info: dict[bytes, PileInfo] = {}
        # A solution runs through a few dozen positions; a depth-first line far longer
        # is wandering, so depth-first search first tries lines of at most 100 positions.
        self.max_depth = 100
        # One card at a time makes deep dead ends common: after half the time, a
        # best-first search takes a second, different look.
        self.plan = SearchPlan.DEPTH_THEN_BEST_FIRST if game.runs == "single" else SearchPlan.DEPTH_FIRST
        if native and _penguin_native is not None:
            self.native = self._searcher()

    def _searcher(self) -> _penguin_native.Searcher:
        """The compiled passes for this game and base rank: made once, then shared (a
        Searcher holds only the tables, so searches in several threads may share one)."""
        key = (self.game.id, tuple(sorted(self.game.options.items())), self.base)
        searcher = _SEARCHERS.get(key)
        if searcher is None:
            if len(_SEARCHERS) >= MAX_SEARCHERS:
                _SEARCHERS.clear()
            searcher = _SEARCHERS[key] = self._compiled()
        return searcher

    def _compiled(self) -> _penguin_native.Searcher:
        """The compiled passes, given this search's tables (so no rule is restated in C)."""

        def table(values: list[int]) -> bytes:
            return bytes(v & 0xFF for v in values)  # -1 and NO_CARD read back as signed bytes

        return _penguin_native.Searcher(
            layout=(self.f0, self.c0, self.t0, self.ncells),
            rel=table(self.rel),
            up=table(self.up),
            down=table(self.down),
            empty_takes=bytes(map(bool, self.empty_takes)),
            base_cards=bytes(self.base_cards),
            run_limits=[v for by_empty in self.run_limits for pair in by_empty for v in pair],
            runs=RUNS_CODES[self.runs],
            any_empty=self.any_empty,
            move_action=MOVE,
        )

    # --- keys and safe moves ----------------------------------------------------------
    def start(self) -> Piles:
        return tuple(bytes(p) for p in self.root.piles)

    def key(self, p: Piles) -> Hashable:
        # A cell holds one card at most: sorting the cells sorts their cards.
        return b"\0".join(sorted(p[self.t0 : self.t1])) + b"\0\0" + b"".join(sorted(p[self.c0 : self.c1]))

    def score(self, p: Piles) -> float:
        """For best-first search: cards home, then free cells, spaces and built order."""
        home = sum(map(len, p[self.f0 : self.f1]))
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
        f0, f1, f2, f3 = self.F  # unpacked: a slice and sum() cost measurably per position
        return len(p[f0]) + len(p[f1]) + len(p[f2]) + len(p[f3]) == DECK_SIZE

    def _needed(self, piles: Piles) -> dict[int, int]:
        """card -> foundation that takes it now."""
        need: dict[int, int] = {}
        empty = -1
        started = 0
        up = self.up
        suit = SUIT_OF
        for f in self.F:
            fp = piles[f]
            if fp:
                started |= 1 << suit[fp[0]]
                nxt = up[fp[-1]]
                if nxt >= 0:
                    need[nxt] = f
            elif empty < 0:
                empty = f
        if empty >= 0:
            for c in self.base_cards:
                if not started >> suit[c] & 1:
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
        """The :data:`PileInfo` of a non-empty tableau pile (see its indexes), memoized."""
        rel = self.rel
        suit = SUIT_OF
        n = len(pile)
        k = self.run_length(pile, self.base)
        below = n - k
        dig = [NO_DIG + 13 * LAG_WEIGHT] * 4
        for i in range(below):
            c = pile[i]
            v = LAG_WEIGHT * rel[c] + below - i
            if v < dig[suit[c]]:
                dig[suit[c]] = v
        top = pile[-1]
        cell_score = INTO_CELLS + (k < n) + PER_CELL_CARD * k if k > 1 else INTO_CELLS + (n > 1)
        info = (k, pile[below], dig[0], dig[1], dig[2], dig[3], cell_score, rel[top], suit[top], self.down[top])
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
                nxt[SUIT_OF[c]] = rel[c] + 1
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
        which scores at least :data:`INTO_CELLS`).

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
        the cells only as a whole (one macro move). (tests/solver/test_soundness.py
        checks these rules against the generic search, which tries every legal move, on
        random end games.)
        Order (the score constants): cell cards onto the tableau, digging to a card a
        foundation takes next (the shallowest first), runs onto the tableau (those that
        empty a pile first), runs into a space, cell cards into a space, cards into cells
        (those that dig towards the cards the foundations want next first).
        """
        entries, unit_at, free_cells, empty_pile, nempty = self._survey(piles)
        lim_onto, lim_empty = self.run_limits[len(free_cells)][nempty]
        out: Scored = []
        fits = self._onto_tableau(piles, entries, unit_at, free_cells, lim_onto, out)
        if len(free_cells) > 1:  # one card deep is an ordinary move into a cell
            self._dig(entries, free_cells, nxt, out)
        if empty_pile >= 0:
            self._into_space(piles, entries, empty_pile, free_cells, lim_empty, out)
        return out, (entries, free_cells, fits)

    def _survey(self, piles: Piles) -> tuple[list[PileEntry], dict[int, int], list[int], int, int]:
        """The non-empty tableau piles with their info; the movable units (a pile's top
        run, a cell's card) by bottom card; the free cells; the first empty pile (-1:
        none) and the number of empty piles."""
        entries: list[PileEntry] = []
        unit_at: dict[int, int] = {}  # bottom card of a unit -> its pile or cell
        free_cells: list[int] = []
        empty_pile = -1
        nempty = 0
        info_of = self._info.get
        for t in self.T:
            tp = piles[t]
            if not tp:
                nempty += 1
                if empty_pile < 0:
                    empty_pile = t
                continue
            info = info_of(tp) or self._pile_info(tp)
            entries.append((t, info[RUN], tp, info))
            unit_at[info[RUN_BOTTOM]] = t
        for c in self.C:
            x = piles[c]
            if x:
                unit_at[x[0]] = c
            else:
                free_cells.append(c)
        return entries, unit_at, free_cells, empty_pile, nempty

    def _onto_tableau(
        self,
        piles: Piles,
        entries: list[PileEntry],
        unit_at: dict[int, int],
        free_cells: list[int],
        lim_onto: int,
        out: Scored,
    ) -> set[int]:
        """Add the moves onto a tableau card: for each top card, only the unit whose
        bottom card fits it (a pile's top run as a whole, or through the cells in
        one-card games). Returns the piles and cells whose unit fits some top."""
        single = self.runs == "single"
        nfree = len(free_cells)
        info_of = self._info.get
        t0 = self.t0
        fits: set[int] = set()
        for t, _, _, info in entries:
            s = unit_at.get(info[FITS_TOP], -1)
            if s < 0:
                continue
            fits.add(s)
            if s < t0:  # a cell
                out.append((CELL_ONTO_PARENT, ((MOVE, s, t, 1),)))
                continue
            if s == t:
                continue
            sp = piles[s]
            k = (info_of(sp) or self._pile_info(sp))[RUN]
            if k <= lim_onto:
                out.append((RUN_ONTO_PARENT if k < len(sp) else RUN_ONTO_PARENT_EMPTYING, ((MOVE, s, t, k),)))
            elif single and k - 1 <= nfree:
                out.append((RUN_VIA_CELLS if k < len(sp) else RUN_VIA_CELLS_EMPTYING, self._via_cells(s, t, k, free_cells)))
        return fits

    def _dig(self, entries: list[PileEntry], free_cells: list[int], nxt: list[int], out: Scored) -> None:
        """Add, per pile, the macro move that puts the cards above the shallowest card
        its foundation takes next into the cells (the card then goes home by itself)."""
        rel = self.rel
        suit = SUIT_OF
        nfree = len(free_cells)
        for s, _, sp, _ in entries:
            n = len(sp)
            for d in range(2, min(nfree, n - 1) + 1):
                c = sp[n - 1 - d]
                if rel[c] == nxt[suit[c]]:
                    out.append((DIG + d, tuple([(MOVE, s, free_cells[i], 1) for i in range(d)])))
                    break

    def _into_space(
        self,
        piles: Piles,
        entries: list[PileEntry],
        space: int,
        free_cells: list[int],
        lim_empty: int,
        out: Scored,
    ) -> None:
        """Add the moves into the first empty pile ``space``: the cells' cards it takes,
        and the runs (whole-run games: whole; otherwise each length the limit allows,
        or through the cells in one-card games)."""
        rel = self.rel
        empty_takes = self.empty_takes
        whole = self.runs == "whole"
        single = self.runs == "single"
        any_empty = self.any_empty
        nfree = len(free_cells)
        for c in self.C:
            if piles[c]:
                card = piles[c][0]
                if empty_takes[card]:
                    out.append((CELL_INTO_SPACE - rel[card], ((MOVE, c, space, 1),)))
        for s, r, sp, _ in entries:
            n = len(sp)
            if r == n and (whole or not any_empty):
                continue  # the whole pile: nothing changes
            if any_empty:
                if whole:
                    # a run starting with the rank below the base settles for good in a space
                    settles = rel[sp[n - r]] == RANK_BELOW_BASE
                    out.append((RUN_SETTLES_IN_SPACE if settles else RUN_PARKS_IN_SPACE, ((MOVE, s, space, r),)))
                else:
                    for k in range(min(r, lim_empty, n - 1), 0, -1):
                        out.append((PART_RUN_INTO_SPACE + (r - k) * PER_CARD_LEFT, ((MOVE, s, space, k),)))
                    if single and 1 < r < n and r - 1 <= nfree:
                        out.append((RUN_VIA_CELLS_INTO_SPACE, self._via_cells(s, space, r, free_cells)))
            elif empty_takes[sp[n - r]]:  # only a whole run can start with that rank
                if r <= lim_empty:
                    out.append((RUN_SETTLES_IN_SPACE, ((MOVE, s, space, r),)))
                elif single and r - 1 <= nfree:
                    out.append((RUN_SETTLES_IN_SPACE, self._via_cells(s, space, r, free_cells)))

    def _cell_candidates(self, later: CellStage, nxt: list[int]) -> Scored:
        """Moves into the free cells (second stage: scores from :data:`INTO_CELLS` up):
        a pile's whole top run, or its top card; those whose pile hides a card the
        foundations want soon, and whose top card they want soon, first."""
        entries, free_cells, fits = later
        nfree = len(free_cells)
        out: Scored = []
        if nfree:
            c0 = free_cells[0]
            n0, n1, n2, n3 = LAG_WEIGHT * nxt[0], LAG_WEIGHT * nxt[1], LAG_WEIGHT * nxt[2], LAG_WEIGHT * nxt[3]
            # the info unpacked in its index order: DIG_CLUBS..DIG_SPADES, CELL_SCORE, TOP_REL, TOP_SUIT
            for s, r, _, (_, _, d0, d1, d2, d3, score, top_rel, suit, _) in entries:
                if s in fits:
                    continue  # the cells' cards would go straight back onto that top
                # how soon digging into this pile reaches a card its foundation wants
                dig = min(d0 - n0, d1 - n1, d2 - n2, d3 - n3, NO_DIG) // 2
                if r > 1:
                    if r <= nfree:
                        moves = tuple([(MOVE, s, fc, 1) for fc in free_cells[:r]])
                        out.append((score + dig, moves))
                    continue
                # and how far the top card is from its foundation's turn
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
        first = bisect_left(cand, INTO_CELLS, key=FIRST)  # the first that waits for the cells' moves
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
        suit = SUIT_OF
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
            if sp and rel[sp[-1]] == nxt[suit[sp[-1]]]:
                more, child = self.auto(child)
                yield moves + more, child
            elif wanted_tops and (
                len(moves) > 1 or (sp and sp[-1] in wanted_tops) or piles[moves[0][1]][-1] in wanted_tops
            ):
                more, child = self._join(child)
                yield moves + more, child
            else:
                yield moves, child
