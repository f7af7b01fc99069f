"""Boomerang: two decks stripped to A 7 8 9 T J Q K, foundations that go up and back.

docs/rules.md "Boomerang". Each suit's foundation is built 7 8 9 T J Q K A K Q J T 9 8 7
A (16 cards: both copies of every card of the suit). The 12 tableau piles build up or
down in suit, one card at a time, in the rank order 7 8 9 T J Q K A; a pile's
direction is read from its top two cards. An emptied pile is refilled at once from the
stock (or the waste when the stock is empty), which the engine reports as an
``auto`` event; players never fill a space themselves.

Ranks are handled through their position in the tableau order (``POS``: Seven 0 ..
King 6, Ace 7), so "by one" is a difference of one position and Ace sits above King
with nothing beyond it. The building rule is stated once, in :func:`tableau_takes`;
legal moves, pile validation and the solver's plug-in read it (through
:data:`TABLEAU_TAKES` where speed matters).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .cards import SUIT_NAMES, Card, card_name, full_suit_deck, make_card, rank_name, rank_of, suit_of
from .core import (
    Action,
    Event,
    EventKind,
    Game,
    Move,
    PileGroup,
    Problem,
    Rejection,
    State,
)
from .shuffle import pysol_shuffle

RANKS: Final = (1, 7, 8, 9, 10, 11, 12, 13)  # PySolFC's creation order, Ace first
FOUNDATION_SEQUENCE: Final = (7, 8, 9, 10, 11, 12, 13, 1, 13, 12, 11, 10, 9, 8, 7, 1)
SUIT_CARDS: Final = len(FOUNDATION_SEQUENCE)  # 16
FOUNDATIONS: Final = 4
TABLEAU_PILES: Final = 12
CARDS: Final = 64
STOCK_CARDS: Final = CARDS - TABLEAU_PILES  # 52

# Position of a rank in the tableau order 7 8 9 T J Q K A; -99 for ranks not in play.
POS: Final = (-99, 7, -99, -99, -99, -99, -99, 0, 1, 2, 3, 4, 5, 6)
# Rank at each position of the tableau order.
RANK_AT: Final = (7, 8, 9, 10, 11, 12, 13, 1)
# Foundation lengths at which the next card has no possible use in the tableau: the
# second Seven (both Eights are home) and the last Ace (both Kings are home).
DEAD_SLOTS: Final = (14, 15)

# Pile positions, in the order of make_groups: foundations, tableau, stock, waste.
FOUNDATION_RANGE: Final = range(0, FOUNDATIONS)
TABLEAU_RANGE: Final = range(FOUNDATION_RANGE.stop, FOUNDATION_RANGE.stop + TABLEAU_PILES)
STOCK: Final = TABLEAU_RANGE.stop  # 16
WASTE: Final = STOCK + 1  # 17
#: Every distinct card of the deck (each is in it twice).
DISTINCT_CARDS: Final = tuple(make_card(rank, suit) for suit in range(4) for rank in RANK_AT)


def tableau_takes(top: Sequence[Card]) -> tuple[Card, ...]:
    """The building rule: the cards a tableau pile whose top cards are ``top`` (its
    last one, or its last two) takes. In suit, one position up or down the order
    7 8 9 T J Q K A (no wrapping); a pile of two or more cards only continues the
    direction of its top two, a single card takes either neighbour."""
    card = top[-1]
    at = POS[rank_of(card)]
    steps = (at - 1, at + 1) if len(top) == 1 else (2 * at - POS[rank_of(top[-2])],)
    return tuple(make_card(RANK_AT[q], suit_of(card)) for q in steps if 0 <= q < len(RANK_AT))


#: :func:`tableau_takes` of every card and every pair of cards, keyed by the pile's
#: last one or two cards: move generation looks a pile up here instead of calling the
#: rule (a dict lookup, not a function call, per pile).
TABLEAU_TAKES: Final[dict[tuple[Card, ...], tuple[Card, ...]]] = {
    top: tableau_takes(top)
    for top in (
        *((a,) for a in DISTINCT_CARDS),
        *((a, b) for a in DISTINCT_CARDS for b in DISTINCT_CARDS),
    )
}


def foundation_card(suit: int, height: int) -> Card:
    """The card a foundation of ``suit`` holding ``height`` cards takes next (the
    sequence 7 8 9 T J Q K A K Q J T 9 8 7 A; ``height`` below 16)."""
    return make_card(FOUNDATION_SEQUENCE[height], suit)


def foundation_takers(piles: Sequence[Sequence[Card]]) -> dict[Card, list[int]]:
    """The foundation rule: card -> the foundations that take it now, in pile order.
    A started foundation takes the next card of its suit's sequence; every empty one
    takes the Seven of each suit no foundation has started."""
    takers: dict[Card, list[int]] = {}
    started = 0  # a bit per suit
    empty: list[int] = []
    for f in FOUNDATION_RANGE:
        fp = piles[f]
        n = len(fp)
        if not n:
            empty.append(f)
            continue
        suit = suit_of(fp[0])
        started |= 1 << suit
        if n < SUIT_CARDS:
            takers.setdefault(foundation_card(suit, n), []).append(f)
    if empty:
        for suit in range(4):
            if not started >> suit & 1:
                takers.setdefault(foundation_card(suit, 0), []).extend(empty)
    return takers


class Boomerang(Game):
    id = "boomerang"
    name = "Boomerang"
    decks = 2
    summary = (
        "Two stripped decks (A, 7-K): foundations run 7 up to A and back down to 7, then A; "
        "12 self-refilling piles build up or down in suit."
    )
    has_deal = True
    has_redeal = False
    rules_text = """
