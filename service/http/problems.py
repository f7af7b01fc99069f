"""Errors as RFC 9457 ``application/problem+json``, and the Api class that documents them.

Every error the service answers goes through :func:`problem_response`, so all of them
have the same shape: ``type``, ``title``, ``status``, ``detail``, a machine-readable
``code``, and where useful ``errors`` (JSON pointers into the request) and ``rule``.
:class:`ProblemCode` is the one list of codes, each with its status and title: every
error names one, and the schema's ``code`` enum and the README's error table (checked
by tests/contract/test_readme_tables.py) are built from or checked against it.
"""

from __future__ import annotations

import http
import logging
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

import flask
from flask_smorest import Api
from flask_smorest.utils import prepare_response
from marshmallow import INCLUDE, fields, validate
from werkzeug.exceptions import HTTPException

from service.solver.pool import PoolBusy

from .schemas import ProblemDetailSchema, Strict, component, enum_component

PROBLEM_JSON = "application/problem+json"
log = logging.getLogger("service.http")


class ProblemCode(StrEnum):
    """Every ``code`` the service answers, with its HTTP status and title.

    ``status`` is None only for ``http-error``, which reports whatever other 4xx status
    the HTTP stack raised (416 for a Range past a static file's end...); a code without
    a title of its own takes its status's phrase.
    """

    status: int | None
    own_title: str | None

    def __new__(cls, value: str, status: int | None, own_title: str | None = None) -> ProblemCode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.status = status
        member.own_title = own_title
        return member

    MALFORMED_JSON = "malformed-json", 400, "Malformed JSON"
    INVALID_BODY = "invalid-body", 400, "Invalid request body"
    # Refused while the body is read and parsed (service/http/body.py), before any view runs.
    JSON_TOO_DEEP = "json-too-deep", 400, "JSON nested too deep"
    NUMBER_TOO_LONG = "number-too-long", 400, "Number too long"
    DUPLICATE_KEY = "duplicate-key", 400, "Duplicate key"
    UNREADABLE_BODY = "unreadable-body", 400, "Unreadable request body"
    UNSUPPORTED_CONTENT_ENCODING = "unsupported-content-encoding", 415, "Unsupported content encoding"
    INVALID_STATE = "invalid-state", 422, "Inconsistent game state"
    INVALID_OPTIONS = "invalid-options", 422, "Invalid rule options"
    INVALID_MOVE = "invalid-move", 422, "Unreadable move"
    UNKNOWN_GAME = "unknown-game", 404, "Unknown game"
    ILLEGAL_MOVE = "illegal-move", 409, "Illegal move"
    NO_WINNABLE_DEAL = "no-winnable-deal", 422, "No winnable deal found"
    # A hint asked to avoid every legal move of its position (service/http/solver_api.py).
    EVERY_MOVE_AVOIDED = "every-move-avoided", 422, "Every legal move avoided"
    # Daily challenges (service/http/daily.py): a query parameter that cannot be read (a date
    # not YYYY-MM-DD, options not a JSON object), and a day the window does not hold.
    INVALID_QUERY = "invalid-query", 400, "Invalid query parameter"
    DAILY_OUT_OF_WINDOW = "daily-out-of-window", 422, "Day out of the daily window"
    # Difficulty grades (service/atlas/grades.py): no deal of the grade asked within the
    # tries and budget; a game (or options) without a calibration.
    NO_GRADED_DEAL = "no-graded-deal", 422, "No deal of that difficulty found"
    NOT_GRADED = "not-graded", 422, "Difficulty not graded"
    # Signed mode (STATE_PROTECTION=signed, service/http/state_signing.py): a state sent back
    # without its signature, with one that is not a signature, one made with a key the server
    # no longer lists, or one that does not match the state. Never played on.
    STATE_UNSIGNED = "state-unsigned", 403, "State not signed"
    STATE_SIGNATURE_MALFORMED = "state-signature-malformed", 403, "Malformed state signature"
    STATE_KEY_UNKNOWN = "state-key-unknown", 403, "Unknown state key"
    STATE_SIGNATURE_INVALID = "state-signature-invalid", 403, "Invalid state signature"
    # Sealed mode (service/http/state_sealing.py): a signed state whose sealed part does not open.
    STATE_SEAL_INVALID = "state-seal-invalid", 403, "Invalid sealed part"
    # Sealed mode: a search asked to read the face-down cards (`"knowledge": "full"`).
    FULL_KNOWLEDGE_REFUSED = "full-knowledge-refused", 403, "Full knowledge refused"
    # A replay asked for its result as a JWS (`"result_jws": true`) from an open-mode server,
    # which signs no result (service/http/result_signing.py).
    RESULT_JWS_UNAVAILABLE = "result-jws-unavailable", 422, "Result JWS unavailable"
    NOT_FOUND = "not-found", 404
    METHOD_NOT_ALLOWED = "method-not-allowed", 405
    UNSUPPORTED_MEDIA_TYPE = "unsupported-media-type", 415
    BODY_TOO_LARGE = "body-too-large", 413, "Request body too large"
    # Answered by the gunicorn worker (service/gunicorn_worker.py) before the app sees the request.
    MALFORMED_REQUEST = "malformed-request", 400, "Malformed HTTP request"
    REQUEST_TIMEOUT = "request-timeout", 408, "Request not completed in time"
    REQUEST_LINE_TOO_LONG = "request-line-too-long", 414, "Request line too long"
    HEADERS_TOO_LARGE = "headers-too-large", 431, "Request headers too large"
    DRAINING = "draining", 503
    # The solver pool (service/http/searches.py): every solver process busy and the wait queue
    # full, or a search queued as long as it may (Retry-After); a solver process that died or
    # overran (Retry-After: 1); a search stopped because its client left (nobody reads it).
    SOLVER_BUSY = "solver-busy", 503, "Solver busy"
    SOLVER_FAILED = "solver-failed", 503, "Solver process failed"
    CLIENT_GONE = "client-gone", 503, "Client gone"
    HTTP_ERROR = "http-error", None
    INTERNAL_ERROR = "internal-error", 500
    # Answered by the balancer (deploy/haproxy.cfg, its errorfiles in deploy/haproxy-errors/),
    # never by a server: limits per client address (Retry-After), and a request no server
    # answered. Its other answers reuse the codes above (malformed-request, request-timeout,
    # not-found, body-too-large, internal-error, and http-error for statuses it never sends
    # on purpose).
    RATE_LIMITED = "rate-limited", 429, "Too many search requests"
    TOO_MANY_CONNECTIONS = "too-many-connections", 429, "Too many connections"
    NOT_IMPLEMENTED = "not-implemented", 501
    BAD_GATEWAY = "bad-gateway", 502, "No valid answer from a server"
    NO_SERVER = "no-server", 503, "No server available"
    GATEWAY_TIMEOUT = "gateway-timeout", 504, "No server answered in time"

    def title_for(self, status: int) -> str:
        """The problem's ``title``: the code's own, else the phrase of ``status``."""
        return self.own_title or http.HTTPStatus(status).phrase


