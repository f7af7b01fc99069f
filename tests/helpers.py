"""Small builders for hand-made positions in rule tests."""

from __future__ import annotations

import random

from service.engine.cards import (
    ACE,
    ALL_CARDS,
    ALL_RANKS,
    make_card,
    next_in_suit,
    parse_card,
    rank_above,
    rank_below,
    rank_of,
)
from service.engine.core import Action, Game, Move, State
from service.engine.penguin import PenguinFamily
from service.solver.search import Strategy


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


def built_position(game: PenguinFamily, rng: random.Random) -> State:
    """A made-up position with everything the rule distinguishes: foundations built to
    random heights from a random base (Ace for the Pelican deal), some cards in the
    cells, the rest laid on the piles in runs of 1-10 cards (each card on its tableau
    parent), some piles left empty. It holds the whole deck, but need not be reachable."""
    base = rng.choice(ALL_RANKS) if game.beak else ACE
    child = {p: c for c in ALL_CARDS if (p := game.tableau_parent(c, base)) is not None}
    piles: list[list[int]] = [[] for _ in game.pile_refs]
    for f, suit in zip(game.F, rng.sample(range(4), 4), strict=True):
        start = make_card(base, suit)
        for _ in range(rng.randint(1 if game.beak and f == game.F[0] else 0, 12)):
            piles[f].append(next_in_suit(piles[f][-1]) if piles[f] else start)
    rest = [c for c in ALL_CARDS if all(c not in piles[f] for f in game.F)]
    rng.shuffle(rest)
    fill = rng.random()
    for cell in game.C:
        if rest and rng.random() < fill:
            piles[cell].append(rest.pop())
    used = rng.sample(list(game.T), rng.randint(3, len(game.T)))
    left = set(rest)
    for c in rest:
        if c not in left:
            continue
        run = [c]
        length = rng.randint(1, 10)
        while len(run) < length and child.get(run[-1]) in left - set(run):
            run.append(child[run[-1]])
        left -= set(run)
        piles[rng.choice(used)].extend(run)
    return State(tuple(tuple(p) for p in piles), (), 1)


def autoplay_matches_engine(game: Game, strategy: Strategy, state: State) -> bool:
    """Check that a plug-in ``strategy`` rooted at ``state`` (its nodes: piles as bytes)
    makes the engine's autoplay moves, in the same order, and reaches the same position;
    whether it made any."""
    mine, reached = strategy.auto(strategy.start())
    theirs, engine_state = Strategy(game, state).auto(state)
    assert [tuple(m) for m in theirs] == [tuple(m) for m in mine], state
    assert reached == tuple(bytes(p) for p in engine_state.piles)
    return bool(mine)
