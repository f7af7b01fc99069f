"""Request bodies: read whole and bounded, and JSON parsed strictly, in one place.

Every request goes through :func:`read_request_body` (a ``before_request`` hook) before
any view runs:

- ``Content-Encoding`` other than ``identity``: 415 ``unsupported-content-encoding``. The
  service takes no compressed bodies, and a body that says it is compressed is never
  read as if it were not.
- The body is read whole, at most ``MAX_BODY_BYTES``: a ``Content-Length`` over the limit
  and a chunked body that runs past it both answer 413 (Werkzeug would cut a chunked body
  at the limit and hand on the rest as if it were whole). A body the server cannot
  deliver (a bad chunk encoding raised by the server while the app reads ``wsgi.input``,
  a body shorter than its ``Content-Length``, a pause longer than
  :data:`BODY_IDLE_SECONDS` under a gunicorn worker that lets the app read the socket)
  answers 400 ``unreadable-body``: whatever a
  server raises, it is the request's fault, never a 500. The body then replaces
  ``wsgi.input`` as an in-memory stream with its exact length, so nothing downstream
  reads the connection again.
- A POST to an API route whose body is not JSON (a ``Content-Type`` other than
  ``application/json`` or ``application/*+json``, or a body with no ``Content-Type``):
  415 ``unsupported-media-type`` (:func:`check_media_type`), never read as if it were
  absent; so does a JSON type naming a charset other than UTF-8 (:func:`check_charset`:
  JSON is UTF-8, and a body is never read in a charset other than the one it names). A
  POST with neither a body nor a ``Content-Type`` passes (a deal needs no body); a body
  declared JSON and empty answers 400 ``malformed-json`` (an empty text is no JSON value).
- A JSON body (``application/json`` or ``application/*+json``) is parsed once, strictly,
  by :func:`parse_json`: nesting deeper than :data:`MAX_JSON_DEPTH` (checked before the
  recursive parser runs), a number longer than :data:`MAX_NUMBER_CHARS` characters, a key
  twice in one object, or ``NaN``/``Infinity`` answer 400 with their own ``code``. The
  value is kept on the request; :class:`BodyParser` hands it to webargs, and
  :class:`Blueprint` is flask-smorest's Blueprint with that parser, which every API
  blueprint uses (webargs never parses a body itself).

The bounds come from the largest legitimate bodies: a state is four levels deep (state,
piles, group, pile) and a move request five; a deal number has at most 20 digits.
"""

from __future__ import annotations

import functools
import inspect
import io
import json
import re
import socket
from collections.abc import Callable, MutableMapping
from contextlib import suppress
from typing import Any, Final

import flask
import flask_smorest
import orjson
from flask import Flask
from flask_smorest.utils import resolve_schema_instance
from marshmallow import Schema, ValidationError
from webargs import core
from webargs.flaskparser import FlaskParser
from werkzeug import Response
from werkzeug.exceptions import RequestEntityTooLarge

from service.private_parts import unchecked_libraries

from .app_settings import current_settings
from .problems import UNSUPPORTED_MEDIA_TYPE_DETAIL, ApiError, ProblemCode
from .request_context import current_request

MAX_JSON_DEPTH = 32
MAX_NUMBER_CHARS = 100
# Under gunicorn, the longest wait for the next piece of a body the app is reading; a
# front that reads whole requests first (deploy/, HAProxy) never makes the app wait.
BODY_IDLE_SECONDS = 5.0
READ_STEP = 64 * 1024

JSON_BODY_KEY = "patience_engine.json_body"  # where the parsed body is kept in the WSGI environ
# Set (true) in the WSGI environ by a server that hands the app only requests it has read
# whole (service/gunicorn_worker.py's worker): the body is in memory, no read can wait on
# the client, so no idle bound is set on the socket.
WHOLE_BODY_KEY = "patience_engine.whole_body"
GUNICORN_SOCKET = "gunicorn.socket"  # the WSGI environ's key of the client's socket, under gunicorn

# Only brackets and quotes can change the nesting depth: everything else is deleted at C
# speed, brackets mapped to one kind, and escapes (which occur only inside strings) dropped
# first so that an escaped quote never looks like the end of a string.
_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_NOT_STRUCTURAL = bytes(b for b in range(256) if b not in b'[]{}"')
_ONE_BRACKET_KIND = bytes.maketrans(b"{}", b"[]")
_OPEN = ord("[")


