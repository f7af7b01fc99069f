"""The v1 wire format (service/http/wire.py) on its own, and the one-source rules of the
enumerations the contract shows: the schemas' lists are the engine's enums, pile groups
and fans outside :class:`GroupName` and :class:`Fan` are refused when a game declares
them, and every problem the HTTP layer answers carries a :class:`ProblemCode`."""

from __future__ import annotations

import pytest

from service.engine.core import Action, EventKind, Fan, GroupName, Move, PileGroup, Status
from service.engine.registry import GAMES, get_game
from service.http.problems import ApiError, ProblemCode
from service.http.schemas import (
    EVENT_BRANCHES,
    EVENT_TEXT,
    GameSchema,
    MoveSchema,
    PileGroupSchema,
    PilesSchema,
    status_field,
)
from service.http.wire import (
    ACTION_NAMES,
    FORMAT_VERSION,
    NotationError,
    game_actions,
    move_from_json,
    move_to_json,
    parse_deal,
    state_from_json,
    state_to_json,
)


def choices(field: object) -> list[str]:
    return list(field.validate.choices)  # type: ignore[attr-defined]


@pytest.mark.parametrize("text,value", [("0", 0), ("00012", 12), (7, 7), ("9" * 20, 10**20 - 1)])
def test_deal_numbers_read_from_integers_and_decimal_strings(text: object, value: int) -> None:
    assert parse_deal(text) == value


@pytest.mark.parametrize("bad", [-1, 10**20, "1" * 21, "", " 12", "12a", "١٢", 1.5, True, None, [1]])
def test_bad_deal_numbers_are_refused_with_where(bad: object) -> None:
    with pytest.raises(NotationError) as e:
        parse_deal(bad, "/state/deal")
    assert e.value.problems[0].where == "/state/deal"


def test_a_state_lists_every_problem_in_reading_order() -> None:
    game = get_game("penguin")
    data = state_to_json(game, game.initial_state(3))
    data.update(format=FORMAT_VERSION + 1, deal="x", counters={"redeals": 1})
    data["piles"]["star"] = [[]]
    data["piles"]["tableau"][0] = ["1X"]
    with pytest.raises(NotationError) as e:
        state_from_json(data)
    assert [p.where for p in e.value.problems] == [
        "/format", "/deal", "/piles/star", "/piles/tableau/0/0", "/counters/redeals",
    ]


def test_a_state_naming_another_game_stops_at_the_header() -> None:
    game = get_game("penguin")
    data = state_to_json(game, game.initial_state(3))
    with pytest.raises(NotationError) as e:
        state_from_json({**data, "game": "opus"}, expect_game="penguin")
    assert [p.where for p in e.value.problems] == ["/game"]


@pytest.mark.parametrize("game_cls", GAMES, ids=[g.id for g in GAMES])
def test_every_move_round_trips_through_its_wire_form(game_cls: type) -> None:
    game = get_game(game_cls.id)
    state = game.initial_state(5)
    for move in game.legal_moves(state):
        assert move_from_json(game, move_to_json(game, move)) == move
    assert game_actions(game)[0] == ACTION_NAMES[Action.MOVE]


def test_action_names_are_the_enum_names_and_every_action_reads() -> None:
    game = get_game("amazons")
    assert list(ACTION_NAMES.values()) == ["move", "deal", "redeal"]
    for action in (Action.DEAL, Action.REDEAL):
        assert move_from_json(game, {"action": ACTION_NAMES[action]}) == Move(action)
    with pytest.raises(NotationError) as e:
        move_from_json(game, {"action": "jump"})
    assert e.value.problems[0].message == "action is 'move', 'deal' or 'redeal'"


def test_schema_enums_are_the_engines() -> None:
    assert choices(MoveSchema().fields["action"]) == list(ACTION_NAMES.values())
    assert choices(GameSchema().fields["actions"].inner) == list(ACTION_NAMES.values())  # type: ignore[attr-defined]
    assert list(EVENT_BRANCHES) == [k.value for k in EventKind]
    assert [choices(branch().fields["type"]) for branch in EVENT_BRANCHES.values()] == [[k.value] for k in EventKind]
    assert choices(status_field()) == [s.value for s in Status]
    assert choices(PileGroupSchema().fields["fan"]) == [f.value for f in Fan]
    assert list(PilesSchema().fields) == [g.value for g in GroupName]


def test_every_games_groups_are_named_from_the_one_list() -> None:
    used = {g.name for cls in GAMES for g in get_game(cls.id).groups}
    assert used <= set(GroupName)
    with pytest.raises(ValueError, match="GroupName"):
        PileGroup("pyramid", 1, 0, 0)
    with pytest.raises(ValueError, match="Fan"):
        PileGroup("tableau", 1, 0, 0, fan="up")


def test_problem_codes_carry_their_status() -> None:
    assert ApiError(ProblemCode.ILLEGAL_MOVE, "no").status == 409
    assert ProblemCode.NOT_FOUND.title_for(404) == "Not Found"
    assert ProblemCode.UNKNOWN_GAME.title_for(404) == "Unknown game"
    with pytest.raises(ValueError):
        ApiError(ProblemCode.HTTP_ERROR, "which status?")


def test_other_http_errors_answer_http_error_with_their_own_status(client) -> None:
    r = client.get("/play/assets/play.css", headers={"Range": "bytes=99999999-"})
    assert r.status_code == 416 and r.mimetype == "application/problem+json"
    assert r.json["code"] == ProblemCode.HTTP_ERROR and r.json["title"] == "Requested Range Not Satisfiable"


def test_schema_descriptions_name_every_value() -> None:
    """The prose next to each enum (what a reader of openapi.yaml sees) covers it all."""
    for field, values in (
        (MoveSchema().fields["action"], list(ACTION_NAMES.values())),
        (status_field(), list(Status)),
        (PileGroupSchema().fields["fan"], list(Fan)),
    ):
        description = field.metadata["description"]
        assert all(f"`{v}`" in description for v in values), description
    assert all(f"`{k.value}`" in EVENT_TEXT for k in EventKind), EVENT_TEXT
