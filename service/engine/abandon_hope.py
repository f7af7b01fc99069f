"""Abandon Hope: discard all 13 Clubs from 24 two-card piles, with up to 3 reshuffles.

Flat pile indices: tableau 0-23 (4 rows of 6, pile ``6 * row + column``), stock 24,
waste 25. One counter, ``redeals_used`` (0-3).

The deal (docs/rules.md, a game PySolFC lacks): the deck is shuffled with PySolFC's
generator for the deal number and dealt from the end of the list, one card to each
pile 0-23, then a second card to each, the 4 cards left over forming the stock (in list
order, its last card on top). A redeal gathers every card of the tableau (pile 0 to 23,
each bottom to top) and the stock and shuffles them with
:func:`~service.engine.reshuffle.reshuffle` (its seed hashes the deal seed, ``n`` and
the gathered cards in that order), then deals them the same way.
"""

from __future__ import annotations

from .cards import ALL_RANKS, CLUBS, SUITS, Card, card_name, full_suit_deck, make_card, suit_of
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

PILES = 24
PER_PILE = 2
# Flat pile indices, in the order of make_groups: the tableau, the stock, the waste
T = range(0, PILES)
STOCK = T.stop
WASTE = STOCK + 1
MAX_REDEALS = 3
CLUB_COUNT = len(ALL_RANKS)
STOCK_CARDS = len(ALL_RANKS) * len(SUITS) - PILES * PER_PILE  # the deal's cards beyond the tableau's
#: The Clubs, as a set: legal-move generation asks it of every pile's top, where a
#: call to ``suit_of`` per pile would cost measurably.
CLUB_CARDS = frozenset(make_card(r, CLUBS) for r in ALL_RANKS)


def deal_layout(talon: list[Card]) -> tuple[tuple[Card, ...], ...]:
    """Tableau piles then the stock: ``talon`` dealt from its end, one card to each pile
    per round, 2 rounds, as far as the cards go; the rest is the stock (list order)."""
    piles: list[tuple[Card, ...]] = [() for _ in T]
    for _round in range(PER_PILE):
        for t in T:
            if not talon:
                break
            piles[t] = piles[t] + (talon.pop(),)
    return (*piles, tuple(talon))


