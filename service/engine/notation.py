"""The JSON shapes of states, moves, events and game descriptions (API v1).

Pure Python: the HTTP layer calls these, the engine never does. Reading is strict and
says where a problem is (a JSON pointer into the request's ``state`` or ``move``), so
a client learns exactly what it sent wrong.

>>> from service.engine.registry import get_game
>>> game = get_game("penguin")
>>> state = game.initial_state(1)
>>> data = state_to_json(game, state)
>>> state_from_json(data)[1] == state
True
>>> move_to_json(game, move_from_json(game, {"action": "move", "from": "tableau:3", "to": "cell:0"}))
{'action': 'move', 'from': 'tableau:3', 'to': 'cell:0', 'count': 1}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cards import CARD_CODES, CardError, format_card, parse_card
from .core import MAX_DEAL, Action, Event, Game, Move, Problem, Rejection, RulesError, State
from .registry import UnknownGame, get_game

FORMAT_VERSION = 1
MAX_PILE_CARDS = 208  # more than any game's whole deck: anything longer is refused unread


class NotationError(ValueError):
    """A request part that cannot be read; ``problems`` say what and where."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p.where}: {p.message}" for p in problems))
        self.problems = problems


class IllegalMoveError(Exception):
    """A well-formed move the rules forbid (or that names a pile the game lacks)."""

    def __init__(self, rejection: Rejection) -> None:
        super().__init__(rejection.detail)
        self.rejection = rejection


def parse_deal(value: Any, where: str = "/deal") -> int:
    """A deal number from a JSON integer or a decimal string (for clients whose numbers
    lose digits past 2^53)."""
    if isinstance(value, bool):
        raise NotationError([Problem(where, "a deal number is an integer or a decimal string")])
    if isinstance(value, str):
        text = value.strip()
        if not text.isdigit() or not text.isascii() or len(text) > 20:
            raise NotationError(
                [Problem(where, "a deal number string holds 1 to 20 decimal digits, e.g. \"123\"")]
            )
        value = int(text)
    if not isinstance(value, int):
        raise NotationError([Problem(where, "a deal number is an integer or a decimal string")])
    if not 0 <= value <= MAX_DEAL:
        raise NotationError([Problem(where, f"deal numbers run from 0 to {MAX_DEAL}")])
    return value


def format_deal(deal: int) -> str:
    return str(deal)


# --- states -----------------------------------------------------------------------
def state_to_json(game: Game, state: State) -> dict[str, Any]:
    piles: dict[str, list[list[str]]] = {g.name: [] for g in game.groups}
    for p, pile in enumerate(state.piles):
        piles[game.group_of[p]].append([format_card(c) for c in pile])
    return {
        "format": FORMAT_VERSION,
        "game": game.id,
        "options": dict(game.options),
        "deal": format_deal(state.deal),
        "piles": piles,
        "counters": {s.name: v for s, v in zip(game.counter_specs, state.counters, strict=True)},
    }


def state_from_json(data: Mapping[str, Any], expect_game: str | None = None) -> tuple[Game, State]:
    """Read a state (shape and notation only: :meth:`Game.validate` checks the cards).

    Raises :class:`NotationError`, or :class:`UnknownGame` for a game id nobody has.
    """
    if not isinstance(data, Mapping):
        raise NotationError([Problem("", "a state is a JSON object")])
    problems: list[Problem] = []
    fmt = data.get("format")
    if fmt != FORMAT_VERSION:
        problems.append(Problem("/format", f"this service reads state format {FORMAT_VERSION}"))
    game_id = data.get("game")
    if not isinstance(game_id, str):
        raise NotationError([*problems, Problem("/game", "the state must name its game")])
    if expect_game is not None and game_id != expect_game:
        raise NotationError(
            [*problems, Problem("/game", f"this state is a {game_id!r} state, sent to {expect_game!r}")]
        )
    options = data.get("options", {})
    if not isinstance(options, Mapping):
        raise NotationError([*problems, Problem("/options", "options is a JSON object")])
    try:
        game = get_game(game_id, options)
    except RulesError as e:
        raise NotationError([*problems, Problem("/" + e.where, str(e))]) from e
    deal = 0
    try:
        deal = parse_deal(data.get("deal"), "/deal")
    except NotationError as e:
        problems.extend(e.problems)
    piles_data = data.get("piles")
    piles: list[tuple[int, ...]] = []
    if not isinstance(piles_data, Mapping):
        problems.append(Problem("/piles", "piles is an object of pile groups"))
    else:
        for name in piles_data:
            if not game.has_group(name):
                groups = ", ".join(g.name for g in game.groups)
                problems.append(Problem(f"/piles/{name}", f"{game.name} has no pile group {name!r} (groups: {groups})"))
        for g in game.groups:
            group = piles_data.get(g.name)
            where = f"/piles/{g.name}"
            if not isinstance(group, list) or len(group) != g.count:
                problems.append(Problem(where, f"{g.name} is a list of {g.count} piles"))
                continue
            for i, pile in enumerate(group):
                if not isinstance(pile, list) or len(pile) > MAX_PILE_CARDS:
                    problems.append(
                        Problem(f"{where}/{i}", f"a pile is a list of at most {MAX_PILE_CARDS} cards")
                    )
                    continue
                try:
                    piles.append(tuple(map(CARD_CODES.__getitem__, pile)))
                except (KeyError, TypeError):
                    for j, text in enumerate(pile):
                        try:
                            parse_card(text)
                        except CardError as e:
                            problems.append(Problem(f"{where}/{i}/{j}", str(e)))
    counters_data = data.get("counters", {})
    counters: list[int] = []
    if not isinstance(counters_data, Mapping):
        problems.append(Problem("/counters", "counters is an object"))
    else:
        names = {s.name for s in game.counter_specs}
        for name in counters_data:
            if name not in names:
                problems.append(Problem(f"/counters/{name}", f"{game.name} has no counter {name!r}"))
        for spec in game.counter_specs:
            value = counters_data.get(spec.name)
            if isinstance(value, bool) or not isinstance(value, int):
                problems.append(Problem(f"/counters/{spec.name}", "an integer is required"))
            else:
                counters.append(value)
    if problems:
        raise NotationError(problems)
    return game, State(tuple(piles), tuple(counters), deal)


