"""PySolFC-compatible shuffling, so that deal N here is deal N in PySolFC.

Players quote PySolFC deal numbers; reproducing them needs PySolFC's exact
random generators, its card creation order, its Microsoft FreeCell
rearrangement and its Fisher-Yates variant.  This module reproduces those
facts (read from PySolFC's ``pysollib/pysolrandom.py``,
``pysollib/game/__init__.py`` ``Game.shuffle`` and ``pysol_cards``, which
PySolFC imports for ``ms_rearrange`` and ``RandomBase``); the per-game hooks
and deal orders are in ``docs/pysolfc-deals.md``.

How PySolFC seeds a game (``constructRandom`` and ``Game.shuffle``):

* A deal number typed in by the player is cleaned (whitespace and the
  characters ``# - _ . ,`` are removed, so ``"-5"`` means 5), then
  ``0 <= N < 32000`` gives the Microsoft FreeCell generator (``LCRandom31``)
  and anything else gives ``MTRandom(N)``, a ``random2.Random(N)``.  PySol
  before PySolFC (and ``pysol_cards``) used ``N <= 32000``; current PySolFC
  sends deal 32000 to the Mersenne Twister, and so does this module.
* ``random2.Random(N).random()`` is the C Mersenne Twister seeded by
  ``init_by_array`` on the 32-bit words of ``N``: exactly what Python 3's
  ``random.Random(N).random()`` gives for an int, which this module uses.
* A random new game (no number typed) draws ``N`` from
  ``[10**16, 10**20)`` and always uses the Mersenne Twister.
* ``BasicRandom.MAX_SEED`` is ``10**20``: numbers are shown zero-padded to
  20 digits and "next game number" wraps after ``10**20`` to 0.
  ``constructRandom`` itself puts no upper bound on Mersenne Twister seeds;
  this module accepts ``0 <= deal <= PYSOL_MAX_SEED`` (``10**20``), the range
  PySolFC calls valid.
* Deal 0 is valid in PySolFC (``LCRandom31(0)``; the Microsoft game and
  ``pysol_cards`` reject it).
* Game numbers with the prefix ``ms`` (``"ms123"``) always use the
  Microsoft generator, up to ``2**33 - 1``; plain numbers never reach the
  ``ms`` extensions for seeds of ``2**31`` and more, so they are not here.
* ``Game.shuffle`` copies the cards in creation order, applies
  ``ms_rearrange`` only when the generator is ``LCRandom31`` (and that
  function changes nothing unless there are exactly 52 cards), resets the
  generator to the deal's seed, runs the Fisher-Yates loop below, calls the
  game's ``_shuffleHook`` and puts the list on the talon in list order:
  index 0 is the bottom card and the *last* card is the top one, dealt
  first.  Shuffles during play (``shuffleStackMove``) go on with the same
  generator; this service derives those from the deal number and a count
  instead, so they are not reproduced here.

Test vectors.  Microsoft FreeCell deal #1 (FreeCell deals 8 piles row by
row from the top of the talon, i.e. from the end of the list):

>>> deck = pysol_deck()
>>> dealt = pysol_shuffle(deck, 1)[::-1]
>>> rows = [" ".join(dealt[i:i + 8]) for i in range(0, 52, 8)]
>>> rows  # doctest: +NORMALIZE_WHITESPACE
['JD 2D 9H JC 5D 7H 7C 5H', 'KD KC 9S 5S AD QC KH 3H',
 '2S KS 9D QD JS AS AH 3C', '4C 5C TS QH 4H AC 4D 7S',
 '3S TD 4S TH 8H 2C JH 7D', '6D 8S 8D QS 6C 3D 8C TC',
 '6S 9C 2H 6H']

PySolFC's own tests (``tests/lib/pysol_tests/ms_deals1``) print FreeCell
deals pile by pile, bottom card first:

>>> def freecell(deal: int) -> list[str]:
...     dealt = pysol_shuffle(deck, deal)[::-1]
...     return [" ".join(dealt[p::8]) for p in range(8)]
>>> freecell(24)[0], freecell(24)[7]
('4C 2C 9C 8C QS 4S 2H', '7S 6C 7D 4D 8S 9D')
>>> freecell(123456)  # Mersenne Twister  # doctest: +NORMALIZE_WHITESPACE
['3D 6C AS TS QC 8D 4D', '2D TC 4H JD TD 2H 5C', '2C 8S AH KD KH 5S 7C',
 '9C 8C QH 3C 5D 9S QD', 'AC 9D 7H 6D KS JH', '6H TH 8H QS 7D JC',
 '4C 2S 3S 6S 5H 3H', 'KC JS 9H 4S 7S AD']
>>> freecell(300000000000)[0], freecell(300000000000)[7]
('4S KD 6H 2D QC 4D AH', 'KH 3S TD 5D 7H AD')

Binary Star deal 240000 (from ``pysol_cards``' tests, made with PySolFC's
dealing): two decks; the first deck's AS and KH (creation indices 13 and
38) go to the stars, the other 102 cards are dealt to 17 fans row by row:

>>> two_decks = pysol_deck(decks=2)
>>> order = pysol_shuffle(range(104), 240000)
>>> dealt = [two_decks[i] for i in order if i not in (13, 38)][::-1]
>>> " ".join(dealt[0::17]), " ".join(dealt[16::17])
('5H 6H 2C QD 4H 4C', '8D 8S JH JC AD 2D')
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, TypeVar

T = TypeVar("T")

#: Deal numbers below this use the Microsoft FreeCell generator.
MS_DEALS_BELOW = 32000
#: Largest deal number PySolFC calls valid (``BasicRandom.MAX_SEED``).
PYSOL_MAX_SEED = 10**20

#: Only a deck of exactly this many cards gets the Microsoft rearrangement.
MS_DECK_SIZE = 52

#: PySolFC's suit creation order.
SUITS = "CSHD"
#: The 13 ranks, Ace first, as cards are created.
RANKS = "A23456789TJQK"
#: Where each suit of Microsoft's order (C, D, H, S) starts in PySolFC's creation order.
MS_SUIT_OFFSETS = tuple(SUITS.index(suit) * len(RANKS) for suit in "CDHS")


class DealRandom(Protocol):
    """What the shuffle needs from a generator: PySolFC's ``randint``."""

    def randint(self, a: int, b: int) -> int:
        """Return an integer in ``[a, b]``, both ends included."""
        ...


