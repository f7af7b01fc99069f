"""The solve and hint endpoints: thin views over :mod:`service.solver`.

Budgets: a request's limits are capped by the server's settings
(:class:`~service.solver.SolverSettings`, part of the app's settings), so no request can
make a search run longer or hold more positions than the server allows; the solver counts
them in positions (:func:`~service.solver.search.budget_of`), so the same request gets the
same answer under any load. Every search runs in the server's pool of solver processes
(:mod:`.searches`): 503 ``solver-busy`` when it is full, checked before the request's body
is validated or its state parsed (:func:`room_first`), so that a refusal costs little.

Knowledge (:func:`knowledge_of`): a request may ask for ``"knowledge": "player"`` (only what
the player sees: :mod:`service.solver.sampling`) or ``"full"`` (the state as sent); the
default is ``player`` in sealed mode, ``full`` otherwise, and sealed mode refuses ``full``
(403 ``full-knowledge-refused``): it would read the face-down cards the mode hides.

Autoplay: a request with ``"autoplay": "safe"`` gets the line to play with safe autoplay
(:mod:`service.solver.autoplay`); the default ``none``, the line to play without.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from service.engine.core import Game, Move, State
from service.solver import (
    Hint,
    Knowledge,
    Limits,
    PlayerSolve,
    SampleCount,
    SolveResult,
    hint,
    player_hint,
    player_solve,
    sampled_limits,
    solve_position,
)
from service.solver.answers import EveryMoveAvoided, avoided_here
from service.solver.pool import Search

from . import contract_examples as examples
from .app_settings import current_settings
from .body import Blueprint
from .games_api import ANSWER_HEADERS, link, read_move, read_state
from .observability import record_solver_run
from .problems import ApiError, ProblemCode
from .schemas import Autoplay
from .searches import refuse_unless_room, run_search
from .solver_schemas import HintRequestSchema, HintResponseSchema, SolveRequestSchema, SolveResponseSchema
from .state_protection import is_sealed
from .wire import move_to_json

T = TypeVar("T")

blp = Blueprint(
    "solver",
    __name__,
    url_prefix="/v1/games",
    description=(
        "Solve deals and ask for hints. With `\"knowledge\": \"full\"` (the default in open and "
        "signed modes) the solver searches the position exactly as sent: face-down cards "
        "included, and in games whose redeals reshuffle (Small Billee, Abandon Hope) each "
        "reshuffle is determined by the state (its deal number, the redeals made and the cards "
        "each redeal gathers, "
        "docs/rules.md \"Determinism\"), so a solution is a solution of the deal as dealt, "
        "reshuffles included, and replays move by move through the moves endpoint. With "
        "`\"knowledge\": \"player\"` (the default in sealed mode, where `full` is refused) it "
        "uses only what the player sees and samples the rest: see `knowledge`."
    ),
)


def room_first(view: Callable[..., T]) -> Callable[..., T]:
    """``view``, which refuses a search at once (503 ``solver-busy``) when the pool has no
    room for it: before flask-smorest validates the body against its schema and before the
    state is parsed (signatures checked, sealed cards opened), so that a refusal costs
    little. Applied right under ``blp.route``: outside the body's parsing."""

    @functools.wraps(view)
    def checked(*args: Any, **kwargs: Any) -> T:
        refuse_unless_room()
        return view(*args, **kwargs)

    return checked


def capped_limits(requested: dict[str, Any], default_seconds: float | None = None) -> Limits:
    """A request's limits (or the defaults), each capped by the server's."""
    s = current_settings().solver
    seconds = requested.get("max_seconds", default_seconds or s.max_seconds)
    states = requested.get("max_states", s.max_states)
    return Limits(min(seconds, s.max_seconds), min(states, s.max_states))