# --- moves ------------------------------------------------------------------------
def pile_from_ref(game: Game, ref: Any, field: str) -> int:
    """Flat pile index of ``"tableau:3"``; IllegalMoveError if the game has no such pile."""
    if not isinstance(ref, str) or ref.count(":") != 1:
        raise NotationError([Problem(f"/{field}", "a pile reference is '<group>:<index>', e.g. 'tableau:3'")])
    name, _, index = ref.partition(":")
    if not index.isdigit() or not index.isascii() or len(index) > 4:
        raise NotationError([Problem(f"/{field}", "a pile reference is '<group>:<index>', e.g. 'tableau:3'")])
    i = int(index)
    if not game.has_group(name) or i >= game.group(name).count:
        raise IllegalMoveError(Rejection("no-such-pile", f"{game.name} has no pile {ref!r}"))
    return game.group_start[name] + i


def move_from_json(game: Game, data: Mapping[str, Any]) -> Move:
    if not isinstance(data, Mapping):
        raise NotationError([Problem("", "a move is a JSON object")])
    action = data.get("action")
    if action == "deal":
        return Move(Action.DEAL)
    if action == "redeal":
        return Move(Action.REDEAL)
    if action != "move":
        raise NotationError([Problem("/action", "action is 'move', 'deal' or 'redeal'")])
    count = data.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_PILE_CARDS:
        raise NotationError([Problem("/count", f"count is an integer from 1 to {MAX_PILE_CARDS}")])
    src = pile_from_ref(game, data.get("from"), "from")
    dst = pile_from_ref(game, data.get("to"), "to")
    return Move(Action.MOVE, src, dst, count)


def move_to_json(game: Game, move: Move) -> dict[str, Any]:
    if move.action == Action.DEAL:
        return {"action": "deal"}
    if move.action == Action.REDEAL:
        return {"action": "redeal"}
    return {"action": "move", "from": game.ref(move.src), "to": game.ref(move.dst), "count": move.count}


def event_to_json(game: Game, event: Event) -> dict[str, Any]:
    out: dict[str, Any] = {"type": event.kind.value}
    if event.src >= 0:
        out["from"] = game.ref(event.src)
    if event.dst >= 0:
        out["to"] = game.ref(event.dst)
    out["cards"] = [format_card(c) for c in event.cards]
    if event.note:
        out["note"] = event.note
    return out


# --- game descriptions ----------------------------------------------------------------
def describe_game(game: Game, with_rules: bool = False) -> dict[str, Any]:
    deck = game.deck()
    out: dict[str, Any] = {
        "id": game.id,
        "name": game.name,
        "decks": game.decks,
        "cards": len(deck),
        "description": game.summary,
        "pile_groups": [
            {
                "name": g.name,
                "count": g.count,
                "row": g.row,
                "column": g.column,
                "per_row": g.per_row or g.count,
                "fan": g.fan,
                "face_down": g.face_down,
                "capacity": g.capacity or None,
                "description": g.description,
            }
            for g in game.groups
        ],
        "counters": [
            {"name": s.name, "minimum": s.minimum, "maximum": s.maximum, "description": s.description}
            for s in game.counter_specs
        ],
        "options": [
            {
                "name": o.name,
                "description": o.description,
                "default": game.options.get(o.name, o.default),
                "choices": list(o.choices) or None,
                "minimum": o.minimum,
                "maximum": o.maximum,
            }
            for o in game.option_specs()
        ],
        "actions": game_actions(game),
    }
    if with_rules:
        out["rules"] = game.rules_description()
        out["autoplay"] = game.autoplay_rule
    return out


def game_actions(game: Game) -> list[str]:
    """Which move actions the game has at all (so a frontend shows deal/redeal buttons)."""
    actions = ["move"]
    if game.has_deal:
        actions.append("deal")
    if game.has_redeal:
        actions.append("redeal")
    return actions


__all__ = [
    "FORMAT_VERSION",
    "IllegalMoveError",
    "NotationError",
    "UnknownGame",
    "describe_game",
    "event_to_json",
    "move_from_json",
    "move_to_json",
    "parse_deal",
    "state_from_json",
    "state_to_json",
]
