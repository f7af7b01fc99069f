"""The examples of ``openapi.yaml``: real requests and answers of one real deal, made by the
service's own code when the views are declared, so they cannot go stale (the drift test of
``openapi.yaml`` compares them too).

Everything is Penguin deal :data:`EXAMPLE_DEAL` in open mode: the deal as the engine deals
it, its first legal move played, its solution as the solver finds it (a search bounded by
positions, not by the clock, so its answer is the same on every run), the solution replayed
to ``won``. What depends on the clock is fixed: a search's ``seconds`` reads
:data:`EXAMPLE_SECONDS`.

Pure functions of the engine, the solver and the wire format (no Flask): the view modules
call them at import, once per process. Whatever needs a view module's own helper (the
search stats, the replay result) takes it as an argument, since those modules import this
one.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import json
from collections.abc import Callable
from typing import Any, Final, NamedTuple

from service.engine.registry import GAME_CLASSES, get_game
from service.settings import StateProtectionSettings, read_settings
from service.solver import Knowledge, Limits, Outcome, SolveResult, hint, solve_position

from .state_protection import Position, answer_state, dealt_position, move_answer, position_answer
from .wire import describe_game, format_deal, move_to_json

EXAMPLE_GAME: Final = "penguin"
EXAMPLE_DEAL: Final = 1
EXAMPLE_SECONDS: Final = 0.01  # what the examples say a search took (the real time varies)
OPEN: Final = StateProtectionSettings()  # the examples are an open-mode server's


class Example(NamedTuple):
    """A request body and the answer it gets, as JSON carries them."""

    request: dict[str, Any]
    answer: dict[str, Any]

    @classmethod
    def of(cls, request: dict[str, Any], answer: dict[str, Any]) -> Example:
        return cls(as_sent(request), as_sent(answer))


def as_sent(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` as a client reads it: plain JSON types (the enum members the wire format
    writes, which JSON writes as their values, become those values)."""
    loaded: dict[str, Any] = json.loads(json.dumps(value))
    return loaded


@functools.cache
def dealt() -> Position:
    """The example deal."""
    return dealt_position(OPEN, get_game(EXAMPLE_GAME), EXAMPLE_DEAL)


@functools.cache
def solution() -> SolveResult:
    """The example deal's solution, with the example's ``seconds``."""
    game, state, _ = dealt()
    settings = read_settings({}).solver
    found = solve_position(game, state, Limits(float("inf"), settings.max_states))
    if found.result is not Outcome.SOLVED:
        raise RuntimeError(f"the example deal {EXAMPLE_GAME} {EXAMPLE_DEAL} has no solution within the default budget")
    return dataclasses.replace(found, seconds=EXAMPLE_SECONDS)


def example_limits() -> Limits:
    """The limits a default server applies to a search asking for none."""
    settings = read_settings({}).solver
    return Limits(settings.max_seconds, settings.max_states)


def state_example() -> dict[str, Any]:
    """The example deal's state, as an answer carries it and a request sends it back."""
    return answer_state(OPEN, dealt())


def list_games_example(state_protection: str) -> dict[str, Any]:
    return as_sent({"games": [describe_game(get_game(gid)) for gid in GAME_CLASSES], "state_protection": state_protection})


def game_example(state_protection: str) -> dict[str, Any]:
    return as_sent({**describe_game(get_game(EXAMPLE_GAME), with_rules=True), "state_protection": state_protection})


def deal_example() -> Example:
    return Example.of({"deal": EXAMPLE_DEAL}, {"deal": format_deal(EXAMPLE_DEAL), **position_answer(OPEN, dealt())})


EXAMPLE_DAY: Final = "2026-01-01"  # the daily example's day (an answer's day is the request's)


def daily_example(daily_deal: Callable[[StateProtectionSettings, Any, Any], int]) -> dict[str, Any]:
    """The daily challenge answer of the example game on :data:`EXAMPLE_DAY` in open mode
    (``daily_deal``: the daily module's own, which imports this one)."""
    game = get_game(EXAMPLE_GAME)
    deal = daily_deal(OPEN, game, datetime.date.fromisoformat(EXAMPLE_DAY))
    answer = {"deal": format_deal(deal), **position_answer(OPEN, dealt_position(OPEN, game, deal)), "date": EXAMPLE_DAY}
    return as_sent(answer)


def move_example() -> Example:
    """The example deal's first legal move, played."""
    game, state, deal = dealt()
    move = game.legal_moves(state)[0]
    after, events = game.play(state, move)
    request = {"state": state_example(), "move": move_to_json(game, move), "autoplay": "none"}
    answer = move_answer(OPEN, Position(game, after, deal), events)
    return Example.of(request, answer)


def legal_moves_example() -> Example:
    answer = position_answer(OPEN, dealt())
    return Example.of({"state": answer.pop("state")}, answer)


def validate_example() -> Example:
    return Example.of({"state": state_example()}, {"valid": True, "problems": []})


StatsOf = Callable[[SolveResult, Limits], dict[str, Any]]


def solve_example(stats: StatsOf) -> Example:
    """The example deal solved with full knowledge; ``stats`` is the solve view's."""
    game = dealt().game
    found = solution()
    answer = {
        "result": found.result.value,
        "moves": [move_to_json(game, m) for m in found.moves],
        "stats": stats(found, example_limits()),
        "knowledge": Knowledge.FULL.value,
        "samples": None,
    }
    return Example.of({"state": state_example(), "knowledge": Knowledge.FULL.value}, answer)


def hint_example(stats: StatsOf) -> Example:
    """The example deal's hint with full knowledge; ``stats`` is the hint view's."""
    game, state, _ = dealt()
    limits = example_limits()
    given = hint(game, state, limits)
    timed = f"{given.search.seconds:.2f} s"
    answer = {
        "move": None if given.move is None else move_to_json(game, given.move),
        "reason": given.reason.replace(timed, f"{EXAMPLE_SECONDS:.2f} s"),
        "winnable": given.winnable,
        "stats": stats(dataclasses.replace(given.search, seconds=EXAMPLE_SECONDS), limits),
        "knowledge": Knowledge.FULL.value,
        "samples": None,
    }
    return Example.of({"state": state_example(), "knowledge": Knowledge.FULL.value}, answer)


ResultOf = Callable[[StateProtectionSettings, Position, list[dict[str, Any]], str, str], dict[str, Any]]


def replay_example(result_of: ResultOf) -> Example:
    """The first half of the example deal's solution replayed: a game in progress, as a
    client resumes one, so that the answer's links to play on resolve (a whole solution
    replays to ``won``, which has no legal move). ``result_of`` is the replay view's
    result builder."""
    game, state, deal = dealt()
    played = solution().moves[: len(solution().moves) // 2]
    moves = [move_to_json(game, m) for m in played]
    for move in played:
        state, _ = game.play(state, move)
    final = Position(game, state, deal)
    position = position_answer(OPEN, final)
    request = {"deal": EXAMPLE_DEAL, "options": dict(game.options), "moves": moves, "autoplay": "none"}
    answer = {
        **position,
        "moves": len(moves),
        "result": result_of(OPEN, final, moves, "none", position["status"]),
    }
    return Example.of(request, answer)


__all__ = [
    "EXAMPLE_DEAL",
    "EXAMPLE_GAME",
    "EXAMPLE_SECONDS",
    "Example",
    "deal_example",
    "game_example",
    "hint_example",
    "legal_moves_example",
    "list_games_example",
    "move_example",
    "replay_example",
    "solve_example",
    "validate_example",
]
