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
    return (card >> 4) in (DIAMONDS, HEARTS)


def format_card(card: Card) -> str:
    return RANKS[(card & 15) - 1] + SUITS[card >> 4]


def card_name(card: Card) -> str:
    """``'Ten of Hearts'``: for messages meant for people."""
    return f"{RANK_NAMES[card & 15]} of {SUIT_NAMES[card >> 4]}"


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
