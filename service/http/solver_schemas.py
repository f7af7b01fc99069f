"""Marshmallow schemas of the solve and hint endpoints (part of ``openapi.yaml``).

The ``result`` enum is the solver's :class:`~service.solver.Outcome`, the ``knowledge``
enum its :class:`~service.solver.Knowledge` and the ``StoppedBy`` component its
:class:`~service.solver.StopReason`, not copies of them.
"""

from __future__ import annotations

from typing import Any, Final

from marshmallow import ValidationError, fields, validate

from service.solver import Knowledge, Outcome, SolverSettings, StopReason
from service.solver.settings import SAMPLED_POSITIONS_PER_SECOND

from .schemas import (
    MOVE_TEXT,
    MoveField,
    Strict,
    StrictNumber,
    autoplay_request_field,
    component,
    enum_component,
    move_field,
    request_state_field,
)

# What can stop a search the API answers: `depth` only ever ends a depth-first pass inside
# the solver, which then goes on.
ANSWERED_STOP_REASONS: Final = [r.value for r in StopReason if r is not StopReason.DEPTH]

MAX_REQUEST_SECONDS = 3600.0
# The moves a hint may be asked to avoid: more than any position of these games has
# legal moves, few enough that reading them stays cheap.
MAX_AVOIDED_MOVES: Final = 100
MAX_REQUEST_STATES = 10**9


class LimitsSchema(Strict):
    max_seconds = StrictNumber(
        validate=validate.Range(min=0.001, max=MAX_REQUEST_SECONDS),
        allow_nan=False,
        metadata={
            "description": (
                "Most seconds to search, counted in positions: each second buys a fixed number of positions "
                "per game (about half its search's pace on an idle core), never read off the clock, so that the "
                "same request gets the same answer on any machine under any load. A search that cannot get the "
                "CPU to finish within it and a grace answers 503 `solver-busy`. Capped by the server's "
                "SOLVER_MAX_SECONDS (default 10). Default: the cap."
            ),
            "example": 2,
        },
    )
    max_states = fields.Integer(
        strict=True,
        validate=validate.Range(min=1, max=MAX_REQUEST_STATES),
        metadata={
            "description": "Most distinct positions to visit; capped by the server's SOLVER_MAX_STATES. Default: the cap.",
            "example": 100000,
        },
    )


KNOWLEDGE_VALUES = [k.value for k in Knowledge]
KNOWLEDGE_DOC = (
    "What the search may read. `player`: only what the player sees. The hidden information "
    "(the face-down piles' cards, and in Small Billee and Abandon Hope the reshuffles to come) "
    f"is sampled: the server's PLAYER_KNOWLEDGE_SAMPLES guesses at it (default {SolverSettings.samples}), drawn with a "
    "generator seeded from the visible position, each solved with its share of the budget, so "
    "the same request gets the same answer and positions that differ only in hidden cards get "
    "the same answer. A position whose hidden information can no longer change the game (the "
    "Penguin family and Binary Star, an empty stock, no reshuffle to come) is searched exactly, "
    "as with `full`. `full`: the state exactly as sent, face-down cards included. Default: "
    "`player` in sealed mode, `full` otherwise; `full` is refused in sealed mode (403 "
    "`full-knowledge-refused`)."
)


def knowledge_request_field() -> fields.String:
    return fields.String(
        validate=validate.OneOf(KNOWLEDGE_VALUES),
        metadata=component("Knowledge", description="What the search may read. Default: `player` in sealed mode, `full` otherwise."),
    )


def knowledge_answer_field() -> fields.String:
    return fields.String(
        required=True, validate=validate.OneOf(KNOWLEDGE_VALUES),
        metadata=component("Knowledge", description="The knowledge the search used: the request's `knowledge`, or the server's default for it."),
    )


class SamplesSchema(Strict):
    won = fields.Integer(required=True, metadata={"description": "Samples of the hidden information the search won."})
    of = fields.Integer(required=True, metadata={"description": "Samples searched (the server's PLAYER_KNOWLEDGE_SAMPLES)."})


def samples_field() -> fields.Nested:
    return fields.Nested(
        SamplesSchema, required=True, allow_none=True,
        metadata=component("Samples", description=(
            "A `player` answer that sampled the hidden information: how many samples were won, of "
            "how many. null when nothing was sampled: a `full` answer, or a position whose hidden "
            "information can no longer change the game (searched exactly)."
        )),
    )


SOLVE_AUTOPLAY_DOC = (
    "How the client plays the answered moves: `safe` if it sends each to the moves endpoint with `\"autoplay\": "
    "\"safe\"`, and the line answered is then the one to play so (without the moves autoplay makes, on the piles as "
    "autoplay leaves them). The position is taken as sent: autoplay runs after each move, never before the first, so "
    "where a safe move is still to make, the line may start with it."
)


class SolveRequestSchema(Strict):
    state = request_state_field()
    limits = fields.Nested(LimitsSchema, load_default=dict)
    knowledge = knowledge_request_field()
    autoplay = autoplay_request_field(SOLVE_AUTOPLAY_DOC)