class ApiError(Exception):
    """An error the API answers deliberately (4xx), with its problem fields; the status
    is the code's."""

    def __init__(
        self,
        code: ProblemCode,
        detail: str,
        errors: Iterable[tuple[str, str]] = (),
        rule: str | None = None,
        headers: Mapping[str, str] | None = None,
        move_index: int | None = None,
    ) -> None:
        super().__init__(detail)
        if code.status is None:
            raise ValueError(f"{code} has no status of its own")
        self.status: int = code.status
        self.code = code
        self.detail = detail
        self.errors = list(errors)
        self.rule = rule
        self.headers = dict(headers or {})  # e.g. Retry-After of a 503
        self.move_index = move_index  # a replay's refused move (service/http/replays_api.py)


class ProblemSchema(Strict):
    """RFC 9457 problem details, with a machine-readable ``code``. Open to more members, as
    RFC 9457 allows extension members: a client must ignore those it does not know."""

    class Meta:
        unknown = INCLUDE

    type = fields.String(required=True, metadata={"description": "RFC 9457: a URI naming the kind of problem; `about:blank` here, `code` says which.", "example": "about:blank"})
    title = fields.String(required=True, metadata={"description": "A short summary of the kind of problem, the same for every answer of its `code`.", "example": "Illegal move"})
    status = fields.Integer(required=True, metadata={"description": "The HTTP status of the answer.", "example": 409})
    detail = fields.String(required=True, metadata={"description": "What is wrong with this request, in words (for people; match on `code`).", "example": "the tableau builds down in suit by one: the Five of Hearts does not go on the Nine of Clubs"})
    code = fields.String(
        required=True,
        validate=validate.OneOf([c.value for c in ProblemCode]),
        metadata=component("ProblemCode", description="What kind of problem, for programs to match on.", example=ProblemCode.ILLEGAL_MOVE.value),
    )
    rule = fields.String(metadata={"description": "For `illegal-move`: id of the rule that forbids it.", "example": "tableau-builds-down-in-suit"})
    move_index = fields.Integer(
        metadata={
            "description": "For `illegal-move` and `invalid-move` answers of a replay: the index (from 0) of the refused move in `moves`.",
            "example": 12,
        }
    )
    errors = fields.List(fields.Nested(ProblemDetailSchema), metadata={"description": "Each problem found, with where it is."})
    request_id = fields.String(metadata={"description": "The request's id (X-Request-ID)."})
    instance = fields.String(metadata={"description": "RFC 9457: a URI naming this occurrence, where the server gives one."})


