"""The reshuffle contract (docs/rules.md "Determinism"; service/engine/reshuffle.py)."""

from __future__ import annotations

import pytest

from service.engine.reshuffle import reshuffle, reshuffle_seed
from service.engine.shuffle import pysol_shuffle


def test_reshuffle_sorts_then_shuffles_with_seed_deal_times_10_plus_n() -> None:
    cards = [50, 3, 17, 33, 1, 20]
    for deal, n in ((1, 1), (1, 2), (31999, 3), (10**20 - 1, 1)):
        assert reshuffle(cards, deal, n) == pysol_shuffle(sorted(cards), (deal * 10 + n) % 10**20)


def test_reshuffle_ignores_the_order_the_cards_were_gathered_in() -> None:
    cards = list(range(1, 14)) + list(range(17, 30))
    assert reshuffle(cards, 42, 1) == reshuffle(cards[::-1], 42, 1)


def test_reshuffle_seed() -> None:
    assert reshuffle_seed(1, 1) == 11
    assert reshuffle_seed(3199, 3) == 31993  # Mersenne Twister from here on, like deals
    assert reshuffle_seed(10**20 - 1, 3) == (10**21 - 7) % 10**20
    with pytest.raises(ValueError):
        reshuffle_seed(5, 0)


def test_reshuffle_pinned_values() -> None:
    # part of the public contract: these must never change
    assert reshuffle(range(10), 7, 1) == [5, 6, 9, 4, 1, 7, 3, 8, 2, 0]
