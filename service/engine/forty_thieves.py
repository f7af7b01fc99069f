"""Forty Thieves: two decks, 8 foundations, 10 piles of 4 building down in suit.

docs/rules.md "Forty Thieves". One card moves at a time; an empty tableau pile takes any
card; the stock is gone through once, one card at a time, onto the waste.

Each rule is stated once here: the orders of building (:data:`ABOVE` for the
foundations, :data:`BELOW` for the tableau), which foundations take a card
(:func:`foundation_takers`) and the autoplay condition (:func:`autoplays`). Legal moves,
autoplay and the solver's plug-in read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .cards import (
    ACE,
    ALL_CARDS,
    ALL_RANKS,
    CARD_SLOTS,
    KING,
    Card,
    card_name,
    full_suit_deck,
    make_card,
    rank_of,
    suit_of,
)
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

FOUNDATIONS: Final = 8
TABLEAU_PILES: Final = 10
DEALT_PER_PILE: Final = 4
CARDS: Final = 104
STOCK_CARDS: Final = CARDS - TABLEAU_PILES * DEALT_PER_PILE  # 64

# Pile positions, in the order of make_groups: foundations, tableau, stock, waste.
FOUNDATION_RANGE: Final = range(0, FOUNDATIONS)
TABLEAU_RANGE: Final = range(FOUNDATION_RANGE.stop, FOUNDATION_RANGE.stop + TABLEAU_PILES)
STOCK: Final = TABLEAU_RANGE.stop  # 18
WASTE: Final = STOCK + 1  # 19

# Tables indexed by a packed card (as cards.py's RANK_OF): the move generators read
# them for every pile of every position, where a lookup costs less than a call. -1
# where there is no such card (or the index is not a card).
#: The foundations build up in suit by one: ABOVE[c] goes on c (nothing on a King).
ABOVE: Final[tuple[Card, ...]] = tuple(
    make_card(rank_of(c) + 1, suit_of(c)) if c in ALL_CARDS and rank_of(c) < KING else -1
    for c in range(CARD_SLOTS)
)
#: The tableau builds down in suit by one: BELOW[c] goes on c (nothing on an Ace).
BELOW: Final[tuple[Card, ...]] = tuple(
    make_card(rank_of(c) - 1, suit_of(c)) if c in ALL_CARDS and rank_of(c) > ACE else -1
    for c in range(CARD_SLOTS)
)


def foundation_takers(piles: Sequence[Sequence[Card]]) -> dict[Card, list[int]]:
    """The foundation rule: card -> the foundations that take it now, in pile order. A
    started foundation takes the card above its top; every empty one takes any Ace."""
    takers: dict[Card, list[int]] = {}
    empty: list[int] = []
    for f in FOUNDATION_RANGE:
        fp = piles[f]
        if fp:
            nxt = ABOVE[fp[-1]]
            if nxt >= 0:
                takers.setdefault(nxt, []).append(f)
        else:
            empty.append(f)
    if empty:
        for suit in range(4):
            takers[make_card(ACE, suit)] = empty
    return takers


def autoplays(piles: Sequence[Sequence[Card]], card: Card) -> bool:
    """The autoplay condition (see ``FortyThieves.autoplay_rule``), for a card some
    foundation takes: an Ace always, another card once both copies of the card below it
    in its suit are home."""
    rank = rank_of(card)
    if rank == ACE:
        return True
    suit = suit_of(card)
    home = 0
    for f in FOUNDATION_RANGE:
        fp = piles[f]
        if fp and suit_of(fp[0]) == suit and len(fp) >= rank - 1:
            home += 1
    return home == 2


class FortyThieves(Game):
    id = "forty-thieves"
    name = "Forty Thieves"
    decks = 2
    summary = "Two decks: 10 piles of 4 build down in suit one card at a time; one pass through the stock."
    has_deal = True
    has_redeal = False
    rules_text = """
Two decks, 104 cards. Deal: 40 cards face up to the 10 tableau piles, row by row, 4
cards each; the other 64 cards form the face-down stock (PySolFC turns one more card
onto the waste at the start; here that card stays on top of the stock, so the stock's
top card is the one PySolFC shows on the waste).

Foundations (8): build up in suit from Ace to King; any Ace starts an empty foundation,
and every empty foundation is a separate legal target for it.

Tableau (10 piles): build down in suit by one (no wrapping: nothing goes on an Ace),
one card at a time: only the top card of a pile moves. An empty pile takes any card.
Moving a pile's only card into an empty pile is not a move (it changes nothing).

Stock: a deal turns its top card face up onto the waste; there is no redeal. Waste:
its top card may go to a foundation or a tableau pile; nothing is put on the waste
except by a deal. Foundation cards never move again.