def json_depth_exceeds(data: bytes, limit: int) -> bool:
    r"""Whether arrays and objects in ``data`` (brackets outside strings) nest more than
    ``limit`` deep, found without recursion and stopping at the first level past it.

    >>> json_depth_exceeds(b'{"a": [[1, "[[[[\\"]]]"]]}', 3)
    False
    >>> json_depth_exceeds(b"[" * 40, 32)
    True
    """
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    if b"\\" in data:
        data = _ESCAPE.sub(b"", data)
    structure = data.translate(_ONE_BRACKET_KIND, _NOT_STRUCTURAL)
    outside_strings = b"".join(structure.split(b'"')[::2])
    depth = 0
    for bracket in outside_strings:
        if bracket == _OPEN:
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _bounded_int(digits: str) -> int:
    if len(digits) > MAX_NUMBER_CHARS:
        raise ApiError(ProblemCode.NUMBER_TOO_LONG, _number_detail(digits))
    return int(digits)


def _bounded_float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise ApiError(ProblemCode.NUMBER_TOO_LONG, _number_detail(text))
    return float(text)


def _number_detail(text: str) -> str:
    return (
        f"a number in the body has {len(text)} characters ({text[:12]}...); "
        f"numbers have at most {MAX_NUMBER_CHARS}"
    )


def _no_constant(name: str) -> Any:
    raise ApiError(ProblemCode.MALFORMED_JSON, f"the request body is not valid JSON: {name} is not a JSON value")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()  # one pass: linear in the number of keys
        for key, _ in pairs:
            if key in seen:
                raise ApiError(ProblemCode.DUPLICATE_KEY, f"the key {key!r} appears more than once in one object")
            seen.add(key)
    return obj


# Built once: ``json.loads`` with hooks builds a decoder (and its scanner) on every call.
# Shared by every thread, as the stdlib's own default decoder is: the scanner keeps no
# state between calls but a key memo, which is only a cache.
_STRICT_DECODER = json.JSONDecoder(
    object_pairs_hook=_unique_keys,
    parse_int=_bounded_int,
    parse_float=_bounded_float,
    parse_constant=_no_constant,
)


# A run of more digits than orjson reads exactly (it reads an integer past 64 bits as a
# float), found as a run of zeros once every digit is a zero; every number over
# MAX_NUMBER_CHARS characters has one too (at most four of its characters are not digits,
# so one of its three digit runs is over 32 long).
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"0" * 9)
_LONG_DIGIT_RUN = b"0" * 19
# The escapes that write a colon: orjson's writing of a value shows it as a colon. Only a
# body with a backslash can hold one, so the two are looked for only then.
_ESCAPED_COLONS = (b"\\u003a", b"\\u003A")

_NOT_READ: Final[Any] = object()