class AbandonHope(Game):
    id = "abandon-hope"
    name = "Abandon Hope"
    decks = 1
    summary = "Discard all 13 Clubs from 24 two-card piles; three reshuffles to help."
    has_deal = False
    has_redeal = True
    redeals_reshuffle = True
    rules_text = """
One deck of 52. Goal: discard all 13 Clubs.

Deal. The deck is shuffled exactly as PySolFC shuffles a one-deck deal of that number
(PySolFC itself does not have this game) and dealt from the end of the shuffled list
to 24 tableau piles laid out in 4 rows of 6 (pile 6 x row + column): one card to each
pile, pile 0 to pile 23 (row by row, left to right), then a second card to each pile
the same way. The 4 cards left over form the face-down stock, in the order they were
left (the last card of the list on top).

Only the top card of a tableau pile is available. A Club that is available may be
discarded to the waste, one card at a time, in any order. There are no other card
moves: nothing builds, empty piles stay empty, and the player never deals from the
stock; its cards come back into play only through a redeal.

Redeal (up to 3, at any time before the game is won). All cards left in the tableau
and the stock are gathered in this order: tableau pile 0 to pile 23, each from its
bottom card to its top card, then the stock from its bottom card to its top card.
Their shuffle's number is drawn from the deal's seed, n and the gathered cards in that
order (docs/rules.md "Determinism"), where n is 1 for the first redeal, 2 for the
second and 3 for the third; the cards are sorted by suit (C, D, H, S) then rank and
shuffled exactly as PySolFC shuffles the deck for that number, the sorted cards
standing in for the deck; then they are dealt again exactly as at the start, from the
end of the shuffled list: one card to each pile, a second card to each pile, as far
as the cards go, and any cards left over (only when more than 48 were gathered) form
the stock. The waste is untouched. The same deal and the same moves therefore always
give the same redeals, and a line that gathers other cards (another Club discarded)
gets an unrelated one: what a redeal showed and was taken back tells nothing about
another.

Won when all 13 Clubs are in the waste. Lost when no Club is available and no redeal
is left.
"""
    autoplay_rule = (
        "every available Club, once no redeal is left or when discarding the available Clubs "
        "over and over would discard all 13 without a redeal (a discard only uncovers the "
        "card under it and never makes another discard impossible, so with no redeal to come "
        "it can only help; while a redeal remains, a discarded Club is no longer gathered, "
        "which changes the whole next reshuffle, for better or worse, so it is not made "
        "automatically unless it wins outright)"
    )

    def make_groups(self) -> tuple[PileGroup, ...]:
        return (
            PileGroup(
                "tableau", PILES, 1, 0, fan="down", per_row=6,
                description="2 cards dealt to each; only the top card is available",
            ),
            PileGroup(
                "stock", 1, 0, 0, face_down=True,
                description="the 4 cards left over by the deal; never dealt, gathered by a redeal",
            ),
            PileGroup("waste", 1, 0, 1, description="the discarded Clubs"),
        )

    def make_counters(self) -> tuple[CounterSpec, ...]:
        return (
            CounterSpec("redeals_used", 0, MAX_REDEALS, "redeals made so far (at most 3)"),
        )

    def deck(self) -> tuple[Card, ...]:
        return full_suit_deck(ALL_RANKS)

    # --- the deal ------------------------------------------------------------------
    def deal_state(self, deal: int) -> State:
        layout = deal_layout(pysol_shuffle(self.deck(), deal))
        return State((*layout, ()), (0,), deal)

    # --- moves ---------------------------------------------------------------------
    def legal_moves(self, state: State) -> list[Move]:
        piles = state.piles
        if len(piles[WASTE]) == CLUB_COUNT:
            return []
        MOVE = Action.MOVE
        moves = [Move(MOVE, t, WASTE, 1) for t, p in enumerate(piles[:PILES]) if p and p[-1] in CLUB_CARDS]
        if state.counters[0] < MAX_REDEALS:
            moves.append(REDEAL)
        return moves

    def _apply(self, state: State, move: Move, events: list[Event] | None) -> State:
        piles = state.piles
        if move.action == Action.REDEAL:
            n = state.counters[0] + 1
            gathered = [c for i in (*T, STOCK) for c in piles[i]]
            layout = deal_layout(reshuffle(gathered, state.deal, n))
            if events is not None:
                events.append(
                    Event(
                        EventKind.REDEAL,
                        cards=tuple(sorted(gathered)),
                        note=f"redeal {n} of {MAX_REDEALS}: the tableau and stock's "
                        f"{len(gathered)} cards reshuffled and dealt again",
                    )
                )
            return State((*layout, piles[WASTE]), (n,), state.deal)
        src = piles[move.src]
        card = src[-1]
        lst = list(piles)
        lst[move.src] = src[:-1]
        lst[WASTE] = piles[WASTE] + (card,)
        if events is not None:
            events.append(Event(EventKind.MOVE, move.src, WASTE, (card,)))
        return State(tuple(lst), state.counters, state.deal)

    def is_won(self, state: State) -> bool:
        return len(state.piles[WASTE]) == CLUB_COUNT

    def _discards_win(self, state: State) -> bool:
        """Would discarding every available Club, again and again, discard all 13?"""
        total = len(state.piles[WASTE])
        for t in T:
            p = state.piles[t]
            k = len(p)
            while k and p[k - 1] in CLUB_CARDS:
                k -= 1
            total += len(p) - k
        return total == CLUB_COUNT

    def autoplay_move(self, state: State) -> Move | None:
        piles = state.piles
        if state.counters[0] < MAX_REDEALS and not self._discards_win(state):
            return None
        for t in T:
            if piles[t] and piles[t][-1] in CLUB_CARDS:
                return Move(Action.MOVE, t, WASTE, 1)
        return None

    # --- why a move is illegal ---------------------------------------------------
    def why_illegal(self, state: State, move: Move) -> Rejection | None:
        card = state.piles[move.src][-1]
        if move.src == WASTE:
            return Rejection("discards-stay", "a discarded Club never leaves the waste")
        if move.src == STOCK:
            return Rejection(
                "stock-not-played",
                "the stock is never dealt: its cards come back into play only by a redeal",
            )
        if move.count != 1:
            return Rejection("one-card-at-a-time", "Clubs are discarded one at a time")
        if move.dst != WASTE:
            return Rejection(
                "discard-only",
                "the only card move is discarding an available Club to the waste: nothing is "
                "ever put on a tableau pile or the stock",
            )
        return Rejection(
            "only-clubs-discarded", f"only Clubs are discarded, not the {card_name(card)}"
        )

    def why_no_deal(self, state: State) -> Rejection:
        return Rejection(
            "stock-never-dealt",
            "the stock of Abandon Hope is never dealt: its cards come back into play only by a "
            "redeal",
        )

    def why_no_redeal(self, state: State) -> Rejection:
        return Rejection("redeal-limit", f"all {MAX_REDEALS} redeals have been used")

    # --- validation --------------------------------------------------------------
    def validate_piles(self, state: State) -> list[Problem]:
        problems: list[Problem] = []
        piles = state.piles
        for i, c in enumerate(piles[WASTE]):
            if suit_of(c) != CLUBS:
                problems.append(
                    Problem(self.pointer(WASTE, i), f"only Clubs are discarded, not the {card_name(c)}")
                )
        for t in T:
            if len(piles[t]) > PER_PILE:
                problems.append(
                    Problem(self.pointer(t), f"a tableau pile is dealt {PER_PILE} cards and never gains any")
                )
        stock, waste = len(piles[STOCK]), len(piles[WASTE])
        if state.counters[0] == 0:
            if stock != STOCK_CARDS:
                problems.append(
                    Problem(
                        self.pointer(STOCK),
                        "before any redeal the stock holds the 4 cards the deal left over",
                    )
                )
        elif stock > STOCK_CARDS:
            problems.append(
                Problem(self.pointer(STOCK), "the stock holds at most the 4 cards beyond 48")
            )
        elif waste < STOCK_CARDS - stock:
            # a redeal of m cards leaves max(0, m - 48) in the stock, and m = 52 - (Clubs
            # then discarded), so the waste holds at least 4 - (stock size) Clubs.
            problems.append(
                Problem(
                    self.pointer(STOCK),
                    f"a redeal leaves in the stock only the cards beyond 48, so {stock} stock "
                    f"card(s) need at least {STOCK_CARDS - stock} Club(s) already discarded "
                    f"(there are {waste})",
                )
            )
        return problems


GAME = AbandonHope
