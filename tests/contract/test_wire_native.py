"""The compiled wire codec (``service/http/_wire_native.c``) answers as the Python it stands
for: ``wire.python_read_pile_group``, ``wire.python_pile_texts``,
``wire.python_move_to_json`` and the engine's ``core.holds_the_deck``, on every state of
random playouts of every game and on broken inputs (wrong types, unknown cards, too many
piles or cards, list, str and int subclasses, non-str items, huge ints, lookups that
raise or change the list being read): the same value, the same None, or the same
exception each time. tests/solver/test_native_build.py checks that the module is built."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from service.engine.core import Action, Game, Move, State, holds_the_deck
from service.engine.penguin import PRESETS
from service.engine.registry import GAME_CLASSES, get_game
from service.http import create_app
from service.http.schemas import MAX_PILES_PER_GROUP
from service.http.wire import (
    CODEC,
    MAX_PILE_CARDS,
    ReadPileGroup,
    python_move_to_json,
    python_pile_texts,
    python_read_pile_group,
    state_to_json,
)
from tests.app_settings import settings_for_tests
from tests.contract.test_request_path_round4 import respelled
from tests.solver.test_sampling import playout

pytestmark = pytest.mark.skipif(CODEC is None, reason="_wire_native is not built (test_native_build.py fails then)")

HUGE = 2**70  # past any C long


def outcome(call: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """What ``call(*args)`` gives, comparable: a ReadPileGroup as its type, piles and
    codes; a dict with its keys' order; an exception as its type and arguments."""
    try:
        value = call(*args)
    except Exception as e:  # any exception: it must be the same one
        return "raised", (type(e), e.args)
    if isinstance(value, ReadPileGroup):
        return "group", (type(value), list(value), value.codes)
    if isinstance(value, dict):
        return "dict", list(value.items())
    return "value", (type(value), value)


def all_states() -> list[tuple[Game, State]]:
    """Every state of three random playouts (60 moves at most) of every game, and of the
    Penguin family with other options (other layouts and moves)."""
    games = [get_game(game_id) for game_id in GAME_CLASSES]
    games += [preset({"cells": 2, "runs": "single"}) for preset in PRESETS]
    return [(game, state) for game in games for deal in (1, 2, 3) for state in playout(game, deal, 60, seed=deal)]


STATES = all_states()


def test_the_playouts_cover_every_game() -> None:
    assert {game.id for game, _ in STATES} == set(GAME_CLASSES)
    assert len(STATES) > 1000


# --- every state of the playouts -------------------------------------------------------
def test_pile_groups_read_the_same_on_every_state() -> None:
    assert CODEC is not None
    rng = random.Random(1)
    for game, state in STATES:
        data = state_to_json(game, state)
        for spelled in (data, respelled(data, rng)):
            for group in spelled["piles"].values():
                compiled = outcome(CODEC.read_pile_group, group, MAX_PILES_PER_GROUP)
                assert compiled[0] == "group"
                assert compiled == outcome(python_read_pile_group, group, MAX_PILES_PER_GROUP)


def test_pile_texts_are_the_same_on_every_state() -> None:
    assert CODEC is not None
    for game, state in STATES:
        names = [name for name, _ in game.group_slices]
        for leave_out in ((), names[:1], names[1:], names, frozenset(names[-1:])):
            compiled = outcome(CODEC.pile_texts, state.piles, game.group_slices, leave_out)
            assert compiled[0] == "dict"
            assert compiled == outcome(python_pile_texts, state.piles, game.group_slices, leave_out)


def test_the_deck_check_answers_the_same_on_every_state() -> None:
    assert CODEC is not None
    for game, state in STATES:
        deck = game._sorted_deck
        assert CODEC.holds_the_deck(state.piles, deck) is holds_the_deck(state.piles, deck) is True
        assert not game.validate(state)


def test_moves_answer_the_same_on_every_state() -> None:
    assert CODEC is not None
    for game, state in STATES:
        for move in game.legal_moves(state):
            assert outcome(CODEC.move_to_json, game, move) == outcome(python_move_to_json, game, move)
            assert outcome(CODEC.move_to_json, game, move) == outcome(python_move_to_json, game, move)  # from the table


