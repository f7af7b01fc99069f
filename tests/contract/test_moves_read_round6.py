"""The sixth round's shortcuts in reading a request's state (issue 14), each against the
path it stands for:

- ``Game.validate``'s common case judged in one check (``core.holds_the_deck_within``, the
  compiled one when built): the same problems as the deck, capacity and counter checks
  on every state of random playouts of every game and on corrupted ones (cards missing,
  doubled, foreign; piles over their capacity; counters missing, extra or out of range);
- the compiled ``holds_the_deck_within`` and ``join_groups`` answering as their Python
  references on good and broken inputs;
- ``read_body`` taking a state's groups as the schema read them (``join_groups``): the
  same state as reading them group by group;
- ``parse_deal``'s fast paths: the same answers as its general reading;
- the fast reader's inline cases (``OptionValue.inline_accept``, the remembered pattern
  matches) and a schema's ``loader``: the same outcome as the field or ``load`` itself.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from marshmallow import Schema, ValidationError

from service.engine import core
from service.engine.core import MAX_DEAL, Game, State, holds_the_deck_within
from service.engine.registry import GAME_CLASSES, get_game
from service.http import fast_load, wire
from service.http.fast_load import MAX_REMEMBERED
from service.http.schemas import (
    CARD_MOVE_LENIENT,
    MOVE_LOADERS,
    MOVE_READERS,
    OptionValue,
    StateSchema,
    _option_accepted,
)
from service.http.wire import (
    CARD_MOVE,
    CODEC,
    NotationError,
    ReadPileGroup,
    parse_deal,
    python_join_groups,
    read_body,
    state_to_json,
)
from tests.contract.test_fast_load import ODD_VALUES
from tests.contract.test_wire_native import BROKEN_CARDS, HUGE, all_states, outcome, replaced

STATES = all_states()


def sampled(step: int = 23) -> list[tuple[Game, State]]:
    return STATES[::step]


# --- Game.validate's common case --------------------------------------------------------
def full_checks(game: Game, state: State) -> list[core.Problem]:
    """What ``validate`` answers by its deck, capacity and counter checks alone (the
    common case's check taken out: it answers False, so nothing is judged at once)."""
    shape_check = core._shape_check
    core.use_shape_check(lambda piles, deck, most: False)
    try:
        return game.validate(state)
    finally:
        core.use_shape_check(shape_check)


def corrupted(game: Game, state: State, rng: random.Random) -> Iterator[State]:
    """``state`` with one thing wrong: a card taken away, doubled, foreign or moved onto
    another pile (over a capacity, perhaps), or its counters changed."""
    piles = list(state.piles)
    full = [p for p, pile in enumerate(piles) if pile]
    if full:
        p = rng.choice(full)
        yield state._replace(piles=(*piles[:p], piles[p][:-1], *piles[p + 1:]))  # a card missing
        yield state._replace(piles=(*piles[:p], (*piles[p], piles[p][-1]), *piles[p + 1:]))  # a card twice
        yield state._replace(piles=(*piles[:p], (*piles[p][:-1], 0), *piles[p + 1:]))  # a card no deck holds
        for q in range(len(piles)):  # the top card moved onto each other pile (cells hold one)
            if q != p:
                moved = list(piles)
                moved[q] = (*moved[q], moved[p][-1])
                moved[p] = moved[p][:-1]
                yield state._replace(piles=tuple(moved))
    yield state._replace(counters=(*state.counters, 0))  # a counter too many
    yield state._replace(counters=state.counters[:-1])  # one too few (or none: the same state)
    if state.counters:
        yield state._replace(counters=(10**6, *state.counters[1:]))  # out of its range
    yield state._replace(piles=state.piles[:-1])  # a pile too few


def test_validate_answers_as_the_full_checks_on_every_state() -> None:
    for game, state in STATES:
        assert game.validate(state) == full_checks(game, state) == game.validate_piles(state) == []


def test_validate_answers_as_the_full_checks_on_corrupted_states() -> None:
    rng = random.Random(6)
    judged = 0
    for game, state in sampled(7):
        for broken in corrupted(game, state, rng):
            found = game.validate(broken)
            assert found == full_checks(game, broken), (game.id, broken)
            judged += bool(found)
    assert judged > 1000  # most corruptions are found (a card moved between free piles is not one)


def test_every_pile_bound_is_its_groups_capacity() -> None:
    for game_id in GAME_CLASSES:
        game = get_game(game_id)
        bounds = [g.capacity or core.UNCAPPED for g in game.groups for _ in range(g.count)]
        assert list(game._most_cards) == bounds and len(bounds) == len(game.pile_refs)
        assert game.group_counts == tuple((g.name, g.count) for g in game.groups)


# --- the compiled checks against their references ----------------------------------------
needs_codec = pytest.mark.skipif(CODEC is None, reason="_wire_native is not built (test_native_build.py fails then)")


class Bound(int):
    """An int subclass as a pile's bound: the compiled check hands it to the reference."""


@needs_codec
def test_the_shape_check_answers_as_its_reference() -> None:
    assert CODEC is not None
    assert core._shape_check == CODEC.holds_the_deck_within
    for game, state in sampled(5):
        deck, most = game._sorted_deck, game._most_cards
        assert CODEC.holds_the_deck_within(state.piles, deck, most) is holds_the_deck_within(state.piles, deck, most)
        assert holds_the_deck_within(state.piles, deck, most) is True
        odd_bounds: list[Any] = [
            list(most), most[:-1], (*most, 1), tuple(0 for _ in most), tuple(-1 for _ in most),
            tuple(HUGE for _ in most), tuple(-HUGE for _ in most), (True, *most[1:]), (1.0, *most[1:]),
            (Bound(0), *most[1:]), (None, *most[1:]), tuple(len(pile) for pile in state.piles),
            tuple(max(len(pile) - 1, 0) for pile in state.piles),
        ]
        for bounds in odd_bounds:
            assert outcome(CODEC.holds_the_deck_within, state.piles, deck, bounds) == outcome(
                holds_the_deck_within, state.piles, deck, bounds
            ), bounds


@needs_codec
@pytest.mark.parametrize("card", BROKEN_CARDS, ids=repr)
def test_a_broken_card_is_judged_the_same_by_the_shape_check(card: Any) -> None:
    assert CODEC is not None
    for game, state in sampled(97):
        deck, most = game._sorted_deck, game._most_cards
        for pile in (0, len(state.piles) - 1):
            piles = replaced(state, pile, card)
            assert outcome(CODEC.holds_the_deck_within, piles, deck, most) == outcome(
                holds_the_deck_within, piles, deck, most
            )


def loaded_piles(game: Game, state: State) -> dict[str, Any]:
    """A state's piles as the request schema loads them (each group a ReadPileGroup)."""
    loaded: dict[str, Any] = StateSchema().load(state_to_json(game, state))["piles"]
    return loaded


def without_codes(group: list[Any]) -> ReadPileGroup:
    return ReadPileGroup(group)  # its codes slot never set


def with_codes(group: list[Any], codes: Any) -> ReadPileGroup:
    made = ReadPileGroup(group)
    made.codes = codes
    return made


class Piles(dict[str, Any]):
    """A dict subclass of groups: the compiled join hands it to the reference."""


def broken_groups(piles: dict[str, Any], rng: random.Random) -> Iterator[Any]:
    """``piles`` (a schema's groups) with one thing wrong for the join, or not a dict."""
    names = list(piles)
    name = rng.choice(names)
    group = piles[name]
    yield {**piles, "extra": group}
    yield {n: g for n, g in piles.items() if n != name}
    yield {**piles, name: list(group)}
    yield {**piles, name: without_codes(list(group))}
    yield {**piles, name: with_codes(list(group), list(group.codes))}
    yield {**piles, name: with_codes(list(group), group.codes[:-1])}
    yield {**piles, name: with_codes(list(group)[:-1], group.codes)}
    yield {**piles, name: with_codes([*group, []], (*group.codes, ()))}
    yield {**{n: g for n, g in piles.items() if n != name}, 7: group}
    yield Piles(piles)
    yield list(piles.items())
    yield None


@needs_codec
def test_groups_join_as_the_reference() -> None:
    assert CODEC is not None
    assert wire.join_groups == CODEC.join_groups
    rng = random.Random(14)
    for game, state in sampled(11):
        piles = loaded_piles(game, state)
        layout = game.group_counts
        if len(piles) == len(layout):  # every group sent (a sealed game's face-down ones are too, in open mode)
            assert CODEC.join_groups(piles, layout) == python_join_groups(piles, layout) == state.piles
        for broken in broken_groups(piles, rng):
            assert outcome(CODEC.join_groups, broken, layout) == outcome(python_join_groups, broken, layout)
        odd_layouts: list[Any] = [
            list(layout), layout[:-1], (*layout, ("extra", 1)), ((1, 1), *layout[1:]),
            ((layout[0][0], HUGE), *layout[1:]), ((layout[0][0], -1), *layout[1:]),
            ((layout[0][0], True), *layout[1:]), ((layout[0][0],), *layout[1:]), ((), *layout[1:]),
        ]
        for odd in odd_layouts:
            assert outcome(CODEC.join_groups, piles, odd) == outcome(python_join_groups, piles, odd), odd


def test_read_body_reads_the_same_state_with_and_without_the_join(monkeypatch: pytest.MonkeyPatch) -> None:
    for game, state in sampled(3):
        data = StateSchema().load(state_to_json(game, state))
        joined = read_body(game, data)
        monkeypatch.setattr(wire, "join_groups", lambda piles, layout: None)
        assert read_body(game, data) == joined == state
        monkeypatch.undo()


# --- deal numbers ---------------------------------------------------------------------------
def general_deal_reading(value: Any) -> int:
    """parse_deal as it read every value before its fast paths (the reference)."""
    if isinstance(value, bool):
        raise NotationError([])
    if isinstance(value, str):
        if not value.isdigit() or not value.isascii() or len(value) > len(str(MAX_DEAL)):
            raise NotationError([])
        value = int(value)
    if not isinstance(value, int) or not 0 <= value <= MAX_DEAL:
        raise NotationError([])
    return value


class Digits(str):
    """A str subclass of digits."""


DEALS: tuple[Any, ...] = (
    0, 1, 7, MAX_DEAL, MAX_DEAL + 1, -1, HUGE, True, False, 1.0, None, Bound(3), "0", "1", "00012", "9" * 20,
    "1" * 21, "", " 1", "+1", "1_000", "\u0661\u0662", "\u00b2", Digits("12"), [1], *ODD_VALUES,
)


@pytest.mark.parametrize("value", DEALS, ids=repr)
def test_parse_deal_answers_as_its_general_reading(value: Any) -> None:
    def answer(read: Callable[[Any], int]) -> tuple[str, Any]:
        try:
            number = read(value)
        except NotationError:
            return "refused", None
        return "read", (type(number), number)

    assert answer(parse_deal) == answer(general_deal_reading)


# --- the fast reader's inline cases -------------------------------------------------------
OPTION_VALUES: tuple[Any, ...] = (
    *ODD_VALUES, "x" * 32, "x" * 33, 1000, -1000, 1001, -1001, Bound(3), Digits("7"), 7.0, b"x", ("x",),
)


@pytest.mark.parametrize("value", OPTION_VALUES, ids=repr)
def test_an_option_value_accepted_inline_is_what_the_field_reads(value: Any) -> None:
    field = OptionValue()
    if _option_accepted(value):
        assert field._deserialize(value, None, None) is value
        assert type(value) in (str, int)
    else:  # the field reads it (and perhaps refuses it) as it did
        try:
            read = field._deserialize(value, None, None)
        except ValidationError:
            return
        assert read is value


def test_remembered_matches_stay_bounded_and_hold_only_matches() -> None:
    matched, matches = fast_load._remembered(lambda text: text if text.startswith("ok") else None)
    assert not matches("no") and not matched
    for i in range(MAX_REMEMBERED * 2 + 5):
        assert matches(f"ok{i}")
        assert len(matched) <= MAX_REMEMBERED
    assert f"ok{MAX_REMEMBERED * 2 + 4}" in matched and all(text.startswith("ok") for text in matched)


MOVES: tuple[Any, ...] = (
    {"action": "move", "from": "tableau:3", "to": "cell:0", "count": 1},
    {"action": "move", "from": "tableau:3", "to": "cell:0"},
    {"action": "move", "to": "cell:0", "count": 2},
    {"action": "move", "from": "tableau:03", "to": "cell:0", "count": 1},
    {"action": "move", "from": "nowhere", "to": "cell:0", "count": 1},
    {"action": "move", "from": "tableau:3", "to": "cell:0", "count": 0},
    {"action": "move", "from": "tableau:3", "to": "cell:0", "count": True},
    {"action": "move", "from": "tableau:3", "to": "cell:0", "count": 1, "extra": 1},
    {"action": "deal"}, {"action": "redeal"}, {"action": "deal", "count": 1}, {},
    {"action": "move", "from": Digits("tableau:3"), "to": "cell:0", "count": 1},
)


@pytest.mark.parametrize("body", [*MOVES, *ODD_VALUES], ids=repr)
def test_a_move_branchs_loader_loads_as_its_schema(body: Any) -> None:
    def answer(load: Callable[[], Any]) -> tuple[str, Any]:
        try:
            return "loaded", load()
        except ValidationError as error:
            return "refused", error.messages

    for name, schema in MOVE_READERS.items():
        partial = CARD_MOVE_LENIENT if name == CARD_MOVE else ()
        want = answer(lambda: Schema.load(schema, body, partial=partial))  # noqa: B023 - called at once
        assert answer(lambda: MOVE_LOADERS[name](body)) == want, name  # noqa: B023 - called at once
        assert answer(lambda: schema.load(body, partial=partial)) == want, name  # noqa: B023 - called at once