def knowledge_of(body: dict[str, Any]) -> Knowledge:
    """The knowledge a search request may use: the one it asks for, else the mode's default
    (``player`` in sealed mode, ``full`` otherwise); 403 ``full-knowledge-refused`` for
    ``full`` in sealed mode."""
    sealed = is_sealed(current_settings().state)
    asked = body.get("knowledge")
    if asked is None:
        return Knowledge.PLAYER if sealed else Knowledge.FULL
    if sealed and asked == Knowledge.FULL:
        raise ApiError(
            ProblemCode.FULL_KNOWLEDGE_REFUSED,
            "this server seals the face-down cards: a search may use only what the player sees "
            "(\"knowledge\": \"player\")",
        )
    return Knowledge(asked)


def is_safe_autoplay(body: dict[str, Any]) -> bool:
    """Whether a search request asks for the line to play with safe autoplay."""
    return bool(body["autoplay"] == Autoplay.SAFE)


def read_avoid(game: Game, state: State, raw: list[dict[str, Any]]) -> frozenset[Move]:
    """The legal moves a hint must not answer (the request's ``avoid``), each read as the
    moves endpoint reads its move (422 ``invalid-move`` for one it cannot read); moves
    that are not legal here, one that names a pile the game lacks included, change
    nothing. 422 ``every-move-avoided`` when no legal move is left outside them."""
    avoid: set[Move] = set()
    for index, data in enumerate(raw):
        try:
            avoid.add(read_move(game, data, f"/avoid/{index}"))
        except ApiError as e:
            if e.code is ProblemCode.ILLEGAL_MOVE:  # a pile the game lacks: a move that is not legal here
                continue
            raise ApiError(e.code, f"avoided move {index}: {e.detail}", e.errors) from None
    try:
        return avoided_here(game, state, frozenset(avoid))
    except EveryMoveAvoided as e:
        raise ApiError(ProblemCode.EVERY_MOVE_AVOIDED, str(e), [("/avoid", "leave at least one legal move out of `avoid`")]) from None


def stats(result: SolveResult, limits: Limits) -> dict[str, Any]:
    """The ``stats`` of an answer: what the search did, and the limits it ran under."""
    return {
        "states": result.states,
        "seconds": round(result.seconds, 4),
        "states_per_second": round(result.states / result.seconds) if result.seconds > 0 else 0.0,
        "stopped_by": result.stopped_by,
        "max_seconds": limits.max_seconds,
        "max_states": limits.max_states,
    }


def record(game: Game, result: SolveResult) -> None:
    """Count the run in the metrics (game id and result only: both from fixed sets)."""
    record_solver_run(game.id, result.result, result.seconds)


def search_answer(
    game: Game, result: SolveResult, limits: Limits, knowledge: Knowledge, samples: SampleCount | None
) -> dict[str, Any]:
    """The fields every search answer shares: ``stats`` (under the limits the search really
    had: a sampled one's samples share them), ``knowledge`` and ``samples``."""
    record(game, result)
    applied = limits if samples is None else sampled_limits(limits, samples.of)
    counted = None if samples is None else {"won": samples.won, "of": samples.of}
    return {"stats": stats(result, applied), "knowledge": knowledge.value, "samples": counted}


SOLVE_EXAMPLE = examples.solve_example(stats)
SOLVE_LINKS = {
    "PlayFirstSolutionMove": link(
        "play_move",
        "Play the first of the answered moves (a client that asked with `\"autoplay\": \"safe\"` plays the line "
        "with it too). Applies only while `moves` is not empty (`solved`, or a sampled answer with a safe start).",
        {"state": "$request.body#/state", "move": "$response.body#/moves/0"},
    ),
}