class MsFreeCellRandom:
    """Microsoft FreeCell's linear congruential generator (``LCRandom31``).

    PySolFC masks the state with 33 bits, not 31; the output only uses bits
    16-30, which do not depend on the higher bits, so plain ``mod 2**31``
    gives the same numbers.
    """

    def __init__(self, seed: int) -> None:
        """Start from ``seed``, which must fit the 31-bit state."""
        if not 0 <= seed < 2**31:
            raise ValueError(f"Microsoft FreeCell seed out of range: {seed}")
        self._state = seed

    def next_value(self) -> int:
        """Advance the state and return the 15-bit output."""
        self._state = (self._state * 214013 + 2531011) % 2**31
        return (self._state >> 16) & 0x7FFF

    def randint(self, a: int, b: int) -> int:
        """Return ``a + r mod (b + 1 - a)``, as PySolFC and the MS game do."""
        return a + self.next_value() % (b + 1 - a)


class MersenneRandom:
    """PySolFC's ``MTRandom``: Python's Mersenne Twister seeded with N.

    ``randint`` is PySolFC's (``RandomBase.randint``), not Python's: it
    scales one ``random()`` float, where Python 3's ``randint`` draws bits.
    """

    def __init__(self, seed: int) -> None:
        """Seed exactly as ``random2.Random(seed)`` does for an int."""
        self._rng = random.Random(seed)

    def randint(self, a: int, b: int) -> int:
        """Return ``a + int(random() * (b + 1 - a))``."""
        return a + int(self._rng.random() * (b + 1 - a))


def pysol_random(deal: int) -> DealRandom:
    """Return the generator PySolFC uses for ``deal``, freshly seeded."""
    if isinstance(deal, bool) or not isinstance(deal, int):
        raise TypeError(f"deal number must be an int, not {type(deal).__name__}")
    if not 0 <= deal <= PYSOL_MAX_SEED:
        raise ValueError(f"deal number out of range 0..{PYSOL_MAX_SEED}: {deal}")
    if deal < MS_DEALS_BELOW:
        return MsFreeCellRandom(deal)
    return MersenneRandom(deal)


def ms_rearrange(cards: Sequence[T]) -> list[T]:
    """Reorder a 52-card deck rank-major, as Microsoft FreeCell numbers it.

    The input is in PySolFC creation order (suits C, S, H, D, each Ace to
    King); the output is AC AD AH AS 2C 2D ... KS (suit order C, D, H, S
    within each rank).  Any other count of cards is returned unchanged, as
    PySolFC's ``ms_rearrange`` does.
    """
    if len(cards) != MS_DECK_SIZE:
        return list(cards)
    return [cards[rank + offset] for rank in range(len(RANKS)) for offset in MS_SUIT_OFFSETS]


def fisher_yates(cards: list[T], rng: DealRandom) -> None:
    """Shuffle in place from the end, the loop PySolFC and MS FreeCell use."""
    for n in range(len(cards) - 1, 0, -1):
        j = rng.randint(0, n)
        cards[n], cards[j] = cards[j], cards[n]


def pysol_shuffle(cards: Sequence[T], deal: int) -> list[T]:
    """Return ``cards`` shuffled exactly as PySolFC shuffles deal ``deal``.

    ``cards`` must be in PySolFC's creation order: deck by deck, suits C, S,
    H, D, each suit in the game's rank order, Ace first (see
    :func:`pysol_deck`).  Shuffling creation indices (``range(n)``) instead of
    card names keeps the two copies of a card apart in two-deck games.

    The result is PySolFC's talon *before* the game's ``_shuffleHook``:
    index 0 is the bottom card and the last card is the top card, dealt
    first; ``result[::-1]`` is the dealing order.
    """
    rng = pysol_random(deal)
    deck = list(cards)
    if isinstance(rng, MsFreeCellRandom):
        deck = ms_rearrange(deck)
    fisher_yates(deck, rng)
    return deck


def pysol_deck(decks: int = 1, ranks: str = RANKS) -> list[str]:
    """Return card names in PySolFC creation order, e.g. for stripped decks.

    ``ranks`` lists the game's ranks, Ace first, using the characters of
    :data:`RANKS` (Amazons: ``"A789TJQ"``, Boomerang: ``"A789TJQK"``).
    """
    if decks < 1:
        raise ValueError(f"need at least one deck, got {decks}")
    unknown = set(ranks) - set(RANKS)
    if unknown:
        raise ValueError(f"unknown ranks: {''.join(sorted(unknown))}")
    return [rank + suit for _ in range(decks) for suit in SUITS for rank in ranks]
