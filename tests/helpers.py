"""Small builders for hand-made positions in rule tests."""

from __future__ import annotations

from service.engine.cards import parse_card
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
