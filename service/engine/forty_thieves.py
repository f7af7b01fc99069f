"""Forty Thieves: two decks, 8 foundations, 10 piles of 4 building down in suit.

docs/rules.md "Forty Thieves". One card moves at a time; an empty tableau pile takes any
card; the stock is gone through once, one card at a time, onto the waste.
"""

from __future__ import annotations

from typing import Final

from .cards import ALL_RANKS, Card, card_name, full_suit_deck
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

F0, T0 = 0, FOUNDATIONS
STOCK = T0 + TABLEAU_PILES  # 18
WASTE = STOCK + 1  # 19
FOUNDATION_RANGE: Final = range(F0, F0 + FOUNDATIONS)
TABLEAU_RANGE: Final = range(T0, T0 + TABLEAU_PILES)


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
    @staticmethod
    def _foundation_targets(piles: tuple[tuple[Card, ...], ...], card: Card) -> list[int]:
        out: list[int] = []
        if card & 15 == 1:
            for f in FOUNDATION_RANGE:
                if not piles[f]:
                    out.append(f)
            return out
        below = card - 1  # same suit, one rank lower
        for f in FOUNDATION_RANGE:
            fp = piles[f]
            if fp and fp[-1] == below:
                out.append(f)
        return out

    def legal_moves(self, state: State) -> list[Move]:
        piles = state.piles
        MOVE = Action.MOVE
        # Which card each pile takes: foundations their next card (an empty one any
        # Ace), non-empty tableau piles the card one rank lower in suit.
        home: dict[Card, list[int]] = {}
        empty_f: list[int] = []
        for f in FOUNDATION_RANGE:
            fp = piles[f]
            if fp:
                top = fp[-1]
                if top & 15 != 13:
                    home.setdefault(top + 1, []).append(f)
            else:
                empty_f.append(f)
        builds: dict[Card, list[int]] = {}
        empty_t: list[int] = []
        for t in TABLEAU_RANGE:
            tp = piles[t]
            if tp:
                top = tp[-1]
                if top & 15 != 1:
                    builds.setdefault(top - 1, []).append(t)
            else:
                empty_t.append(t)
        moves: list[Move] = []
        for s in (*TABLEAU_RANGE, WASTE):
            sp = piles[s]
            if not sp:
                continue
            card = sp[-1]
            if card & 15 == 1:
                for f in empty_f:
                    moves.append(Move(MOVE, s, f, 1))
            else:
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

    def _home_count(self, piles: tuple[tuple[Card, ...], ...], card: Card) -> int:
        """How many copies of ``card`` are on the foundations (0, 1 or 2)."""
        suit, rank = card >> 4, card & 15
        n = 0
        for f in FOUNDATION_RANGE:
            fp = piles[f]
            if fp and fp[0] >> 4 == suit and len(fp) >= rank:
                n += 1
        return n

    def autoplay_move(self, state: State) -> Move | None:
        piles = state.piles
        for s in (*TABLEAU_RANGE, WASTE):
            sp = piles[s]
            if not sp:
                continue
            card = sp[-1]
            targets = self._foundation_targets(piles, card)
            if not targets:
                continue
            if card & 15 == 1 or self._home_count(piles, card - 1) == 2:
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
            if fp[0] & 15 != 1:
                problems.append(Problem(self.pointer(f, 0), "a foundation starts with an Ace"))
                continue
            for i in range(1, len(fp)):
                if fp[i] != fp[i - 1] + 1:
                    problems.append(
                        Problem(self.pointer(f, i), "foundations build up in suit by one")
                    )
                    break
        for t in TABLEAU_RANGE:
            tp = piles[t]
            n = len(tp)
            k = 1
            while k < n and tp[n - k - 1] == tp[n - k] + 1:
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