Two decks stripped to A, 7, 8, 9, T, J, Q, K: 64 cards. Deal: one card face up to each
of the 12 tableau piles; the other 52 cards form the face-down stock (PySolFC turns one
more card onto the waste at the start; here that card stays on top of the stock, so
the stock's top card is the one PySolFC shows on the waste).

Foundations (4, one per suit, 16 cards each): each is built in suit in the order
7 8 9 T J Q K A K Q J T 9 8 7 A, so it takes both copies of every card of its suit. An
empty foundation takes a Seven of a suit that no other foundation has started; every
empty foundation that could take it is a separate legal target.

Tableau (12 piles): only the top card moves, one card at a time, to a foundation or
another tableau pile. A pile builds up or down in suit by one in the rank order
7 8 9 T J Q K A (Ace above King, no wrapping: nothing goes on a Seven but an Eight,
nothing on an Ace but a King). Decided: a pile's direction is read from its cards:
once it holds two or more cards a new card must continue in the direction of its top
two; a pile holding a single card may go either way. When a pile becomes empty it is
refilled at once, automatically, with the top card of the stock, or with the top card
of the waste when the stock is empty; players cannot fill a space themselves, so an
empty pile (possible only once stock and waste are both empty) takes nothing. Moving
a pile's only card to another pile is a legal build (the emptied pile is then
refilled).

Stock: a deal turns its top card face up onto the waste; there is no redeal. Waste:
its top card may go to a foundation or a tableau pile; nothing is put on the waste
except by a deal.

