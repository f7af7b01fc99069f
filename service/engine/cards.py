"""Cards as small ints, and their two-character notation.

A card is ``suit << 4 | rank`` with rank 1 (Ace) .. 13 (King) and suit 0..3 in the
order C, D, H, S. Small ints keep states compact and hashing cheap in the solver's
inner loop; the text form ``"TH"`` exists only at the edges.

>>> format_card(parse_card("10h"))
'TH'
>>> rank_of(parse_card("KS")), suit_of(parse_card("KS"))
(13, 3)
"""

from __future__ import annotations

from typing import Final

Card = int

RANKS: Final = "A23456789TJQK"
SUITS: Final = "CDHS"
CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
ACE, JACK, QUEEN, KING = 1, 11, 12, 13

RANK_NAMES: Final = {
    1: "Ace", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven",
    8: "Eight", 9: "Nine", 10: "Ten", 11: "Jack", 12: "Queen", 13: "King",
}
SUIT_NAMES: Final = ("Clubs", "Diamonds", "Hearts", "Spades")


class CardError(ValueError):
    """Raised for text that is not a card."""


def make_card(rank: int, suit: int) -> Card:
    return suit << 4 | rank


def rank_of(card: Card) -> int:
    return card & 15


def suit_of(card: Card) -> int:
    return card >> 4


def is_red(card: Card) -> bool:
    return suit_of(card) in (DIAMONDS, HEARTS)


def rank_above(rank: int) -> int:
    """The next rank up, King wrapping to Ace."""
    return rank % 13 + 1


def rank_below(rank: int) -> int:
    """The next rank down, Ace wrapping to King."""
    return (rank - 2) % 13 + 1


def next_in_suit(card: Card) -> Card:
    """The same suit's card one rank higher, King wrapping to Ace."""
    return make_card(rank_above(rank_of(card)), suit_of(card))


def format_card(card: Card) -> str:
    return RANKS[rank_of(card) - 1] + SUITS[suit_of(card)]


def card_name(card: Card) -> str:
    """``'Ten of Hearts'``: for messages meant for people."""
    return f"{RANK_NAMES[rank_of(card)]} of {SUIT_NAMES[suit_of(card)]}"


def rank_name(rank: int) -> str:
    return RANK_NAMES[rank]


def _spellings() -> dict[str, Card]:
    """Every accepted spelling of every card: ``TH``, ``th``, ``tH``, ``10H``, ``10h``..."""
    out: dict[str, Card] = {}
    for r, rank_char in enumerate(RANKS, start=1):
        ranks = [rank_char, rank_char.lower()] + (["10"] if rank_char == "T" else [])
        for s, suit_char in enumerate(SUITS):
            for rc in ranks:
                for sc in (suit_char, suit_char.lower()):
                    out[rc + sc] = make_card(r, s)
    return out


CARD_CODES: Final = _spellings()


def parse_card(text: str) -> Card:
    """Read ``"TH"``, ``"10h"``, ``"th"``; raise :class:`CardError` otherwise."""
    card = CARD_CODES.get(text) if isinstance(text, str) else None
    if card is None:
        raise CardError(f"{text!r} is not a card (expected rank A23456789TJQK then suit CDHS, e.g. 'TH')")
    return card


def full_suit_deck(ranks: tuple[int, ...], decks: int = 1) -> tuple[Card, ...]:
    """Cards in PySolFC's creation order: deck by deck, suits C S H D, ranks as given.

    The order matters only as the input of the shuffle (deal numbers are shared with
    PySolFC); everywhere else a deck is a multiset.
    """
    order = (CLUBS, SPADES, HEARTS, DIAMONDS)
    return tuple(make_card(r, s) for _ in range(decks) for s in order for r in ranks)


ALL_RANKS: Final = tuple(range(1, 14))

# Tables indexed by a packed card (every card is below CARD_SLOTS), for the engines'
# and solvers' inner loops: a subscript of a local name costs about what ``card & 15``
# does, where a call of the accessor above costs several times that. -1 where the
# index is not a card.
CARD_SLOTS: Final = 64
ALL_CARDS: Final = tuple(make_card(r, s) for s in range(4) for r in ALL_RANKS)
RANK_OF: Final[tuple[int, ...]] = tuple(rank_of(c) if c in ALL_CARDS else -1 for c in range(CARD_SLOTS))
SUIT_OF: Final[tuple[int, ...]] = tuple(suit_of(c) if c in ALL_CARDS else -1 for c in range(CARD_SLOTS))
NEXT_IN_SUIT: Final[tuple[int, ...]] = tuple(
    next_in_suit(c) if c in ALL_CARDS else -1 for c in range(CARD_SLOTS)
)
