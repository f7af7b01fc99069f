"""Reshuffles during play (redeals that shuffle), derived from the deal number.

docs/rules.md "Determinism": every later shuffle is determined by the deal number and the
count of earlier reshuffles, so replaying the same moves from the same deal always
gives the same game. The procedure is part of the public contract:

1. gather the cards to reshuffle (in any order: the next step forgets it);
2. sort them ascending by their int value (``suit << 4 | rank``, suits C D H S, so
   AC 2C .. KC AD .. KS);
3. shuffle them with :func:`~service.engine.shuffle.pysol_shuffle` seeded with
   ``(deal * 10 + n) % 10**20``, where ``n`` is 1 for the game's first reshuffle, 2
   for the second, ... (that seed follows PySolFC's generator rules like any deal
   number: below 32000 the Microsoft generator, with its rank-major rearrangement
   when exactly 52 cards are shuffled; otherwise the Mersenne Twister);
4. deal from the end of the returned list, as the game's initial deal does.

>>> reshuffle([3, 1, 2], 5, 1) == reshuffle([2, 3, 1], 5, 1)
True
"""

from __future__ import annotations

from collections.abc import Iterable

from .cards import Card
from .shuffle import pysol_shuffle

SEED_MODULUS = 10**20


def reshuffle_seed(deal: int, n: int) -> int:
    """The deal number that seeds the ``n``-th reshuffle (n = 1, 2, ...) of ``deal``."""
    if n < 1:
        raise ValueError(f"reshuffles are counted from 1, not {n}")
    return (deal * 10 + n) % SEED_MODULUS


def reshuffle(cards: Iterable[Card], deal: int, n: int) -> list[Card]:
    """The ``n``-th reshuffle of ``cards`` in deal ``deal``: sorted, then shuffled with
    seed ``(deal * 10 + n) % 10**20``. The last card of the result is dealt first."""
    return pysol_shuffle(sorted(cards), reshuffle_seed(deal, n))