Won when all 64 cards are on the foundations; lost when no move is left (no card
move and an empty stock).
"""
    autoplay_rule = (
        "a card is played automatically only when it is dead and its move refills nothing "
        "from the stock: dead means it is the next card of its foundation and no card it "
        "could ever hold in the tableau is left outside the foundations, which is true only "
        "of each suit's second Seven (both Eights are home) and last Ace (both Kings are "
        "home); such a card can only ever go to that foundation, and nothing else can take "
        "its place there. It is moved from the waste, or from a tableau pile once the stock "
        "is empty (a dead card is always alone in its pile, so its move empties the pile). "
        "Either move leaves a position at least as good: every line of play from the old "
        "position can be copied move for move, and once it plays the dead card both lines "
        "reach the same position (with an empty stock the refill takes the waste's top "
        "card, which the copy holds in that pile all along). A dead card alone in a pile "
        "while the stock still holds cards is not moved: the refill would take the stock's "
        "top card at a moment the player did not choose, and when to refill is a real "
        "choice in this game."
    )

    def make_groups(self) -> tuple[PileGroup, ...]:
        return (
            PileGroup(
                "foundation", FOUNDATIONS, 0, 3,
                description="one per suit: 7 8 9 T J Q K A K Q J T 9 8 7 A in suit",
            ),
            PileGroup(
                "tableau", TABLEAU_PILES, 1, 0, fan="down",
                description="builds up or down in suit (7..K, A); refilled automatically",
            ),
            PileGroup("stock", 1, 0, 0, face_down=True, description="a deal turns one card"),
            PileGroup("waste", 1, 0, 1, description="its top card plays"),
        )

    def deck(self) -> tuple[Card, ...]:
        return full_suit_deck(RANKS, 2)

    # --- the deal ------------------------------------------------------------------
    def deal_state(self, deal: int) -> State:
        talon = pysol_shuffle(self.deck(), deal)
        piles: list[tuple[Card, ...]] = [() for _ in self.pile_refs]
        for t in TABLEAU_RANGE:
            piles[t] = (talon.pop(),)
        piles[STOCK] = tuple(talon)  # bottom first: the last card is dealt next
        return State(tuple(piles), (), deal)

    # --- moves ---------------------------------------------------------------------
    def legal_moves(self, state: State) -> list[Move]:
        piles = state.piles
        MOVE = Action.MOVE
        # Which card each pile takes: the foundations' next cards, then the tableau's.
        takers = foundation_takers(piles)
        n_home = len(takers)
        tab_takers: dict[Card, list[int]] = {}
        for t in TABLEAU_RANGE:
            tp = piles[t]
            if tp:
                for card in TABLEAU_TAKES[tp[-2:]]:
                    tab_takers.setdefault(card, []).append(t)
        moves: list[Move] = []
        if n_home or tab_takers:
            for s in (*TABLEAU_RANGE, WASTE):
                sp = piles[s]
                if not sp:
                    continue
                card = sp[-1]
                home = takers.get(card)
                if home:
                    for f in home:
                        moves.append(Move(MOVE, s, f, 1))
                dsts = tab_takers.get(card)
                if dsts:
                    for t in dsts:
                        if t != s:
                            moves.append(Move(MOVE, s, t, 1))
        if piles[STOCK]:
            moves.append(Move(Action.DEAL))
        return moves

    def _apply(self, state: State, move: Move, events: list[Event] | None) -> State:
        piles = list(state.piles)
        if move.action == Action.DEAL:
            stock = piles[STOCK]
            card = stock[-1]
            piles[STOCK] = stock[:-1]
            piles[WASTE] = piles[WASTE] + (card,)
            if events is not None:
                events.append(Event(EventKind.DEAL, STOCK, WASTE, (card,)))
            return State(tuple(piles), state.counters, state.deal)
        src, dst = move.src, move.dst
        sp = piles[src]
        card = sp[-1]
        piles[src] = sp[:-1]
        piles[dst] = piles[dst] + (card,)
        if events is not None:
            events.append(Event(EventKind.MOVE, src, dst, (card,)))
        if len(sp) == 1 and src in TABLEAU_RANGE:
            self._refill(piles, src, events)
        return State(tuple(piles), state.counters, state.deal)

    @staticmethod
    def _refill(piles: list[tuple[Card, ...]], t: int, events: list[Event] | None) -> None:
        """Refill the emptied tableau pile ``t`` from the stock, else the waste."""
        for giver in (STOCK, WASTE):
            gp = piles[giver]
            if gp:
                card = gp[-1]
                piles[giver] = gp[:-1]
                piles[t] = (card,)
                if events is not None:
                    events.append(
                        Event(EventKind.AUTO, giver, t, (card,), "an emptied pile is refilled")
                    )
                return

    def is_won(self, state: State) -> bool:
        p = state.piles
        return len(p[0]) + len(p[1]) + len(p[2]) + len(p[3]) == CARDS

    def autoplay_move(self, state: State) -> Move | None:
        piles = state.piles
        sources = [WASTE] if piles[WASTE] else []
        if not piles[STOCK]:
            sources.extend(TABLEAU_RANGE)
        for s in sources:
            sp = piles[s]
            if not sp:
                continue
            card = sp[-1]
            for f in FOUNDATION_RANGE:
                fp = piles[f]
                n = len(fp)
                if n in DEAD_SLOTS and foundation_card(suit_of(fp[0]), n) == card:
                    return Move(Action.MOVE, s, f, 1)
        return None

    # --- why a move is illegal -----------------------------------------------------
    def why_no_deal(self, state: State) -> Rejection:
        return Rejection("stock-empty", "the stock is empty: there is no card to deal (no redeal)")

    def why_no_redeal(self, state: State) -> Rejection:
        return Rejection("no-redeal", "Boomerang has no redeal: the stock is gone through once")

    def why_illegal(self, state: State, move: Move) -> Rejection | None:
        piles = state.piles
        gs, gd = self.group_of[move.src], self.group_of[move.dst]
        if gs == "foundation":
            return Rejection("foundation-cards-stay", "a card on a foundation never moves again")
        if gs == "stock":
            return Rejection(
                "stock-deals-only",
                "cards leave the stock only by a deal (or by refilling an emptied pile)",
            )
        if gd == "stock":
            return Rejection("stock-takes-no-cards", "no card is ever put back on the stock")
        if gd == "waste":
            return Rejection("waste-takes-only-deals", "the waste takes cards only from a deal")
        if move.count != 1:
            return Rejection("one-card-at-a-time", "only the top card moves, one card at a time")
        card = piles[move.src][-1]
        if gd == "foundation":
            return self._why_not_home(card, piles[move.dst], move.dst)
        return self._why_not_on_pile(card, piles[move.dst], move.dst)

    def _why_not_home(self, card: Card, dp: tuple[Card, ...], dst: int) -> Rejection:
        """Why the foundation ``dst`` (holding ``dp``) does not take ``card``."""
        if not dp:
            if rank_of(card) != FOUNDATION_SEQUENCE[0]:
                return Rejection(
                    "foundation-starts-with-seven",
                    f"an empty foundation takes only a Seven, not the {card_name(card)}",
                )
            return Rejection(
                "one-foundation-per-suit",
                f"another foundation has already started the {SUIT_NAMES[suit_of(card)]}: "
                "an empty foundation takes a Seven of a suit no other foundation has",
            )
        if len(dp) >= SUIT_CARDS:
            return Rejection("foundation-complete", f"{self.ref(dst)} is complete")
        want = FOUNDATION_SEQUENCE[len(dp)]
        if suit_of(dp[0]) != suit_of(card):
            return Rejection(
                "foundation-in-suit",
                f"{self.ref(dst)} holds the {SUIT_NAMES[suit_of(dp[0])]}: the "
                f"{card_name(card)} is of another suit",
            )
        return Rejection(
            "foundation-sequence",
            "foundations are built 7 8 9 T J Q K A K Q J T 9 8 7 A: "
            f"{self.ref(dst)} needs a {rank_name(want)} next, not the {card_name(card)}",
        )

    def _why_not_on_pile(self, card: Card, dp: tuple[Card, ...], dst: int) -> Rejection:
        """Why the tableau pile ``dst`` (holding ``dp``) does not take ``card``: the part
        of :func:`tableau_takes` it breaks."""
        if not dp:
            return Rejection(
                "no-filling-spaces",
                "players cannot fill an empty pile: spaces are refilled automatically from "
                "the stock or the waste",
            )
        top = dp[-1]
        if suit_of(top) != suit_of(card):
            return Rejection(
                "tableau-builds-in-suit",
                f"the tableau builds in suit: the {card_name(card)} does not go on the "
                f"{card_name(top)}",
            )
        step = POS[rank_of(card)] - POS[rank_of(top)]
        if step not in (1, -1):
            return Rejection(
                "tableau-builds-by-one",
                "the tableau builds up or down by one in the order 7 8 9 T J Q K A (no "
                f"wrapping): the {card_name(card)} does not go on the {card_name(top)}",
            )
        return Rejection(
            "tableau-direction",
            f"{self.ref(dst)} is built {'up' if step < 0 else 'down'} (read from its top "
            f"two cards): the {card_name(card)} would turn it around",
        )

    # --- validation ----------------------------------------------------------------
    def validate_piles(self, state: State) -> list[Problem]:
        piles = state.piles
        problems = self._foundation_problems(piles) + self._tableau_problems(piles)
        if len(piles[STOCK]) + len(piles[WASTE]) > STOCK_CARDS:
            problems.append(
                Problem(
                    self.pointer(STOCK),
                    f"the stock and the waste hold at most {STOCK_CARDS} cards together "
                    "(12 are dealt to the tableau)",
                )
            )
        return problems

    def _foundation_problems(self, piles: tuple[tuple[Card, ...], ...]) -> list[Problem]:
        """One suit per foundation, each built in the foundation sequence."""
        problems: list[Problem] = []
        suits_seen: dict[int, int] = {}
        for f in FOUNDATION_RANGE:
            fp = piles[f]
            if not fp:
                continue
            suit = suit_of(fp[0])
            if suit in suits_seen:
                problems.append(
                    Problem(
                        self.pointer(f, 0),
                        f"foundation {suits_seen[suit]} already holds this suit: one foundation "
                        "per suit",
                    )
                )
                continue
            suits_seen[suit] = f - FOUNDATION_RANGE.start
            if len(fp) > SUIT_CARDS:
                problems.append(Problem(self.pointer(f), "a foundation holds at most 16 cards"))
                continue
            for i, c in enumerate(fp):
                if c != foundation_card(suit, i):
                    problems.append(
                        Problem(
                            self.pointer(f, i),
                            "a foundation is built in suit 7 8 9 T J Q K A K Q J T 9 8 7 A: "
                            f"card {i} must be a {rank_name(FOUNDATION_SEQUENCE[i])}",
                        )
                    )
                    break
        return problems

    def _tableau_problems(self, piles: tuple[tuple[Card, ...], ...]) -> list[Problem]:
        """Each pile built by :func:`tableau_takes`; no space while the talon can refill it."""
        problems: list[Problem] = []
        talon_left = bool(piles[STOCK]) or bool(piles[WASTE])
        for t in TABLEAU_RANGE:
            tp = piles[t]
            if not tp:
                if talon_left:
                    problems.append(
                        Problem(
                            self.pointer(t),
                            "an empty pile is refilled at once while the stock or the waste "
                            "holds a card",
                        )
                    )
                continue
            if len(tp) > len(RANK_AT):
                problems.append(
                    Problem(self.pointer(t), "a tableau pile holds at most 8 cards (7 up to A)")
                )
                continue
            for i in range(1, len(tp)):
                if tp[i] not in tableau_takes(tp[max(0, i - 2) : i]):
                    problems.append(
                        Problem(
                            self.pointer(t, i),
                            "a tableau pile is one suit built up or down by one in a single "
                            "direction",
                        )
                    )
                    break
        return problems


GAME = Boomerang
