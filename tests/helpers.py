"""Small builders for hand-made positions in rule tests."""

from __future__ import annotations

import random

from service.engine.cards import parse_card, rank_above, rank_below, rank_of
from service.engine.core import Action, Game, Move, State


def position(game: Game, counters: tuple[int, ...] = (), deal: int = 1, **groups: list[str]) -> State:
    """A state from pile texts: ``position(g, tableau=["5S 4S", ""], cell=["AH"])``.

    Groups not given are empty; piles not given in a group are empty. The result need
    not hold a whole deck: rule tests look at a few cards at a time.
    """
    piles: list[tuple[int, ...]] = []
    for g in game.groups:
        texts = groups.get(g.name, [])
        for i in range(g.count):
            text = texts[i] if i < len(texts) else ""
            piles.append(tuple(parse_card(t) for t in text.split()))
    if not counters:
        counters = tuple(s.minimum for s in game.counter_specs)
    return State(tuple(piles), counters, deal)


def mv(game: Game, src: str, dst: str, count: int = 1) -> Move:
    """``mv(g, "tableau:0", "cell:1")``."""
    def flat(ref: str) -> int:
        name, _, i = ref.partition(":")
        return game.group_start[name] + int(i)

    return Move(Action.MOVE, flat(src), flat(dst), count)


def refs(game: Game, moves: list[Move]) -> set[tuple[str, str, int]]:
    return {(game.ref(m.src), game.ref(m.dst), m.count) for m in moves if m.action == Action.MOVE}


def check_against_reference(game: Game, state: State, reference: set[Move], rng: random.Random) -> list[Move]:
    """The checks a random-play rules test makes at each position, returning the legal
    moves: the state validates, each legal move is listed once, the list equals an
    independent ``reference`` set, every listed move passes ``check_move`` and five
    made-up single-card moves that are not listed are refused."""
    assert not game.validate(state), game.validate(state)
    moves = game.legal_moves(state)
    assert len(set(moves)) == len(moves)
    assert set(moves) == reference
    for m in moves:
        assert game.check_move(state, m) is None
    n = len(state.piles)
    for _ in range(5):
        m = Move(Action.MOVE, rng.randrange(n), rng.randrange(n), 1)
        if m not in moves:
            assert game.check_move(state, m) is not None
    return moves


def grow_stars(rng: random.Random, pool: list[int], stars: list[list[int]], until: int) -> None:
    """Binary Star: grow the stars by random legal cards (one rank up or down, Ace and
    King consecutive) from ``pool`` until it holds ``until`` cards or none fits."""
    while len(pool) > until:
        moves = [
            (star, c)
            for star in stars
            for c in pool
            if rank_of(c) in (rank_above(rank_of(star[-1])), rank_below(rank_of(star[-1])))
        ]
        if not moves:
            return
        star, c = rng.choice(moves)
        pool.remove(c)
        star.append(c)