def _read_plain(data: bytes) -> Any:
    """The JSON value of ``data`` read by orjson (in C), when it is sure to be the value
    :data:`_STRICT_DECODER` reads, else :data:`_NOT_READ`.

    orjson refuses what the strict decoder refuses (text that is not JSON, ``NaN``, a byte
    order mark, invalid UTF-8) and some JSON it accepts (a lone surrogate escape,
    ``1E400``), and reads everything else to the same value, but for two things it is not
    strict about: a key twice in one object (it keeps the last) and digits past 64 bits
    (an integer becomes a float).

    Its value counts at once when orjson writes it back as the body, or as the body once
    the spaces are taken out of both (:func:`_written_back`): the tokens are then the
    same (a space never ends or starts one, inside a string or out), so no member was
    dropped as a duplicate and every number reads back as written (an integer within 64
    bits, a float orjson read as Python does, none over :data:`MAX_NUMBER_CHARS`
    characters). Any other body (escapes orjson writes otherwise, numbers written another
    way, other whitespace) is read only if it has no digit run of 19 or more (which
    also leaves every over-long number to the strict decoder) and its value counts only
    when orjson's writing of it has as many colons as the body: strings keep their colons
    both ways and only an escaped colon adds one (such a body is left to the strict
    decoder), so a member dropped as a duplicate (its own colon at least) makes fewer.
    Everything else is the strict decoder's to read and answer."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _NOT_READ
    text = orjson.dumps(value)
    if _written_back(data, text):
        return value
    if _LONG_DIGIT_RUN in data.translate(_DIGITS_AS_ZERO) or (b"\\" in data and any(e in data for e in _ESCAPED_COLONS)):
        return _NOT_READ
    if isinstance(value, (dict, list)) and text.count(b":") != data.count(b":"):
        return _NOT_READ
    return value


def _written_back(data: bytes, text: bytes) -> bool:
    """Whether ``text`` (orjson's writing of what it read in ``data``) is ``data``, or is
    ``data`` once the spaces are taken out of both (orjson writes spaces only inside
    strings, so only a ``text`` with one loses them too)."""
    if text == data:
        return True
    if b" " in text:
        text = text.replace(b" ", b"")
    return text == data.replace(b" ", b"")


def parse_json(data: bytes) -> Any:
    """The JSON value of a request body, or an :class:`ApiError` (400) saying what is wrong."""
    if json_depth_exceeds(data, MAX_JSON_DEPTH):
        raise ApiError(
            ProblemCode.JSON_TOO_DEEP, f"the request body nests more than {MAX_JSON_DEPTH} levels of arrays and objects"
        )
    value = _read_plain(data)
    if value is not _NOT_READ:
        return value
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(ProblemCode.MALFORMED_JSON, "the request body is not valid JSON") from None
    if text.startswith("\ufeff"):  # a byte order mark: refused, as json.loads refuses it
        raise ApiError(ProblemCode.MALFORMED_JSON, "the request body is not valid JSON")
    try:
        return _STRICT_DECODER.decode(text)
    except json.JSONDecodeError:
        raise ApiError(ProblemCode.MALFORMED_JSON, "the request body is not valid JSON") from None
    except RecursionError:  # cannot happen after the depth check; never a 500 if it does
        raise ApiError(ProblemCode.JSON_TOO_DEEP, "the request body nests too deep") from None


def _declared_length(wsgi_env: MutableMapping[str, Any]) -> int | None:
    text = wsgi_env.get("CONTENT_LENGTH", "")
    return int(text) if text and text.isdigit() else None


def _socket_to_bound(wsgi_env: MutableMapping[str, Any]) -> socket.socket | None:
    """The blocking gunicorn socket a body read may wait on, to be bounded by
    :data:`BODY_IDLE_SECONDS`; None when nothing can wait: not gunicorn, a socket with a
    timeout already, or a server that hands over bodies it read whole
    (:data:`WHOLE_BODY_KEY`)."""
    if wsgi_env.get(WHOLE_BODY_KEY):
        return None
    sock = wsgi_env.get(GUNICORN_SOCKET)
    if not isinstance(sock, socket.socket) or sock.gettimeout() is not None:
        return None
    return sock


def _read_stream(stream: Any, wanted: int) -> tuple[list[bytes], int]:
    """Up to ``wanted`` bytes of ``stream`` (400 ``unreadable-body`` if the server fails)."""
    pieces: list[bytes] = []
    got = 0
    while got < wanted:
        try:
            piece = stream.read(min(READ_STEP, wanted - got))
        except Exception as e:  # the server's own errors (bad chunk sizes, timeouts...)
            raise ApiError(
                ProblemCode.UNREADABLE_BODY, f"the request body could not be read ({type(e).__name__})"
            ) from None
        if not piece:
            break
        pieces.append(piece)
        got += len(piece)
    return pieces, got


def read_body(wsgi_env: MutableMapping[str, Any], limit: int) -> bytes:
    """The whole body of the request in ``wsgi_env``, at most ``limit`` bytes (413 above,
    400 ``unreadable-body`` if the server cannot deliver it). Under gunicorn, each wait for
    more of the body is bounded by :data:`BODY_IDLE_SECONDS` (its blocking socket would
    otherwise wait for as long as the client cares to pause)."""
    length = _declared_length(wsgi_env)
    chunked = "chunked" in wsgi_env.get("HTTP_TRANSFER_ENCODING", "").lower()
    if length is None and not chunked:
        return b""  # HTTP/1.1: no Content-Length and no chunked encoding means no body
    if length is not None and length > limit:
        raise RequestEntityTooLarge()
    wanted = limit + 1 if length is None else length
    stream = wsgi_env["wsgi.input"]
    sock = _socket_to_bound(wsgi_env)
    if sock is None:
        pieces, got = _read_stream(stream, wanted)
    else:
        sock.settimeout(BODY_IDLE_SECONDS)
        try:
            pieces, got = _read_stream(stream, wanted)
        finally:
            with suppress(OSError):  # the connection is already gone
                sock.settimeout(None)
    if got > limit:
        raise RequestEntityTooLarge()
    if length is not None and got < length:
        raise ApiError(
            ProblemCode.UNREADABLE_BODY, f"the request body ended after {got} of the {length} bytes announced"
        )
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def check_content_encoding(wsgi_env: MutableMapping[str, Any]) -> None:
    """415 unless the body is sent as is (no ``Content-Encoding``, or ``identity``)."""
    header = wsgi_env.get("HTTP_CONTENT_ENCODING")
    if not header:
        return
    encodings = [e.strip().lower() for e in header.split(",")]
    if any(e not in ("", "identity") for e in encodings):
        raise ApiError(
            ProblemCode.UNSUPPORTED_CONTENT_ENCODING,
            "the service takes request bodies only as they are (no Content-Encoding, or identity)",
        )


JSON_MEDIA_TYPE: Final = "application/json"
JSON_CHARSET: Final = "utf-8"  # the one charset a JSON body is read in (RFC 8259), in any case
# A media type's parameters (RFC 9110: ``;`` name ``=`` token or quoted-string), each as
# (name, value as sent): enough to find every ``charset`` in a Content-Type, however many.
_MEDIA_PARAMETER: Final = re.compile(r';[ \t]*([^;=\s]+)[ \t]*=[ \t]*("(?:[^"\\]|\\.)*"(?=[ \t]*(?:;|$))|[^;]*)')
_QUOTED_PAIR: Final = re.compile(r"\\(.)", re.DOTALL)
MAX_CHARSET_SHOWN: Final = 40  # a refused charset's characters quoted in the answer (a header may hold 8 KiB)
EMPTY_JSON_DETAIL: Final = (
    "the request body is empty, and an empty body is not JSON: send a JSON value with Content-Type: "
    "application/json (only a deal may be asked for with no body, and then no Content-Type)"
)


def request_mimetype(request: flask.Request) -> str:
    """``request.mimetype``, without Werkzeug's parse of ``Content-Type`` (its header view
    and options) when the header is exactly ``application/json``, as JSON clients send it."""
    wsgi_env = request.environ
    if wsgi_env.get("CONTENT_TYPE") == JSON_MEDIA_TYPE:
        return JSON_MEDIA_TYPE
    return request.mimetype


def declared_charsets(content_type: str) -> list[str]:
    """Every ``charset`` parameter of ``content_type``, unquoted, in order: all of them, so
    that a second one cannot hide behind the first (Werkzeug keeps only the last).

    >>> declared_charsets('application/json; charset="UTF-8"; Charset=latin-1')
    ['UTF-8', 'latin-1']
    """
    if ";" not in content_type:
        return []
    charsets = []
    for name, value in _MEDIA_PARAMETER.findall(content_type):
        if name.lower().partition("*")[0] == "charset":  # ``charset``, and RFC 8187's ``charset*``
            if value.startswith('"'):
                value = _QUOTED_PAIR.sub(r"\1", value[1:-1])
            charsets.append(value.rstrip(" \t"))
    return charsets


def check_charset(content_type: str) -> None:
    """415 unless every charset ``content_type`` names is UTF-8 (any case, quoted or not):
    a JSON body is read as UTF-8 only, never as if another charset were not named."""
    for charset in declared_charsets(content_type):
        if charset.lower() != JSON_CHARSET:
            shown = charset if len(charset) <= MAX_CHARSET_SHOWN else charset[:MAX_CHARSET_SHOWN] + "..."
            raise ApiError(
                ProblemCode.UNSUPPORTED_MEDIA_TYPE,
                f"the request body must be JSON in UTF-8: charset {shown!r} is not read "
                "(send Content-Type: application/json, or name charset=utf-8)",
            )


def check_media_type(request: flask.Request, data: bytes) -> bool:
    """Whether the request is a POST to a route that takes it with a body declared JSON;
    415 for a POST whose body is not JSON: a ``Content-Type`` other than JSON, a body
    without one, or a JSON type naming a charset other than UTF-8. Only API routes take
    POSTs, and each reads a JSON body; a POST with neither body nor ``Content-Type`` is
    left to the view (a deal takes none; the others answer 400 for the missing body)."""
    if request.method != "POST" or request.routing_exception is not None:
        return False  # other methods carry no body here; a 404, 405 or 308 says more than a 415
    mimetype = request_mimetype(request)
    if not core.is_json(mimetype):
        if data or mimetype:
            raise ApiError(ProblemCode.UNSUPPORTED_MEDIA_TYPE, UNSUPPORTED_MEDIA_TYPE_DETAIL)
        return False
    wsgi_env = request.environ
    check_charset(wsgi_env.get("CONTENT_TYPE", ""))
    return True


def read_request_body() -> None:
    """``before_request``: check the encoding, read the body whole and bounded, refuse a
    POST body that is not JSON or is declared JSON and empty (400 ``malformed-json``: an
    empty text is not JSON), and parse it if it is JSON (kept for :func:`json_body`)."""
    request = current_request()
    wsgi_env = request.environ
    check_content_encoding(wsgi_env)
    data = read_body(wsgi_env, current_settings().http.max_body_bytes)
    if check_media_type(request, data) and not data:
        raise ApiError(ProblemCode.MALFORMED_JSON, EMPTY_JSON_DETAIL)
    wsgi_env["wsgi.input"] = io.BytesIO(data)
    wsgi_env["CONTENT_LENGTH"] = str(len(data))
    wsgi_env.pop("HTTP_TRANSFER_ENCODING", None)
    request.__dict__.pop("content_length", None)  # a cached value from before
    if data and core.is_json(request_mimetype(request)):
        wsgi_env[JSON_BODY_KEY] = parse_json(data)


def json_body(request: flask.Request) -> Any:
    """The request's JSON value as :func:`read_request_body` parsed it (``missing`` for an
    empty or non-JSON body, as webargs expects)."""
    if JSON_BODY_KEY in request.environ:
        return request.environ[JSON_BODY_KEY]
    if not core.is_json(request.mimetype):
        return core.missing
    data = request.get_data(cache=True)
    return parse_json(data) if data else core.missing


class BodyParser(FlaskParser):
    """webargs' Flask parser, reading JSON through :func:`json_body` (strict, parsed once)."""

    def _raw_load_json(self, req: flask.Request) -> Any:
        return json_body(req)