def request_id() -> str | None:
    return getattr(flask.g, "request_id", None) if flask.has_request_context() else None


def problem_response(
    code: ProblemCode,
    detail: str,
    errors: Iterable[tuple[str, str]] = (),
    rule: str | None = None,
    headers: Mapping[str, str] | None = None,
    status: int | None = None,
    move_index: int | None = None,
) -> flask.Response:
    """The problem+json answer; ``status`` defaults to the code's."""
    status = status if status is not None else code.status
    if status is None:
        raise ValueError(f"{code} needs the status it reports")
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": code.title_for(status),
        "status": status,
        "detail": detail,
        "code": code.value,
    }
    if rule:
        body["rule"] = rule
    if move_index is not None:
        body["move_index"] = move_index
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


# The code of each HTTP error the stack raises for itself (others: http-error, internal-error).
HTTP_CODES: dict[int | None, ProblemCode] = {
    c.status: c
    for c in (ProblemCode.NOT_FOUND, ProblemCode.METHOD_NOT_ALLOWED, ProblemCode.BODY_TOO_LARGE, ProblemCode.UNSUPPORTED_MEDIA_TYPE)
}


def handle_http_exception(error: HTTPException) -> flask.Response:
    status = error.code or 500
    headers = dict(error.get_headers())  # keeps e.g. the Allow header of a 405
    headers.pop("Content-Type", None)
    data = getattr(error, "data", None) or {}
    messages = data.get("messages")
    if status in (400, 422) and isinstance(messages, Mapping) and "query" in messages:
        # webargs: {"query": {...marshmallow errors...}}: a query parameter, not the body
        return problem_response(
            ProblemCode.INVALID_QUERY, "a query parameter cannot be read", flatten_messages(messages["query"]),
            headers=headers,
        )
    if status in (400, 422) and messages is not None:
        # webargs: messages is {"json": {...marshmallow errors...}}
        body_errors = messages.get("json", messages) if isinstance(messages, Mapping) else messages
        errors = flatten_messages(body_errors)
        if any("Invalid JSON body" in m for _, m in errors):
            return problem_response(ProblemCode.MALFORMED_JSON, "the request body is not valid JSON", headers=headers)
        return problem_response(
            ProblemCode.INVALID_BODY, "the request body does not match the API schema", errors, headers=headers
        )
    if status == 400:
        return problem_response(ProblemCode.MALFORMED_JSON, error.description or "bad request", headers=headers)
    if status == 413:
        limit = flask.current_app.config.get("MAX_CONTENT_LENGTH")
        return problem_response(
            ProblemCode.BODY_TOO_LARGE, f"the request body is larger than {limit} bytes", headers=headers
        )
    code = HTTP_CODES.get(status, ProblemCode.HTTP_ERROR if status < 500 else ProblemCode.INTERNAL_ERROR)
    detail = error.description or http.HTTPStatus(status).phrase
    return problem_response(code, detail, headers=headers, status=status)


