"""No peek at a reshuffle (docs/rules.md "Determinism"; issue 28, "Prove it" on peek).

Rule: each reshuffle's order depends on the deal seed and on the cards gathered, in the
order the game's redeal gathers them, so redeal, look, undo and play on tells nothing
about a later redeal. For every game that reshuffles:

- the exact check: the same cards gathered in two different orders give two different
  layouts (many deals);
- the statistical check: at a position, line A makes one move and redeals (the player
  looks), line B (after an undo) makes another move that gathers as many cards and
  redeals; over many deals, a card common to both redeals lands in the same slot about
  once in k (k the slots dealt), and a chi-square test finds no dependence between its
  slot in A and in B.

The old rule (seed ``deal * 10 + n`` of the sorted cards, the count only) fails both:
:func:`test_the_old_count_only_rule_fails_the_checks` runs them with it and pins how
badly, so these tests can fail. Figures with 400 deals (same slot / common cards,
expected same slot, chi-square with 9 degrees of freedom, critical 27.88 at p = 0.001):

- Small Billee, new rule: 390 / 15898, 390.2 expected, 3.5; old rule: 9719 / 15898 (61%), 419.3.
- Abandon Hope, new rule: 432 / 20000, 392.2 expected, 9.4; old rule: 18464 / 20000 (92%), 1045.0.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pytest

from service.engine.cards import Card
from service.engine.core import REDEAL, Action, Game, State
from service.engine.registry import GAMES, get_game
from service.engine.shuffle import pysol_shuffle

# The pile groups each reshuffling game's redeal gathers (docs/rules.md, its redeal text).
GATHERED: dict[str, tuple[str, ...]] = {
    "small-billee": ("fan",),
    "abandon-hope": ("tableau", "stock"),
}
RESHUFFLING = [cls.id for cls in GAMES if cls.redeals_reshuffle]
SEEDS = 400  # deals per statistical check
BINS = 4  # chi-square: slots binned into 4 ranges of the dealing order -> 4 x 4 table
# chi-square critical value, 9 degrees of freedom ((4-1) x (4-1)), p = 0.001
CHI2_CRITICAL = 27.88

Slot = tuple[int, int]  # (pile, depth from the bottom)


def test_every_reshuffling_game_is_checked() -> None:
    assert sorted(RESHUFFLING) == sorted(GATHERED)


def gathered_piles(game: Game) -> list[int]:
    """The game's gathered piles in gathered order (group by group, pile by pile)."""
    return [p for g in GATHERED[game.id] for p in game.group_range(g)]


def slots(game: Game, state: State) -> dict[Card, Slot]:
    """Where each card of the gathered piles lies."""
    return {c: (p, d) for p in gathered_piles(game) for d, c in enumerate(state.piles[p])}


def dealing_order(game: Game, state: State) -> dict[Card, int]:
    """Each gathered-pile card's place in the order a redeal dealt them (depth first, then
    pile), scaled to 0 .. k - 1."""
    cards = sorted(slots(game, state).items(), key=lambda kv: (kv[1][1], kv[1][0]))
    return {c: i for i, (c, _slot) in enumerate(cards)}


# --- (a) the exact check -------------------------------------------------------------------
@pytest.mark.parametrize("game_id", RESHUFFLING)
def test_two_gathered_orders_of_the_same_cards_give_different_redeals(game_id: str) -> None:
    """Rule "no peek": swapping two gathered piles of equal size (the same cards, gathered
    in another order) changes the redeal, for every one of 300 deals."""
    game = get_game(game_id, {})
    piles = gathered_piles(game)
    for deal in range(1, 301):
        state = game.initial_state(deal)
        a, b = [p for p in piles if len(state.piles[p]) == len(state.piles[piles[0]])][:2]
        swapped = list(state.piles)
        swapped[a], swapped[b] = swapped[b], swapped[a]
        other = State(tuple(swapped), state.counters, state.deal)
        one, two = game.apply(state, REDEAL), game.apply(other, REDEAL)
        assert sorted(slots(game, one)) == sorted(slots(game, two))  # the same cards
        assert slots(game, one) != slots(game, two), (game_id, deal)


# --- (b) the statistical check ---------------------------------------------------------------
@dataclass
class Peek:
    """What the undone lines showed, summed over the deals."""

    common: int = 0  # cards in both redeals
    same_slot: int = 0  # ... that landed in the same slot
    expected: float = 0.0  # ... expected same, were the redeals independent (sum of 1/k)
    table: list[list[int]] | None = None  # one card per deal: its bin in A x its bin in B

    def chi_square(self) -> float:
        """Pearson's chi-square of independence of the contingency table."""
        assert self.table is not None
        rows = [sum(r) for r in self.table]
        cols = [sum(c) for c in zip(*self.table, strict=True)]
        n = sum(rows)
        return sum(
            (self.table[i][j] - rows[i] * cols[j] / n) ** 2 / (rows[i] * cols[j] / n)
            for i in range(BINS)
            for j in range(BINS)
            if rows[i] and cols[j]
        )


