"""The reshuffle contract (docs/rules.md "Determinism"; service/engine/reshuffle.py)."""

from __future__ import annotations

import hashlib

import pytest

from service.engine.reshuffle import reshuffle, reshuffle_seed
from service.engine.shuffle import pysol_shuffle


def spec_seed(gathered: list[int], deal: int, n: int) -> int:
    """The seed as docs/rules.md states it, written out independently of the engine."""
    data = b"reshuffle\x00" + deal.to_bytes(16, "big") + bytes([n]) + bytes(gathered)
    return int.from_bytes(hashlib.sha256(data).digest()[:16], "big") % 10**20


def test_reshuffle_sorts_then_shuffles_with_the_hash_of_seed_count_and_gathered_cards() -> None:
    cards = [50, 3, 17, 33, 1, 20]
    for deal, n in ((1, 1), (1, 2), (31999, 3), (10**20 - 1, 1)):
        assert reshuffle(cards, deal, n) == pysol_shuffle(sorted(cards), spec_seed(cards, deal, n))


def test_reshuffle_depends_on_the_order_the_cards_were_gathered_in() -> None:
    """No peek (docs/rules.md "Determinism"): the same cards gathered in another order
    are another reshuffle."""
    cards = list(range(1, 14)) + list(range(17, 30))
    assert reshuffle(cards, 42, 1) != reshuffle(cards[::-1], 42, 1)
    assert sorted(reshuffle(cards, 42, 1)) == sorted(cards)


def test_reshuffle_seed() -> None:
    assert reshuffle_seed([1, 2, 3], 1, 1) == spec_seed([1, 2, 3], 1, 1)
    assert reshuffle_seed([1, 2, 3], 1, 1) != reshuffle_seed([1, 2, 3], 1, 2)
    assert reshuffle_seed([1, 2, 3], 1, 1) != reshuffle_seed([1, 2, 3], 2, 1)
    assert reshuffle_seed([1, 2, 3], 1, 1) != reshuffle_seed([1, 2], 1, 1)
    assert 0 <= reshuffle_seed(range(52), 10**20 - 1, 3) < 10**20
    with pytest.raises(ValueError):
        reshuffle_seed([1], 5, 0)
    with pytest.raises(ValueError):
        reshuffle_seed([1], -1, 1)
    with pytest.raises(ValueError):
        reshuffle_seed([256], 5, 1)


def test_reshuffle_pinned_values() -> None:
    # part of the public contract: these must never change
    assert reshuffle_seed(range(10), 7, 1) == 72299857921562878637
    assert reshuffle(range(10), 7, 1) == [6, 2, 7, 1, 4, 0, 5, 3, 9, 8]
