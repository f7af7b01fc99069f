"""The solve and hint endpoints: thin views over :mod:`service.solver`.

Budgets: a request's limits are capped by the server's settings
(:class:`~service.solver.SolverSettings`, part of the app's settings), so no request can
make a search run longer or hold more positions than the server allows. Every search runs
in the server's pool of solver processes (:mod:`.searches`): 503 ``solver-busy`` when it
is full.
"""

from __future__ import annotations

from typing import Any

from service.engine.core import Game
from service.solver import Limits, SolveResult, hint, solve_position
from service.solver.pool import Search

from .app_settings import current_settings
from .body import Blueprint
from .games_api import read_state
from .observability import record_solver_run
from .searches import run_search
from .solver_schemas import HintRequestSchema, HintResponseSchema, SolveRequestSchema, SolveResponseSchema
from .wire import move_to_json

blp = Blueprint(
    "solver",
    __name__,
    url_prefix="/v1/games",
    description=(
        "Solve deals and ask for hints. The solver searches the position exactly as sent: in "
        "games whose redeals reshuffle (Small Billee, Abandon Hope), each reshuffle is "
        "determined by the state (its deal number and the redeals made, docs/rules.md "
        "\"Determinism\"), so a solution is a solution of the deal as dealt, reshuffles "
        "included, and replays move by move through the moves endpoint."
    ),
)


def capped_limits(requested: dict[str, Any], default_seconds: float | None = None) -> Limits:
    """A request's limits (or the defaults), each capped by the server's."""
    s = current_settings().solver
    seconds = requested.get("max_seconds", default_seconds or s.max_seconds)
    states = requested.get("max_states", s.max_states)
    return Limits(min(seconds, s.max_seconds), min(states, s.max_states))


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


@blp.route("/<game:game_id>/solve", methods=["POST"])
@blp.doc(operationId="solve")
@blp.arguments(SolveRequestSchema, error_status_code=400)
@blp.response(200, SolveResponseSchema)
@blp.alt_response(403, response="FORBIDDEN")
@blp.alt_response(404, response="NOT_FOUND")
@blp.alt_response(413, response="REQUEST_ENTITY_TOO_LARGE")
@blp.alt_response(422, response="UNPROCESSABLE_ENTITY")
@blp.alt_response(503, response="SERVICE_UNAVAILABLE")
def solve(body: dict[str, Any], game_id: str) -> dict[str, Any]:
    """Solve a position: a winning sequence of moves, a proof that none exists, or `unknown`
    when a limit stopped the search.

    503 `solver-busy`, with `Retry-After`, at once when every solver process of the server
    is busy and its queue is full."""
    game, state, _ = read_state(game_id, body["state"])
    limits = capped_limits(body.get("limits") or {})
    result = run_search(Search(solve_position, game, (state, limits), limits.max_seconds))
    record(game, result)
    return {
        "result": result.result,
        "moves": [move_to_json(game, m) for m in result.moves],
        "stats": stats(result, limits),
    }


@blp.route("/<game:game_id>/hint", methods=["POST"])
@blp.doc(operationId="hint")
@blp.arguments(HintRequestSchema, error_status_code=400)
@blp.response(200, HintResponseSchema)
@blp.alt_response(403, response="FORBIDDEN")
@blp.alt_response(404, response="NOT_FOUND")
@blp.alt_response(413, response="REQUEST_ENTITY_TOO_LARGE")
@blp.alt_response(422, response="UNPROCESSABLE_ENTITY")
@blp.alt_response(503, response="SERVICE_UNAVAILABLE")
def hint_view(body: dict[str, Any], game_id: str) -> dict[str, Any]:
    """The move to make now, why, and whether the game can still be won: a solution's first
    move when the solver finds one within the hint budget (HINT_SECONDS), else the
    heuristic's choice.

    503 `solver-busy`, with `Retry-After`, at once when every solver process of the server
    is busy and its queue is full."""
    game, state, _ = read_state(game_id, body["state"])
    limits = capped_limits({}, current_settings().solver.hint_seconds)
    given = run_search(Search(hint, game, (state, limits), limits.max_seconds))
    record(game, given.search)
    return {
        "move": None if given.move is None else move_to_json(game, given.move),
        "reason": given.reason,
        "winnable": given.winnable,
        "stats": stats(given.search, limits),
    }