def handle_api_error(error: ApiError) -> flask.Response:
    return problem_response(
        error.code, error.detail, error.errors, error.rule, headers=error.headers, move_index=error.move_index
    )


def handle_unexpected(error: Exception) -> flask.Response:
    """Last resort: a bug must still answer problem+json, and be logged with its trace."""
    if isinstance(error, HTTPException):
        return handle_http_exception(error)
    log.exception("unhandled error")
    return problem_response(ProblemCode.INTERNAL_ERROR, "the service failed to answer; the error was logged")


# The problems' shared component (see service/http/schemas.py's SCHEMA_COMPONENTS).
PROBLEM_COMPONENTS: dict[str, dict[str, Any]] = {
    "ProblemCode": enum_component(
        [c.value for c in ProblemCode],
        "Machine-readable, one per kind of problem (the README's error table says what each means): "
        + ", ".join(f"`{c}`" for c in ProblemCode) + ".",
    ),
}


class ProblemApi(Api):
    """flask-smorest's Api, answering and documenting errors as problem+json: each
    operation lists the errors it answers, and a ``default`` response covers the rest (405,
    415, 500...) so that generated clients read every error as a problem."""

    ERROR_SCHEMA = ProblemSchema
    DEFAULT_ERROR_RESPONSE_NAME = "DEFAULT_ERROR"

    def __init__(self, app: flask.Flask | None = None, *, answer_headers: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        """``answer_headers``: headers every error answer documents (name -> the name of
        its header component)."""
        self.answer_headers = dict(answer_headers or {})
        super().__init__(app, **kwargs)

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
                    response["example"] = problem_example(status, *example)
                prepare_response(response, self.spec, PROBLEM_JSON)
                response["headers"] = {**self.answer_headers, **ERROR_HEADERS.get(status, {})}
            self.spec.components.response(status.name, response, lazy=True)
        default: dict[str, Any] = {
            "description": (
                "Any other error, as a problem: 405 `method-not-allowed` (with `Allow`), 415 "
                "`unsupported-media-type` or `unsupported-content-encoding`, 500 `internal-error`...; "
                "and the balancer's own answers: 429 `rate-limited` (too many searches from one address) "
                "or `too-many-connections` (with `Retry-After`), 502 `bad-gateway`, 503 `no-server` "
                "(with `Retry-After`), 504 `gateway-timeout`."
            ),
            "schema": self.ERROR_SCHEMA,
            "example": problem_example(
                http.HTTPStatus.INTERNAL_SERVER_ERROR, ProblemCode.INTERNAL_ERROR,
                "the service failed to answer; the error was logged", {},
            ),
        }
        prepare_response(default, self.spec, PROBLEM_JSON)
        default["headers"] = dict(self.answer_headers)
        self.spec.components.response(self.DEFAULT_ERROR_RESPONSE_NAME, default, lazy=True)

    def _register_pagination_header(self) -> None:
        """Nothing: no answer is paginated (flask-smorest would add an unused
        ``PaginationMetadata`` schema)."""


def problem_example(status: int, code: ProblemCode, detail: str, extra: Mapping[str, Any]) -> dict[str, Any]:
    """A documented problem, as :func:`problem_response` writes it."""
    return {
        "type": "about:blank", "title": code.title_for(status), "status": int(status),
        "code": code.value, "detail": detail, **extra,
    }


UNSUPPORTED_MEDIA_TYPE_DETAIL = "the request body must be JSON: send it with Content-Type: application/json"

# Each documented error status: its description, and an example (code, detail, more fields).
ERROR_DOCS: dict[int, tuple[str, tuple[ProblemCode, str, dict[str, Any]] | None]] = {
    400: (
        "The body is not JSON (an empty body declared JSON included), or does not match the schema (wrong types, "
        "unknown fields, sizes over the limits, a pile not spelt as the service writes it). Also `malformed-request` "
        "from the gunicorn worker, for a request it cannot read (broken framing, a header field line that is not "
        "a token, `:` and a value without control characters, a request line that is not `METHOD target HTTP/1.x`)."
        " `invalid-query`: a query parameter cannot be read (a daily challenge's `date` or `options`).",
        (ProblemCode.INVALID_BODY, "the request body does not match the API schema",
         {"errors": [{"where": "/move/count", "message": "Not a valid integer."}]}),
    ),
    403: (
        "The server signs its states (`STATE_PROTECTION` `signed` or `sealed`, `GET /v1/games` says so) and the state "
        "sent is not one it signed: `state-unsigned` (no `signature`), `state-signature-malformed` (not a key id and a "
        "43-character base64url MAC), `state-key-unknown` (a key the server no longer lists: deal again), "
        "`state-signature-invalid` (the state was changed after it was signed). Never answered in open mode.",
        (ProblemCode.STATE_SIGNATURE_INVALID,
         "the state's signature does not match it: the state was changed after the service signed it",
         {"errors": [{"where": "/state/signature/mac", "message": "does not match the state"}]}),
    ),
    404: ("No game has this id.", (ProblemCode.UNKNOWN_GAME, "no game 'chess'; games: penguin, ...", {})),
    409: (
        "The move is well-formed but the rules forbid it; `rule` names the rule (and, for a replay, `move_index` "
        "the move).",
        (ProblemCode.ILLEGAL_MOVE, "the tableau builds down in suit by one: the Three of Diamonds does not go on the Eight of Clubs",
         {"rule": "tableau-builds-down-in-suit"}),
    ),
    413: ("The body is larger than the service accepts (MAX_BODY_BYTES).", (ProblemCode.BODY_TOO_LARGE, "the request body is larger than 65536 bytes", {})),
    415: (
        "`unsupported-media-type`: the body is not JSON (its `Content-Type` is not `application/json` or "
        "`application/*+json`, or it has none), or it names a `charset` other than UTF-8 (the detail names it). `unsupported-content-encoding`: the body is marked with a "
        "`Content-Encoding` other than `identity`: the service takes bodies only as they are.",
        (ProblemCode.UNSUPPORTED_MEDIA_TYPE, UNSUPPORTED_MEDIA_TYPE_DETAIL, {}),
    ),
    431: (
        "`headers-too-large`: the request head is over the server's limits (32 KiB in all, 8190 bytes a field line "
        "without its CRLF, 100 fields); answered by the gunicorn worker before the app, and the connection closes.",
        (ProblemCode.HEADERS_TOO_LARGE, "the request head is over 32768 bytes", {}),
    ),
    503: (
        "`solver-busy`: every solver process of the server is busy and its wait queue is full (SOLVER_PROCESSES, "
        "SOLVER_QUEUE), answered at once, or the search waited in the queue as long as it may; ask again after "
        "`Retry-After` seconds (another server may have room); or the search ran past its budget and grace for "
        "lack of CPU (its work dropped; `Retry-After`: its budget). "
        "`solver-failed`: the search's solver process died or could not start; the answer is "
        "lost, not wrong: ask again (`Retry-After: 1`). "
        "`client-gone`: the client closed its connection, so the search was stopped (nobody reads this answer). "
        "`no-server` (from the balancer): no server is up to answer; ask again after `Retry-After` seconds.",
        # The detail as the pool words it, for an example pool of 1 process and 1 place in the queue.
        (ProblemCode.SOLVER_BUSY, str(PoolBusy.full(processes=1, queue=1, retry_after=8)), {}),
    ),
    422: (
        "The body matches the schema but its content cannot be accepted: an inconsistent state (a card missing or twice, "
        "a card not in the deck, a foundation out of order, an impossible pile), invalid rule options, or an incomplete move."
        " `daily-out-of-window`: a daily challenge's day is after today (UTC) or older than the server's window.",
        (ProblemCode.INVALID_STATE, "the state is not one this game can reach: AH appears 2 times (cell:0, tableau:6); the deck holds 1",
         {"errors": [{"where": "/state/piles/tableau/6/2", "message": "AH appears 2 times (cell:0, tableau:6); the deck holds 1"}]}),
    ),
}


# Headers documented with an error status.
ERROR_HEADERS: dict[int, dict[str, Any]] = {
    503: {
        "Retry-After": {
            "description": "Seconds after which to ask again: for `solver-busy`, when a solver process should be free "
                           "(the earliest end of a running search's budget); for `solver-failed` and `no-server`, 1.",
            "schema": {"type": "integer", "minimum": 1},
        },
    },
}