@blp.route("/<game:game_id>/solve", methods=["POST"])
@room_first
@blp.doc(operationId="solve", responses={200: {"links": SOLVE_LINKS}})
@blp.arguments(SolveRequestSchema(), error_status_code=400, example=SOLVE_EXAMPLE.request)
@blp.response(200, SolveResponseSchema, example=SOLVE_EXAMPLE.answer, headers=ANSWER_HEADERS)
@blp.alt_response(403, response="FORBIDDEN")
@blp.alt_response(404, response="NOT_FOUND")
@blp.alt_response(413, response="REQUEST_ENTITY_TOO_LARGE")
@blp.alt_response(415, response="UNSUPPORTED_MEDIA_TYPE")
@blp.alt_response(422, response="UNPROCESSABLE_ENTITY")
@blp.alt_response(503, response="SERVICE_UNAVAILABLE")
def solve(body: dict[str, Any], game_id: str) -> dict[str, Any]:
    """Solve a position: a winning sequence of moves, a proof that none exists, or `unknown`
    when a limit stopped the search. With `player` knowledge, while hidden information can
    still change the game: `unknown`, with the moves that are safe to play now (see
    `moves`) and how many samples of the hidden cards were won (`samples`). With
    `"autoplay": "safe"`, the moves are the line to play with safe autoplay.

    503 `solver-busy`, with `Retry-After`, at once when every solver process of the server
    is busy and its queue is full."""
    knowledge = knowledge_of(body)
    game, state, _ = read_state(game_id, body["state"])
    limits = capped_limits(body.get("limits") or {})
    samples = current_settings().solver.samples
    autoplay = is_safe_autoplay(body)
    solved = (
        PlayerSolve(run_search(Search(solve_position, game, (state, limits, autoplay), limits.max_seconds)), None)
        if knowledge is Knowledge.FULL
        else run_search(Search(player_solve, game, (state, limits, samples, autoplay), limits.max_seconds))
    )
    result = solved.search
    return {
        "result": result.result,
        "moves": [move_to_json(game, m) for m in result.moves],
        **search_answer(game, result, limits, knowledge, solved.samples),
    }


HINT_EXAMPLE = examples.hint_example(stats)


@blp.route("/<game:game_id>/hint", methods=["POST"])
@room_first
@blp.doc(operationId="hint", responses={200: {"links": {
    "PlayHintedMove": link(
        "play_move", "Play the hinted move. Applies only while `move` is not null (there is none when the game is "
        "over).",
        {"state": "$request.body#/state", "move": "$response.body#/move"},
    ),
}}})
@blp.arguments(HintRequestSchema(), error_status_code=400, example=HINT_EXAMPLE.request)
@blp.response(200, HintResponseSchema, example=HINT_EXAMPLE.answer, headers=ANSWER_HEADERS)
@blp.alt_response(403, response="FORBIDDEN")
@blp.alt_response(404, response="NOT_FOUND")
@blp.alt_response(413, response="REQUEST_ENTITY_TOO_LARGE")
@blp.alt_response(415, response="UNSUPPORTED_MEDIA_TYPE")
@blp.alt_response(422, response="UNPROCESSABLE_ENTITY")
@blp.alt_response(503, response="SERVICE_UNAVAILABLE")
def hint_view(body: dict[str, Any], game_id: str) -> dict[str, Any]:
    """The move to make now, why, and whether the game can still be won: a solution's first
    move when the solver finds one within the hint budget (HINT_SECONDS), else the
    heuristic's choice. With `player` knowledge, while hidden information can still change
    the game: the move that starts the most won samples' solutions, `winnable` `"unknown"`,
    and how many samples were won (`samples`). With `"autoplay": "safe"`, the first move
    of the line to play with safe autoplay (the same move). Never a move of `avoid`: a
    client that keeps its history breaks a circle of hints with it; 422
    `every-move-avoided` when `avoid` holds every legal move.

    503 `solver-busy`, with `Retry-After`, at once when every solver process of the server
    is busy and its queue is full."""
    knowledge = knowledge_of(body)
    game, state, _ = read_state(game_id, body["state"])
    avoid = read_avoid(game, state, body.get("avoid", ()))
    solver = current_settings().solver
    limits = capped_limits({}, solver.hint_seconds)
    autoplay = is_safe_autoplay(body)
    given: Hint = (
        run_search(Search(hint, game, (state, limits, autoplay, avoid), limits.max_seconds))
        if knowledge is Knowledge.FULL
        else run_search(Search(player_hint, game, (state, limits, solver.samples, autoplay, avoid), limits.max_seconds))
    )
    return {
        "move": None if given.move is None else move_to_json(game, given.move),
        "reason": given.reason,
        "winnable": given.winnable,
        **search_answer(game, given.search, limits, knowledge, given.samples),
    }
