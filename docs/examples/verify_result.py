"""Check a replay's `result_jws` offline with only the service's public keys (its JWKS).

    python verify_result.py https://engine.example/.well-known/jwks.json answer.json

`answer.json` is a replay answer asked with `"result_jws": true` (or a bare compact JWS).
Prints the verified result as JSON and exits 0, or says why it refused and exits 1. No
secret of the service is needed, so nothing here can sign a result. Needs PyJWT.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from typing import Any

import jwt  # PyJWT (with `cryptography` for Ed25519)

RESULT_TYPE = "patience-result+jws"


class Refused(Exception):
    """The submission is not a result this service signed."""


def fetch_jwks(url: str) -> dict[str, Any]:
    """The service's public keys (GET /.well-known/jwks.json)."""
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def verify_token(token: str, jwks: dict[str, Any]) -> dict[str, Any]:
    """The result a compact JWS carries, once its Ed25519 signature checks with the key
    its `kid` names in `jwks`; Refused otherwise."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError as e:
        raise Refused(f"not a compact JWS: {e}") from None
    if header.get("alg") != "EdDSA" or header.get("typ") != RESULT_TYPE:
        raise Refused(f"not a result JWS (alg {header.get('alg')!r}, typ {header.get('typ')!r})")
    keys = [k for k in jwks.get("keys", []) if k.get("kid") == header.get("kid")]
    if not keys:
        raise Refused(f"key {header.get('kid')!r} is not among the service's public keys")
    try:
        key = jwt.PyJWK(keys[0], algorithm="EdDSA")
        payload = jwt.PyJWS().decode(token, key, algorithms=["EdDSA"])  # a JWS, not a JWT: no claims checked
    except jwt.PyJWTError as e:
        raise Refused(f"the signature does not check: {e}") from None
    result = json.loads(payload)
    if not isinstance(result, dict):
        raise Refused("the JWS does not carry a result")
    return result


def verify_answer(answer: Any, jwks: dict[str, Any]) -> dict[str, Any]:
    """The verified result of a replay answer (or of a bare compact JWS): the JWS must
    check, and an answer's `result` must be the one the JWS signed."""
    if isinstance(answer, str):
        return verify_token(answer, jwks)
    if not isinstance(answer, dict) or not isinstance(answer.get("result_jws"), str):
        raise Refused("no result_jws: an HMAC-signed result can only be checked with the service's secret")
    result = verify_token(answer["result_jws"], jwks)
    if "result" in answer and answer["result"] != result:
        raise Refused("the answer's result is not the one the JWS signed")
    return result


def main(argv: list[str]) -> int:
    jwks_url, path = argv
    with open(path, encoding="utf-8") as f:
        text = f.read().strip()
    try:
        answer = json.loads(text) if text.startswith(("{", '"')) else text
        result = verify_answer(answer, fetch_jwks(jwks_url))
    except (Refused, ValueError) as e:
        print(f"refused: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