class SolveStatsSchema(Strict):
    states = fields.Integer(required=True, metadata={"description": "Distinct positions visited."})
    seconds = fields.Float(required=True, metadata={"description": "Time spent searching."})
    states_per_second = fields.Float(required=True, metadata={"description": "`states` over `seconds`."})
    stopped_by = fields.String(
        required=True, allow_none=True,
        metadata=component("StoppedBy", description="For `unknown`: what stopped the search (for a sampled search, the first sample left undecided): `time` (the positions the time limit buys), `states` (the position limit), `memory` (open positions dropped to bound memory) or `invalid-solution` (a solution the engine refused, never answered); null otherwise, and for a sampled search whose every sample was decided (it is `unknown` because the hidden cards are)."),
    )
    max_seconds = fields.Float(required=True, metadata={"description": "The time limit applied (after the server's cap), counted in positions; a sampled search's samples share it."})
    max_states = fields.Integer(required=True, metadata={"description": f"The position limit applied (after the server's cap). A sampled search gives each sample an equal share of the positions its time allows at {SAMPLED_POSITIONS_PER_SECOND:,} a second (within the cap), so that the samples end on positions, not on the clock: this is their sum."})


RESULT_DOC = (
    "`solved`: `moves` win the game; `unsolvable`: the search proved no sequence of moves "
    "wins (it exhausted every reachable position, merging only positions that are "
    "equivalent and making only moves that cannot hurt); `unknown`: a limit stopped it, or "
    "(`player` knowledge) the hidden information can still change the game: a sampled "
    "search is always `unknown`."
)


class SolveResponseSchema(Strict):
    result = fields.String(required=True, validate=validate.OneOf([o.value for o in Outcome]), metadata=component("SolveResult"))
    moves = fields.List(
        MoveField(metadata=component("Move")), required=True,
        metadata={"description": (
            "For `solved`: the winning moves, each a v1 move to send to the moves endpoint in turn, "
            "with the request's `autoplay` (without autoplay for `none`, the default; with "
            "`\"autoplay\": \"safe\"` for `safe`: the moves autoplay makes are left out). For a sampled "
            "(`player`) search: the start of the winning line (played with the request's `autoplay`) "
            "of the first won sample that begins with the hint's move, cut before its first move whose "
            "outcome depends on hidden information (a deal from a face-down pile, a refill from the "
            "stock, a redeal that reshuffles; with `safe`, also a move whose autoplay makes such a "
            "refill): every move listed is legal in turn in the real game and plays the same whatever "
            "the hidden cards are; empty when no sample was won. Empty otherwise."
        )},
    )
    stats = fields.Nested(SolveStatsSchema, required=True)
    knowledge = knowledge_answer_field()
    samples = samples_field()


class Winnable(fields.Field):
    """``true``, ``false`` or ``"unknown"``."""

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return "unknown" if value is None else bool(value)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if value == "unknown":
            return None
        if isinstance(value, bool):
            return value
        raise ValidationError("true, false or \"unknown\"")


class HintRequestSchema(Strict):
    state = request_state_field()
    knowledge = knowledge_request_field()
    autoplay = autoplay_request_field(
        "How the client plays: `safe` if it sends its moves with `\"autoplay\": \"safe\"`; the hint is then the "
        "first move of a line to play so, which is the move it is without autoplay (autoplay runs only after a move); "
        "the `reason` of a solution's first move counts that line's moves. The position is taken as sent: where a safe move is still to make, it may "
        "be the hint."
    )
    avoid = fields.List(
        move_field(MOVE_TEXT),
        validate=validate.Length(max=MAX_AVOIDED_MOVES),
        metadata={
            "description": (
                f"Moves the hint must not answer (at most {MAX_AVOIDED_MOVES}), each written as `legal_moves` writes "
                "it: the hint is then another move, the position (with `player` knowledge, each sample) searched "
                "for a solution that starts with one. A client that keeps its history sends a hinted move that "
                "would bring back a position it has had, and asks again: following the hints so never goes round "
                "in a circle. Entries that are not legal moves here (a pile the game lacks included) change "
                "nothing; an entry that cannot be read as a move is 422 `invalid-move`; when every legal move is "
                "avoided the answer is 422 `every-move-avoided`. Default: `[]` (no move avoided)."
            ),
        },
    )


class HintResponseSchema(Strict):
    move = move_field("The move to make now; null when no move is left (won or lost). " + MOVE_TEXT, required=True, allow_none=True)
    reason = fields.String(required=True, metadata={"description": (
        "Why this move, in words. A sampled (`player`) hint plays the move that starts the most "
        "won samples' solutions (ties: the heuristic's order), or the heuristic's choice when no "
        "sample was won."
    )})
    winnable = Winnable(required=True, metadata=component("Winnable"))
    stats = fields.Nested(SolveStatsSchema, required=True)
    knowledge = knowledge_answer_field()
    samples = samples_field()


# The solver's shared components (see service/http/schemas.py's SCHEMA_COMPONENTS).
SOLVER_COMPONENTS: Final[dict[str, dict[str, Any]]] = {
    "Knowledge": enum_component(KNOWLEDGE_VALUES, KNOWLEDGE_DOC),
    "SolveResult": enum_component([o.value for o in Outcome], RESULT_DOC),
    "StoppedBy": enum_component(
        ANSWERED_STOP_REASONS,
        "What stopped a search that answered `unknown`: `time` (the positions the time limit buys), `states` (the position limit), `memory` (open "
        "positions dropped to bound memory) or `invalid-solution` (a solution the engine refused).",
    ),
    "Winnable": {
        "description": (
            "Whether the game can still be won: `true` (a solution was found), `false` (proved lost) "
            "or `\"unknown\"`. Never `true` for a `player` answer while hidden information can still "
            "change the game: a won sample is a guess, not the game."
        ),
        "oneOf": [{"type": "boolean"}, {"$ref": "#/components/schemas/WinnableUnknown"}],
    },
    # A component of its own, so that generators name the branch (not `WinnableType1`)
    # and keep its literal.
    "WinnableUnknown": {"type": "string", "enum": ["unknown"], "description": "`unknown`: the search could not tell."},
}
