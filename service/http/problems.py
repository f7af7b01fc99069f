"""Errors as RFC 9457 ``application/problem+json``, and the Api class that documents them.

Every error the service answers goes through :func:`problem_response`, so all of them
have the same shape: ``type``, ``title``, ``status``, ``detail``, a machine-readable
``code``, and where useful ``errors`` (JSON pointers into the request) and ``rule``.
"""

from __future__ import annotations

import http
import logging
from collections.abc import Iterable, Mapping
from typing import Any

import flask
from flask_smorest import Api
from flask_smorest.utils import prepare_response
from werkzeug.exceptions import HTTPException

from .schemas import ProblemSchema

PROBLEM_JSON = "application/problem+json"
log = logging.getLogger("service.http")


class ApiError(Exception):
    """An error the API answers deliberately (4xx), with its problem fields."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        errors: Iterable[tuple[str, str]] = (),
        rule: str | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.errors = list(errors)
        self.rule = rule


TITLES = {
    "malformed-json": "Malformed JSON",
    "invalid-body": "Invalid request body",
    "invalid-state": "Inconsistent game state",
    "invalid-options": "Invalid rule options",
    "invalid-move": "Unreadable move",
    "unknown-game": "Unknown game",
    "illegal-move": "Illegal move",
    "body-too-large": "Request body too large",
    "no-winnable-deal": "No winnable deal found",
}


def request_id() -> str | None:
    return getattr(flask.g, "request_id", None) if flask.has_request_context() else None


def problem_response(
    status: int,
    code: str,
    detail: str,
    errors: Iterable[tuple[str, str]] = (),
    rule: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> flask.Response:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": TITLES.get(code) or http.HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        "code": code,
    }
    if rule:
        body["rule"] = rule
    errs = [{"where": w, "message": m} for w, m in errors]
    if errs:
        body["errors"] = errs
    rid = request_id()
    if rid:
        body["request_id"] = rid
    resp = flask.make_response(flask.json.dumps(body), status)
    resp.mimetype = PROBLEM_JSON
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


def flatten_messages(messages: Any, prefix: str = "") -> list[tuple[str, str]]:
    """marshmallow's nested error dict as (JSON pointer, message) pairs."""
    out: list[tuple[str, str]] = []
    if isinstance(messages, Mapping):
        for key, value in messages.items():
            if key == "_schema":
                out.extend(flatten_messages(value, prefix))
            else:
                out.extend(flatten_messages(value, f"{prefix}/{key}"))
    elif isinstance(messages, list):
        for m in messages:
            out.extend(flatten_messages(m, prefix))
    else:
        out.append((prefix or "/", str(messages)))
    return out


HTTP_CODES = {
    404: "not-found",
    405: "method-not-allowed",
    413: "body-too-large",
    415: "unsupported-media-type",
}


def handle_http_exception(error: HTTPException) -> flask.Response:
    status = error.code or 500
    headers = dict(error.get_headers())  # keeps e.g. the Allow header of a 405
    headers.pop("Content-Type", None)
    data = getattr(error, "data", None) or {}
    messages = data.get("messages")
    if status in (400, 422) and messages is not None:
        # webargs: messages is {"json": {...marshmallow errors...}}
        body_errors = messages.get("json", messages) if isinstance(messages, Mapping) else messages
        errors = flatten_messages(body_errors)
        if any("Invalid JSON body" in m for _, m in errors):
            return problem_response(400, "malformed-json", "the request body is not valid JSON", headers=headers)
        return problem_response(
            400, "invalid-body", "the request body does not match the API schema", errors, headers=headers
        )
    if status == 400:
        return problem_response(400, "malformed-json", error.description or "bad request", headers=headers)
    if status == 413:
        limit = flask.current_app.config.get("MAX_CONTENT_LENGTH")
        return problem_response(
            413, "body-too-large", f"the request body is larger than {limit} bytes", headers=headers
        )
    code = HTTP_CODES.get(status, "http-error" if status < 500 else "internal-error")
    detail = error.description or http.HTTPStatus(status).phrase
    return problem_response(status, code, detail, headers=headers)


def handle_api_error(error: ApiError) -> flask.Response:
    return problem_response(error.status, error.code, error.detail, error.errors, error.rule)


def handle_unexpected(error: Exception) -> flask.Response:
    """Last resort: a bug must still answer problem+json, and be logged with its trace."""
    if isinstance(error, HTTPException):
        return handle_http_exception(error)
    log.exception("unhandled error")
    return problem_response(500, "internal-error", "the service failed to answer; the error was logged")


# Status codes the API documents, with the content type it really uses for them.
ERROR_STATUSES = (400, 404, 405, 409, 413, 415, 422, 500)


class ProblemApi(Api):
    """flask-smorest's Api, answering and documenting errors as problem+json."""

    ERROR_SCHEMA = ProblemSchema
    DEFAULT_ERROR_RESPONSE_NAME = None  # each operation lists its own errors

    def _register_error_handlers(self) -> None:
        self._app.register_error_handler(HTTPException, handle_http_exception)
        self._app.register_error_handler(ApiError, handle_api_error)
        self._app.register_error_handler(Exception, handle_unexpected)

    def _register_responses(self) -> None:
        for status in http.HTTPStatus:
            description, example = ERROR_DOCS.get(status, (status.phrase, None))
            response: dict[str, Any] = {"description": description}
            if status >= 400:
                response["schema"] = self.ERROR_SCHEMA
                if example:
                    response["example"] = {
                        "type": "about:blank", "title": TITLES.get(example[0], status.phrase),
                        "status": int(status), "code": example[0], "detail": example[1], **example[2],
                    }
                prepare_response(response, self.spec, PROBLEM_JSON)
            self.spec.components.response(status.name, response, lazy=True)


ERROR_DOCS: dict[int, tuple[str, tuple[str, str, dict[str, Any]] | None]] = {
    400: (
        "The body is not JSON, or does not match the schema (wrong types, unknown fields, sizes over the limits).",
        ("invalid-body", "the request body does not match the API schema",
         {"errors": [{"where": "/move/count", "message": "Not a valid integer."}]}),
    ),
    404: ("No game has this id.", ("unknown-game", "no game 'chess'; games: penguin, ...", {})),
    409: (
        "The move is well-formed but the rules forbid it; `rule` names the rule.",
        ("illegal-move", "the tableau builds down in suit by one: the Three of Diamonds does not go on the Eight of Clubs",
         {"rule": "tableau-builds-down-in-suit"}),
    ),
    413: ("The body is larger than the service accepts (MAX_BODY_BYTES).", ("body-too-large", "the request body is larger than 65536 bytes", {})),
    422: (
        "The body matches the schema but its content cannot be accepted: an inconsistent state (a card missing or twice, "
        "a card not in the deck, a foundation out of order, an impossible pile), invalid rule options, or an incomplete move.",
        ("invalid-state", "the state is not one this game can reach: AH appears 2 times (cell:0, tableau:6); the deck holds 1",
         {"errors": [{"where": "/state/piles/tableau/6/2", "message": "AH appears 2 times (cell:0, tableau:6); the deck holds 1"}]}),
    ),
}