# --- broken inputs ---------------------------------------------------------------------
class ListOfPiles(list[Any]):
    """A list subclass (the compiled reader, as the Python one, reads only exact lists)."""


class Spelling(str):
    """A str subclass: looked up in CARD_CODES as any key is."""


class OtherCard(str):
    """A str subclass that hashes and compares as another spelling."""

    def __hash__(self) -> int:
        return hash("AS")

    def __eq__(self, other: object) -> bool:
        return other == "AS"


class Unlucky(str):
    """A str subclass whose lookup raises an error the reader does not catch."""

    def __hash__(self) -> int:
        raise ValueError("no hash today")


class Card(int):
    """An int subclass."""


BROKEN_GROUPS: list[Any] = [
    "TH", 3, None, {"a": ["TH"]}, (("TH",),), [], [[]], [[], []], [["TH"]], [("TH",)], [["th", "10h", "AS"]],
    [["TH"], "AS"], [["TH"], {"AS": 1}], [["TH", ["AS"]]], [["TH", 1]], [["TH", True]], [["TH", 1.5]],
    [["TH", None]], [[b"TH"]], [["TH\n"]], [["1H"]], [["XX"]], [["10H", "100"]], [[""]], [["T"]], [["THS"]],
    [["T\u00e9"]], [["\u00e9H"]], [["T\uff28"]], [["\ud800H"]], [["10\u00e9"]], [["TH", HUGE]], [[HUGE]], [[-1]],
    [["TH", ("AS",)]], [["TH", frozenset({"AS"})]], [[["TH"]]],
    [["AS"]] * MAX_PILES_PER_GROUP, [["AS"]] * (MAX_PILES_PER_GROUP + 1), [["AS"] * MAX_PILE_CARDS],
    [["AS"] * (MAX_PILE_CARDS + 1)], [["AS"] * (MAX_PILE_CARDS + 1), 3], [[3] * (MAX_PILE_CARDS + 1)],
    ListOfPiles([["TH"]]), [ListOfPiles(["TH"])], [["TH"], ListOfPiles(["TH"])],
    [[Spelling("TH"), "AS"]], [[Spelling("TH")]], [["AS", Spelling("XX")]], [[Spelling("10H"), "AS"]],
    [["TH", OtherCard("QQ")]], [[OtherCard("QQ")]], [["TH", Unlucky("TH")]], [["XX", Unlucky("TH")]],
    [[Unlucky("TH"), "XX"]], [["TH"], [Unlucky("TH")]], [["TH"], 3, [Unlucky("TH")]],
]


@pytest.mark.parametrize("value", BROKEN_GROUPS, ids=range(len(BROKEN_GROUPS)))
def test_a_broken_pile_group_reads_the_same(value: Any) -> None:
    assert CODEC is not None
    assert outcome(CODEC.read_pile_group, value, MAX_PILES_PER_GROUP) == outcome(
        python_read_pile_group, value, MAX_PILES_PER_GROUP
    )


@pytest.mark.parametrize("max_piles", [0, 1, 2, -1])
def test_the_pile_bound_is_the_same(max_piles: int) -> None:
    assert CODEC is not None
    for value in ([], [["TH"]], [["TH"], ["AS"]]):
        assert outcome(CODEC.read_pile_group, value, max_piles) == outcome(python_read_pile_group, value, max_piles)


def shrinker(victim: list[Any], pile: list[Any] | None) -> type[str]:
    """A str subclass whose lookup empties ``victim`` (and ``pile``) while it is read."""

    class Shrinking(str):
        def __hash__(self) -> int:
            victim.clear()
            if pile is not None:
                pile.clear()
            return hash(str(self))

    return Shrinking


def grower(victim: list[Any]) -> type[str]:
    class Growing(str):
        def __hash__(self) -> int:
            if len(victim) < 6:
                victim.append(["AS", "2S"])
            return hash(str(self))

    return Growing