def _documenting_only(document: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A flask-smorest decorator that only documents (its wrapper calls the view through
    ``current_app.ensure_sync`` and adds nothing), applied without its wrapper: a
    synchronous view keeps the documentation the wrapper would carry (``_apidoc``, the
    same dict) and is not wrapped; an async view keeps the wrapper."""

    def decorator(func: Any) -> Any:
        wrapper = document(func)
        if inspect.iscoroutinefunction(func):
            return wrapper
        func._apidoc = wrapper._apidoc
        return func

    return decorator


def _given_back(value: Any) -> Any:
    """The value it is handed: the view :meth:`Blueprint.response` wraps flask-smorest's
    answer around, so that the answer is made of a value the real view already gave."""
    return value


FAST_BLUEPRINT_LIBRARIES: Final = frozenset({"flask-smorest", "webargs"})
"""The libraries whose private parts :class:`Blueprint`'s shortcuts rely on
(service/private_parts.py: flask-smorest's ``_apidoc`` and ``resolve_schema_instance``,
and that webargs' parse of a JSON body is the schema's load)."""

FAST_BLUEPRINT: Final = not unchecked_libraries().keys() & FAST_BLUEPRINT_LIBRARIES
"""The version gate, decided once, at import (the API modules' blueprints decorate their
views then): :class:`Blueprint`'s shortcuts run only where each of
:data:`FAST_BLUEPRINT_LIBRARIES` is at a version they were checked on
(``CHECKED_VERSIONS``); elsewhere its ``doc``, ``alt_response``, ``response`` and
``arguments`` are flask-smorest's own, correct and slower (tests/contract/test_gates.py runs
requests both ways). JSON is read through :class:`BodyParser` either way."""


class Blueprint(flask_smorest.Blueprint):
    """flask-smorest's Blueprint whose ``arguments`` read JSON through :class:`BodyParser`,
    with less per-request work on the way to a view that flask-smorest adds nothing to
    (where the version gate :data:`FAST_BLUEPRINT` is open):

    - ``doc`` and ``alt_response`` only document, so they document a synchronous view
      without wrapping it (:func:`_documenting_only`: a view with six alternative answers
      went through six wrappers, each calling through ``current_app.ensure_sync``).
    - ``arguments`` of a JSON body hand the view the body loaded by the schema itself,
      without webargs' parse (its location lookup, argument bookkeeping and two wrappers).
      A body the schema refuses, or a missing one, goes through webargs' parse as before,
      which loads it again and answers the same error: a schema load changes nothing, so
      loading twice is safe (tests/contract/test_moves_dispatch.py compares the two ways).
    - ``response`` documents a synchronous view as flask-smorest does, and calls it
      directly: a view that answers with a response object (every JSON view here builds
      its own) gets it back as it is, as flask-smorest's wrapper hands it back (with no
      status or headers to set); any other value goes through that wrapper, around a
      function that gives the value back (tests/contract/test_request_path_round6.py).
      flask-smorest's wrapper would reach the view through ``current_app.ensure_sync``
      and unpack its value on every request.
    """

    ARGUMENTS_PARSER = BodyParser(unknown=None)  # each schema's own ``unknown`` (webargs' default for JSON)

    def doc(self, **kwargs: Any) -> Callable[[Any], Any]:
        document = super().doc(**kwargs)
        return _documenting_only(document) if FAST_BLUEPRINT else document

    def alt_response(self, status_code: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        document = super().alt_response(status_code, *args, **kwargs)
        return _documenting_only(document) if FAST_BLUEPRINT else document

    def response(self, status_code: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        answer = super().response(status_code, *args, **kwargs)
        if not FAST_BLUEPRINT:
            return answer

        def decorator(func: Any) -> Any:
            documented = answer(func)
            if inspect.iscoroutinefunction(func):
                return documented
            # flask-smorest's wrapper around a function that gives back what it is handed:
            # it answers a view's value (a tuple, a value its schema dumps) as it would.
            answer_value = answer(_given_back)

            @functools.wraps(func)
            def view(*view_args: Any, **view_kwargs: Any) -> Any:
                value = func(*view_args, **view_kwargs)
                if isinstance(value, Response):
                    return value
                return answer_value(value)

            view._apidoc = documented._apidoc  # type: ignore[attr-defined]
            return view

        return decorator

    def arguments(self, schema: Any, *, location: str = "json", **kwargs: Any) -> Callable[[Any], Any]:
        parse_then_call = super().arguments(schema, location=location, **kwargs)
        if not FAST_BLUEPRINT:
            return parse_then_call
        loader: Schema = resolve_schema_instance(schema)
        # Only what webargs' parse would do here as a plain load: the body's JSON, the
        # schema's own ``unknown``, no validators, the loaded body as the last positional
        # argument (any other option of webargs' keeps its parse).
        plain = (
            location == "json"
            and set(kwargs) <= PLAIN_ARGUMENT_OPTIONS
            and self.ARGUMENTS_PARSER.USE_ARGS_POSITIONAL
            and self.ARGUMENTS_PARSER.unknown is None
        )

        def decorator(func: Any) -> Any:
            parsed_view = parse_then_call(func)
            if not plain or inspect.iscoroutinefunction(func):
                return parsed_view

            @functools.wraps(parsed_view)
            def view(*args: Any, **view_args: Any) -> Any:
                data = json_body(current_request())
                if data is not core.missing:
                    try:
                        body = loader.load(data)
                    except ValidationError:
                        pass  # webargs' parse loads it again and answers the error
                    else:
                        return func(*args, body, **view_args)
                return parsed_view(*args, **view_args)

            view.webargs_view = parsed_view  # type: ignore[attr-defined]  # the way every body took before
            return view

        return decorator


# Options of ``Blueprint.arguments`` that only say how an error is answered (so that the
# view of a body the schema accepts is called as webargs would call it).
PLAIN_ARGUMENT_OPTIONS: Final = frozenset({"error_status_code", "content_type", "required", "description", "example", "examples"})


def init_body(app: Flask) -> None:
    """Read every request's body through :func:`read_request_body` (after the request id is
    set, so refusals carry it)."""
    app.before_request(read_request_body)
