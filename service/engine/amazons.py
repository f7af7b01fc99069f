"""Amazons: a 28-card stripped deck, 4 reserves under 4 foundations, endless redeals.

Flat pile indices: foundations 0-3, reserves 4-7 (reserve ``i`` sits under
foundation ``i``), stock 8. Counters: ``progress_this_pass`` (0/1: a card went to a
foundation during the current pass) and ``idle_passes`` (0/1: the last completed pass
moved no card to a foundation).

The deal is PySolFC's (game 406): its shuffle hook changes nothing and its start deals
one card to each reserve, left to right, from the end of the shuffled list; the other
24 cards stay in the stock in list order (the last one is dealt next).
"""

from __future__ import annotations

from itertools import pairwise

from .cards import ACE, CARD_SLOTS, QUEEN, SUITS, Card, card_name, format_card, full_suit_deck, make_card, rank_of
from .core import (
    DEAL,
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
from .shuffle import pysol_shuffle

RANKS = (ACE, 7, 8, 9, 10, 11, QUEEN)
FOUNDATION_SIZE = len(RANKS)
FOUNDATIONS = 4
RESERVES = FOUNDATIONS  # reserve i under foundation i
DECK_CARDS = FOUNDATION_SIZE * len(SUITS)

# Flat pile indices, in the order of make_groups: foundations, reserves, the stock
F = range(0, FOUNDATIONS)
R = range(F.stop, F.stop + RESERVES)
STOCK = R.stop
ABOVE = R.start - F.start  # reserve r feeds foundation r - ABOVE
# The foundations one by one: is_won (the search's test of every position) adds their
# lengths without a loop, which would cost measurably there.
_F0, _F1, _F2, _F3 = F

# NEXT[card] is the card that follows ``card`` on a foundation (A 7 8 9 T J Q), or -1;
# ACES the Aces. Tables, because legal-move generation asks them of every reserve's
# top, where calls to the cards.py accessors would cost measurably.
NEXT: list[int] = [-1] * CARD_SLOTS
for _suit in range(len(SUITS)):
    for _a, _b in pairwise(RANKS):
        NEXT[make_card(_a, _suit)] = make_card(_b, _suit)
ACES = frozenset(make_card(ACE, suit) for suit in range(len(SUITS)))


class Amazons(Game):
    id = "amazons"
    name = "Amazons"
    decks = 1
    summary = "A 28-card numerica: four reserves feed the foundation above them, redealt without shuffle."
    has_deal = True
    has_redeal = True
    rules_text = """
One deck stripped to A, 7, 8, 9, T, J, Q: 28 cards (PySolFC game 406; deal N lays out
the same cards as PySolFC's deal N).

Foundations (4). Each builds up in suit in the order A 7 8 9 T J Q (7 cards). Cards
come only from the reserves. An Ace from any reserve goes to the first (leftmost)
empty foundation, and only there, so the foundations are always filled from the left;
each foundation's suit is the suit of the Ace that started it.

Reserves (4, reserve i under foundation i). The deal puts 1 card on each. Only the top
card of a reserve is available, and it may go only to the foundation directly above
it (if it is that foundation's next card), except an Ace, which goes to the first empty
foundation. Nothing else ever goes onto a reserve except by a deal.

Stock (24 cards at the start, face down). A deal puts one card from the stock on each
reserve in turn, reserve 0 to reserve 3, skipping a reserve whose foundation is
complete (ends with its Queen), as far as the stock's cards go.

Redeal. When the stock is empty, a redeal gathers the reserves into a new stock,
without shuffling: reserve 0 first, each pile bottom to top, so the next deal starts
with what was the bottom card of reserve 0, then the card above it, and so on through
reserve 3. The redeal only gathers; the player then deals as usual.

Passes. A pass through the stock starts when a stock is formed (at the start of the
game, or by a redeal) and lasts until the next redeal; it is complete once its stock
has been dealt out, and every card moved to a foundation during it counts for it,
including moves made before its first deal or after its last one. A redeal is allowed
(whenever the stock is empty and the game is not won) unless the last two complete
passes moved no card to a foundation: that is, unless the pass now ending moved no
card to a foundation and neither did the pass before it. There is no other limit on
the number of redeals. The counters progress_this_pass (1 once a card has gone to a
foundation during the current pass) and idle_passes (1 when the last completed pass
moved no card to a foundation) record this.

Won when all 28 cards are on the foundations. Lost when the stock is empty, no reserve
card can go to a foundation and no redeal is allowed.
"""
    autoplay_rule = (
        "none. Every foundation move changes what later deals do: the redeal gathers the "
        "reserves without shuffling, so a card left on a reserve shifts the order of every "
        "later deal (and a card left on top can be covered and kept for the next pass, "
        "which may turn out better); an Ace decides which foundation (and so which reserve) "
        "its suit gets; a Queen completes a foundation, after which its reserve is skipped "
        "by the deals. No foundation move is provably harmless, so none is made "
        "automatically."
    )

    def make_groups(self) -> tuple[PileGroup, ...]:
        return (
            PileGroup(
                "foundation", FOUNDATIONS, 0, 2,
                description="builds up in suit A 7 8 9 T J Q; an Ace starts the leftmost empty one",
            ),
            PileGroup(
                "reserve", RESERVES, 1, 2, fan="down",
                description="its top card goes only to the foundation above it (an Ace: to the "
                "leftmost empty foundation)",
            ),
            PileGroup(
                "stock", 1, 0, 0, face_down=True,
                description="a deal puts one card on each reserve whose foundation is not complete",
            ),
        )

    def make_counters(self) -> tuple[CounterSpec, ...]:
        return (
            CounterSpec(
                "progress_this_pass", 0, 1,
                "1 once a card has gone to a foundation during the current pass through the stock",
            ),
            CounterSpec(
                "idle_passes", 0, 1,
                "1 when the last completed pass moved no card to a foundation (a second idle "
                "pass ends the game)",
            ),
        )

    def deck(self) -> tuple[Card, ...]:
        return full_suit_deck(RANKS)

    # --- the deal ------------------------------------------------------------------
    def deal_state(self, deal: int) -> State:
        talon = pysol_shuffle(self.deck(), deal)
        reserves = [(talon.pop(),) for _ in R]
        return State((*((),) * FOUNDATIONS, *reserves, tuple(talon)), (0, 0), deal)

    # --- moves ---------------------------------------------------------------------
    @staticmethod
    def _target(piles: tuple[tuple[Card, ...], ...], r: int) -> int:
        """The foundation that takes the top card of reserve pile ``r`` now, or -1."""
        card = piles[r][-1]
        if card in ACES:
            for f in F:
                if not piles[f]:
                    return f
            return -1
        fp = piles[r - ABOVE]
        if fp and NEXT[fp[-1]] == card:
            return r - ABOVE
        return -1

    @staticmethod
    def _redeal_allowed(state: State) -> bool:
        piles = state.piles
        if piles[STOCK]:
            return False
        if not any(piles[r] for r in R):
            return False  # nothing to gather: every card is home
        progress, idle = state.counters
        return bool(progress or not idle)

    def legal_moves(self, state: State) -> list[Move]:
        piles = state.piles
        moves: list[Move] = []
        for r in R:
            if piles[r]:
                f = self._target(piles, r)
                if f >= 0:
                    moves.append(Move(Action.MOVE, r, f, 1))
        if piles[STOCK]:
            moves.append(DEAL)
        elif self._redeal_allowed(state):
            moves.append(REDEAL)
        return moves

    def _apply(self, state: State, move: Move, events: list[Event] | None) -> State:
        piles = state.piles
        if move.action == Action.MOVE:
            new = self.move_cards(state, move.src, move.dst, 1)
            if events is not None:
                events.append(Event(EventKind.MOVE, move.src, move.dst, piles[move.src][-1:]))
            return State(new.piles, (1, state.counters[1]), state.deal)
        if move.action == Action.DEAL:
            stock = list(piles[STOCK])
            lst = list(piles)
            for r in R:
                if not stock:
                    break
                if len(piles[r - ABOVE]) < FOUNDATION_SIZE:
                    card = stock.pop()
                    lst[r] = lst[r] + (card,)
                    if events is not None:
                        events.append(Event(EventKind.DEAL, STOCK, r, (card,)))
            lst[STOCK] = tuple(stock)
            return State(tuple(lst), state.counters, state.deal)
        # REDEAL: gather reserve 0 first, each bottom to top; the first gathered card is
        # dealt first, so it ends on top (at the end) of the stock.
        gathered = tuple(c for r in R for c in piles[r])
        progress, idle = state.counters
        if events is not None:
            events.append(
                Event(
                    EventKind.REDEAL,
                    dst=STOCK,
                    cards=gathered,
                    note="the reserves gathered into a new stock, unshuffled"
                    + ("" if progress else "; this pass moved no card to a foundation"),
                )
            )
        return State(
            (*piles[F.start : F.stop], *((),) * RESERVES, gathered[::-1]),
            (0, 0 if progress else idle + 1),
            state.deal,
        )

    def is_won(self, state: State) -> bool:
        p = state.piles
        return len(p[_F0]) + len(p[_F1]) + len(p[_F2]) + len(p[_F3]) == DECK_CARDS

    # --- why a move is illegal ---------------------------------------------------
    def why_illegal(self, state: State, move: Move) -> Rejection | None:
        piles = state.piles
        src_group, dst_group = self.group_of[move.src], self.group_of[move.dst]
        card = piles[move.src][-1]
        if src_group == "foundation":
            return Rejection("foundation-cards-stay", "a card on a foundation never moves again")
        if src_group == "stock":
            return Rejection(
                "stock-is-dealt", "the stock's cards come into play only by a deal (action 'deal')"
            )
        if move.count != 1:
            return Rejection("one-card-at-a-time", "in Amazons only one card moves at a time")
        if dst_group == "reserve":
            return Rejection(
                "reserves-take-only-deals",
                "nothing is ever put on a reserve except by a deal; a reserve's top card goes "
                "only to a foundation",
            )
        if dst_group == "stock":
            return Rejection("stock-takes-no-cards", "cards go back to the stock only by a redeal")
        # destination: a foundation
        f = move.dst
        fp = piles[f]
        if rank_of(card) == ACE:
            first = next((i for i in F if not piles[i]), -1)
            if first < 0:
                return Rejection("foundation-no-empty", "every foundation has been started")
            return Rejection(
                "ace-to-first-empty-foundation",
                f"an Ace goes only to the first (leftmost) empty foundation, {self.ref(first)}",
            )
        if f != move.src - ABOVE:
            return Rejection(
                "reserve-feeds-foundation-above",
                f"a reserve's card goes only to the foundation directly above it: "
                f"{self.ref(move.src)} feeds {self.ref(move.src - ABOVE)}",
            )
        if not fp:
            return Rejection("foundation-base", "an empty foundation takes only an Ace")
        if len(fp) == FOUNDATION_SIZE:
            return Rejection("foundation-complete", f"{self.ref(f)} is complete (A to Q)")
        return Rejection(
            "foundation-builds-up-in-suit",
            f"foundations build up in suit in the order A 7 8 9 T J Q: the {card_name(card)} "
            f"does not go on the {card_name(fp[-1])}",
        )

    def why_no_deal(self, state: State) -> Rejection:
        return Rejection(
            "stock-empty", "the stock is empty: redeal to gather the reserves into a new stock"
        )

    def why_no_redeal(self, state: State) -> Rejection:
        if state.piles[STOCK]:
            return Rejection(
                "redeal-needs-empty-stock", "a redeal is allowed only once the stock is empty"
            )
        return Rejection(
            "two-idle-passes",
            "neither this pass through the stock nor the one before it moved a card to a "
            "foundation: no more redeals, the game is over",
        )

    # --- validation --------------------------------------------------------------
    def validate_piles(self, state: State) -> list[Problem]:
        problems: list[Problem] = []
        piles = state.piles
        seen_empty = False
        for f in F:
            fp = piles[f]
            if not fp:
                seen_empty = True
                continue
            if seen_empty:
                problems.append(
                    Problem(
                        self.pointer(f),
                        "Aces go to the leftmost empty foundation, so the started foundations "
                        "are always the leftmost ones",
                    )
                )
            if rank_of(fp[0]) != ACE:
                problems.append(Problem(self.pointer(f, 0), "a foundation starts with an Ace"))
                continue
            for i in range(1, len(fp)):
                if NEXT[fp[i - 1]] != fp[i]:
                    problems.append(
                        Problem(
                            self.pointer(f, i),
                            f"foundations build up in suit A 7 8 9 T J Q: "
                            f"{format_card(fp[i])} cannot follow {format_card(fp[i - 1])}",
                        )
                    )
                    break
        if state.counters[0] and not any(piles[f] for f in F):
            problems.append(
                Problem(
                    "/counters/progress_this_pass",
                    "progress_this_pass is 1 but no card is on a foundation",
                )
            )
        return problems


GAME = Amazons
