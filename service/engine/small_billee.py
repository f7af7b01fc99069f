"""Small Billee: 12 fans that never build, 6 cells, Aces already home, 3 reshuffles.

Flat pile indices: foundations 0-3, cells 4-9, fans 10-21. One counter,
``redeals_used`` (0-3).

The deal (docs/rules.md, a game PySolFC lacks): the deck is shuffled with PySolFC's
generator for the deal number, the four Aces are taken out (foundation ``i`` gets the
Ace of suit ``i``: C, D, H, S), and the other 48 cards, in their shuffled order, are
dealt from the end of the list: one to each cell 0-5, then row by row to the fans,
left to right, up to 4 cards a fan (fans 0-5 get 4, fans 6-11 get 3). A redeal gathers
the fans' cards (fan 0 to 11, each bottom to top) and shuffles them with
:func:`~service.engine.reshuffle.reshuffle` (its seed hashes the deal seed, ``n`` and the
gathered cards in that order), then deals them the same way.
"""

from __future__ import annotations

from .cards import ACE, ALL_RANKS, KING, SUITS, Card, card_name, full_suit_deck, make_card, rank_of
from .core import (
    REDEAL,
    Action,
    CounterSpec,
    Event,
    EventKind,
    Game,
    Move,
    PileGroup,
    Problem,
    Rejection,
    State,
)
from .reshuffle import reshuffle
from .shuffle import pysol_shuffle

FOUNDATIONS = 4
CELLS = 6
FANS = 12
FAN_MAX = 4
MAX_REDEALS = 3

DECK_CARDS = len(ALL_RANKS) * len(SUITS)
# The deal gives the fans the cards left after the Aces and the cells: fans 0 to
# FULL_FANS - 1 get FAN_MAX cards, the others one fewer.
FULL_FANS = DECK_CARDS - FOUNDATIONS - CELLS - (FAN_MAX - 1) * FANS

# Flat pile indices, in the order of make_groups: foundations, cells, fans
F = range(0, FOUNDATIONS)
C = range(FOUNDATIONS, FOUNDATIONS + CELLS)
FN = range(FOUNDATIONS + CELLS, FOUNDATIONS + CELLS + FANS)
NPILES = FOUNDATIONS + CELLS + FANS
# The foundations one by one: is_won (the search's test of every position) adds their
# lengths without a loop, which would cost measurably there.
_F0, _F1, _F2, _F3 = F


def deal_fans(talon: list[Card]) -> list[list[Card]]:
    """Deal ``talon`` (last card first) to the 12 fans row by row, left to right, up
    to 4 a fan, as far as the cards go. ``talon`` is emptied."""
    fans: list[list[Card]] = [[] for _ in range(FANS)]
    for _row in range(FAN_MAX):
        for fan in fans:
            if not talon:
                return fans
            fan.append(talon.pop())
    return fans