def two_lines(game: Game, state: State) -> tuple[State, State] | None:
    """Two positions one move apart from ``state`` (two different moves, neither a redeal)
    whose redeals gather as many cards but not the same sequence, or None."""
    piles = gathered_piles(game)
    after: dict[tuple[Card, ...], State] = {}
    for move in game.legal_moves(state):
        if move.action != Action.MOVE:
            continue
        s = game.apply(state, move)
        if REDEAL not in game.legal_moves(s):
            continue
        after.setdefault(tuple(c for p in piles for c in s.piles[p]), s)
    by_size: dict[int, list[State]] = {}
    for gathered, s in after.items():
        by_size.setdefault(len(gathered), []).append(s)
    for group in by_size.values():
        if len(group) >= 2:
            return group[0], group[1]
    return None


def measure_peek(game: Game, seeds: int) -> Peek:
    """Line A and line B from the first position (of a short random walk from each deal)
    that offers two such moves; redeal both; compare where the common cards land."""
    rng = random.Random(f"no-peek-{game.id}")
    peek = Peek(table=[[0] * BINS for _ in range(BINS)])
    assert peek.table is not None
    done = 0
    deal = 0
    while done < seeds:
        deal += 1
        state = game.initial_state(rng.randrange(10**20) if deal % 2 else deal)
        lines = None
        for _ in range(6):
            lines = two_lines(game, state)
            moves = [m for m in game.legal_moves(state) if m.action == Action.MOVE]
            if lines or not moves:
                break
            state = game.apply(state, rng.choice(moves))
        if lines is None:
            continue
        a, b = (game.apply(s, REDEAL) for s in lines)
        slots_a, slots_b = slots(game, a), slots(game, b)
        common = sorted(set(slots_a) & set(slots_b))
        k = len(slots_a)
        peek.common += len(common)
        peek.same_slot += sum(slots_a[c] == slots_b[c] for c in common)
        peek.expected += len(common) / k
        card = rng.choice(common)
        order_a, order_b = dealing_order(game, a), dealing_order(game, b)
        peek.table[order_a[card] * BINS // k][order_b[card] * BINS // k] += 1
        done += 1
    return peek


def assert_no_peek(peek: Peek) -> None:
    """Same slot about once in k (within 5 standard deviations of a count that is close
    to Poisson), and no dependence at p = 0.001."""
    assert abs(peek.same_slot - peek.expected) < 5 * peek.expected**0.5 + 1, peek
    assert peek.chi_square() < CHI2_CRITICAL, (peek.chi_square(), peek.table)


@pytest.mark.parametrize("game_id", RESHUFFLING)
def test_a_later_redeal_is_independent_of_what_an_undone_line_showed(game_id: str) -> None:
    """Rule "no peek": a redeal after line B tells nothing of what line A's redeal showed."""
    assert_no_peek(measure_peek(get_game(game_id, {}), SEEDS))


def old_reshuffle(cards: Iterable[Card], deal: int, n: int) -> list[Card]:
    """The rule before issue 28: the sorted cards shuffled with seed ``deal * 10 + n``,
    whichever cards were gathered, in whatever order."""
    return pysol_shuffle(sorted(cards), (deal * 10 + n) % 10**20)


@pytest.mark.parametrize("game_id", RESHUFFLING)
def test_the_old_count_only_rule_fails_the_checks(game_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks above can fail: under the old rule a peek tells most of a later redeal."""
    game = get_game(game_id, {})
    module = sys.modules[type(game).__module__]
    reshuffle: Callable[[Iterable[Card], int, int], list[Card]] = old_reshuffle
    monkeypatch.setattr(module, "reshuffle", reshuffle)
    peek = measure_peek(game, SEEDS)
    assert peek.same_slot > 0.5 * peek.common, peek  # most cards land where line A showed
    assert peek.chi_square() > 10 * CHI2_CRITICAL
    with pytest.raises(AssertionError):
        assert_no_peek(peek)
    state = game.initial_state(7)
    piles = gathered_piles(game)
    swapped = list(state.piles)
    swapped[piles[0]], swapped[piles[1]] = swapped[piles[1]], swapped[piles[0]]
    other = State(tuple(swapped), state.counters, state.deal)
    assert slots(game, game.apply(state, REDEAL)) == slots(game, game.apply(other, REDEAL))