@pytest.mark.parametrize("change", ["shrink the group", "shrink the group and the pile", "grow the group"])
def test_a_group_changed_while_it_is_read_reads_the_same(change: str) -> None:
    """Lookups that run Python code may change the lists being read: the compiled reader
    stays safe, and reads what the Python one reads."""
    assert CODEC is not None
    results = []
    for read in (CODEC.read_pile_group, python_read_pile_group):
        pile: list[Any] = ["TH", "AS", "KD"]
        group: list[Any] = [["QC"], pile, ["2D"], ["3D", "4D"]]
        odd = grower(group) if change == "grow the group" else shrinker(group, pile if "pile" in change else None)
        pile[1] = odd("AS")
        results.append(outcome(read, group, MAX_PILES_PER_GROUP))
    assert results[0] == results[1]


BROKEN_CARDS: list[Any] = [0, 15, 64, -1, 63, HUGE, -HUGE, True, 1.0, 33.0, "AS", None, (1,), Card(33), Card(99)]


def replaced(state: State, pile: int, card: Any) -> list[Any]:
    """The state's piles with ``card`` on top of ``pile`` (in place of its top card when
    it has one)."""
    piles: list[Any] = list(state.piles)
    piles[pile] = (*piles[pile][:-1], card)
    return piles


def some_states() -> list[tuple[Game, State]]:
    return [STATES[i] for i in range(0, len(STATES), 97)]


@pytest.mark.parametrize("card", BROKEN_CARDS, ids=repr)
def test_a_broken_card_writes_the_same(card: Any) -> None:
    assert CODEC is not None
    for game, state in some_states():
        for pile in (0, len(state.piles) - 1):
            piles = replaced(state, pile, card)
            for leave_out in ((), [game.group_slices[0][0]]):
                assert outcome(CODEC.pile_texts, piles, game.group_slices, leave_out) == outcome(
                    python_pile_texts, piles, game.group_slices, leave_out
                )


@pytest.mark.parametrize("card", BROKEN_CARDS, ids=repr)
def test_a_broken_card_checks_against_the_deck_the_same(card: Any) -> None:
    assert CODEC is not None
    for game, state in some_states():
        deck = game._sorted_deck
        for pile in range(len(state.piles)):
            piles = replaced(state, pile, card)
            assert outcome(CODEC.holds_the_deck, piles, deck) == outcome(holds_the_deck, piles, deck)


def test_cards_missing_extra_or_swapped_check_against_the_deck_the_same() -> None:
    assert CODEC is not None
    rng = random.Random(2)
    for game, state in some_states():
        deck = game._sorted_deck
        cards = [c for pile in state.piles for c in pile]
        other = rng.choice(deck) ^ 16
        variants: list[Callable[[], list[Any]]] = [  # each made afresh for each call (an iterator is read once)
            lambda: [tuple(cards[1:])], lambda: [tuple(cards), (cards[0],)], lambda: [tuple(cards[:-1]), (other,)],  # noqa: B023
            lambda: [list(cards)], lambda: [tuple(cards), ()], lambda: [], lambda: [tuple(cards[::-1])],  # noqa: B023
            lambda: [iter(cards)], lambda: [tuple(cards), "x"], lambda: [tuple(cards[:10]), iter(cards[10:])],  # noqa: B023
        ]
        for piles in variants:
            assert outcome(CODEC.holds_the_deck, piles(), deck) == outcome(holds_the_deck, piles(), deck)
        for odd_deck in ([], deck[1:], [*deck, 1], [*deck[:-1], True], tuple(deck), [*deck[:-1], HUGE]):
            assert outcome(CODEC.holds_the_deck, state.piles, odd_deck) == outcome(holds_the_deck, state.piles, odd_deck)


