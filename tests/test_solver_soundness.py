"""The per-game pruning never changes a verdict: on many small random positions the
plug-ins and the generic search (every legal move, no merging, engine autoplay only)
agree on solved versus proved unsolvable."""

from __future__ import annotations

import random

import pytest

from service.engine.cards import RANKS, SUITS, parse_card
from service.engine.core import State
from service.engine.registry import get_game
from service.solver import Limits
from service.solver.plugins import knowledge_for
from service.solver.search import Knowledge, solve, verify

FAMILY = ["penguin", "penguin-ii", "opus", "pelican", "penguin-freecell-moves"]


def random_penguin_position(
    game_id: str, rng: random.Random, cells: int, lowest: int = 6
) -> tuple[object, State]:
    """Foundations built from the Ace to random heights, the other cards dealt at random
    to the 7 piles (and some cells): an end game with a few cards left."""
    game = get_game(game_id, {"cells": cells})
    heights = [rng.randint(lowest, 12) for _ in range(4)]
    found = [[parse_card(RANKS[r] + s) for r in range(h)] for s, h in zip(SUITS, heights, strict=True)]
    rest = [parse_card(RANKS[r] + s) for s, h in zip(SUITS, heights, strict=True) for r in range(h, 13)]
    rng.shuffle(rest)
    in_cells = rest[: rng.randint(0, cells)]
    rest = rest[len(in_cells):]
    tableau: list[list[int]] = [[] for _ in range(7)]
    for c in rest:
        tableau[rng.randrange(7)].append(c)
    piles = (
        [tuple(f) for f in found]
        + [(c,) for c in in_cells] + [()] * (cells - len(in_cells))
        + [tuple(t) for t in tableau]
    )
    return game, State(tuple(piles), (), 1)


@pytest.mark.parametrize("game_id", FAMILY)
def test_penguin_pruning_agrees_with_generic_search(game_id: str) -> None:
    rng = random.Random(game_id)
    verdicts = {"solved": 0, "unsolvable": 0}
    for _ in range(40):
        # free spaces make the free-cell-moves variant easy: give it more cards, no cells
        if game_id == "penguin-freecell-moves":
            game, state = random_penguin_position(game_id, rng, 0, lowest=3)
        else:
            game, state = random_penguin_position(game_id, rng, rng.randint(0, 2))
        if game.validate(state):  # type: ignore[attr-defined]
            continue
        plug = solve(knowledge_for(game, state), Limits(2, 10**6))  # type: ignore[arg-type]
        plain = solve(Knowledge(game, state), Limits(2, 10**6))  # type: ignore[arg-type]
        if "unknown" in (plug.result, plain.result):
            continue
        assert plug.result == plain.result, (game_id, state)
        if plug.result == "solved":
            assert verify(game, state, plug.moves)  # type: ignore[arg-type]
        verdicts[plug.result] += 1
    assert verdicts["solved"] and verdicts["unsolvable"], verdicts  # both kinds were checked
