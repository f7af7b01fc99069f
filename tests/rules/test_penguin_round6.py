"""The compiled Penguin-family move lister (``service/engine/_penguin_moves_native.c``) against its
reference, ``PenguinFamily.python_legal_moves``: the same moves (the same Move objects
where Python hands out its ready-made one-card moves), in the same order, on every state
of random playouts of every preset and option mix, on made-up positions, and on states
the compiled code does not read plainly (it hands those to the Python function, so they
answer, or fail, as Python does). test_penguin_move_rule.py checks the listed moves
against the move rule itself."""

from __future__ import annotations

import copy
import gc
import pickle
import random
import weakref
from collections.abc import Callable
from typing import Any

import pytest

from service.engine import penguin
from service.engine.core import Action, Move, State
from service.engine.penguin import PenguinFamily
from tests.helpers import built_position
from tests.rules.test_penguin_move_rule import MIXES, game_of, playout_positions

native = pytest.mark.skipif(penguin._penguin_moves_native is None, reason="_penguin_moves_native is not built (make native)")
MOVE = Action.MOVE
ids: Callable[[Any], str] = lambda v: v if isinstance(v, str) else str(v)  # noqa: E731


def same_moves(game: PenguinFamily, state: State) -> list[Move]:
    """The compiled list, checked against the Python one: equal, item by item of the same
    type, one-card moves the very objects Python hands out."""
    compiled = game.legal_moves(state)
    reference = game.python_legal_moves(state)
    assert compiled == reference, state
    for c, r in zip(compiled, reference, strict=True):
        assert type(c) is type(r) is Move and type(c.src) is type(c.dst) is type(c.count) is int
        if r.count == 1:
            assert c is r
    return compiled


@native
@pytest.mark.parametrize(("gid", "options"), MIXES, ids=ids)
def test_compiled_lister_lists_what_python_lists_on_playouts(gid: str, options: dict[str, Any]) -> None:
    game = game_of(gid, options)
    assert game._list_moves != game.python_legal_moves  # the compiled one answers
    rng = random.Random(f"round6 {gid} {options}")
    seen = 0
    runs = 0
    for state in playout_positions(game, rng, deals=1000, steps=250):  # (games with few cells end soon)
        runs += sum(m.count > 1 for m in same_moves(game, state))
        seen += 1
        if seen == 1200:
            break
    for _ in range(300):
        runs += sum(m.count > 1 for m in same_moves(game, built_position(game, rng)))
        seen += 1
    assert seen == 1500
    if game.runs != "single":
        assert runs > 0  # the moves the compiled code makes itself were compared too


def broken_states(game: PenguinFamily, state: State) -> list[State]:
    """``state`` as the compiled code does not read it plainly: piles as lists, a card
    as a bool or an int subclass, a card number past the card slots, a pile missing."""

    class Card(int):
        pass

    piles = list(state.piles)
    t = next(t for t in game.T if piles[t])
    out = [state._replace(piles=[list(p) for p in piles])]  # (lists are read plainly: the same answer)
    for bad in (True, Card(piles[t][-1])):
        changed = list(piles)
        changed[t] = (*piles[t][:-1], bad)
        out.append(state._replace(piles=tuple(changed)))
    return out


@native
@pytest.mark.parametrize(("gid", "options"), MIXES[:5], ids=ids)
def test_states_not_read_plainly_answer_as_python_does(gid: str, options: dict[str, Any]) -> None:
    game = game_of(gid, options)
    rng = random.Random(gid)
    for state in playout_positions(game, rng, deals=2, steps=60):
        for odd in broken_states(game, state):
            assert game.legal_moves(odd) == game.python_legal_moves(odd)
        for odd in (
            state._replace(piles=state.piles[:-1]),
            state._replace(piles=(*state.piles[:-1], (*state.piles[-1], 64))),
            state._replace(piles=(*state.piles[:-1], (*state.piles[-1], 2**70))),
            state._replace(piles=(*state.piles[:-1], (*state.piles[-1], -1))),
            state._replace(piles=(*state.piles[:-1], "not a pile")),
            tuple(state),  # a plain tuple has no `piles`
        ):
            try:
                expected: Any = game.python_legal_moves(odd)
            except Exception as e:  # whatever Python raises, the compiled path raises too
                with pytest.raises(type(e)):
                    game.legal_moves(odd)
            else:
                assert game.legal_moves(odd) == expected


@native
def test_a_beak_that_is_no_card_answers_as_python_does() -> None:
    game = game_of("penguin", {})
    state = game.initial_state(1)
    piles = list(state.piles)
    piles[game.F.start] = (0, *piles[game.F.start][1:])  # card number 0 has rank 0: no card
    odd = state._replace(piles=tuple(piles))
    with pytest.raises(KeyError):
        game.python_legal_moves(odd)
    with pytest.raises(KeyError):
        game.legal_moves(odd)


@pytest.mark.parametrize(("gid", "options"), MIXES[:5], ids=ids)
def test_a_game_pickles_and_copies_with_its_lister(gid: str, options: dict[str, Any]) -> None:
    """A game travels to the solver's processes by pickle: its compiled lister is made again there."""
    game = game_of(gid, options)
    state = game.initial_state(7)
    for twin in (pickle.loads(pickle.dumps(game)), copy.deepcopy(game), copy.copy(game)):
        assert twin.legal_moves(state) == game.python_legal_moves(state)
        assert (penguin._penguin_moves_native is None) is (twin._list_moves == twin.python_legal_moves)


def test_a_game_dropped_is_collected_with_its_lister() -> None:
    """The compiled lister's fallback is the game's own method: a cycle the garbage
    collector must see through (a game unpickled for each search must not stay)."""
    game = pickle.loads(pickle.dumps(game_of("pelican", {})))
    gone = weakref.ref(game)
    del game
    gc.collect()
    assert gone() is None


@pytest.mark.parametrize(("gid", "options"), MIXES, ids=ids)
def test_is_legal_by_the_rule_agrees_with_the_list(gid: str, options: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """With the compiled lister built, ``is_legal`` looks the move up in the list; its
    other path (the rule's checks, where the module is not built) answers the same on
    every (source, destination, count) of random positions."""
    game = game_of(gid, options)
    rng = random.Random(f"is_legal {gid} {options}")
    states = [built_position(game, rng) for _ in range(8)]
    states += [s for i, s in enumerate(playout_positions(game, rng, deals=2, steps=120)) if i % 10 == 0]
    listed = [set(game.python_legal_moves(s)) for s in states]
    monkeypatch.setattr(penguin, "_penguin_moves_native", None)
    for state, legal in zip(states, listed, strict=True):
        n = len(state.piles)
        for m in (Move(MOVE, s, d, k) for s in range(-1, n + 1) for d in range(-1, n + 1) for k in range(22)):
            assert game.is_legal(state, m) is (m in legal), m
