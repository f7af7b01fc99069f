"""Marshmallow schemas of the solve and hint endpoints (part of ``openapi.yaml``).

The ``result`` enum is the solver's :class:`~service.solver.Outcome`, not a copy of it.
"""

from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, validate

from service.solver import Outcome

from .schemas import MOVE_DOC, MoveSchema, StateSchema, Strict, StrictNumber

MAX_REQUEST_SECONDS = 3600.0
MAX_REQUEST_STATES = 10**9


class LimitsSchema(Strict):
    max_seconds = StrictNumber(
        validate=validate.Range(min=0.001, max=MAX_REQUEST_SECONDS),
        allow_nan=False,
        metadata={
            "description": "Most seconds to search; capped by the server's SOLVER_MAX_SECONDS (default 10). Default: the cap.",
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


class SolveRequestSchema(Strict):
    state = fields.Nested(StateSchema, required=True)
    limits = fields.Nested(LimitsSchema, load_default=dict)


class SolveStatsSchema(Strict):
    states = fields.Integer(required=True, metadata={"description": "Distinct positions visited."})
    seconds = fields.Float(required=True, metadata={"description": "Time spent searching."})
    states_per_second = fields.Float(required=True)
    stopped_by = fields.String(
        required=True, allow_none=True,
        metadata={"description": "For `unknown`: what stopped the search: `time`, `states` (the position limit), `memory` (open positions dropped to bound memory) or `invalid-solution` (a solution the engine refused, never answered); null otherwise."},
    )
    max_seconds = fields.Float(required=True, metadata={"description": "The time limit applied (after the server's cap)."})
    max_states = fields.Integer(required=True, metadata={"description": "The position limit applied (after the server's cap)."})


RESULT_DOC = (
    "`solved`: `moves` win the game; `unsolvable`: the search proved no sequence of moves "
    "wins (it exhausted every reachable position, merging only positions that are "
    "equivalent and making only moves that cannot hurt); `unknown`: a limit stopped it."
)


class SolveResponseSchema(Strict):
    result = fields.String(required=True, validate=validate.OneOf([o.value for o in Outcome]), metadata={"description": RESULT_DOC})
    moves = fields.List(
        fields.Nested(MoveSchema), required=True,
        metadata={"description": "For `solved`: the winning moves, each a v1 move to send to the moves endpoint in turn (without autoplay); empty otherwise."},
    )
    stats = fields.Nested(SolveStatsSchema, required=True)


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


WINNABLE_DOC = {
    "description": "Whether the game can still be won: `true` (a solution was found), `false` (proved lost) or `\"unknown\"`.",
    "oneOf": [{"type": "boolean"}, {"type": "string", "enum": ["unknown"]}],
}


class HintRequestSchema(Strict):
    state = fields.Nested(StateSchema, required=True)


class HintResponseSchema(Strict):
    move = fields.Nested(
        MoveSchema, required=True, allow_none=True,
        metadata={**MOVE_DOC, "description": "The move to make now; null when no move is left (won or lost)."},
    )
    reason = fields.String(required=True, metadata={"description": "Why this move, in words."})
    winnable = Winnable(required=True, metadata=WINNABLE_DOC)
    stats = fields.Nested(SolveStatsSchema, required=True)