def test_broken_piles_and_slices_write_the_same() -> None:
    assert CODEC is not None
    game, state = STATES[5]
    slices = game.group_slices
    cases: list[tuple[Any, Any, Any]] = [
        (list(state.piles), slices, ()),
        ([list(p) for p in state.piles], slices, ()),
        (state.piles, [(name, slice(part.start, part.stop, 1)) for name, part in slices], ()),
        (state.piles, [(name, slice(part.start - len(state.piles), None)) for name, part in slices[-1:]], ()),
        (state.piles, [(name, slice(part.start, HUGE)) for name, part in slices], ()),
        (state.piles, [("all", slice(None, None, -2))], ()),
        (state.piles, [("x", 3)], ()),
        (state.piles, [("x",)], ()),
        (state.piles, 5, ()),
        (state.piles, slices, None),
        (5, slices, ()),
        ((*state.piles[:-1], 5), slices, ()),
        ((), (), ()),
    ]
    for piles, group_slices, leave_out in cases:
        assert outcome(CODEC.pile_texts, piles, group_slices, leave_out) == outcome(
            python_pile_texts, piles, group_slices, leave_out
        )


def odd_moves(game: Game) -> list[Any]:
    last = len(game.pile_refs) - 1
    return [
        Move(Action.MOVE, 0, last, 1), Move(Action.MOVE, last, 0, MAX_PILE_CARDS), Move(Action.MOVE, 0, 1, 0),
        Move(Action.DEAL), Move(Action.REDEAL), Move(Action.MOVE, -1, 0, 1), Move(Action.MOVE, 0, last + 1, 1),
        Move(Action.MOVE, 0, 1, True), Move(Action.MOVE, True, 0, 2), Move(Action.MOVE, 0, 1, Card(3)),
        Move(Action.MOVE, 0, 1, 1.0), Move(Action.MOVE, 0, 1, 300), Move(Action.MOVE, 0, 1, HUGE),
        Move(Action.MOVE, 0, HUGE, 1), Move(Action.MOVE, 0, 300, 1), Move(Card(1), 0, 1, 2), Move(99, 0, 1, 2),
        Move(HUGE, 0, 1, 2), Move(Action.MOVE, 0.0, 1, 1), (1, 0, 1, 1), (1, 0, 1), [1, 0, 1, 1], None, 5,
        Move(Action.MOVE, None, 1, 1),
    ]


@pytest.mark.parametrize("game_id", GAME_CLASSES)
def test_broken_moves_answer_the_same(game_id: str) -> None:
    assert CODEC is not None
    game = get_game(game_id)
    for move in odd_moves(game):
        for _ in range(2):  # once to fill the table, once from it
            assert outcome(CODEC.move_to_json, game, move) == outcome(python_move_to_json, game, move)


def test_the_move_tables_are_bounded_and_still_answer_right() -> None:
    """More moves than a game's table takes, over more games than there are tables: the
    answers past the bound are built each time, and the same."""
    assert CODEC is not None
    games = [preset({"cells": cells}) for preset in PRESETS for cells in range(0, 11, 2)]
    for _ in range(2):
        for game in games:
            piles = len(game.pile_refs)
            for src in range(piles):
                for dst in range(piles):
                    for count in (1, 2, 7, 13, 255):
                        move = Move(Action.MOVE, src, dst, count)
                        assert outcome(CODEC.move_to_json, game, move) == outcome(python_move_to_json, game, move)


def test_the_service_leaves_the_answers_it_was_given_unchanged() -> None:
    """The tables hand out one dict per move: after the service answered with them (moves,
    legal moves, hints, replays), each still reads as the Python function's answer."""
    assert CODEC is not None
    client = create_app(settings_for_tests()).test_client()
    rng = random.Random(3)
    game = get_game("penguin")
    position = client.post("/v1/games/penguin/deals", json={"deal": 1}).get_json()
    played: list[dict[str, Any]] = []
    for _ in range(20):
        if not position["legal_moves"]:
            break
        move = rng.choice(position["legal_moves"])
        played.append(move)
        assert client.post("/v1/games/penguin/legal-moves", json={"state": position["state"]}).status_code == 200
        position = client.post("/v1/games/penguin/moves", json={"state": position["state"], "move": move}).get_json()
    assert client.post("/v1/games/penguin/replays", json={"deal": 1, "moves": played}).status_code == 200
    for state in playout(game, 1, 20, seed=3):
        for move in game.legal_moves(state):
            assert outcome(CODEC.move_to_json, game, move) == outcome(python_move_to_json, game, move)
