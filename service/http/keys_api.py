"""``GET /.well-known/jwks.json``: the public keys that check results' JWS, for anyone.

A leaderboard, a tournament site or a player fetches this document once (it may be cached
for :data:`MAX_AGE` seconds, and revalidated with its ``ETag``) and checks every
``result_jws`` offline with the key its ``kid`` names: no secret of the service is needed,
so no one who checks results can sign one. The keys are the ring of ``RESULT_KEYS`` (the
first signs) and the retired keys of ``RESULT_KEYS_RETIRED`` up to their date
(``retired_until``); an open-mode server signs no result and lists no key.
:mod:`.result_signing` says what is signed.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime
from typing import Any, Final

import flask
from marshmallow import fields

from service.settings import ResultSigningSettings

from .app_settings import current_settings
from .body import Blueprint
from .games_api import ANSWER_HEADERS
from .result_signing import jwks_document
from .schemas import Strict
from .state_signing import OPEN

MAX_AGE: Final = 600  # seconds a cache may serve the key set without asking again
CACHE_CONTROL: Final = f"public, max-age={MAX_AGE}"

blp = Blueprint(
    "keys",
    __name__,
    description="The public keys that check a replay's `result_jws` offline (docs/replays.md).",
)

CACHE_HEADERS: dict[str, Any] = {
    "ETag": {
        "description": "Strong validator of the key set: send it back as `If-None-Match` to get 304 while it holds.",
        "schema": {"type": "string"},
    },
    "Cache-Control": {
        "description": f"`{CACHE_CONTROL}`: any cache may keep the key set {MAX_AGE} seconds.",
        "schema": {"type": "string"},
    },
}


class JwkSchema(Strict):
    """One Ed25519 public key, as RFC 8037 writes it in a JWK."""

    kty = fields.String(required=True, metadata={"description": "Key type: `OKP` (RFC 8037).", "example": "OKP"})
    crv = fields.String(required=True, metadata={"description": "Curve: `Ed25519`.", "example": "Ed25519"})
    x = fields.String(
        required=True,
        metadata={"description": "The 32-byte public key, base64url without padding.", "example": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},
    )
    kid = fields.String(required=True, metadata={"description": "Key id: the `kid` of the JWS this key checks.", "example": "r2"})
    alg = fields.String(required=True, metadata={"description": "The one algorithm of this key: `EdDSA`.", "example": "EdDSA"})
    use = fields.String(required=True, metadata={"description": "`sig`: the key checks signatures.", "example": "sig"})
    retired_until = fields.String(
        metadata={
            "description": (
                "Retired keys only: the last day (UTC, `YYYY-MM-DD`) this key is listed; results it signed check "
                "until then. A key without it is current."
            ),
            "example": "2026-12-31",
        },
    )


class JwksSchema(Strict):
    """A JWK Set (RFC 7517)."""

    keys = fields.List(
        fields.Nested(JwkSchema),
        required=True,
        metadata={"description": "The current result keys (the first signs), then the retired ones still listed; empty in open mode."},
    )


# A signed server's key set, for the document (the public key of RFC 8037's example).
JWKS_EXAMPLE: Final = {"keys": [{
    "kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": "r2", "alg": "EdDSA", "use": "sig",
}]}


def utc_today() -> date:
    """Today's date in UTC: retired keys are listed up to the end of their day, UTC."""
    return datetime.now(UTC).date()


def entity_tag(document: bytes) -> str:
    """The strong ETag of a key set's bytes."""
    return '"' + hashlib.sha256(document).hexdigest()[:32] + '"'


@blp.route("/.well-known/jwks.json", methods=["GET"])
@blp.doc(
    operationId="get_jwks",
    responses={200: {"links": {
        "ListGames": {"operationId": "list_games", "parameters": {}, "description": "The games whose replay results these keys check."},
    }}},
)
@blp.response(200, JwksSchema, example=JWKS_EXAMPLE, headers={**ANSWER_HEADERS, **CACHE_HEADERS})
@blp.alt_response(304, description="Asked with `If-None-Match` naming the key set's `ETag` (or `*`): the key set held is still the key set; no body.", headers=CACHE_HEADERS)
@blp.alt_response(431, response="REQUEST_HEADER_FIELDS_TOO_LARGE")  # as every operation can; `default` says the rest
def get_jwks() -> flask.Response:
    """The public keys (JWK Set, Ed25519) that check a replay's `result_jws` with no secret.

    Current keys first (the first signs), then retired keys up to their `retired_until`
    date; empty in open mode, which signs no result. Cacheable: `Cache-Control: public`,
    a strong `ETag`, and 304 for a matching `If-None-Match`."""
    settings = current_settings()
    open_mode = settings.state.mode is OPEN
    document = jwks_document(ResultSigningSettings(), utc_today()) if open_mode else jwks_document(settings.results, utc_today())
    tag = entity_tag(document)
    headers = {"ETag": tag, "Cache-Control": CACHE_CONTROL}
    if flask.request.if_none_match.contains_weak(tag.strip('"')):
        return flask.Response(status=304, headers=headers)
    return flask.Response(document, 200, headers=headers, mimetype="application/json")


__all__ = ["CACHE_CONTROL", "MAX_AGE", "blp", "entity_tag", "get_jwks"]
