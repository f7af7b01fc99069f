"""Marshmallow schemas of the replay endpoint (part of ``openapi.yaml``).

A replay takes a deal and the moves played from it, each exactly as the moves endpoint
takes it (:class:`.schemas.MoveField`), and answers the final position with a result a
leaderboard can check offline (:mod:`.replays_api` says what is signed).

The move list is bounded by :data:`MAX_REPLAY_MOVES`, so that the longest games the
solver wins replay (Binary Star's, which shuttle cards between the two stars, are by far
the longest), while the body limit (``MAX_BODY_BYTES``) holds that many Binary Star moves
at its default as compact JSON. docs/replays.md gives the figures, and the limit a server
needs for the longest moves of the other games or for JSON with spaces.
"""

from __future__ import annotations

from typing import Final

from marshmallow import fields, validate

from .daily import Day
from .result_signing import RESULT_JWS_FIELD
from .schemas import (
    MOVE_TEXT,
    StateSchema,
    Strict,
    StrictBoolean,
    answered_deal_field,
    autoplay_field,
    autoplay_request_field,
    component,
    deal_number_field,
    difficulty_request_field,
    legal_moves_field,
    move_field,
    options_field,
    server_default,
    state_protection_field,
    status_field,
)

MAX_REPLAY_MOVES: Final = 1100
SHA256_HEX_PATTERN: Final = r"^[0-9a-f]{64}$"
JWS_COMPACT_PATTERN: Final = r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$"


class ReplayedMovesSchema(Strict):
    """What every replay request carries besides its start: the moves, the options, the
    autoplay, and whether to answer the result as a JWS too."""

    options = options_field()
    moves = fields.List(
        move_field(MOVE_TEXT),
        required=True,
        validate=validate.Length(max=MAX_REPLAY_MOVES),
        metadata={
            "description": (
                f"The moves played from the deal, in order, each as the moves endpoint takes it (at most "
                f"{MAX_REPLAY_MOVES}). The first illegal move answers 409 `illegal-move` with its `move_index`."
            ),
            "maxItems": MAX_REPLAY_MOVES,
        },
    )
    autoplay = autoplay_request_field(
        "`safe`: after each move, make every foundation move that can never hurt, as the moves endpoint does."
    )
    result_jws = StrictBoolean(
        load_default=server_default(False),
        data_key=RESULT_JWS_FIELD,
        metadata={
            "description": (
                "`true`: the answer also carries `result_jws`, the result as a compact JWS signed with the server's "
                "Ed25519 result key, which anyone can check with the public keys at `/.well-known/jwks.json` "
                "(docs/replays.md). Signed and sealed modes only: an open server answers 422 "
                "`result-jws-unavailable`. Default: `false`."
            ),
        },
    )


class ReplayRequestSchema(ReplayedMovesSchema):
    """A replay from a deal number (``POST /v1/games/{game_id}/replays``)."""

    deal = deal_number_field("The deal to replay from.", required=True)


class DailyReplayRequestSchema(ReplayedMovesSchema):
    """A replay of a daily challenge (``POST /v1/games/{game_id}/daily/replays``): its own
    operation, so that each request names its start by one required field (a generated
    client types both, and neither can be left out)."""

    daily = Day(
        format="iso",
        required=True,
        metadata={
            "description": (
                "The UTC day (`YYYY-MM-DD`) of the daily challenge to replay from (`GET /v1/games/{game_id}/daily`, "
                "with the same `options` and `difficulty`); a day out of the server's window answers 422 "
                "`daily-out-of-window`. The result carries `daily`."
            ),
        },
    )
    difficulty = difficulty_request_field(
        "The day's deal of this difficulty grade (`GET /v1/games/{game_id}/daily?difficulty=...`); the result then "
        "carries `difficulty`. Omitted: the day's ungraded deal."
    )


class ResultSignatureSchema(Strict):
    kid = fields.String(required=True, metadata={"description": "Id of the state key that signed the result.", "example": "k2"})
    mac = fields.String(
        required=True,
        metadata={
            "description": (
                "HMAC-SHA256, base64url without padding (43 characters), of `patience-engine replay v1\\n` followed "
                "by the canonical JSON of the result without `signature` (docs/replays.md)."
            ),
            "example": "x3JqYl0cKZbN0o9cI3xJt5wUxrQmR6cM1qPAm0m4_6E",
        },
    )


class ReplayResultSchema(Strict):
    """What a replay proves, for a leaderboard's server to check offline."""

    game = fields.String(required=True, metadata=component("GameId"))
    options = options_field(required=True)
    deal = answered_deal_field("The deal replayed, as a decimal string.")
    state_protection = state_protection_field(
        "The server's mode: in `sealed` mode the deal number names a keyed deal, in the others PySolFC's."
    )
    autoplay = autoplay_field("The request's `autoplay`.", required=True)
    moves = fields.Integer(required=True, metadata={"description": "Number of moves replayed."})
    moves_sha256 = fields.String(
        required=True, validate=validate.Regexp(SHA256_HEX_PATTERN),
        metadata={
            "description": (
                "SHA-256, lower-case hex, of the canonical JSON of the move list as `legal_moves` writes moves "
                "(a card move with its `count`)."
            ),
        },
    )
    status = status_field()
    daily = fields.String(
        metadata={
            "description": "Only for a replay of a daily challenge: its UTC day (`YYYY-MM-DD`), as the request named it.",
            "format": "date",
        },
    )
    difficulty = fields.String(
        metadata=component("Difficulty", description=(
            "Only for a replay of a graded daily challenge (the request's `difficulty`): the grade of the day's deal "
            "replayed, signed with the rest."
        )),
    )
    signature = fields.Nested(
        ResultSignatureSchema,
        metadata={"description": "Signed and sealed modes only: the server's signature over every other field of the result. Absent in open mode, where the result proves nothing."},
    )


class ReplayResponseSchema(Strict):
    state = fields.Nested(StateSchema, required=True, metadata={"description": "The final position, as the moves endpoint would have answered it."})
    legal_moves = legal_moves_field()
    status = status_field()
    moves = fields.Integer(required=True, metadata={"description": "Number of moves replayed."})
    result = fields.Nested(ReplayResultSchema, required=True)
    result_jws = fields.String(
        data_key=RESULT_JWS_FIELD,
        validate=validate.Regexp(JWS_COMPACT_PATTERN),
        metadata={
            "description": (
                "Only when the request set `result_jws`: `result` as a compact JWS (RFC 7515), header "
                "`{\"alg\":\"EdDSA\",\"kid\":...,\"typ\":\"patience-result+jws\"}`, payload the canonical JSON of "
                "`result`, Ed25519 signature (RFC 8037). Check it with the key of its `kid` at "
                "`/.well-known/jwks.json`; no secret is needed (docs/replays.md)."
            ),
            "example": "eyJhbGciOiJFZERTQSIsImtpZCI6InIyIiwidHlwIjoicGF0aWVuY2UtcmVzdWx0K2p3cyJ9.e30.c2ln",
        },
    )