Won when all 104 cards are on the foundations; lost when no move is left (no card
move and an empty stock).
"""
    autoplay_rule = (
        "an Ace always, and a card of rank r once both cards of rank r-1 of its suit are on "
        "foundations. The tableau builds down in suit, so the only cards that could ever be "
        "put on a card of rank r are the two cards of rank r-1 of its suit (none for an "
        "Ace); when those are home the card can serve no purpose outside the foundations, "
        "and moving it only uncovers the card below it (or the next waste card). An Ace "
        "takes an empty foundation that nothing but an Ace can use, and the 8 foundations "
        "are one for each of the 8 Aces; foundations holding the same cards are "
        "interchangeable."
    )

    def make_groups(self) -> tuple[PileGroup, ...]:
        return (
            PileGroup(
                "foundation", FOUNDATIONS, 0, 2,
                description="builds up in suit from Ace to King; any Ace starts one",
            ),
            PileGroup(
                "tableau", TABLEAU_PILES, 1, 0, fan="down",
                description="builds down in suit, one card at a time; a space takes any card",
            ),
            PileGroup("stock", 1, 0, 0, face_down=True, description="a deal turns one card"),
            PileGroup("waste", 1, 0, 1, description="its top card plays"),
        )

    def deck(self) -> tuple[Card, ...]:
        return full_suit_deck(ALL_RANKS, 2)

    # --- the deal ------------------------------------------------------------------
    def deal_state(self, deal: int) -> State:
        talon = pysol_shuffle(self.deck(), deal)
        piles: list[list[Card]] = [[] for _ in self.pile_refs]
        for _row in range(DEALT_PER_PILE):
            for t in TABLEAU_RANGE:
                piles[t].append(talon.pop())
        piles[STOCK] = talon  # bottom first: the last card is dealt next
        return State(tuple(tuple(p) for p in piles), (), deal)

    # --- moves ---------------------------------------------------------------------
    def legal_moves(self, state: State) -> list[Move]:
        piles = state.piles
        MOVE = Action.MOVE
        # Which card each pile takes: foundations their next card (an empty one any
        # Ace), non-empty tableau piles the card one rank lower in suit.
        home = foundation_takers(piles)
        builds: dict[Card, list[int]] = {}
        empty_t: list[int] = []
        for t in TABLEAU_RANGE:
            tp = piles[t]
            if tp:
                want = BELOW[tp[-1]]
                if want >= 0:
                    builds.setdefault(want, []).append(t)
            else:
                empty_t.append(t)
        moves: list[Move] = []
        for s in (*TABLEAU_RANGE, WASTE):
            sp = piles[s]
            if not sp:
                continue
            card = sp[-1]
            fs = home.get(card)
            if fs:
                for f in fs:
                    moves.append(Move(MOVE, s, f, 1))
            ts = builds.get(card)
            if empty_t and (len(sp) > 1 or s == WASTE):
                ts = sorted((ts or []) + empty_t)
            if ts:
                for t in ts:
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
        return State(tuple(piles), state.counters, state.deal)

    def is_won(self, state: State) -> bool:
        p = state.piles
        return sum(len(p[f]) for f in FOUNDATION_RANGE) == CARDS

    def autoplay_move(self, state: State) -> Move | None:
        piles = state.piles
        home = foundation_takers(piles)
        for s in (*TABLEAU_RANGE, WASTE):
            sp = piles[s]
            if not sp:
                continue
            card = sp[-1]
            targets = home.get(card)
            if targets and autoplays(piles, card):
                return Move(Action.MOVE, s, targets[0], 1)
        return None

    # --- why a move is illegal -----------------------------------------------------
    def why_no_deal(self, state: State) -> Rejection:
        return Rejection("stock-empty", "the stock is empty: there is no card to deal (no redeal)")

    def why_no_redeal(self, state: State) -> Rejection:
        return Rejection("no-redeal", "Forty Thieves has no redeal: the stock is gone through once")

    def why_illegal(self, state: State, move: Move) -> Rejection | None:
        piles = state.piles
        gs, gd = self.group_of[move.src], self.group_of[move.dst]
        if gs == "foundation":
            return Rejection("foundation-cards-stay", "a card on a foundation never moves again")
        if gs == "stock":
            return Rejection("stock-deals-only", "cards leave the stock only by a deal")
        if gd == "stock":
            return Rejection("stock-takes-no-cards", "no card is ever put back on the stock")
        if gd == "waste":
            return Rejection("waste-takes-only-deals", "the waste takes cards only from a deal")
        if move.count != 1:
            return Rejection("one-card-at-a-time", "only the top card moves, one card at a time")
        sp = piles[move.src]
        card = sp[-1]
        dp = piles[move.dst]
        if gd == "foundation":
            if not dp:
                return Rejection(
                    "foundation-starts-with-ace",
                    f"an empty foundation takes only an Ace, not the {card_name(card)}",
                )
            return Rejection(
                "foundation-builds-up-in-suit",
                f"foundations build up in suit by one: the {card_name(card)} does not go on "
                f"the {card_name(dp[-1])}",
            )
        if not dp:
            return Rejection(
                "pointless-move", "moving a pile's only card into an empty pile changes nothing"
            )
        return Rejection(
            "tableau-builds-down-in-suit",
            f"the tableau builds down in suit by one: the {card_name(card)} does not go on "
            f"the {card_name(dp[-1])}",
        )

    # --- validation ----------------------------------------------------------------
    def validate_piles(self, state: State) -> list[Problem]:
        problems: list[Problem] = []
        piles = state.piles
        for f in FOUNDATION_RANGE:
            fp = piles[f]
            if not fp:
                continue
            if rank_of(fp[0]) != ACE:
                problems.append(Problem(self.pointer(f, 0), "a foundation starts with an Ace"))
                continue
            for i in range(1, len(fp)):
                if fp[i] != ABOVE[fp[i - 1]]:
                    problems.append(
                        Problem(self.pointer(f, i), "foundations build up in suit by one")
                    )
                    break
        for t in TABLEAU_RANGE:
            tp = piles[t]
            n = len(tp)
            k = 1
            while k < n and BELOW[tp[n - k - 1]] == tp[n - k]:
                k += 1
            if n - k > DEALT_PER_PILE - 1:
                problems.append(
                    Problem(
                        self.pointer(t),
                        "a tableau pile is at most 4 dealt cards with a run built down in suit "
                        "on the last of them",
                    )
                )
        if len(piles[STOCK]) + len(piles[WASTE]) > STOCK_CARDS:
            problems.append(
                Problem(
                    self.pointer(STOCK),
                    f"the stock and the waste hold at most {STOCK_CARDS} cards together "
                    "(40 are dealt to the tableau)",
                )
            )
        return problems


GAME = FortyThieves
