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

from typing import Any, ClassVar

from .cards import ACE, ALL_RANKS, Card, card_name, full_suit_deck, rank_name
from .core import (
    Action,
    Event,
    EventKind,
    Game,
    Move,
    OptionSpec,
    PileGroup,
    Problem,
    Rejection,
    RulesError,
    State,
)
from .shuffle import pysol_shuffle

TABLEAU_PILES = 7
FOUNDATIONS = 4


class PenguinFamily(Game):
    """One engine for every Penguin-shaped game; subclasses only choose defaults."""

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
                choices=("whole", "single", "free-cell-limit"),
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
        self.F = range(0, FOUNDATIONS)
        self.C = range(FOUNDATIONS, FOUNDATIONS + self.ncells)
        self.T = range(FOUNDATIONS + self.ncells, FOUNDATIONS + self.ncells + TABLEAU_PILES)
        self.max_dealt = 7 if self.beak else 8

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
            f0 = state.piles[0]
            return f0[0] & 15 if f0 else ACE
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
            beak_rank = talon[-1] & 15
            same = [c for c in talon if c & 15 == beak_rank]
            rest = [c for c in talon if c & 15 != beak_rank]
            talon = rest + same
            for f in range(3):
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

    # --- moves ---------------------------------------------------------------------
    def _run_length(self, pile: tuple[Card, ...], base: int) -> int:
        """Length of the suit run descending (relative rank) to the top of ``pile``."""
        n = len(pile)
        k = 1
        while k < n:
            upper, lower = pile[n - k], pile[n - k - 1]
            if upper >> 4 != lower >> 4 or ((lower & 15) - (upper & 15)) % 13 != 1:
                break
            if (lower & 15) == base:  # nothing is built on a base-rank card
                break
            k += 1
        return k

    def run_limits(self, free_cells: int, empty_piles: int) -> tuple[int, int]:
        """How many cards may move at once onto a tableau card, and into an empty pile
        (the free-cell limit does not count the empty pile moved into)."""
        if self.runs == "free-cell-limit":
            return (free_cells + 1) << empty_piles, (free_cells + 1) << max(empty_piles - 1, 0)
        if self.runs == "single":
            return 1, 1
        return 52, 52

    def is_legal(self, state: State, move: Move) -> bool:
        """The rules of :meth:`legal_moves` for one move, without listing the others."""
        if move.action != Action.MOVE:
            return False
        piles = state.piles
        s, d, k = move.src, move.dst, move.count
        if not (0 <= s < len(piles) and 0 <= d < len(piles)) or s == d:
            return False
        sp = piles[s]
        kind_s, kind_d = self.group_of[s], self.group_of[d]
        if not sp or k < 1 or k > len(sp) or kind_s == "foundation":
            return False
        base = self.base_rank(state)
        card = sp[-k]  # the bottom card of what moves
        if kind_d == "foundation":
            if k != 1:
                return False
            fp = piles[d]
            if not fp:
                return card & 15 == base
            top = fp[-1]
            return len(fp) < 13 and card == (top & 0xF0) | ((top & 15) % 13 + 1)
        if kind_d == "cell":
            return kind_s == "tableau" and k == 1 and not piles[d]
        # onto the tableau
        run = 1 if kind_s == "cell" else self._run_length(sp, base)
        if k > run:
            return False
        free = sum(1 for c in self.C if not piles[c])
        empty = sum(1 for t in self.T if not piles[t])
        tp = piles[d]
        if tp:
            top = tp[-1]
            if top & 15 == base or top != (card & 0xF0) | ((card & 15) % 13 + 1):
                return False
            return k <= self.run_limits(free, empty)[0]
        if kind_s == "tableau" and k == len(sp):
            return False  # a whole pile into an empty one changes nothing
        if not (self.any_empty or card & 15 == (base - 2) % 13 + 1):
            return False
        return k <= self.run_limits(free, empty)[1]

    def _foundation_targets(self, piles: tuple[tuple[Card, ...], ...], card: Card, base: int) -> list[int]:
        out = []
        for f in self.F:
            fp = piles[f]
            if not fp:
                if card & 15 == base:
                    out.append(f)
            else:
                top = fp[-1]
                if top >> 4 == card >> 4 and ((card & 15) - (top & 15)) % 13 == 1 and len(fp) < 13:
                    out.append(f)
        return out

    def _run_limit(self, free_cells: int, empty_piles: int, dst_empty: bool) -> int:
        if self.runs == "single":
            return 1
        if self.runs == "whole":
            return 52
        return (free_cells + 1) << (empty_piles - (1 if dst_empty else 0))

    def legal_moves(self, state: State) -> list[Move]:
        """Every legal move, each target separately.

        One deck: every card is unique, so a card's parent (the card it may go on) and
        its foundation are found by dictionary lookups instead of pairing piles.
        """
        piles = state.piles
        base = self.base_rank(state)
        below_base = (base - 2) % 13 + 1  # rank just below base (King for Ace)
        home: dict[Card, int] = {}  # next card of a foundation -> that foundation
        open_foundations: list[int] = []
        for f in self.F:
            fp = piles[f]
            if not fp:
                open_foundations.append(f)
            elif len(fp) < 13:
                top = fp[-1]
                home[(top & 0xF0) | ((top & 15) % 13 + 1)] = f
        takes: dict[Card, int] = {}  # top card of a tableau pile -> that pile
        empty: list[int] = []
        for t in self.T:
            tp = piles[t]
            if not tp:
                empty.append(t)
            elif tp[-1] & 15 != base:  # nothing is built on a base-rank card
                takes[tp[-1]] = t
        free = [c for c in self.C if not piles[c]]
        any_empty = self.any_empty
        MOVE = Action.MOVE
        moves: list[Move] = []

        def to_foundations(src: int, card: Card) -> None:
            f = home.get(card)
            if f is not None:
                moves.append(Move(MOVE, src, f, 1))
            elif card & 15 == base:
                moves.extend(Move(MOVE, src, f, 1) for f in open_foundations)

        # Cells: to a foundation or the tableau, never to another cell.
        for c in self.C:
            if not piles[c]:
                continue
            card = piles[c][0]
            to_foundations(c, card)
            onto = takes.get((card & 0xF0) | ((card & 15) % 13 + 1))
            if onto is not None:
                moves.append(Move(MOVE, c, onto, 1))
            if any_empty or card & 15 == below_base:
                moves.extend(Move(MOVE, c, t, 1) for t in empty)
        limit_onto, limit_empty = self.run_limits(len(free), len(empty))
        for s in self.T:
            sp = piles[s]
            if not sp:
                continue
            n = len(sp)
            card = sp[-1]
            to_foundations(s, card)
            moves.extend(Move(MOVE, s, c, 1) for c in free)
            run = self._run_length(sp, base) if limit_onto > 1 else 1
            for k in range(1, min(run, limit_onto) + 1):
                bottom = sp[n - k]
                onto = takes.get((bottom & 0xF0) | ((bottom & 15) % 13 + 1))
                if onto is not None and onto != s:
                    moves.append(Move(MOVE, s, onto, k))
            if empty:
                # k == n would move a whole pile into an empty one: it changes nothing
                for k in range(1, min(run, limit_empty, n - 1) + 1):
                    if any_empty or sp[n - k] & 15 == below_base:
                        moves.extend(Move(MOVE, s, t, k) for t in empty)
        return moves

    def _apply(self, state: State, move: Move, events: list[Event] | None) -> State:
        new = self.move_cards(state, move.src, move.dst, move.count)
        if events is not None:
            moved = state.piles[move.src][-move.count :]
            events.append(Event(EventKind.MOVE, move.src, move.dst, moved))
        return new

    def is_won(self, state: State) -> bool:
        p = state.piles
        return len(p[0]) + len(p[1]) + len(p[2]) + len(p[3]) == 52

    def autoplay_move(self, state: State) -> Move | None:
        base = self.base_rank(state)
        for s in (*self.C, *self.T):
            sp = state.piles[s]
            if sp:
                targets = self._foundation_targets(state.piles, sp[-1], base)
                if targets:
                    return Move(Action.MOVE, s, targets[0], 1)
        return None

    # --- why a move is illegal ---------------------------------------------------
    def why_illegal(self, state: State, move: Move) -> Rejection | None:
        piles = state.piles
        base = self.base_rank(state)
        below_base = (base - 2) % 13 + 1
        group_src, group_dst = self.group_of[move.src], self.group_of[move.dst]
        sp = piles[move.src]
        moving = sp[-move.count :]
        card = moving[0]
        if group_src == "foundation":
            return Rejection("foundation-cards-stay", "a card on a foundation never moves again")
        if group_dst == "foundation":
            if move.count != 1:
                return Rejection("foundation-one-card", "cards go to a foundation one at a time")
            fp = piles[move.dst]
            if not fp:
                return Rejection(
                    "foundation-base",
                    f"an empty foundation takes only a {rank_name(base)}, not the {card_name(card)}",
                )
            return Rejection(
                "foundation-builds-up-in-suit",
                f"foundations build up in suit by one: the {card_name(card)} does not go on "
                f"the {card_name(fp[-1])}",
            )
        if group_dst == "cell":
            if group_src == "cell":
                return Rejection("cell-to-cell", "a card never moves from one cell to another")
            if move.count != 1:
                return Rejection("cell-one-card", "a cell holds one card: move one card at a time")
            return Rejection("cell-occupied", f"{self.ref(move.dst)} already holds a card")
        # destination: tableau
        if move.count > 1:
            run = self._run_length(sp, base)
            if move.count > run:
                return Rejection(
                    "run-not-in-suit",
                    f"only a run (same suit, descending by one) moves as a unit; the top "
                    f"{move.count} cards of {self.ref(move.src)} are not one",
                )
            if self.runs == "single":
                return Rejection("one-card-at-a-time", f"in {self.name} only one card moves at a time")
            free = sum(1 for c in self.C if not piles[c])
            empty = sum(1 for t in self.T if not piles[t])
            limit = self._run_limit(free, empty, not piles[move.dst])
            if move.count > limit:
                return Rejection(
                    "run-too-long",
                    f"with {free} free cell(s) and {empty} empty pile(s) at most {limit} card(s) "
                    f"can move to {self.ref(move.dst)}",
                )
        tp = piles[move.dst]
        if not tp:
            if self.any_empty or card & 15 == below_base:
                return Rejection(
                    "pointless-move", "moving a whole pile into an empty pile changes nothing"
                )
            return Rejection(
                "empty-pile-takes-below-base",
                f"an empty tableau pile takes only a {rank_name(below_base)} "
                f"(or a run starting with one), not the {card_name(card)}",
            )
        return Rejection(
            "tableau-builds-down-in-suit",
            f"the tableau builds down in suit by one: the {card_name(card)} does not go on "
            f"the {card_name(tp[-1])}",
        )

    # --- validation --------------------------------------------------------------
    def validate_piles(self, state: State) -> list[Problem]:
        problems: list[Problem] = []
        piles = state.piles
        if self.beak:
            for f in range(3):
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
        for f in self.F:
            fp = piles[f]
            if not fp:
                continue
            if fp[0] & 15 != base:
                problems.append(
                    Problem(self.pointer(f, 0), f"a foundation starts with a {rank_name(base)}")
                )
                continue
            for i in range(1, len(fp)):
                a, b = fp[i - 1], fp[i]
                if a >> 4 != b >> 4 or ((b & 15) - (a & 15)) % 13 != 1:
                    problems.append(
                        Problem(self.pointer(f, i), "foundations build up in suit by one")
                    )
                    break
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
