"""Reshuffles during play (redeals that shuffle), derived from the deal seed and the cards.

docs/rules.md "Determinism": every later shuffle is determined by the deal seed, the
count of earlier reshuffles and the cards gathered, in the order the game's redeal
gathers them, so replaying the same moves from the same deal always gives the same
game, while a line that gathers other cards, or the same cards in another order, gets
an unrelated reshuffle (no peek: what an undone redeal showed tells nothing about a
redeal after a different line). The procedure is part of the public contract:

1. gather the cards to reshuffle, in the order the game's rules state (docs/rules.md);
2. hash them: SHA-256 of ``b"reshuffle\\x00"``, the deal seed as 16 bytes big-endian,
   ``n`` as 1 byte (1 for the game's first reshuffle, 2 for the second, ...) and one
   byte per gathered card (its int value, ``suit << 4 | rank``) in gathered order; the
   first 16 bytes of the digest as a big-endian int, mod 10**20, are the seed. In
   sealed mode the deal seed is the keyed one the engine gets, so the seed cannot be
   computed without the key;
3. sort the cards ascending by their int value (suits C D H S, so AC 2C .. KC AD .. KS)
   and shuffle them with :func:`~service.engine.shuffle.pysol_shuffle` with that seed
   (following PySolFC's generator rules like any deal number: below 32000 the
   Microsoft generator, otherwise the Mersenne Twister);
4. deal from the end of the returned list, as the game's initial deal does.

Stated limit: the same gathering gives the same redeal, so a player may re-roll a
redeal by gathering differently, but cannot predict what a gathering will deal.

>>> reshuffle_seed([3, 1, 2], 5, 1)
90810735835953624268
>>> from service.engine.shuffle import pysol_shuffle
>>> reshuffle([3, 1, 2], 5, 1) == pysol_shuffle([1, 2, 3], 90810735835953624268)
True
>>> reshuffle_seed([3, 1, 2], 5, 1) == reshuffle_seed([2, 3, 1], 5, 1)
False
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from .cards import Card
from .shuffle import pysol_shuffle

SEED_MODULUS = 10**20
DOMAIN = b"reshuffle\x00"  # keeps these hashes apart from any other SHA-256 use of a deal seed
DEAL_BYTES = 16  # deal seeds run below 10**20 < 2**128
MAX_RESHUFFLES = 255  # n travels as one byte


def reshuffle_seed(gathered: Iterable[Card], deal: int, n: int) -> int:
    """The deal number that seeds the ``n``-th reshuffle (n = 1, 2, ...) of ``deal`` when
    the redeal gathers ``gathered`` in that order (see the module docstring)."""
    if not 1 <= n <= MAX_RESHUFFLES:
        raise ValueError(f"reshuffles are counted from 1 to {MAX_RESHUFFLES}, not {n}")
    if not 0 <= deal < 1 << (8 * DEAL_BYTES):
        raise ValueError(f"a deal seed fits in {DEAL_BYTES} bytes, not {deal}")
    cards = bytes(gathered)  # ValueError for a card outside 0-255
    digest = hashlib.sha256(DOMAIN + deal.to_bytes(DEAL_BYTES, "big") + bytes((n,)) + cards).digest()
    return int.from_bytes(digest[:16], "big") % SEED_MODULUS


def reshuffle(cards: Iterable[Card], deal: int, n: int) -> list[Card]:
    """The ``n``-th reshuffle in deal ``deal`` of ``cards``, given in gathered order: sorted,
    then shuffled with :func:`reshuffle_seed`. The last card of the result is dealt first."""
    gathered = list(cards)
    return pysol_shuffle(sorted(gathered), reshuffle_seed(gathered, deal, n))
