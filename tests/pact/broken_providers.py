"""Deliberately broken providers, for tests/pact/test_pact_verify.py: the Pact verification
app (``service.pact_provider``) with a middleware that breaks a promise of the contract in
every JSON answer. The committed pacts must fail against each. Test only; gunicorn serves
them as ``tests.pact.broken_providers:<factory>()``."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import Any

from service.pact_provider import create_verification_app

Rewrite = Callable[[Any], Any]
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def rewrite_json(app: WsgiApp, rewrite: Rewrite) -> WsgiApp:
    """``app`` with every JSON answer's body passed through ``rewrite``."""

    def broken(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        captured: dict[str, Any] = {}

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
            captured.update(status=status, headers=headers)
            return lambda data: None

        chunks = app(environ, capture)
        try:
            body = b"".join(chunks)
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        headers = captured["headers"]
        kind = next((v for k, v in headers if k.lower() == "content-type"), "")
        if "json" in kind and not environ.get("PATH_INFO", "").startswith("/_pact/"):
            body = json.dumps(rewrite(json.loads(body))).encode()
        headers = [(k, v) for k, v in headers if k.lower() != "content-length"] + [("Content-Length", str(len(body)))]
        start_response(captured["status"], headers)
        return [body]

    return broken


def renamed(data: Any) -> Any:
    """``legal_moves`` renamed ``legalMoves`` wherever it is a key."""
    if isinstance(data, dict):
        return {("legalMoves" if k == "legal_moves" else k): renamed(v) for k, v in data.items()}
    if isinstance(data, list):
        return [renamed(v) for v in data]
    return data


def reversed_moves(data: Any) -> Any:
    """Every ``legal_moves`` list in reverse order: the order is promised."""
    if isinstance(data, dict):
        return {k: (list(reversed(v)) if k == "legal_moves" and isinstance(v, list) else reversed_moves(v))
                for k, v in data.items()}
    return data


def renamed_field() -> WsgiApp:
    """The verification app answering ``legalMoves`` for ``legal_moves``."""
    return rewrite_json(create_verification_app(os.environ), renamed)


def reversed_legal_moves() -> WsgiApp:
    """The verification app listing legal moves in reverse order."""
    return rewrite_json(create_verification_app(os.environ), reversed_moves)
