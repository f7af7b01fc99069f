"""The v1 games endpoints: list, describe, deal, move, legal moves, validate.

Thin on purpose: each view reads the body (schemas check shape), hands plain values to
the engine and turns the engine's answer or refusal into JSON. No rule lives here.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any, Final

from flask import Response
from werkzeug.routing import BaseConverter

from service.atlas.grades import GRADED_DEAL_TRIES, Grade, NotGraded, calibration_of, first_graded_deal, grade_state
from service.atlas.players import SOLVER_LIMITS
from service.engine.core import Game, Move, RulesError
from service.engine.registry import GAME_CLASSES, get_game
from service.settings import SOLVER_HARD_CAP_SECONDS, StateProtectionSettings
from service.solver import first_winnable_deal
from service.solver.autoplay import run_autoplay
from service.solver.pool import Search

from . import contract_examples as examples
from .app_settings import current_settings
from .body import Blueprint
from .observability import REQUEST_ID_HEADER, REQUEST_ID_HEADER_COMPONENT
from .problems import ApiError, ProblemCode
from .request_context import current_app
from .schemas import (
    Autoplay,
    DealRequestSchema,
    DealResponseSchema,
    GameDetailSchema,
    GameListSchema,
    LegalMovesResponseSchema,
    MoveRequestSchema,
    MoveResponseSchema,
    StateRequestSchema,
    ValidateResponseSchema,
    WinnabilitySchema,
)
from .searches import refuse_unless_room, run_search
from .state_protection import Position, deal_seeds, dealt_position, move_answer, position_answer, read_position
from .wire import (
    CARD_MOVE,
    IllegalMoveError,
    NotationError,
    describe_game,
    format_deal,
    move_from_json,
    move_to_json,
    winnability,
)

blp = Blueprint(
    "games",
    __name__,
    url_prefix="/v1/games",
    description="Deal, play and check games. Every request carries the whole state; the service keeps nothing.",
)


class GameIdConverter(BaseConverter):
    """``<game:game_id>``: any path segment (unknown ids answer 404 ``unknown-game``);
    documented as the ``GameId`` enum so clients and schemathesis see the ids."""


def game_id_schema(converter: BaseConverter) -> dict[str, Any]:
    return {"$ref": "#/components/schemas/GameId"}


# What every 200 answer documents besides its body: the request id header.
ANSWER_HEADERS: dict[str, Any] = {REQUEST_ID_HEADER: REQUEST_ID_HEADER_COMPONENT}


def link(operation_id: str, description: str, body: dict[str, Any] | None = None,
         game_id: str = "$request.path.game_id") -> dict[str, Any]:
    """An OpenAPI link to ``operation_id`` for the same game, each field of its request
    body a parameter of its own named ``body.<field>`` (a runtime expression such as
    ``$response.body#/state``, or a constant).

    Not a ``requestBody`` object: OpenAPI 3.0 gives a link's ``requestBody`` as one value
    or one expression, and openapi-generator's validator refuses an object of expressions;
    a parameter qualified by its location is the form both it and Schemathesis's stateful
    phase read (Schemathesis puts ``body.`` parameters into the request's body)."""
    parameters: dict[str, Any] = {"game_id": game_id}
    parameters.update({f"body.{name}": value for name, value in (body or {}).items()})
    return {"operationId": operation_id, "parameters": parameters, "description": description}


PLAYING_ONLY = " Applies only while `status` is `playing` (a won or lost position has no legal move)."

# Links from an answer that carries a position (a deal, a move, a replay) to what a client
# does next with its state.
POSITION_LINKS: dict[str, Any] = {
    "PlayFirstLegalMove": link(
        "play_move", "Play the first legal move of the position." + PLAYING_ONLY,
        {"state": "$response.body#/state", "move": "$response.body#/legal_moves/0"},
    ),
    "ListLegalMoves": link("legal_moves", "List the position's legal moves again.", {"state": "$response.body#/state"}),
    "ValidateState": link("validate_state", "Check the position's state.", {"state": "$response.body#/state"}),
    "AskForHint": link("hint", "Ask what to play in the position.", {"state": "$response.body#/state"}),
    "SolvePosition": link(
        "solve", "Solve the position (here with a small budget).",
        {"state": "$response.body#/state", "limits": {"max_seconds": 0.5}},
    ),
}


RANDOM_DEAL_LIMIT = 10**9  # a deal the service picks itself stays exact in any JSON parser


def require_game(game_id: str) -> None:
    """404 ``unknown-game`` unless a game has the id the path names."""
    if game_id not in GAME_CLASSES:
        raise ApiError(ProblemCode.UNKNOWN_GAME, f"no game {game_id!r}; games: {', '.join(GAME_CLASSES)}")


def game_or_404(game_id: str, options: Mapping[str, Any] | None = None) -> Game:
    """The game a path names, with a request's options (404 or 422 problems if not)."""
    require_game(game_id)
    try:
        return get_game(game_id, options)
    except RulesError as e:
        raise ApiError(ProblemCode.INVALID_OPTIONS, str(e), [("/" + e.where, str(e))]) from None


def read_state(
    game_id: str, data: Mapping[str, Any], protection: StateProtectionSettings | None = None, where: str = "/state"
) -> Position:
    """The position a request's state holds (404 for an unknown game; 403 for a state the
    server's protection mode refuses; 422 for one that cannot be read or reached), under
    ``protection`` (default: the app's)."""
    require_game(game_id)
    return read_position(current_settings().state if protection is None else protection, game_id, data, where)


def json_answer(payload: dict[str, Any]) -> Response:
    """The JSON answer, built directly: the payload already has the documented shape
    (schemathesis checks every answer against the schema), so a marshmallow dump of it
    would only cost time. ``jsonify(payload)``, with the app taken from its proxy once."""
    answer: Response = current_app().json.response(payload)  # type: ignore[assignment]  # typed as the sansio base
    return answer


def read_move(game: Game, data: Mapping[str, Any], where: str = "/move") -> Move:
    """The move a request sent at ``where`` (its problems' pointer): 422 if unreadable, 409
    if it names a pile the game lacks."""
    move = data if type(data) is dict else dict(data)  # (a dict is read as it is: nothing here changes it)
    if move.get("action") == CARD_MOVE and ("from" not in move or "to" not in move):
        raise ApiError(
            ProblemCode.INVALID_MOVE, "a card move names its `from` and `to` piles",
            [(where, f"`from` and `to` are required for action {CARD_MOVE!r}")],
        )
    try:
        return move_from_json(game, move)
    except NotationError as e:
        raise ApiError(ProblemCode.INVALID_MOVE, str(e), [(where + p.where, p.message) for p in e.problems]) from None
    except IllegalMoveError as e:
        raise ApiError(ProblemCode.ILLEGAL_MOVE, e.rejection.detail, rule=e.rejection.rule) from None


@blp.route("", methods=["GET"])
@blp.doc(operationId="list_games", responses={200: {"links": {
    "DescribeGame": link("get_game", "Describe the first game listed.", game_id="$response.body#/games/0/id"),
}}})
@blp.response(200, GameListSchema, example=examples.list_games_example("open"), headers=ANSWER_HEADERS)
@blp.alt_response(431, response="REQUEST_HEADER_FIELDS_TOO_LARGE")  # as every operation can; `default` says the rest
def list_games() -> dict[str, Any]:
    """List the games, with their layouts and rule options, and how this server protects
    the states clients hold.

    Each game says what a generic frontend needs to draw and play it: its pile groups and
    where they lie, its counters, its rule options with their defaults and its actions."""
    return {
        "games": [describe_game(get_game(gid)) for gid in GAME_CLASSES],
        "state_protection": current_settings().state.mode.value,
    }


@blp.route("/<game:game_id>", methods=["GET"])
@blp.doc(operationId="get_game", responses={200: {"links": {
    "DealGame": link("deal_game", "Deal the game (a deal the service picks).", game_id="$response.body#/id"),
    "GetWinnability": link("get_winnability", "How often a deal of the game can be won.", game_id="$response.body#/id"),
}}})
@blp.response(200, GameDetailSchema, example=examples.game_example("open"), headers=ANSWER_HEADERS)
@blp.alt_response(404, response="NOT_FOUND")
def get_game_view(game_id: str) -> dict[str, Any]:
    """Describe one game, with its rules in words, and how this server protects the states
    clients hold.

    As in the list of games, with the rules in words (every decision included) and which
    foundation moves `"autoplay": "safe"` makes."""
    return {
        **describe_game(game_or_404(game_id), with_rules=True),
        "state_protection": current_settings().state.mode.value,
    }


@blp.route("/<game:game_id>/winnability", methods=["GET"])
@blp.doc(operationId="get_winnability", responses={200: {"links": {
    "DealGame": link("deal_game", "Deal the game (a deal the service picks).", game_id="$response.body#/game"),
}}})
@blp.response(200, WinnabilitySchema, example=winnability(examples.EXAMPLE_GAME), headers=ANSWER_HEADERS)
@blp.alt_response(404, response="NOT_FOUND")
def get_winnability(game_id: str) -> dict[str, Any]:
    """How often a deal of the game can be won, from the winnability atlas.

    A range of deals (with the default options), each solved with one fixed budget counted
    in positions, so the verdicts do not depend on the machine: how many were won, proved
    lost, or left undecided, and the share of winnable deals as a 95% interval. A separate
    answer, not a field of the game's, so that v1's game answer stays as it was."""
    return winnability(game_or_404(game_id).id)


DEAL_EXAMPLE = examples.deal_example()
GRADING_SECONDS: Final = SOLVER_LIMITS.max_seconds  # the atlas budget one deal's grading may take


@blp.route("/<game:game_id>/deals", methods=["POST"])
@blp.doc(operationId="deal_game", responses={200: {"links": POSITION_LINKS}})
@blp.arguments(
    DealRequestSchema(), error_status_code=400, required=False, example=DEAL_EXAMPLE.request,
    description=(
        "Optional: a POST with no body and no Content-Type deals a deal the service picks, with the default "
        "options. A body declared JSON must hold a JSON value: an empty one answers 400 `malformed-json`."
    ),
)
@blp.response(200, DealResponseSchema, example=DEAL_EXAMPLE.answer, headers=ANSWER_HEADERS)
@blp.alt_response(404, response="NOT_FOUND")
@blp.alt_response(413, response="REQUEST_ENTITY_TOO_LARGE")
@blp.alt_response(415, response="UNSUPPORTED_MEDIA_TYPE")
@blp.alt_response(422, response="UNPROCESSABLE_ENTITY")
@blp.alt_response(503, response="SERVICE_UNAVAILABLE")
def deal_game(body: dict[str, Any], game_id: str) -> Response:
    """Deal a game: deal `deal` (or one the service picks) with the given options.

    With `"winnable": true` the solver looks for a winnable deal from there on, with
    `"difficulty"` for a winnable deal of that grade, and `"grade": true` grades the deal
    dealt (the answer's `difficulty`, only then): 503 `solver-busy`, with `Retry-After`,
    at once when every solver process of the server is busy and its queue is full."""
    game = game_or_404(game_id, body.get("options"))
    deal = body.get("deal")
    if deal is None:
        deal = 1 + secrets.randbelow(RANDOM_DEAL_LIMIT)
    protection = current_settings().state
    asked = body.get("difficulty")
    if asked is None and not body.get("grade"):  # v1's answer, unchanged
        dealt = winnable_deal(game, deal) if body.get("winnable") else dealt_position(protection, game, deal)
        return json_answer({"deal": format_deal(dealt.deal), **position_answer(protection, dealt)})
    grade: Grade | None
    if asked is not None:
        dealt, grade = graded_deal(game, Grade(asked), deal)
    else:
        not_graded_or_go(game)
        dealt = winnable_deal(game, deal) if body.get("winnable") else dealt_position(protection, game, deal)
        grade = run_search(Search(grade_state, game, (dealt.state,), graded_search_seconds()))
    difficulty = None if grade is None else grade.value
    return json_answer({"deal": format_deal(dealt.deal), **position_answer(protection, dealt), "difficulty": difficulty})


def refuse_ungraded(game: Game) -> None:
    """422 ``not-graded`` for a game (or options) without a calibration: no solver work,
    so a daily asks it before answering 304."""
    try:
        calibration_of(game)
    except NotGraded as e:
        raise ApiError(ProblemCode.NOT_GRADED, str(e)) from None


def not_graded_or_go(game: Game) -> None:
    """422 ``not-graded`` at once for a game (or options) without a calibration, before any
    search; then 503 ``solver-busy`` at once if the solver pool has no room."""
    refuse_ungraded(game)
    refuse_unless_room()


def graded_search_seconds() -> float:
    """The pool's budget for a grading search: the server's solve budget, plus the atlas
    budget one deal may take past it (:func:`~service.atlas.grades.first_graded_deal`),
    within the solver's hard cap."""
    return min(current_settings().solver.max_seconds + GRADING_SECONDS, SOLVER_HARD_CAP_SECONDS)


def graded_deal(game: Game, grade: Grade, start: int) -> tuple[Position, Grade]:
    """The first deal from ``start`` on of difficulty ``grade`` (422 ``no-graded-deal`` if
    none of :data:`~service.atlas.grades.GRADED_DEAL_TRIES` deals is, within the server's
    solve budget in all); the search runs in the solver pool, as a winnable deal's does. In
    sealed mode the grades are those of the keyed deals, as the player will get them."""
    not_graded_or_go(game)
    s = current_settings().solver
    search = run_search(Search(
        first_graded_deal, game,
        (grade, start, GRADED_DEAL_TRIES, s.max_seconds, deal_seeds(current_settings().state, game)),
        graded_search_seconds(),
    ))
    if search.found is None:
        raise ApiError(
            ProblemCode.NO_GRADED_DEAL,
            f"none of {tried_deals(search.tried)} is a winnable deal of difficulty {grade.value} (searched within "
            f"{s.max_seconds:g} s of budget in all); ask again from another deal number",
        )
    deal, state = search.found
    return Position(game, state, deal), grade


def tried_deals(tried: range) -> str:
    """The deals a search tried, for a problem's detail: ``deal 7`` or ``deals 7-206``."""
    return f"deals {tried.start}-{tried.stop - 1}" if len(tried) > 1 else f"deal {tried.start}"


def winnable_deal(game: Game, start: int) -> Position:
    """The first deal from ``start`` on that the solver proves winnable (422 if none of
    the tries is proved within the server's budget); the search runs in the solver pool.
    In sealed mode the solver sees the keyed deals, as the player will get them."""
    s = current_settings().solver
    search = run_search(Search(
        first_winnable_deal, game,
        (start, s.winnable_deal_seconds, s.winnable_deal_tries, s.max_states, s.max_seconds,
         deal_seeds(current_settings().state, game)),
        s.max_seconds,
    ))
    if search.found is None:
        raise ApiError(
            ProblemCode.NO_WINNABLE_DEAL,
            f"none of {tried_deals(search.tried)} was proved winnable within {s.winnable_deal_seconds:g} s each "
            f"({s.max_seconds:g} s in all); ask again from another deal number",
        )
    deal, state = search.found
    return Position(game, state, deal)


MOVE_EXAMPLE = examples.move_example()
SAFE_AUTOPLAY: Final = Autoplay.SAFE.value  # looked up once: an enum member is reached through a descriptor


@blp.route("/<game:game_id>/moves", methods=["POST"])
@blp.doc(operationId="play_move", responses={200: {"links": POSITION_LINKS}})
@blp.arguments(MoveRequestSchema(), error_status_code=400, example=MOVE_EXAMPLE.request)
@blp.response(200, MoveResponseSchema, example=MOVE_EXAMPLE.answer, headers=ANSWER_HEADERS)
@blp.alt_response(403, response="FORBIDDEN")
@blp.alt_response(404, response="NOT_FOUND")
@blp.alt_response(409, response="CONFLICT")
@blp.alt_response(413, response="REQUEST_ENTITY_TOO_LARGE")
@blp.alt_response(415, response="UNSUPPORTED_MEDIA_TYPE")
@blp.alt_response(422, response="UNPROCESSABLE_ENTITY")
def play_move(body: dict[str, Any], game_id: str) -> Response:
    """Apply one move (409 with the rule if illegal), then any safe autoplay asked for.

    The answer carries the new position (its state, legal moves and status) and the events
    that led to it, automatic moves included. An unreadable move answers 422
    `invalid-move`."""
    protection = current_settings().state
    game, state, deal = read_state(game_id, body["state"], protection)
    move = read_move(game, body["move"])
    rejection = game.check_move(state, move)
    if rejection:
        raise ApiError(ProblemCode.ILLEGAL_MOVE, rejection.detail, rule=rejection.rule)
    state, events = game.play(state, move)
    if body.get("autoplay") == SAFE_AUTOPLAY:
        state, _ = run_autoplay(game, state, events)
    return json_answer(move_answer(protection, Position(game, state, deal), events))


LEGAL_MOVES_EXAMPLE = examples.legal_moves_example()


@blp.route("/<game:game_id>/legal-moves", methods=["POST"])
@blp.doc(operationId="legal_moves", responses={200: {"links": {
    "PlayFirstLegalMove": link(
        "play_move", "Play the first legal move listed." + PLAYING_ONLY,
        {"state": "$request.body#/state", "move": "$response.body#/legal_moves/0"},
    ),
}}})
@blp.arguments(StateRequestSchema(), error_status_code=400, example=LEGAL_MOVES_EXAMPLE.request)
@blp.response(200, LegalMovesResponseSchema, example=LEGAL_MOVES_EXAMPLE.answer, headers=ANSWER_HEADERS)
@blp.alt_response(403, response="FORBIDDEN")
@blp.alt_response(404, response="NOT_FOUND")
@blp.alt_response(413, response="REQUEST_ENTITY_TOO_LARGE")
@blp.alt_response(415, response="UNSUPPORTED_MEDIA_TYPE")
@blp.alt_response(422, response="UNPROCESSABLE_ENTITY")
def legal_moves(body: dict[str, Any], game_id: str) -> Response:
    """List every legal move of a state, and its status.

    Every card move the rules allow is listed, each target separately (every empty cell,
    every empty pile) and every run length that may move, so a frontend can highlight
    every legal drop."""
    game, state, _ = read_state(game_id, body["state"])
    moves = game.legal_moves(state)
    return json_answer({"legal_moves": [move_to_json(game, m) for m in moves], "status": game.status(state, moves).value})


VALIDATE_EXAMPLE = examples.validate_example()


@blp.route("/<game:game_id>/validate", methods=["POST"])
@blp.doc(operationId="validate_state", responses={200: {"links": {
    "ListLegalMoves": link("legal_moves", "List the state's legal moves.", {"state": "$request.body#/state"}),
}}})
@blp.arguments(StateRequestSchema(), error_status_code=400, example=VALIDATE_EXAMPLE.request)
@blp.response(200, ValidateResponseSchema, example=VALIDATE_EXAMPLE.answer, headers=ANSWER_HEADERS)
@blp.alt_response(403, response="FORBIDDEN")
@blp.alt_response(404, response="NOT_FOUND")
@blp.alt_response(413, response="REQUEST_ENTITY_TOO_LARGE")
@blp.alt_response(415, response="UNSUPPORTED_MEDIA_TYPE")
def validate_state(body: dict[str, Any], game_id: str) -> dict[str, Any]:
    """Say whether a state is one the rules can reach in shape, listing each problem (in
    signed mode, only for a state whose signature is good: 403 otherwise).

    An inconsistent state is answered 200 with `valid` false and its `problems`, each with
    a JSON pointer into the request."""
    try:
        read_state(game_id, body["state"])
    except ApiError as e:
        if e.code is not ProblemCode.INVALID_STATE:
            raise
        return {"valid": False, "problems": [{"where": w, "message": m} for w, m in e.errors]}
    return {"valid": True, "problems": []}