class SmallBillee(Game):
    id = "small-billee"
    name = "Small Billee"
    decks = 1
    summary = "Aces start home; play the tops of 12 fans through 6 cells, with up to 3 reshuffles."
    has_deal = False
    has_redeal = True
    redeals_reshuffle = True
    rules_text = """
One deck of 52. The four Aces start on the 4 foundations (foundation 0 holds the Ace
of Clubs, 1 Diamonds, 2 Hearts, 3 Spades); each foundation builds up in suit to King.

Deal. The deck is shuffled exactly as PySolFC shuffles a one-deck deal of that number
(PySolFC itself does not have this game); the four Aces are taken out of the shuffled
deck and the other 48 cards, in their shuffled order, are dealt starting from the end
of the shuffled list: one card to each of the 6 cells (cell 0 first), then the
remaining 42 cards to the 12 fans one card at a time, row by row, left to right, up to
4 cards a fan: fans 0-5 get 4 cards, fans 6-11 get 3. (The published text's counts add
up to 58 cards, not 52; this is the deal the service uses.)

Fans (12). No building: no card is ever put on a fan. Only the top card of a fan
moves, one card at a time, to its foundation or to an empty cell. An emptied fan stays
empty (spaces are not filled).

Cells (6). Each holds one card. A cell's card may go to its foundation only: cells
never give a card back to the fans (the fans allow no building), and a card never
moves from one cell to another.

Redeal (up to 3, and only while some fan still holds a card). All cards left in the
fans are gathered in this order: fan 0 to fan 11, each fan from its bottom card to its
top card. Their shuffle's number is drawn from the deal's seed, n and the gathered
cards in that order (docs/rules.md "Determinism"), where n is 1 for the first redeal, 2
for the second and 3 for the third; the cards are sorted by suit (C, D, H, S) then rank
and shuffled exactly as PySolFC shuffles the deck for that number, the sorted cards
standing in for the deck; then they are dealt to the fans exactly as at the start, from
the end of the shuffled list, row by row, left to right, up to 4 a fan, as far as the
cards go (the last fans may get fewer cards or none). Cells and foundations are
untouched. The same deal and the same moves therefore always give the same redeals,
and a line that gathers other cards, or the same cards in another order, gets an
unrelated one: what a redeal showed and was taken back tells nothing about another.

Won when all 52 cards are on the foundations. Lost when no card can move and no redeal
is left (all 3 used, or no card left in the fans).
"""
    autoplay_rule = (
        "a cell's card that is the next card of its foundation, at any time (cells are "
        "never redealt and their cards can go nowhere else, so moving it home only frees "
        "the cell); a fan's top card that is the next card of its foundation, but only once "
        "no redeal is left (after the last redeal a fan card can only block the cards under "
        "it or take a cell; while a redeal remains, moving it home changes which cards the "
        "redeal reshuffles, and so the whole reshuffle, which could be worse or better)"
    )

    def make_groups(self) -> tuple[PileGroup, ...]:
        return (
            PileGroup(
                "foundation", FOUNDATIONS, 0, 0,
                description="starts with an Ace; builds up in suit to King",
            ),
            PileGroup(
                "cell", CELLS, 1, 0, capacity=1,
                description="one card each; a cell's card goes only to a foundation",
            ),
            PileGroup(
                "fan", FANS, 2, 0, fan="right", per_row=4,
                description="no building; only the top card moves",
            ),
        )

    def make_counters(self) -> tuple[CounterSpec, ...]:
        return (
            CounterSpec("redeals_used", 0, MAX_REDEALS, "redeals made so far (at most 3)"),
        )

    def deck(self) -> tuple[Card, ...]:
        return full_suit_deck(ALL_RANKS)

    # --- the deal ------------------------------------------------------------------
    def deal_state(self, deal: int) -> State:
        talon = [c for c in pysol_shuffle(self.deck(), deal) if rank_of(c) != ACE]
        foundations = [(make_card(ACE, suit),) for suit in range(FOUNDATIONS)]  # foundation i: suit i
        cells = [(talon.pop(),) for _ in C]
        fans = deal_fans(talon)
        piles = (*foundations, *cells, *(tuple(f) for f in fans))
        return State(piles, (0,), deal)

    # --- moves ---------------------------------------------------------------------
    @staticmethod
    def _foundation_for(piles: tuple[tuple[Card, ...], ...], card: Card) -> int:
        """The foundation that takes ``card`` now, or -1."""
        for f in F:
            fp = piles[f]
            if fp:
                if fp[-1] + 1 == card:  # same suit, next rank (a King has no successor)
                    return f
            elif rank_of(card) == ACE:
                return f
        return -1

    def legal_moves(self, state: State) -> list[Move]:
        piles = state.piles
        moves: list[Move] = []
        MOVE = Action.MOVE
        # the card each foundation takes next (a foundation is never empty in play)
        wants = [piles[f][-1] + 1 if piles[f] else -1 for f in F]
        free = [c for c in C if not piles[c]]
        for c in C:
            p = piles[c]
            if p and p[0] in wants:
                moves.append(Move(MOVE, c, wants.index(p[0]), 1))
        any_fan = False
        for s in FN:
            sp = piles[s]
            if not sp:
                continue
            any_fan = True
            card = sp[-1]
            if card in wants:
                moves.append(Move(MOVE, s, wants.index(card), 1))
            elif -1 in wants and rank_of(card) == ACE:
                moves.append(Move(MOVE, s, wants.index(-1), 1))
            for c in free:
                moves.append(Move(MOVE, s, c, 1))
        if any_fan and state.counters[0] < MAX_REDEALS:
            moves.append(REDEAL)
        return moves

    def _apply(self, state: State, move: Move, events: list[Event] | None) -> State:
        if move.action == Action.REDEAL:
            n = state.counters[0] + 1
            gathered = [c for i in FN for c in state.piles[i]]
            fans = deal_fans(reshuffle(gathered, state.deal, n))
            piles = state.piles[: FN.start] + tuple(tuple(f) for f in fans)
            if events is not None:
                events.append(
                    Event(
                        EventKind.REDEAL,
                        cards=tuple(sorted(gathered)),
                        note=f"redeal {n} of {MAX_REDEALS}: the fans' {len(gathered)} cards "
                        "reshuffled and dealt again",
                    )
                )
            return State(piles, (n,), state.deal)
        new = self.move_cards(state, move.src, move.dst, 1)
        if events is not None:
            events.append(Event(EventKind.MOVE, move.src, move.dst, state.piles[move.src][-1:]))
        return new

    def is_won(self, state: State) -> bool:
        p = state.piles
        return len(p[_F0]) + len(p[_F1]) + len(p[_F2]) + len(p[_F3]) == DECK_CARDS

    def autoplay_move(self, state: State) -> Move | None:
        piles = state.piles
        sources = [*C, *FN] if state.counters[0] >= MAX_REDEALS else list(C)
        for s in sources:
            sp = piles[s]
            if sp:
                f = self._foundation_for(piles, sp[-1])
                if f >= 0:
                    return Move(Action.MOVE, s, f, 1)
        return None

    # --- why a move is illegal ---------------------------------------------------
    def why_illegal(self, state: State, move: Move) -> Rejection | None:
        piles = state.piles
        src_group, dst_group = self.group_of[move.src], self.group_of[move.dst]
        card = piles[move.src][-1]
        if src_group == "foundation":
            return Rejection("foundation-cards-stay", "a card on a foundation never moves again")
        if move.count != 1:
            return Rejection("one-card-at-a-time", "in Small Billee only one card moves at a time")
        if dst_group == "fan":
            if src_group == "cell":
                return Rejection(
                    "cells-never-back-to-fans",
                    "a cell's card goes only to a foundation, never back onto a fan",
                )
            return Rejection(
                "fans-do-not-build", "the fans allow no building: no card is ever put on a fan"
            )
        if dst_group == "cell":
            if src_group == "cell":
                return Rejection("cell-to-cell", "a card never moves from one cell to another")
            return Rejection("cell-occupied", f"{self.ref(move.dst)} already holds a card")
        fp = piles[move.dst]
        if not fp:
            return Rejection("foundation-base", "an empty foundation takes only an Ace")
        if rank_of(fp[-1]) == KING:
            return Rejection("foundation-complete", f"{self.ref(move.dst)} is complete (Ace to King)")
        return Rejection(
            "foundation-builds-up-in-suit",
            f"foundations build up in suit by one: the {card_name(card)} does not go on "
            f"the {card_name(fp[-1])}",
        )

    def why_no_redeal(self, state: State) -> Rejection:
        if state.counters[0] >= MAX_REDEALS:
            return Rejection("redeal-limit", f"all {MAX_REDEALS} redeals have been used")
        return Rejection(
            "redeal-needs-fan-cards", "a redeal gathers the fans' cards, and no fan holds a card"
        )

    def why_no_deal(self, state: State) -> Rejection:
        return Rejection(
            "no-deal", "Small Billee has no stock to deal from (a redeal reshuffles the fans)"
        )

    # --- validation --------------------------------------------------------------
    def validate_piles(self, state: State) -> list[Problem]:
        problems: list[Problem] = []
        piles = state.piles
        for f in F:
            fp = piles[f]
            if not fp or rank_of(fp[0]) != ACE:
                problems.append(
                    Problem(self.pointer(f, 0), "every foundation starts the game with an Ace")
                )
                continue
            for i in range(1, len(fp)):
                if fp[i] != fp[i - 1] + 1:
                    problems.append(
                        Problem(self.pointer(f, i), "foundations build up in suit by one")
                    )
                    break
        for k, s in enumerate(FN):
            limit = FAN_MAX if state.counters[0] or k < FULL_FANS else FAN_MAX - 1
            if len(piles[s]) > limit:
                problems.append(
                    Problem(
                        self.pointer(s),
                        f"fan {k} holds at most {limit} cards "
                        + ("(a deal gives at most 4 a fan)" if limit == FAN_MAX else
                           "before any redeal (fans 6-11 are dealt 3 cards)"),
                    )
                )
        return problems


GAME = SmallBillee
