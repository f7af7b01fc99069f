"""Move orders for games whose search needs more than the generic order.

Each function scores a legal move (lower is tried first); it only orders the search,
it never removes a move, so proofs of loss stay sound. Combined with the canonical key
of :mod:`.grouped`.
"""

from __future__ import annotations

from collections.abc import Callable

from service.engine.core import Action, Game, Move, State

Scorer = Callable[[Game, State, Move], int]


def forty_thieves(game: Game, state: State, m: Move) -> int:
    """Foundation moves, then builds from the waste, then tableau builds that uncover a
    card (a card already on its suit's next-higher card gains nothing by moving), then
    a deal; spaces and pointless reshuffles of built cards last."""
    if m.action != Action.MOVE:
        return 50
    piles = state.piles
    group = game.group_of
    dst_group = group[m.dst]
    if dst_group == "foundation":
        return 0
    sp = piles[m.src]
    card = sp[-1]
    on_parent = len(sp) > 1 and sp[-2] == card + 1 and group[m.src] == "tableau"
    if piles[m.dst]:
        if group[m.src] == "waste":
            return 10
        if on_parent:
            return 80
        below = sp[-2] if len(sp) > 1 else 0
        return 20 - (5 if len(sp) == 1 else 0) + (0 if below == 0 else _depth_hint(piles, below))
    if group[m.src] == "waste":
        return 60
    return 90 if on_parent else 65


def _depth_hint(piles: tuple[tuple[int, ...], ...], card: int) -> int:
    """0 when ``card`` could go home right after being uncovered, else 3."""
    for f in range(8):
        fp = piles[f]
        if (fp and fp[-1] + 1 == card) or (not fp and card & 15 == 1):
            return 0
    return 3


def boomerang(game: Game, state: State, m: Move) -> int:
    """Foundation moves, then moves that empty a pile (the refill brings a new card),
    then builds from the waste, then other builds; a deal last."""
    if m.action != Action.MOVE:
        return 40
    group = game.group_of
    if group[m.dst] == "foundation":
        return 0
    if group[m.src] == "waste":
        return 15
    if len(state.piles[m.src]) == 1:
        return 10
    return 30


def binary_star(game: Game, state: State, m: Move) -> int:
    """Fan cards first, from the fullest fan (the deepest cards are the hardest to
    reach); moves between the stars last."""
    group = game.group_of
    if group[m.src] == "star":
        return 100
    return 10 - len(state.piles[m.src])


SCORERS: dict[str, Scorer] = {
    "forty-thieves": forty_thieves,
    "boomerang": boomerang,
    "binary-star": binary_star,
}
