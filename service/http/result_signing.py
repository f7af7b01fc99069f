"""Results anyone can verify: a replay's result as a compact JWS (RFC 7515) signed with
Ed25519 (``alg`` ``EdDSA``, RFC 8037), and the public keys as a JWKS (RFC 7517).

The HMAC ``signature`` of a result (:mod:`.replays_api`) can only be checked by someone
who holds a state key, which could also sign states and results: a leaderboard that
checks results with it could forge a win. A JWS needs only the public key to check, so
the service publishes its result keys at ``GET /.well-known/jwks.json`` (:mod:`.keys_api`)
and anyone can check a result offline (docs/replays.md).

The JWS, in signed and sealed modes, when a replay request asks for it
(``"result_jws": true``): ``BASE64URL(header) "." BASE64URL(payload) "." BASE64URL(sig)``
without padding, where

- the header is exactly ``{"alg":"EdDSA","kid":"<key id>","typ":"patience-result+jws"}``
  (canonical JSON: sorted keys, no spaces), ``kid`` the first key of ``RESULT_KEYS``;
- the payload is the answer's ``result`` object (its HMAC ``signature`` included) as
  canonical JSON (:func:`.state_signing.canonical_json`), so the decoded payload equals
  the answered ``result``;
- the signature is Ed25519 (``cryptography``) over the ASCII of ``header "." payload``.

The JWKS lists each key of the ring (``OKP``, ``Ed25519``, its ``x``, ``kid``, ``alg``
``EdDSA``, ``use`` ``sig``), then each retired key of ``RESULT_KEYS_RETIRED`` up to the
end (UTC) of its date, with ``retired_until``; a retired key is dropped the day after.

>>> import json
>>> from service.settings import ResultKey, ResultSigningSettings
>>> from service.http.state_signing import from_b64url
>>> ring = ResultSigningSettings((ResultKey("r1", b"1" * 32),))
>>> token = sign_result(ring, {"game": "penguin", "status": "won"})
>>> header, payload, signature = token.split(".")
>>> json.loads(from_b64url(header)), json.loads(from_b64url(payload))
({'alg': 'EdDSA', 'kid': 'r1', 'typ': 'patience-result+jws'}, {'game': 'penguin', 'status': 'won'})
>>> [(k["kid"], k["kty"], k["crv"]) for k in jwks(ring, date(2026, 1, 1))["keys"]]
[('r1', 'OKP', 'Ed25519')]
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from service.settings import ResultKey, ResultSigningSettings

from .state_signing import b64url, canonical_json

JWS_ALG: Final = "EdDSA"
JWS_TYPE: Final = "patience-result+jws"
RESULT_JWS_FIELD: Final = "result_jws"  # the request's flag and the answer's field


@lru_cache(maxsize=16)
def _private_key(private: bytes) -> Ed25519PrivateKey:
    """The Ed25519 key of a 32-byte seed, built once per key."""
    return Ed25519PrivateKey.from_private_bytes(private)


@lru_cache(maxsize=16)
def public_key_bytes(private: bytes) -> bytes:
    """The 32-byte raw Ed25519 public key of a private key (the JWK's ``x``)."""
    return _private_key(private).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


@lru_cache(maxsize=16)
def _encoded_header(kid: str) -> str:
    """The base64url of the JWS protected header of key ``kid``."""
    return b64url(canonical_json({"alg": JWS_ALG, "kid": kid, "typ": JWS_TYPE}))


def signs_results(results: ResultSigningSettings) -> bool:
    """True when a result key ring is set (signed and sealed modes)."""
    return bool(results.keys)


def sign_with(key: ResultKey, result: dict[str, Any]) -> str:
    """The compact JWS of ``result`` under ``key`` (its canonical JSON the payload)."""
    signing_input = f"{_encoded_header(key.kid)}.{b64url(canonical_json(result))}"
    signature = _private_key(key.private).sign(signing_input.encode("ascii"))
    return f"{signing_input}.{b64url(signature)}"


def sign_result(results: ResultSigningSettings, result: dict[str, Any]) -> str:
    """The compact JWS of ``result`` under the first key of the ring (there must be one)."""
    return sign_with(results.keys[0], result)


def okp_jwk(kid: str, public: bytes) -> dict[str, Any]:
    """The JWK (RFC 8037) of an Ed25519 public key."""
    return {"kty": "OKP", "crv": "Ed25519", "x": b64url(public), "kid": kid, "alg": JWS_ALG, "use": "sig"}


def jwks(results: ResultSigningSettings, today: date) -> dict[str, Any]:
    """The JWKS of the result keys on ``today`` (UTC): the ring, then the retired keys
    whose date is ``today`` or later, each with its ``retired_until``."""
    keys = [okp_jwk(k.kid, public_key_bytes(k.private)) for k in results.keys]
    keys += [
        {**okp_jwk(k.kid, k.public), "retired_until": k.until.isoformat()} for k in results.retired if k.until >= today
    ]
    return {"keys": keys}


def jwks_document(results: ResultSigningSettings, today: date) -> bytes:
    """The JWKS as the endpoint answers it (canonical JSON: the same bytes, and so the
    same ETag, from every worker and server with the same keys)."""
    return canonical_json(jwks(results, today))


__all__ = [
    "JWS_ALG", "JWS_TYPE", "RESULT_JWS_FIELD", "jwks", "jwks_document", "okp_jwk", "public_key_bytes",
    "sign_result", "sign_with", "signs_results",
]
