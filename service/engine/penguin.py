"""The Penguin family: Penguin, Penguin II, Opus, Pelican, Penguin with free-cell moves.

One engine with five knobs (docs/rules.md, "The Penguin family"); the named games are
presets and a client may ask for any other valid combination of the options:

- ``cells``: how many cells (0-10).
- ``foundation_base``: ``"beak"`` (the beak's rank starts the foundations, wrapping
  King to Ace) or ``"ace"``.
- ``runs``: ``"whole"`` (a suit run of any length moves as one), ``"single"`` (one
  card at a time) or ``"free-cell-limit"`` (at most ``(free cells + 1) * 2^(empty
  piles)`` cards, the destination not counted).
- ``empty_pile``: ``"below-base"`` (an empty tableau pile takes only the rank below
  the base, or a run starting with it) or ``"any"``.
- ``deal``: ``"beak"`` (beak + 7x7, three base cards to the foundations) or
  ``"pelican"`` (8,8,8,7,7,7,7); ``"beak"`` goes with ``foundation_base="beak"`` and
  ``"pelican"`` with ``"ace"``.

Ranks are handled as *relative* ranks: ``(rank - base) % 13``, so the base card is 0
and the rank below it 12; building down in suit means relative rank minus one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, ClassVar

from .cards import (
    ACE,
    ALL_CARDS,
    ALL_RANKS,
    CARD_SLOTS,
    NEXT_IN_SUIT,
    RANK_OF,
    Card,
    card_name,
    full_suit_deck,
    next_in_suit,
    rank_below,
    rank_name,
    rank_of,
)
from .core import (
    Action,
    Event,
    EventKind,
    Game,
    Move,
    OptionSpec,
    Pile,
    PileGroup,
    Problem,
    Rejection,
    RulesError,
    State,
)
from .shuffle import pysol_shuffle

try:  # the compiled legal moves (_penguin_moves_native.c), built by `make`; the Python ones otherwise
    from . import _penguin_moves_native
except ImportError:  # pragma: no cover - a checkout nobody built (tests/solver/test_native_build.py fails then)
    _penguin_moves_native = None  # type: ignore[assignment]

TABLEAU_PILES = 7
FOUNDATIONS = 4
DECK_SIZE = 52
BASE_CARDS_DEALT = 3  # the beak deal's base cards, on the first three foundations
# The ``runs`` option's values: whole runs, one card at a time, the free-cell limit.
RUN_RULES = ("whole", "single", "free-cell-limit")
# Looked up once: an enum member is reached through a Python-level descriptor.
MOVE_ACTION = Action.MOVE
MOVE_EVENT = EventKind.MOVE


def _suit_run(card: Card) -> Pile:
    """The 13 cards a foundation holds when it starts with ``card``: up in its suit by one,
    King wrapping to Ace."""
    run = [card]
    while len(run) < 13:
        run.append(NEXT_IN_SUIT[run[-1]])
    return tuple(run)


# Each card's suit run: a foundation that is a prefix of its first card's run is in order,
# checked in one comparison (:meth:`PenguinFamily.validate_piles`).
SUIT_RUNS: dict[Card, Pile] = {card: _suit_run(card) for card in ALL_CARDS}


def _picker(indices: list[int]) -> Callable[[Sequence[Move]], Sequence[Move]]:
    """What picks the items at ``indices`` (in their order) out of a row, as a tuple, in
    C: ``itemgetter`` of the indices, or of a slice for one index or none."""
    if len(indices) > 1:
        return itemgetter(*indices)
    first = indices[0] if indices else 0
    return itemgetter(slice(first, first + len(indices)))


class PenguinFamily(Game):
    """One engine for every Penguin-shaped game; subclasses only choose defaults.

    The move rule is stated once: :meth:`why_illegal` and the parts it reads
    (:meth:`tableau_parent`, :meth:`foundation_takes`, :meth:`empty_pile_takes`,
    :meth:`run_length`, :meth:`run_limit`). :meth:`is_legal` is that rule as a yes or
    no; :meth:`legal_moves` is its fast path (:meth:`python_legal_moves`, compiled in
    ``_penguin_moves_native.c`` when built), reading the same parts as tables, and a test
    checks it against the rule move by move."""

    defaults: ClassVar[dict[str, Any]]
    autoplay_rule = (
        "every card that is the next card of its foundation (one deck, building in suit: "
        "only the same suit's lower card could ever need it, and that is already home)"
    )

    @classmethod
    def option_specs(cls) -> tuple[OptionSpec, ...]:
        d = cls.defaults
        return (
            OptionSpec("cells", "number of cells", d["cells"], minimum=0, maximum=10),
            OptionSpec(
                "foundation_base",
                "rank that starts each foundation: the beak's rank (wrapping King to Ace) or Ace",
                d["foundation_base"],
                choices=("beak", "ace"),
            ),
            OptionSpec(
                "runs",
                "how tableau runs move: whole suit runs as one unit, one card at a time, or "
                "as many as free cells and empty piles allow",
                d["runs"],
                choices=RUN_RULES,
            ),
            OptionSpec(
                "empty_pile",
                "what an empty tableau pile takes: only the rank just below the base (or a run "
                "starting with it), or any card or run",
                d["empty_pile"],
                choices=("below-base", "any"),
            ),
            OptionSpec(
                "deal",
                "the deal: beak + 7x7 with three base cards on the foundations (needs "
                "foundation_base 'beak'), or 8,8,8,7,7,7,7 (needs foundation_base 'ace')",
                d["deal"],
                choices=("beak", "pelican"),
            ),
        )

    def __post_init__(self) -> None:
        opts = {**self.defaults, **self.options}
        if (opts["deal"] == "beak") != (opts["foundation_base"] == "beak"):
            raise RulesError(
                "the 'beak' deal goes with foundation_base 'beak' and the 'pelican' deal "
                "with foundation_base 'ace'",
                "options/deal",
            )
        self.options = opts
        self.ncells: int = opts["cells"]
        self.beak: bool = opts["foundation_base"] == "beak"
        self.runs: str = opts["runs"]
        self.any_empty: bool = opts["empty_pile"] == "any"
        super().__post_init__()
        self.F = self.group_range("foundation")
        self.T = self.group_range("tableau")
        self.C = range(self.F.stop, self.T.start)  # the cells, between the two (maybe none)
        self._base_foundations = slice(self.F.start, self.F.start + BASE_CARDS_DEALT)  # what the beak deal starts
        self._foundation_slice = slice(self.F.start, self.F.stop)
        # Every foundation validate_piles finds nothing wrong with, by base rank: empty, or a
        # prefix of a base-rank card's suit run (all four checked in one pass, the common case).
        self._foundations_in_order: dict[int, frozenset[Pile]] = {
            base: frozenset(
                [(), *(SUIT_RUNS[c][:k] for c in ALL_CARDS if RANK_OF[c] == base for k in range(1, 14))]
            )
            for base in ALL_RANKS
        }
        self.max_dealt = 7 if self.beak else 8
        self._card_tables()
        # run_limits of every count of free cells and empty piles: legal_moves looks them up.
        self._run_limits: tuple[tuple[tuple[int, int], ...], ...] = tuple(
            tuple(self.run_limits(free, empty) for empty in range(len(self.T) + 1)) for free in range(len(self.C) + 1)
        )
        # Every one-card move, built once: ``legal_moves`` looks them up (moves are tuples,
        # equal by value, so a shared one is the same move).
        piles = range(len(self.pile_refs))
        self._one_card_moves: tuple[tuple[Move, ...], ...] = tuple(
            tuple(Move(Action.MOVE, src, dst, 1) for dst in piles) for src in piles
        )
        # legal_moves: the compiled lister reading these same tables when it is built.
        self._list_moves: Callable[[State], list[Move]] = self._move_lister()

    def __getstate__(self) -> dict[str, Any]:
        """What pickles (a game travels to the solver's processes): all but the compiled
        lister, which :meth:`__setstate__` makes again."""
        state = dict(self.__dict__)
        del state["_list_moves"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._list_moves = self._move_lister()

    def _move_lister(self) -> Callable[[State], list[Move]]:
        """What :meth:`legal_moves` calls: the compiled :meth:`python_legal_moves` when
        ``_penguin_moves_native`` is built, given this game's tables (the rule parts as
        :meth:`_card_tables` and the run limits state them) and its one-card moves; the
        Python function otherwise."""
        if _penguin_moves_native is None:
            return self.python_legal_moves
        return _penguin_moves_native.MoveLister(
            foundations=(self.F.start, len(self.F)),
            cells=(self.C.start, len(self.C)),
            tableau=(self.T.start, len(self.T)),
            beak=self.beak,
            ace=ACE,
            rank_of=RANK_OF,
            next_in_suit=NEXT_IN_SUIT,
            parents=self._parents,
            children=self._children,
            empty_takes=self._empty_takes,
            run_limits=self._run_limits,
            state_type=State,
            one_card_moves=self._one_card_moves,
            move_type=Move,
            move_action=MOVE_ACTION,
            fallback=self.python_legal_moves,
        ).legal_moves

    def make_groups(self) -> tuple[PileGroup, ...]:
        groups = [
            PileGroup(
                "foundation", FOUNDATIONS, 0, 0, description="builds up in suit from the base rank"
            ),
        ]
        if self.ncells:
            groups.append(
                PileGroup("cell", self.ncells, 1, 0, capacity=1, description="one card each")
            )
        groups.append(
            PileGroup(
                "tableau", TABLEAU_PILES, 2, 0, fan="down", description="builds down in suit"
            )
        )
        return tuple(groups)

    def deck(self) -> tuple[Card, ...]:
        return full_suit_deck(ALL_RANKS)

    # --- ranks -------------------------------------------------------------------
    def base_rank(self, state: State) -> int:
        """The foundations' base rank: the beak's rank (the first foundation's bottom
        card, which never moves) or Ace."""
        if self.beak:
            f0 = state.piles[self.F.start]
            return rank_of(f0[0]) if f0 else ACE
        return ACE

    # --- the deal ------------------------------------------------------------------
    def deal_state(self, deal: int) -> State:
        talon = pysol_shuffle(self.deck(), deal)
        piles: list[list[Card]] = [[] for _ in self.pile_refs]
        tab = list(self.T)
        if self.beak:
            # PySolFC's hook puts the four cards of the first card's rank on top of the
            # talon in their shuffled order; the first three dealt go to foundations
            # 0-2 and the deepest of the four is the beak (docs/pysolfc-deals.md).
            beak_rank = rank_of(talon[-1])
            same = [c for c in talon if rank_of(c) == beak_rank]
            rest = [c for c in talon if rank_of(c) != beak_rank]
            talon = rest + same
            for f in self.F[:BASE_CARDS_DEALT]:
                piles[f].append(talon.pop())
            piles[tab[0]].append(talon.pop())  # the beak
            for i in range(1, TABLEAU_PILES):
                piles[tab[i]].append(talon.pop())
            for _row in range(6):
                for t in tab:
                    piles[t].append(talon.pop())
        else:
            sizes = (8, 8, 8, 7, 7, 7, 7)
            for row in range(8):
                for i, t in enumerate(tab):
                    if row < sizes[i]:
                        piles[t].append(talon.pop())
        assert not talon
        return State(tuple(tuple(p) for p in piles), (), deal)

    # --- the move rule, each part stated once -------------------------------------
    # legal_moves (the fast path), is_legal, why_illegal, autoplay and the solver's
    # plug-in all read these; tests/rules/test_penguin_move_rule.py checks the fast paths
    # against why_illegal on every (source, destination, count) of many positions.
    @staticmethod
    def relative_rank(card: Card, base: int) -> int:
        """0 for the base rank, 12 for the rank just below it: the order the family builds in."""
        return (rank_of(card) - base) % 13

    @staticmethod
    def tableau_parent(card: Card, base: int) -> Card | None:
        """The one tableau card ``card`` may go on: the same suit, one relative rank
        higher. None for the rank just below the base: its parent would be a base-rank
        card, and nothing is built on one."""
        return None if rank_of(card) == rank_below(base) else next_in_suit(card)

    @staticmethod
    def foundation_wants(pile: Sequence[Card]) -> Card | None:
        """The card a started foundation takes next; None once it holds all 13."""
        return next_in_suit(pile[-1]) if len(pile) < 13 else None

    def foundation_takes(self, pile: Sequence[Card], card: Card, base: int) -> bool:
        """An empty foundation takes a base-rank card, a started one its next card."""
        return rank_of(card) == base if not pile else card == self.foundation_wants(pile)

    def empty_pile_takes(self, card: Card, base: int) -> bool:
        """Whether an empty tableau pile takes ``card`` as the bottom card of what moves."""
        return self.any_empty or rank_of(card) == rank_below(base)

    def run_length(self, pile: Sequence[Card], base: int) -> int:
        """How many cards at the top of a (non-empty) pile form a run, each on its
        tableau parent: only a run moves as a unit."""
        parent = self._parents[base]
        n = len(pile)
        k = 1
        while k < n and parent[pile[n - k]] == pile[n - k - 1]:
            k += 1
        return k

    def run_limit(self, free_cells: int, empty_piles: int, into_empty: bool) -> int:
        """The most cards one move may carry (option ``runs``). The free-cell limit is
        what could move one card at a time through the free cells and empty piles; an
        empty destination is not one of them."""
        if self.runs == "single":
            return 1
        if self.runs == "whole":
            return DECK_SIZE
        return (free_cells + 1) << max(empty_piles - into_empty, 0)

    def run_limits(self, free_cells: int, empty_piles: int) -> tuple[int, int]:
        """:meth:`run_limit` onto a tableau card and into an empty pile."""
        return self.run_limit(free_cells, empty_piles, False), self.run_limit(free_cells, empty_piles, True)

    def _card_tables(self) -> None:
        """The rules that depend on the base rank as tables indexed by card, one per base
        rank: the inner loops (:meth:`legal_moves`, :meth:`run_length`, the solver's
        plug-in) look a card up instead of calling the rule. -1 / False for non-cards."""
        cards = range(CARD_SLOTS)
        self._parents: dict[int, tuple[int, ...]] = {}
        self._empty_takes: dict[int, tuple[bool, ...]] = {}
        self._children: dict[int, tuple[int, ...]] = {}  # the parents' inverse: the card whose parent a card is, or -1
        for base in ALL_RANKS:
            parents = [self.tableau_parent(c, base) if RANK_OF[c] > 0 else None for c in cards]
            self._parents[base] = tuple(-1 if p is None else p for p in parents)
            self._empty_takes[base] = tuple(RANK_OF[c] > 0 and self.empty_pile_takes(c, base) for c in cards)
            children = [-1] * CARD_SLOTS
            for c, p in enumerate(self._parents[base]):
                if p >= 0:
                    children[p] = c
            self._children[base] = tuple(children)

    def parent_table(self, base: int) -> tuple[int, ...]:
        """:meth:`tableau_parent` of every card (-1 for none), indexed by card."""
        return self._parents[base]

    def empty_pile_table(self, base: int) -> tuple[bool, ...]:
        """:meth:`empty_pile_takes` of every card, indexed by card."""
        return self._empty_takes[base]

    def is_legal(self, state: State, move: Move) -> bool:
        """:meth:`why_illegal` as a yes or no, after the checks every game shares. With the
        compiled lister built, ``move in legal_moves(state)`` (the same answer, a test checks
        it on every move of many positions): listing in C costs less than the rule's checks
        in Python."""
        if _penguin_moves_native is not None:
            return move in self._list_moves(state)
        if move.action != MOVE_ACTION:
            return False
        n = len(state.piles)
        s, d, k = move.src, move.dst, move.count
        if not (0 <= s < n and 0 <= d < n) or s == d or not 1 <= k <= len(state.piles[s]):
            return False
        return self.why_illegal(state, move) is None

    def why_illegal(self, state: State, move: Move) -> Rejection | None:
        """The family's move rule: None when ``move`` is legal, else the rule it breaks
        (the checks every game shares passed: both piles exist and differ, the source
        holds ``move.count`` cards)."""
        base = self.base_rank(state)
        src_group, dst_group = self.group_of[move.src], self.group_of[move.dst]
        if src_group == "foundation":
            return Rejection("foundation-cards-stay", "a card on a foundation never moves again")
        card = state.piles[move.src][-move.count]  # the bottom card of what moves
        dst = state.piles[move.dst]
        if dst_group == "foundation":
            return self._foundation_refusal(dst, card, move.count, base)
        if dst_group == "cell":
            return self._cell_refusal(move, src_group, dst)
        return self._tableau_refusal(state, move, src_group, base)

    def _foundation_refusal(self, pile: Pile, card: Card, count: int, base: int) -> Rejection | None:
        if count != 1:
            return Rejection("foundation-one-card", "cards go to a foundation one at a time")
        if self.foundation_takes(pile, card, base):
            return None
        if not pile:
            return Rejection(
                "foundation-base",
                f"an empty foundation takes only a {rank_name(base)}, not the {card_name(card)}",
            )
        return Rejection(
            "foundation-builds-up-in-suit",
            f"foundations build up in suit by one: the {card_name(card)} does not go on "
            f"the {card_name(pile[-1])}",
        )

    def _cell_refusal(self, move: Move, src_group: str, cell: Pile) -> Rejection | None:
        if src_group == "cell":
            return Rejection("cell-to-cell", "a card never moves from one cell to another")
        if move.count != 1:
            return Rejection("cell-one-card", "a cell holds one card: move one card at a time")
        if cell:
            return Rejection("cell-occupied", f"{self.ref(move.dst)} already holds a card")
        return None

    def _tableau_refusal(self, state: State, move: Move, src_group: str, base: int) -> Rejection | None:
        piles = state.piles
        sp, tp = piles[move.src], piles[move.dst]
        card = sp[-move.count]
        if move.count > 1:
            if move.count > self.run_length(sp, base):
                return Rejection(
                    "run-not-in-suit",
                    f"only a run (same suit, descending by one) moves as a unit; the top "
                    f"{move.count} cards of {self.ref(move.src)} are not one",
                )
            if self.runs == "single":
                return Rejection("one-card-at-a-time", f"in {self.name} only one card moves at a time")
            free = sum(1 for c in self.C if not piles[c])
            empty = sum(1 for t in self.T if not piles[t])
            limit = self.run_limit(free, empty, not tp)
            if move.count > limit:
                return Rejection(
                    "run-too-long",
                    f"with {free} free cell(s) and {empty} empty pile(s) at most {limit} card(s) "
                    f"can move to {self.ref(move.dst)}",
                )
        if tp:
            if tp[-1] == self.tableau_parent(card, base):
                return None
            return Rejection(
                "tableau-builds-down-in-suit",
                f"the tableau builds down in suit by one: the {card_name(card)} does not go on "
                f"the {card_name(tp[-1])}",
            )
        if not self.empty_pile_takes(card, base):
            return Rejection(
                "empty-pile-takes-below-base",
                f"an empty tableau pile takes only a {rank_name(rank_below(base))} "
                f"(or a run starting with one), not the {card_name(card)}",
            )
        if src_group == "tableau" and move.count == len(sp):
            return Rejection("pointless-move", "moving a whole pile into an empty pile changes nothing")
        return None

    def _foundation_targets(self, piles: tuple[Pile, ...], card: Card, base: int) -> list[int]:
        return [f for f in self.F if self.foundation_takes(piles[f], card, base)]

    def legal_moves(self, state: State) -> list[Move]:
        """Every legal move, each target separately: :meth:`python_legal_moves`, compiled
        when ``_penguin_moves_native`` is built (the same list, the same Move objects, in the
        same order; tests/rules/test_penguin_round6.py compares the two)."""
        return self._list_moves(state)

    def python_legal_moves(self, state: State) -> list[Move]:
        """Every legal move, each target separately: the fast path of
        :meth:`why_illegal`, with the same rules, and the reference of the compiled lister.

        One deck: every card is unique, so a card's foundation (the one whose next card
        it is) and its tableau target (the pile whose top card takes it: its parent, by
        the parents' inverse) are found by dictionary lookups instead of pairing piles.
        One-card moves are looked up (those to every free cell, or every empty pile,
        picked by one ``itemgetter`` when there are several); :meth:`run_length` is
        inlined, each card of the run looked up as the run grows. No comprehension or
        generator: one would make the locals it reads closure cells, slower everywhere.
        """
        piles = state.piles
        base = self.base_rank(state)
        parent = self._parents[base]
        empty_takes = self._empty_takes[base]
        # The next card of each started foundation (-> that foundation), the empty ones.
        home: dict[Card, int] = {}
        open_foundations: list[int] = []
        for f in self.F:
            fp = piles[f]
            if not fp:
                open_foundations.append(f)
            elif len(fp) < 13:  # foundation_wants, looked up
                home[NEXT_IN_SUIT[fp[-1]]] = f
        # The card each tableau pile's top card takes (-> that pile; -1 for a top card that
        # takes none), the empty piles.
        child = self._children[base]
        onto_pile: dict[Card, int] = {}
        empty: list[int] = []
        for t in self.T:
            tp = piles[t]
            if tp:
                onto_pile[child[tp[-1]]] = t
            else:
                empty.append(t)
        # The one-card moves from a source's row of `one` to every empty pile, every free cell.
        to_empty = _picker(empty)
        one = self._one_card_moves
        MOVE = MOVE_ACTION
        moves: list[Move] = []

        # Cells: to a foundation or the tableau, never to another cell.
        free: list[int] = []
        for c in self.C:
            if not piles[c]:
                free.append(c)
                continue
            card = piles[c][0]
            if (
                card not in home
                and card not in onto_pile
                and not (open_foundations and RANK_OF[card] == base)
                and not (empty and empty_takes[card])
            ):
                continue  # nowhere to go (the common case), found without a lookup call
            from_c = one[c]
            if card in home:
                moves.append(from_c[home[card]])
            elif RANK_OF[card] == base:  # an empty foundation takes a base-rank card
                for f in open_foundations:
                    moves.append(from_c[f])
            if card in onto_pile:
                moves.append(from_c[onto_pile[card]])
            if empty and empty_takes[card]:
                moves.extend(to_empty(from_c))
        to_free = _picker(free)
        limit_onto, limit_empty = self._run_limits[len(free)][len(empty)]
        for s in self.T:
            sp = piles[s]
            if not sp:
                continue
            n = len(sp)
            from_s = one[s]
            card = sp[-1]
            if card in home:
                moves.append(from_s[home[card]])
            elif open_foundations and RANK_OF[card] == base:
                for f in open_foundations:
                    moves.append(from_s[f])
            if free:
                moves.extend(to_free(from_s))
            if card in onto_pile and onto_pile[card] != s:
                moves.append(from_s[onto_pile[card]])
            # The run (run_length(sp, base), at most limit_onto cards), each card of it onto
            # the pile whose top takes it, looked up as the run grows.
            run = 1
            while run < limit_onto and run < n and parent[sp[n - run]] == sp[n - run - 1]:
                run += 1
                bottom = sp[n - run]
                if bottom in onto_pile and onto_pile[bottom] != s:
                    moves.append(Move(MOVE, s, onto_pile[bottom], run))
            if empty:
                # k == n would move a whole pile into an empty one: it changes nothing (and
                # limit_empty <= limit_onto: the run as far as limit_onto is long enough)
                for k in range(1, min(run, limit_empty, n - 1) + 1):
                    if not empty_takes[sp[n - k]]:
                        continue
                    if k == 1:
                        moves.extend(to_empty(from_s))
                    else:
                        for t in empty:
                            moves.append(Move(MOVE, s, t, k))
        return moves

    def _apply(self, state: State, move: Move, events: list[Event] | None) -> State:
        _, src, dst, count = move  # (one unpacking: each field by name goes through a descriptor)
        new = self.move_cards(state, src, dst, count)
        if events is not None:
            events.append(Event(MOVE_EVENT, src, dst, state.piles[src][-count:]))
        return new

    def is_won(self, state: State) -> bool:
        return sum(map(len, state.piles[self.F.start : self.F.stop])) == DECK_SIZE

    def autoplay_move(self, state: State) -> Move | None:
        base = self.base_rank(state)
        for s in (*self.C, *self.T):
            sp = state.piles[s]
            if sp:
                targets = self._foundation_targets(state.piles, sp[-1], base)
                if targets:
                    return Move(MOVE_ACTION, s, targets[0], 1)
        return None

    # --- validation --------------------------------------------------------------
    def _foundation_problems(self, piles: tuple[Pile, ...], base: int) -> list[Problem]:
        """What is wrong with the foundations: each must start with a base-rank card and
        build up in suit from it."""
        problems: list[Problem] = []
        for f in self.F:
            fp = piles[f]
            if not fp:
                continue
            if rank_of(fp[0]) != base:
                problems.append(
                    Problem(self.pointer(f, 0), f"a foundation starts with a {rank_name(base)}")
                )
                continue
            run = SUIT_RUNS.get(fp[0])
            if run is not None and fp == run[:len(fp)]:
                continue  # in order: no card to point at
            for i in range(1, len(fp)):
                if fp[i] != next_in_suit(fp[i - 1]):
                    problems.append(
                        Problem(self.pointer(f, i), "foundations build up in suit by one")
                    )
                    break
        return problems

    def validate_piles(self, state: State) -> list[Problem]:
        problems: list[Problem] = []
        piles = state.piles
        if self.beak and not all(piles[self._base_foundations]):  # (all there: the common case, in one pass)
            for f in self.F[:BASE_CARDS_DEALT]:
                if not piles[f]:
                    problems.append(
                        Problem(
                            self.pointer(f),
                            "foundations 0-2 receive a base card in the deal and never lose it",
                        )
                    )
            if problems:
                return problems
        base = self.base_rank(state)
        in_order = self._foundations_in_order.get(base, frozenset())  # (none for a base no card has)
        if not all(map(in_order.__contains__, piles[self._foundation_slice])):
            problems.extend(self._foundation_problems(piles, base))  # (else all in order: the common case)
        limit = self.max_dealt + 12
        for t in self.T:
            if len(piles[t]) > limit:
                problems.append(
                    Problem(
                        self.pointer(t),
                        f"a tableau pile can hold at most {limit} cards "
                        f"({self.max_dealt} dealt plus a run of 12 built on them)",
                    )
                )
        return problems


PENGUIN_RULES = """
One deck. The first card of the deal is the beak: it goes to the bottom of tableau
pile 0; the other three cards of its rank go to foundations 0-2 and 49 cards fill the 7
tableau piles (7 each). Foundations build up in suit from the beak's rank, wrapping
from King to Ace (13 cards each); an empty foundation takes only a card of the base
rank. Each of the cells holds one card; any available card may go to an empty cell,
and a cell's card may go to the tableau or a foundation, never to another cell. The
tableau builds down in suit by one relative rank (ranks counted from the base: nothing
is built on a base-rank card).{runs} {empty} Moving a whole pile into an empty pile is
not a move (it changes nothing). Won when all 52 cards are on the foundations; lost
when no move is left.
"""

RUNS_TEXT = {
    "whole": " A run (same suit, descending by one, up to the top) moves as one unit, "
    "whatever its length, and any upper part of it may move alone.",
    "single": " Only one card moves at a time.",
    "free-cell-limit": " A run moves as a unit only if it could move one card at a time "
    "through the free cells and empty piles: at most (free cells + 1) * 2^(empty piles) "
    "cards, the destination not counted when it is empty.",
}
EMPTY_TEXT = {
    "below-base": "An empty tableau pile takes only a card of the rank just below the base "
    "(or a run starting with one).",
    "any": "An empty tableau pile takes any card or run.",
}


def _rules(runs: str, empty: str, intro: str = PENGUIN_RULES) -> str:
    return intro.format(runs=RUNS_TEXT[runs], empty=EMPTY_TEXT[empty])


class Penguin(PenguinFamily):
    id = "penguin"
    name = "Penguin"
    summary = "David Parlett's Penguin: one deck, 7 cells, the beak sets the base rank."
    defaults = {"cells": 7, "foundation_base": "beak", "runs": "whole",
                "empty_pile": "below-base", "deal": "beak"}
    rules_text = _rules("whole", "below-base")


class PenguinII(PenguinFamily):
    id = "penguin-ii"
    name = "Penguin II"
    summary = "Penguin where only one card moves at a time."
    defaults = {**Penguin.defaults, "runs": "single"}
    rules_text = _rules("single", "below-base")


class Opus(PenguinFamily):
    id = "opus"
    name = "Opus"
    summary = "Penguin II with only 5 cells: much harder."
    defaults = {**Penguin.defaults, "runs": "single", "cells": 5}
    rules_text = _rules("single", "below-base").replace("Each of the cells", "Each of the 5 cells")


class Pelican(PenguinFamily):
    id = "pelican"
    name = "Pelican"
    summary = "Penguin's play with Ace foundations, a plain 8,8,8,7,7,7,7 deal and free spaces."
    defaults = {"cells": 7, "foundation_base": "ace", "runs": "whole",
                "empty_pile": "any", "deal": "pelican"}
    rules_text = """
One deck, dealt row by row: 8 cards to each of tableau piles 0-2, 7 to piles 3-6. The
4 foundations start empty and build up in suit from Ace to King; an empty foundation
takes any Ace. 7 cells hold one card each; any available card may go to an empty cell,
and a cell's card may go to the tableau or a foundation, never to another cell. The
tableau builds down in suit by one (nothing goes on an Ace, no wrapping). A run (same
suit, descending by one, up to the top) moves as one unit, whatever its length, and
any upper part of it may move alone. An empty tableau pile takes any card or run.
Moving a whole pile into an empty pile is not a move (it changes nothing). Won when all
52 cards are on the foundations; lost when no move is left.
"""


class PenguinFreecellMoves(PenguinFamily):
    id = "penguin-freecell-moves"
    name = "Penguin with free-cell moves"
    summary = "Penguin's deal and foundations with FreeCell's run limit and free spaces."
    defaults = {**Penguin.defaults, "runs": "free-cell-limit", "empty_pile": "any"}
    rules_text = _rules("free-cell-limit", "any")


PRESETS: tuple[type[PenguinFamily], ...] = (Penguin, PenguinII, Opus, Pelican, PenguinFreecellMoves)
