"""The shared game interface: states, moves, pile layouts and the Game base class.

Every game is a :class:`Game` subclass (one file per game or family) behind the same
interface, in the spirit of OpenSpiel: ``initial_state``, ``legal_moves``,
``apply``, ``status``. States and moves are immutable tuples of small ints so that
the solver can hash and copy them cheaply; names like ``"tableau:3"`` exist only in
the HTTP layer's wire format (``service/http/wire.py``). The enumerations a client sees
(:class:`Action`, :class:`Status`, :class:`EventKind`, :class:`GroupName`, :class:`Fan`)
are declared here once; the API's schemas are built from them.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from itertools import chain
from operator import le
from typing import Any, ClassVar, NamedTuple

from .cards import Card, format_card

Pile = tuple[Card, ...]


class Action(IntEnum):
    """What a move does. An int, so that a move stays a tuple of small ints; the wire
    name of each is its member name in lower case (``service/http/wire.py``)."""

    MOVE = 0
    DEAL = 1
    REDEAL = 2


class Move(NamedTuple):
    """One move. ``src``/``dst`` are flat pile indices (see :attr:`Game.pile_refs`).

    ``Move(Action.DEAL)`` turns the stock; ``Move(Action.REDEAL)`` redeals.
    """

    action: int
    src: int = -1
    dst: int = -1
    count: int = 0  # type: ignore[assignment]  # shadows tuple.count on purpose: the API's word


DEAL = Move(Action.DEAL)
REDEAL = Move(Action.REDEAL)


class State(NamedTuple):
    """A complete position: every pile (flat, in layout order), the game's counters and
    the deal number (later reshuffles are derived from it and the cards they gather)."""

    piles: tuple[Pile, ...]
    counters: tuple[int, ...]
    deal: int


class Status(StrEnum):
    """Where a game stands (the API's ``status``)."""

    PLAYING = "playing"
    WON = "won"
    LOST = "lost"


class EventKind(StrEnum):
    """What kind of thing happened while a move was applied (an event's ``type``)."""

    MOVE = "move"          # a card move the player asked for
    AUTO = "auto"          # a card move the rules made by themselves (a refill)
    AUTOPLAY = "autoplay"  # a safe foundation move made because autoplay was asked
    DEAL = "deal"
    REDEAL = "redeal"


class Event(NamedTuple):
    """Something that happened while applying a move, for the API's ``events``."""

    kind: EventKind
    src: int = -1
    dst: int = -1
    cards: tuple[Card, ...] = ()
    note: str = ""


class GroupName(StrEnum):
    """Every pile group name a game may use (a game uses some of them), in the order
    the API documents them."""

    FOUNDATION = "foundation"
    TABLEAU = "tableau"
    CELL = "cell"
    RESERVE = "reserve"
    FAN = "fan"
    STAR = "star"
    STOCK = "stock"
    WASTE = "waste"


class Fan(StrEnum):
    """How a pile's cards spread on screen."""

    NONE = "none"  # stacked: only the top card shows
    DOWN = "down"  # overlapping downwards
    RIGHT = "right"  # overlapping to the right


GROUP_NAMES: frozenset[str] = frozenset(GroupName)
FANS: frozenset[str] = frozenset(Fan)


@dataclass(frozen=True)
class PileGroup:
    """A named group of piles and how a generic frontend should lay it out.

    ``name`` is one of :class:`GroupName`. Piles of the group sit left to right from
    (``row``, ``column``) on a grid of card slots, wrapping after ``per_row`` piles.
    ``fan`` (a :class:`Fan`) says how a pile's cards spread.
    """

    name: str
    count: int
    row: int
    column: int
    fan: str = Fan.NONE
    face_down: bool = False
    per_row: int = 0  # 0: all on one row
    capacity: int = 0  # 0: unlimited
    description: str = ""

    def __post_init__(self) -> None:
        if self.name not in GROUP_NAMES:
            raise ValueError(f"pile group {self.name!r} is not one of {sorted(GROUP_NAMES)} (core.GroupName)")
        if self.fan not in FANS:
            raise ValueError(f"fan {self.fan!r} is not one of {sorted(FANS)} (core.Fan)")


@dataclass(frozen=True)
class CounterSpec:
    """An integer the rules need beyond the piles (redeals used, idle passes...)."""

    name: str
    minimum: int
    maximum: int
    description: str


@dataclass(frozen=True)
class OptionSpec:
    """A rule option a client may set when dealing (validated against ``choices``)."""

    name: str
    description: str
    default: Any
    choices: tuple[Any, ...] = ()
    minimum: int | None = None
    maximum: int | None = None

    def check(self, value: Any) -> str | None:
        """Why ``value`` is not allowed, or None."""
        if self.choices:
            if isinstance(value, bool) or value not in self.choices:
                return f"must be one of {list(self.choices)}"
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            return "must be an integer"
        if self.minimum is not None and value < self.minimum:
            return f"must be at least {self.minimum}"
        if self.maximum is not None and value > self.maximum:
            return f"must be at most {self.maximum}"
        return None


class Problem(NamedTuple):
    """One thing wrong with a state: ``where`` is a JSON pointer into the state."""

    where: str
    message: str


class Rejection(NamedTuple):
    """Why a move is illegal: a short rule id and the rule in words."""

    rule: str
    detail: str


class RulesError(ValueError):
    """Options or a request that the rules cannot accept (bad option values...)."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.where = where


MAX_DEAL = 10**20 - 1  # PySolFC deal numbers have up to 20 digits
UNCAPPED = 2**31 - 1  # the bound of a pile without a capacity: more cards than any state holds


def holds_the_deck(piles: Sequence[Pile], sorted_deck: list[Card]) -> bool:
    """Whether ``piles`` hold exactly the cards of ``sorted_deck`` (a deck, sorted), each
    as often: :meth:`Game.validate`'s common case, in one sort."""
    return sorted(chain.from_iterable(piles)) == sorted_deck


# The deck check Game.validate makes: holds_the_deck, or an equivalent given to
# use_deck_check.
_deck_check: Callable[[Sequence[Pile], list[Card]], bool] = holds_the_deck


def use_deck_check(check: Callable[[Sequence[Pile], list[Card]], bool]) -> None:
    """Have :meth:`Game.validate` check a state's cards with ``check``, which must answer
    as :func:`holds_the_deck` does: the wire format gives its compiled one (the engine
    stays pure Python, and :func:`holds_the_deck` its reference, which
    tests/contract/test_wire_native.py compares with it)."""
    global _deck_check
    _deck_check = check


def holds_the_deck_within(piles: Sequence[Pile], sorted_deck: list[Card], most_cards: Sequence[int]) -> bool:
    """Whether ``piles`` hold the deck (:func:`holds_the_deck`) with pile ``i`` holding at
    most ``most_cards[i]`` cards (one bound per pile): :meth:`Game.validate`'s common case,
    a state whose deck and pile capacities are both right, in one check."""
    return (
        len(piles) == len(most_cards)
        and all(map(le, map(len, piles), most_cards))
        and holds_the_deck(piles, sorted_deck)
    )


# The check of Game.validate's common case: holds_the_deck_within, or an equivalent given
# to use_shape_check.
_shape_check: Callable[[Sequence[Pile], list[Card], Sequence[int]], bool] = holds_the_deck_within


def use_shape_check(check: Callable[[Sequence[Pile], list[Card], Sequence[int]], bool]) -> None:
    """Have :meth:`Game.validate` judge its common case with ``check``, which must answer
    as :func:`holds_the_deck_within` does (its reference): the wire format gives its
    compiled one, as it does for :func:`use_deck_check`."""
    global _shape_check
    _shape_check = check


@dataclass
class Game:
    """Base class of every game. Subclasses set the class attributes and implement
    :meth:`deal_state`, :meth:`legal_moves`, :meth:`_apply` and :meth:`is_won`.

    An instance is one game with one set of option values; it holds no position.
    """

    id: ClassVar[str]
    name: ClassVar[str]
    decks: ClassVar[int] = 1
    summary: ClassVar[str]
    rules_text: ClassVar[str]
    autoplay_rule: ClassVar[str] = "No move is ever made automatically."
    has_deal: ClassVar[bool] = False  # the game has a stock the player deals from
    has_redeal: ClassVar[bool] = False
    #: A redeal shuffles the cards it gathers, with a seed derived from ``State.deal`` and
    #: the gathered cards in gathered order (:mod:`.reshuffle`): the reshuffles to come are
    #: hidden from the player, as the face-down cards are.
    redeals_reshuffle: ClassVar[bool] = False

    options: dict[str, Any] = field(default_factory=dict)

    # Filled by __post_init__ from groups().
    groups: tuple[PileGroup, ...] = field(init=False)
    counter_specs: tuple[CounterSpec, ...] = field(init=False)
    group_start: dict[str, int] = field(init=False)
    pile_refs: tuple[tuple[str, int], ...] = field(init=False)
    ref_texts: tuple[str, ...] = field(init=False)
    pile_of_ref: dict[str, int] = field(init=False)
    group_slices: tuple[tuple[str, slice], ...] = field(init=False)

    def __post_init__(self) -> None:
        self.groups = self.make_groups()
        self.counter_specs = self.make_counters()
        start = 0
        self.group_start = {}
        refs: list[tuple[str, int]] = []
        for g in self.groups:
            self.group_start[g.name] = start
            refs.extend((g.name, i) for i in range(g.count))
            start += g.count
        self.pile_refs = tuple(refs)
        self.ref_texts = tuple(f"{name}:{i}" for name, i in refs)  # what ref() answers, made once
        self.pile_of_ref = {text: pile for pile, text in enumerate(self.ref_texts)}  # ref()'s inverse
        self.group_of: tuple[str, ...] = tuple(name for name, _ in refs)
        # Each group's name and its piles' flat indices, in layout order.
        self.group_slices = tuple(
            (g.name, slice(self.group_start[g.name], self.group_start[g.name] + g.count)) for g in self.groups
        )
        # The groups whose piles have a capacity, each with its piles' flat indices.
        self._capped_groups: tuple[tuple[PileGroup, slice], ...] = tuple(
            (g, piles) for g, (_, piles) in zip(self.groups, self.group_slices, strict=True) if g.capacity and g.count
        )
        # The most cards each pile may hold (its group's capacity; a bound no pile reaches
        # for the uncapped ones), for validate's common case (holds_the_deck_within).
        self._most_cards: tuple[int, ...] = tuple(
            (g.capacity or UNCAPPED) for g in self.groups for _ in range(g.count)
        )
        # Each group's name and pile count, in layout order (how a state's groups are joined).
        self.group_counts: tuple[tuple[str, int], ...] = tuple((g.name, g.count) for g in self.groups)
        # The piles a player sees only as backs: what sealed states hide and what a
        # player-knowledge search must guess.
        self.face_down_piles: tuple[int, ...] = tuple(
            p for g in self.groups if g.face_down for p in self.group_range(g.name)
        )
        self._deck_counts = Counter(self.deck())
        self._sorted_deck = sorted(self.deck())  # a position's cards, sorted, when the deck is whole

    # --- description -----------------------------------------------------------
    @classmethod
    def option_specs(cls) -> tuple[OptionSpec, ...]:
        return ()

    def make_groups(self) -> tuple[PileGroup, ...]:
        raise NotImplementedError

    def make_counters(self) -> tuple[CounterSpec, ...]:
        return ()

    def deck(self) -> tuple[Card, ...]:
        """Every card of the game, in PySolFC's creation order (input of the shuffle)."""
        raise NotImplementedError

    def group_range(self, name: str) -> range:
        start = self.group_start[name]
        return range(start, start + self.group(name).count)

    def group(self, name: str) -> PileGroup:
        for g in self.groups:
            if g.name == name:
                return g
        raise KeyError(name)

    def has_group(self, name: str) -> bool:
        return name in self.group_start

    def ref(self, pile: int) -> str:
        """``'tableau:3'`` for a flat pile index."""
        return self.ref_texts[pile]

    def rules_description(self) -> str:
        return f"{self.rules_text.strip()}\n\nAutoplay (\"safe\"): {self.autoplay_rule}"

    # --- play --------------------------------------------------------------------
    def initial_state(self, deal: int) -> State:
        if not 0 <= deal <= MAX_DEAL:
            raise RulesError(f"deal numbers run from 0 to {MAX_DEAL}", "deal")
        return self.deal_state(deal)

    def deal_state(self, deal: int) -> State:
        raise NotImplementedError

    def legal_moves(self, state: State) -> list[Move]:
        raise NotImplementedError

    def is_legal(self, state: State, move: Move) -> bool:
        """``move in legal_moves(state)``; a game may answer it without listing every
        move (the solver checks each move of a solution with it)."""
        return move in self.legal_moves(state)

    def _apply(self, state: State, move: Move, events: list[Event] | None) -> State:
        """Apply a move known to be legal; append what happened to ``events``."""
        raise NotImplementedError

    def apply(self, state: State, move: Move) -> State:
        """Apply a legal move (not checked: the solver's fast path)."""
        return self._apply(state, move, None)

    def play(self, state: State, move: Move) -> tuple[State, list[Event]]:
        """Apply a legal move and say what happened, automatic moves included."""
        events: list[Event] = []
        return self._apply(state, move, events), events

    def is_won(self, state: State) -> bool:
        raise NotImplementedError

    def status(self, state: State, moves: list[Move] | None = None) -> Status:
        if self.is_won(state):
            return Status.WON
        if moves is None:
            moves = self.legal_moves(state)
        return Status.PLAYING if moves else Status.LOST

    def check_move(self, state: State, move: Move, legal: list[Move] | None = None) -> Rejection | None:
        """None when ``move`` is legal in ``state``, else the rule that forbids it.

        ``legal`` may pass ``legal_moves(state)`` when the caller has it already; without
        it, :meth:`is_legal` answers (a game may answer it without listing every move).
        """
        if self.is_legal(state, move) if legal is None else move in legal:
            return None
        if self.is_won(state):
            return Rejection("game-over", "the game is already won: no move is left to make")
        if move.action == Action.DEAL:
            return self.why_no_deal(state)
        if move.action == Action.REDEAL:
            return self.why_no_redeal(state)
        n = len(state.piles)
        if not (0 <= move.src < n and 0 <= move.dst < n):
            return Rejection("no-such-pile", "the move names a pile this game does not have")
        if move.src == move.dst:
            return Rejection("same-pile", "a card cannot move onto the pile it comes from")
        src = state.piles[move.src]
        if not src:
            return Rejection("empty-source", f"{self.ref(move.src)} is empty: there is no card to move")
        if move.count < 1 or move.count > len(src):
            return Rejection(
                "bad-count", f"{self.ref(move.src)} holds {len(src)} card(s); cannot move {move.count}"
            )
        return self.why_illegal(state, move) or Rejection(
            "not-allowed", f"the rules of {self.name} do not allow this move"
        )

    def why_no_deal(self, state: State) -> Rejection:
        return Rejection("no-deal", f"{self.name} has no stock to deal from")

    def why_no_redeal(self, state: State) -> Rejection:
        return Rejection("no-redeal", f"{self.name} has no redeal")

    def why_illegal(self, state: State, move: Move) -> Rejection | None:
        """Game-specific reason a card move is illegal (basic checks already passed)."""
        return None

    def autoplay_move(self, state: State) -> Move | None:
        """A foundation move that can never hurt, or None (see :attr:`autoplay_rule`)."""
        return None

    # --- hidden information ----------------------------------------------------------
    # What the player does not see: the cards of the face-down piles (their order, and
    # which card lies in which of them) and, where redeals reshuffle, the deal's seed.
    def hidden_matters(self, state: State) -> bool:
        """Whether what the player cannot see may still change the game: the game goes on
        (a legal move is left), and a face-down pile holds cards or a redeal that
        reshuffles is legal. A reshuffling redeal that is not legal now never becomes
        legal: in Small Billee the redeals are used up or the fans are empty, and only a
        redeal refills them; in Abandon Hope the redeals are used up or the game is won."""
        moves = self.legal_moves(state)
        if not moves:
            return False
        if any(state.piles[p] for p in self.face_down_piles):
            return True
        return self.redeals_reshuffle and REDEAL in moves

    def sample_hidden(self, state: State, rng: random.Random) -> State:
        """A position the player cannot tell from ``state``: the face-down piles' cards
        dealt among those piles again in a random order, each pile keeping its count, and,
        where redeals reshuffle, a random deal seed, so that the reshuffles to come are
        guesses too. The face-down cards are sorted before they are shuffled: the sample
        depends on which cards lie face down (and on ``rng``), never on their order."""
        piles = list(state.piles)
        hidden = sorted(c for p in self.face_down_piles for c in piles[p])
        rng.shuffle(hidden)
        for p in self.face_down_piles:
            count = len(piles[p])
            piles[p], hidden = tuple(hidden[:count]), hidden[count:]
        deal = rng.randrange(MAX_DEAL + 1) if self.redeals_reshuffle else state.deal
        return State(tuple(piles), state.counters, deal)

    def move_reveals(self, state: State, move: Move) -> bool:
        """Whether the outcome of the legal ``move`` depends on what the player cannot see:
        it takes a card from a face-down pile (a deal, a refill from the stock) or it is a
        redeal that reshuffles. The moves before such a move play out the same whatever
        the hidden cards are."""
        if move.action == Action.REDEAL and self.redeals_reshuffle:
            return True
        if not any(state.piles[p] for p in self.face_down_piles):
            return False
        after = self.apply(state, move)
        return any(len(after.piles[p]) < len(state.piles[p]) for p in self.face_down_piles)

    # --- validation --------------------------------------------------------------
    def validate(self, state: State) -> list[Problem]:
        """Problems that make ``state`` unreachable in shape; empty when it is fine.

        Checks the deck (each card exactly as often as the game holds it), pile
        capacities and the counters here; :meth:`validate_piles` adds the game's own
        checks (foundation order, pile sizes a deal can produce...).
        """
        if len(state.piles) != len(self.pile_refs):
            return [Problem("/piles", "wrong number of piles for this game")]
        if not state.counters and not self.counter_specs and _shape_check(
            state.piles, self._sorted_deck, self._most_cards
        ):
            return self.validate_piles(state)  # the common case: no deck, capacity or counter problem, in one check
        problems = [*self._deck_problems(state), *self._capacity_problems(state), *self._counter_problems(state)]
        if not problems:
            problems.extend(self.validate_piles(state))
        return problems

    def _deck_problems(self, state: State) -> list[Problem]:
        """Cards not in the deck, or more often than the deck holds them (pointing at
        the extra copy), then cards missing."""
        if _deck_check(state.piles, self._sorted_deck):
            return []  # every card as often as the deck holds it: the common case, in one pass
        problems: list[Problem] = []
        seen: Counter[Card] = Counter()
        for pile in state.piles:
            seen.update(pile)
        for card, n in sorted(seen.items()):
            want = self._deck_counts.get(card, 0)
            if n <= want:
                continue
            where = self._where_card(state, card)
            if want == 0:
                problems.append(Problem(where, f"{format_card(card)} is not in {self.name}'s deck"))
            else:
                places = ", ".join(self._places(state, card))
                problems.append(
                    Problem(where, f"{format_card(card)} appears {n} times ({places}); the deck holds {want}")
                )
        for card, want in sorted(self._deck_counts.items()):
            if seen[card] < want:
                problems.append(Problem("/piles", f"{format_card(card)} is missing ({seen[card]} of {want} present)"))
        return problems

    def _capacity_problems(self, state: State) -> list[Problem]:
        """Piles holding more cards than their group's capacity."""
        problems: list[Problem] = []
        piles = state.piles
        for g, group in self._capped_groups:
            if max(map(len, piles[group])) <= g.capacity:
                continue  # the common case: one pass in C over the group's piles
            for i, pile in enumerate(piles[group]):
                if len(pile) > g.capacity:
                    problems.append(
                        Problem(
                            f"/piles/{g.name}/{i}",
                            f"a {g.name} holds at most {g.capacity} card(s), not {len(pile)}",
                        )
                    )
        return problems

    def _counter_problems(self, state: State) -> list[Problem]:
        """Counters missing, extra, or out of their range."""
        if len(state.counters) != len(self.counter_specs):
            return [Problem("/counters", "wrong counters for this game")]
        if not self.counter_specs:
            return []
        return [
            Problem(f"/counters/{spec.name}", f"{spec.name} must be between {spec.minimum} and {spec.maximum}")
            for spec, value in zip(self.counter_specs, state.counters, strict=True)
            if not spec.minimum <= value <= spec.maximum
        ]

    def validate_piles(self, state: State) -> list[Problem]:
        return []

    def pointer(self, pile: int, pos: int | None = None) -> str:
        name, i = self.pile_refs[pile]
        return f"/piles/{name}/{i}" + ("" if pos is None else f"/{pos}")

    def _where_card(self, state: State, card: Card) -> str:
        """Pointer to the last place ``card`` lies (the extra copy, when there are more)."""
        last = (0, 0)
        for p, pile in enumerate(state.piles):
            for pos, c in enumerate(pile):
                if c == card:
                    last = (p, pos)
        return self.pointer(*last)

    def _places(self, state: State, card: Card) -> list[str]:
        return [self.ref(p) for p, pile in enumerate(state.piles) for c in pile if c == card]

    # --- helpers for subclasses ---------------------------------------------------
    def move_cards(self, state: State, src: int, dst: int, count: int) -> State:
        """Move the top ``count`` cards of ``src`` onto ``dst``, keeping their order."""
        piles = list(state.piles)
        s = piles[src]
        piles[src] = s[:-count]
        piles[dst] = piles[dst] + s[-count:]
        return State(tuple(piles), state.counters, state.deal)
