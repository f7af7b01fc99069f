"""The application factory: one place that wires settings, errors and blueprints, and the
OpenAPI document's header and shared components."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, Final, Self, cast

import flask
import orjson
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from flask import Flask
from flask.json.provider import DefaultJSONProvider
from flask.sessions import NullSession, SecureCookieSessionInterface
from flask.signals import appcontext_tearing_down, request_finished, request_started, request_tearing_down
from flask_smorest.spec.plugins import FlaskPlugin
from werkzeug.datastructures import Headers
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Map, MapAdapter, RequestRedirect, Rule, RuleFactory
from werkzeug.routing.converters import DEFAULT_CONVERTERS, BaseConverter
from werkzeug.sansio.response import Response
from werkzeug.utils import get_content_type
from werkzeug.wsgi import get_host

from service.settings import Settings, read_settings

from .app_settings import attach_settings
from .body import MAX_JSON_DEPTH, MAX_NUMBER_CHARS, init_body
from .contract_examples import EXAMPLE_GAME
from .games_api import GameIdConverter, game_id_schema
from .games_api import blp as games_blp
from .observability import (
    REQUEST_ID_ANSWER_DOC,
    REQUEST_ID_HEADER,
    REQUEST_ID_HEADER_COMPONENT,
    REQUEST_ID_REQUEST_DOC,
    init_observability,
)
from .ops import blp as ops_blp
from .problems import PROBLEM_COMPONENTS, ProblemApi
from .replays_api import blp as replays_blp
from .request_context import current_request, current_request_context
from .schemas import EVENT_BRANCHES, MOVE_BRANCHES, SCHEMA_COMPONENTS, branch_name, reference_component
from .solver_api import blp as solver_blp
from .solver_schemas import SOLVER_COMPONENTS
from .web import blp as web_blp

# Path parameters documented once, as a component each, by name.
PATH_PARAMETER_COMPONENTS: dict[str, str] = {"game_id": "GameId"}


class ContractMarshmallowPlugin(MarshmallowPlugin):
    """apispec's marshmallow plugin with the shared components registered before any
    schema is converted: the enums and unions of :data:`.schemas.SCHEMA_COMPONENTS` and its
    solver and problem twins, the move union's branches, the game id path parameter and
    the request id header; and fields naming a component documented as a reference to it
    (:func:`.schemas.reference_component`)."""

    def init_spec(self, spec: APISpec) -> None:
        super().init_spec(spec)
        assert self.converter is not None
        self.converter.add_attribute_function(reference_component)
        for name, schema in {**SCHEMA_COMPONENTS, **SOLVER_COMPONENTS, **PROBLEM_COMPONENTS}.items():
            spec.components.schema(name, schema)
        for branch in (*MOVE_BRANCHES.values(), *EVENT_BRANCHES.values()):
            spec.components.schema(branch_name(branch), schema=branch)
        spec.components.parameter(
            "GameId", "path",
            {
                "name": "game_id", "required": True, "description": "The game's id.",
                "schema": {"$ref": "#/components/schemas/GameId"},
                "example": EXAMPLE_GAME,  # the examples' game: an example body goes to its own game's path
            },
        )
        spec.components.parameter(
            REQUEST_ID_HEADER_COMPONENT, "header", {"name": REQUEST_ID_HEADER, **REQUEST_ID_REQUEST_DOC}
        )
        spec.components.header(REQUEST_ID_HEADER_COMPONENT, REQUEST_ID_ANSWER_DOC)


class ContractFlaskPlugin(FlaskPlugin):
    """flask-smorest's Flask plugin, documenting each path parameter that has a component
    (:data:`PATH_PARAMETER_COMPONENTS`) as a reference to it, and the optional request id
    header on every path."""

    def path_helper(self, rule: Rule, operations: Any, parameters: list[Any], **kwargs: Any) -> str:
        path: str = super().path_helper(rule, operations, parameters, **kwargs)
        parameters[:] = [
            PATH_PARAMETER_COMPONENTS.get(p["name"], p) if isinstance(p, Mapping) and p.get("in") == "path" else p
            for p in parameters
        ]
        parameters.append(REQUEST_ID_HEADER_COMPONENT)
        return path

# Who answers for the API, and under which terms it may be used.
API_CONTACT: dict[str, str] = {"name": "Patience engine maintainers", "url": "http://localhost:8000/docs"}
API_LICENSE: dict[str, str] = {"name": "Proprietary (all rights reserved)", "url": "http://localhost:8000/docs"}

# flask-smorest's config keys: the OpenAPI document's header and where it is served.
OPENAPI_CONFIG: dict[str, Any] = {
    "API_TITLE": "Patience engine",
    "API_VERSION": "1.0.0",
    "OPENAPI_VERSION": "3.0.3",
    "OPENAPI_URL_PREFIX": "/",
    "OPENAPI_JSON_PATH": "openapi.json",
    "API_SPEC_OPTIONS": {
            "servers": [{"url": "/", "description": "The server that serves this document (`/openapi.json`)."}],
        "security": [],  # no authentication: every operation is open (README, "Security model")
        "info": {
            "contact": API_CONTACT,
            "license": API_LICENSE,
            "description": (
                "A stateless rules engine for patience (solitaire) games: deal, list legal "
                "moves, apply moves, validate states, replay a deal's moves. Every request carries the complete "
                "state; the service keeps nothing between requests. A replay (`POST /v1/games/{game}/replays`) "
                "plays the moves of a game again from its deal and answers a `result` that, when the server signs "
                "its states, is signed for a leaderboard to check offline.\n\n"
                "Errors are `application/problem+json` (RFC 9457) with a machine-readable "
                "`code`: 400 for a body that is not JSON or does not match the schema, "
                "422 for a well-formed body whose content the rules cannot accept (an "
                "inconsistent state, invalid options, an incomplete move), 404 for an "
                "unknown game, 409 for an illegal move (with the rule that forbids it, and for a replay the "
                "`move_index` of the move), "
                "403 when the server signs its states (`state_protection` of `GET /v1/games` is "
                "`signed` or `sealed`) and a state sent back is not one it signed (`state-unsigned`, "
                "`state-signature-malformed`, `state-key-unknown`, `state-signature-invalid`), or, in "
                "sealed mode, its sealed part does not open (`state-seal-invalid`) or a search asks "
                "for `\"knowledge\": \"full\"` (`full-knowledge-refused`), "
                "413 for a body over the size limit, 415 `unsupported-media-type` for a POST body that is not JSON "
                "(a `Content-Type` other than `application/json` or `application/*+json`; a deal may be asked for "
                "with no body at all), 415 `unsupported-content-encoding` for a "
                "`Content-Encoding` other than `identity` (bodies are taken only as they are). "
                f"Bodies are read strictly: JSON nested more than {MAX_JSON_DEPTH} deep (`json-too-deep`), "
                f"a number over {MAX_NUMBER_CHARS} characters (`number-too-long`) or a key twice in one object "
                "(`duplicate-key`) answers 400, as does a body the server cannot read whole "
                "(`unreadable-body`)."
            ),
        },
    },
}


class CompactJSONProvider(DefaultJSONProvider):
    """Flask's JSON provider, with keys in the order the answers build them, and compact
    answers (every answer out of debug mode) written by orjson, in C, with the text of
    Python's encoder (the same separators, ``default`` and ``ensure_ascii``).

    orjson writes the same bytes for everything an answer holds but non-ASCII text (raw
    UTF-8 where ``ensure_ascii`` escapes it; DEL too), NaN and infinities (``null`` where
    Python writes ``NaN``), floats in exponent form (``1e-7`` where Python writes
    ``1e-07``: the same number) and integers past 64 bits (which it refuses). An answer
    whose bytes show one of the first two (a byte past ``0x7e``, or a ``null``, which a
    NaN becomes), or that orjson refuses, is written again by Python's encoder, built once
    per setting rather than by ``json.dumps``, which builds one per call; only the check
    for circular containers is left out (an answer is built fresh from plain values).
    Dates and dataclasses go to ``default``, as Python's encoder sends them
    (tests/contract/test_moves_answers.py compares the two on every endpoint's answers)."""

    sort_keys = False
    # orjson leaves dates and dataclasses to ``default`` (Flask writes dates as HTTP dates).
    ORJSON_OPTIONS: Final = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS

    def __init__(self, app: Flask) -> None:
        super().__init__(app)
        self._encoder_settings: tuple[Any, bool, bool] | None = None
        self._encoder = json.JSONEncoder()

    def compact_encoder(self) -> json.JSONEncoder:
        """Python's encoder of compact answers under the provider's current settings."""
        settings = (self.default, self.ensure_ascii, self.sort_keys)
        if settings != self._encoder_settings:
            self._encoder = json.JSONEncoder(
                default=self.default, ensure_ascii=self.ensure_ascii, sort_keys=self.sort_keys,
                check_circular=False, separators=(",", ":"),
            )
            self._encoder_settings = settings
        return self._encoder

    def compact_text(self, obj: Any) -> bytes:
        """``obj`` as a compact answer writes it (without the final newline)."""
        if not self.sort_keys:
            try:
                text = orjson.dumps(obj, default=self.default, option=self.ORJSON_OPTIONS)
            except orjson.JSONEncodeError:
                pass  # an integer past 64 bits, a key that is not a string...: Python's encoder says it
            else:
                if b"null" not in text and not (self.ensure_ascii and (b"\x7f" in text or not text.isascii())):
                    return text
        return self.compact_encoder().encode(obj).encode()

    def response(self, *args: Any, **kwargs: Any) -> Response:
        """The answer as ``response_class(text, mimetype=self.mimetype)`` makes it, with its
        two headers handed to the response ready-made: Werkzeug would work out the content
        type from the mimetype, then set it and the body's length each through
        ``Headers``, which checks the value for newlines and looks through the list for the
        name (tests/contract/test_request_path_round5.py compares the two)."""
        if self.compact is False or (self.compact is None and self._app.debug):
            return super().response(*args, **kwargs)
        obj = self._prepare_response_obj(args, kwargs)
        response_class = cast("type[flask.Response]", self._app.response_class)  # typed as the sansio base
        text = self.compact_text(obj) + b"\n"
        if not response_class.automatically_set_content_length:
            return response_class(text, mimetype=self.mimetype)
        headers = Headers()
        headers._list += (content_type_header(self.mimetype), ("Content-Length", str(len(text))))
        return response_class([text], headers=headers)


@lru_cache(maxsize=16)  # the providers' mimetypes: one, in this app
def content_type_header(mimetype: str) -> tuple[str, str]:
    """The ``Content-Type`` header of an answer of ``mimetype``, as Werkzeug's response
    sets it (the charset added to a text type), its value checked by ``Headers``."""
    header: tuple[str, str] = Headers([("Content-Type", get_content_type(mimetype, "utf-8"))])._list[0]
    return header


# Converters whose reading of a path segment depends on the segment alone: Werkzeug's own,
# and any that keeps ``BaseConverter.to_python`` (the segment as it is).
WERKZEUG_CONVERTERS: Final = frozenset(DEFAULT_CONVERTERS.values())


def reads_segments_alone(rule: Rule) -> bool:
    """Whether every converter of ``rule`` reads a path segment the same way each time (see
    :data:`WERKZEUG_CONVERTERS`), so that a match of it can be remembered."""
    for converter in rule._converters.values():
        kind = type(converter)
        if kind not in WERKZEUG_CONVERTERS and kind.to_python is not BaseConverter.to_python:
            return False
    return True


class RelativeRedirectAdapter(MapAdapter):
    """Werkzeug's URL adapter, whose redirects (the 308 that merges a path's slashes, the
    one that adds a rule's trailing slash) carry a relative ``Location``: the path and
    query alone. Werkzeug writes an absolute URL from the request's ``Host`` header, which
    a client chooses (RFC 9110 allows a relative reference). The service's rules redirect
    in no other way (no ``redirect_to``, no aliases: tests/contract/test_strict_input.py)."""

    @classmethod
    def like(cls, adapter: MapAdapter) -> Self:
        """An adapter bound as ``adapter`` is."""
        return cls(adapter.map, adapter.server_name, adapter.script_name, adapter.subdomain, adapter.url_scheme,
                   adapter.path_info, adapter.default_method, adapter.query_args)

    def make_redirect_url(
        self,
        path_info: str,
        query_args: Mapping[str, Any] | str | None = None,
        domain_part: str | None = None,
    ) -> str:
        """Werkzeug's redirect URL without its scheme and host: ``/path?query``. The path
        starts with exactly one slash (``//host`` would name another host)."""
        if query_args is None:
            query_args = self.query_args
        path = "/" + "/".join((self.script_name.strip("/"), path_info.lstrip("/"))).lstrip("/")
        return f"{path}?{self.encode_query_args(query_args)}" if query_args else path


class RememberingAdapter(RelativeRedirectAdapter):
    """Werkzeug's URL adapter (with relative redirects), remembering the rule and path
    values its own request matched (``match(return_rule=True)`` with nothing overridden:
    Flask's one match a request).

    :class:`ServiceMap` remembers adapters per set of the environ values a bind reads, the
    path and method among them, so such a match always finds the same rule with the same
    values while the map's rules stay the same (:meth:`ServiceMap.add` drops the remembered
    adapters): Werkzeug's matcher walks its state machine and reads each segment again on
    every request. Only a match is remembered, never a refusal (404, 405, a redirect), and
    only one of a rule whose converters read a segment alone
    (:func:`reads_segments_alone`); each request gets its own copy of the path values."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._found: tuple[Rule, Mapping[str, Any]] | None = None
        # The request host Werkzeug's ``get_host`` reads from the environ values this
        # adapter was remembered for (set by :meth:`ServiceFlask.create_url_adapter`).
        self.request_host: str | None = None

    def match(
        self,
        path_info: str | None = None,
        method: str | None = None,
        return_rule: bool = False,
        query_args: Mapping[str, Any] | str | None = None,
        websocket: bool | None = None,
    ) -> tuple[Any, Mapping[str, Any]]:
        if return_rule and path_info is None and method is None and query_args is None and websocket is None:
            found = self._found
            if found is None:
                rule, values = super().match(return_rule=True)
                if not reads_segments_alone(rule):
                    return rule, values
                self._found = found = (rule, values)
            return found[0], dict(found[1])
        return super().match(path_info, method, return_rule, query_args, websocket)  # type: ignore[call-overload]  # any of its overloads


# What Werkzeug's ``Map.bind_to_environ`` reads of the WSGI environ (with ``get_host``'s
# reads among them): an adapter bound to the same values is the same adapter.
BIND_ENVIRON_KEYS: Final = (
    "wsgi.url_scheme", "HTTP_HOST", "SERVER_NAME", "SERVER_PORT", "HTTP_CONNECTION", "HTTP_UPGRADE",
    "SCRIPT_NAME", "PATH_INFO", "QUERY_STRING", "REQUEST_METHOD",
)


class ServiceMap(Map):
    """Werkzeug's URL map, remembering the adapter it bound to each set of the environ's
    values :data:`BIND_ENVIRON_KEYS` (Flask binds one for every request: the host read
    twice, its IDNA encoding, the path and query decoded), as a :class:`RememberingAdapter`
    (which remembers its match too).

    An adapter keeps what it was bound to and changes nothing afterwards (building only
    reads it and the map's current rules; a match is remembered only until a rule is
    added), so one adapter serves every request that binds to the same values; each
    request still gets its own path values. Only a bind without a server name is
    remembered (Flask's, unless ``SERVER_NAME`` is set: with one, Werkzeug may warn that
    the host differs, once per bind); a bind that raises is never remembered. The
    remembered adapters are dropped all at once when there are :data:`MAX_ADAPTERS` (the
    paths come from clients), and whenever a rule is added. The map's own settings (host
    matching, the default subdomain, redirects) are not part of what is remembered: like
    its rules' converters, they are set before the app serves."""

    MAX_ADAPTERS = 1024

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._adapters: dict[tuple[Any, ...], MapAdapter] = {}  # first: Map's own set-up adds rules
        super().__init__(*args, **kwargs)

    def add(self, rulefactory: RuleFactory) -> None:
        super().add(rulefactory)
        self._adapters.clear()  # their matches may no longer be the first rule's

    def bind(self, *args: Any, **kwargs: Any) -> MapAdapter:
        """Werkzeug's bind, as a :class:`RelativeRedirectAdapter`."""
        return RelativeRedirectAdapter.like(super().bind(*args, **kwargs))

    def bind_to_environ(self, environ: Any, server_name: str | None = None, subdomain: str | None = None) -> MapAdapter:
        """Werkzeug's bind to a request (which calls ``Map.bind`` itself, not :meth:`bind`),
        as a :class:`RelativeRedirectAdapter`; remembered as a :class:`RememberingAdapter`
        where it can be."""
        wsgi_env = environ
        if server_name is not None or type(wsgi_env) is not dict:
            return RelativeRedirectAdapter.like(super().bind_to_environ(environ, server_name, subdomain))
        key = (subdomain, *map(wsgi_env.get, BIND_ENVIRON_KEYS))
        try:
            return self._adapters[key]
        except KeyError:
            pass
        except TypeError:  # a value that cannot be a key: bound anew
            return RelativeRedirectAdapter.like(super().bind_to_environ(environ, server_name, subdomain))
        adapter = RememberingAdapter.like(super().bind_to_environ(environ, server_name, subdomain))
        if len(self._adapters) >= self.MAX_ADAPTERS:
            self._adapters.clear()
        self._adapters[key] = adapter
        return adapter


class ServiceRequest(flask.Request):
    """Flask's request, whose :meth:`close` closes the uploaded files it parsed only when
    it parsed any (``files`` was read): Werkzeug's looks through an empty mapping
    otherwise, on every request."""

    def close(self) -> None:
        if "files" in self.__dict__:
            super().close()


# Headers Werkzeug rewrites on the way out (``Response.get_wsgi_headers``), in lower case.
REWRITTEN_HEADERS: Final = frozenset({"location", "content-location"})


class OnePieceBody:
    """The WSGI iterable of a body held as one ``bytes``: that piece, then the response's
    ``close`` when the server closes it, as Werkzeug's ``ClosingIterator`` over the
    response's encoded pieces hands them (without its generator and its set-up)."""

    __slots__ = ("_next", "close")

    def __init__(self, piece: bytes, close: Callable[[], None]) -> None:
        self._next = iter((piece,)).__next__
        self.close = close

    def __iter__(self) -> OnePieceBody:
        return self

    def __next__(self) -> bytes:
        return self._next()


class ServiceResponse(flask.Response):
    """Flask's response, with less of Werkzeug's work on the way out when there is nothing
    for it to change (tests/contract/test_request_path_round5.py compares both ways):

    - ``get_wsgi_headers`` copies the headers (checking each value again for newlines, as
      setting it through ``Headers`` already did) to fix a ``Location`` or
      ``Content-Location``, drop ``Content-Length`` from a 1xx, 204 or 304, or add one the
      body can tell. An answer with none of these to do (every JSON answer: its length is
      set with its body) goes out with a plain copy of its header list, the same pairs in
      the same order.
    - ``get_app_iter`` wraps the body in a generator that encodes text pieces and in a
      ``ClosingIterator`` (whose set-up alone evaluates a typing expression). A body held
      as one ``bytes`` (every answer whose data was set) that is to be sent (not a
      passthrough, not a HEAD, 1xx, 204 or 304) goes out as a :class:`OnePieceBody`.

    Any other answer takes Werkzeug's way."""

    def get_app_iter(self, environ: Any) -> Any:
        body = self.response
        if type(body) is list and len(body) == 1 and type(body[0]) is bytes and not self.direct_passthrough:
            status = self.status_code
            if environ["REQUEST_METHOD"] != "HEAD" and not (100 <= status < 200 or status == 204 or status == 304):
                return OnePieceBody(body[0], self.close)
        return super().get_app_iter(environ)

    def get_wsgi_headers(self, environ: Any) -> Headers:
        status = self.status_code
        if not (100 <= status < 200 or status == 204 or status == 304):
            pairs = self.headers._list
            has_length = False
            for name, _ in pairs:
                lower = name.lower()
                if lower == "content-length":
                    has_length = True
                elif lower in REWRITTEN_HEADERS:
                    break
            else:
                if has_length:
                    headers = Headers()
                    headers._list = pairs.copy()
                    return headers
        return super().get_wsgi_headers(environ)


def bodiless_redirect(redirect: RequestRedirect) -> ServiceResponse:
    """A routing redirect (:class:`RelativeRedirectAdapter`'s relative ``Location``)
    answered with no body and no ``Content-Type``: Werkzeug's carries an HTML page, and
    the service answers no HTML from its API paths."""
    response = ServiceResponse(status=redirect.code, headers={"Location": redirect.new_url})
    del response.headers["Content-Type"]
    return response


class NullSessionInterface(SecureCookieSessionInterface):
    """Flask's cookie sessions, with one null session for every request: the service sets
    no secret key, so Flask makes a null session (read-only, every write raises) for each
    request. One serves them all: nothing can be written to it, and Flask reads its
    ``accessed`` and ``modified`` flags only when saving a session, which it never does for
    a null one. With a secret key, sessions work as Flask's."""

    def __init__(self) -> None:
        self._null_session = self.null_session_class()

    def make_null_session(self, app: Flask) -> NullSession:
        return self._null_session


# The keys of a hook registry holding the app's own hooks alone (Flask files them under ``None``).
APP_ONLY: Final = frozenset({None})


class ServiceFlask(Flask):
    """Flask with its per-request work cut to what the service needs (each piece keeps
    Flask's behaviour; tests/contract/test_request_path_round5.py compares them):

    - :meth:`ensure_sync` remembers which functions it found synchronous. Flask asks it of
      every hook and view on every request, and flask-smorest's decorators once more per
      layer (a view here has up to nine), each time inspecting the function anew; the
      answer for a function never changes. Async functions are not remembered (Flask wraps
      them anew, as it always did); nor is anything past :data:`MAX_SYNC_FUNCTIONS` (the
      app's functions are a fixed set, far fewer).
    - URL adapters, requests, responses and null sessions from :class:`ServiceMap`,
      :class:`ServiceRequest`, :class:`ServiceResponse` and :class:`NullSessionInterface`;
      a routing redirect (the 308 that merges slashes) with a relative ``Location`` and no
      body (:class:`RelativeRedirectAdapter`, :meth:`handle_http_exception`).
    - Flask's steps of a request take a short way while the app uses none of what they
      would look for: no receiver connected to the signal a step sends, no URL value
      preprocessor, and hooks registered on the app alone, not on a blueprint
      (:meth:`uses_app_hooks_only`). Each step then runs the app's hooks as Flask does,
      without working out the request's blueprints or finding the request through its
      proxy (tests/contract/test_request_path_round6.py compares both ways); otherwise it is
      Flask's own step. The service registers no such thing; a test or an extension may.
      (Flask's app context signals, sent on every request too, stay: skipping them would
      mean replacing the app context's ``push`` and ``pop``.)"""

    MAX_SYNC_FUNCTIONS = 4096
    json_provider_class = CompactJSONProvider
    url_map_class = ServiceMap
    request_class = ServiceRequest
    response_class = ServiceResponse
    session_interface = NullSessionInterface()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sync_functions: set[Callable[..., Any]] = set()

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        try:
            if func in self._sync_functions:
                return func
        except TypeError:  # unhashable: asked anew
            return super().ensure_sync(func)
        sync = super().ensure_sync(func)
        if sync is func and len(self._sync_functions) < self.MAX_SYNC_FUNCTIONS:
            self._sync_functions.add(func)
        return sync

    def create_url_adapter(self, request: flask.Request | None) -> MapAdapter | None:
        """Flask's adapter for ``request``, with the request's host (which Flask works out
        and sets on the request first) remembered with a :class:`RememberingAdapter`: its
        environ values include all that ``get_host`` reads. Only for Flask's plain case
        (no trusted hosts, no ``SERVER_NAME``, no host or subdomain matching); Flask's own
        method otherwise."""
        url_map = self.url_map
        if (
            request is None or self.config["TRUSTED_HOSTS"] is not None or self.config["SERVER_NAME"] is not None
            or url_map.host_matching or self.subdomain_matching
        ):
            return super().create_url_adapter(request)
        wsgi_env = request.environ
        try:
            adapter = url_map.bind_to_environ(wsgi_env, server_name=None, subdomain=url_map.default_subdomain or "")
        except Exception:
            request.host = get_host(wsgi_env)  # set before the bind, in Flask's order
            raise
        if type(adapter) is not RememberingAdapter:
            request.host = get_host(wsgi_env)
            return adapter
        host = adapter.request_host
        if host is None:
            adapter.request_host = host = get_host(wsgi_env)
        request.host = host
        return adapter

    def uses_app_hooks_only(self, registry: Mapping[Any, Any]) -> bool:
        """Whether the hooks in ``registry`` (``before_request_funcs`` and its kin: hooks by
        blueprint name, the app's under ``None``) are the app's alone, and no URL value
        preprocessor is registered: then the request's blueprints find no hook to run."""
        return registry.keys() <= APP_ONLY and not self.url_value_preprocessors

    def full_dispatch_request(self) -> flask.Response:
        """Flask's, without sending ``request_started`` to no receiver."""
        if request_started.receivers:
            return super().full_dispatch_request()
        self._got_first_request = True
        try:
            rv = self.preprocess_request()
            if rv is None:
                rv = self.dispatch_request()
        except Exception as e:
            rv = self.handle_user_exception(e)
        return self.finalize_request(rv)

    def preprocess_request(self) -> Any:
        """Flask's: the app's ``before_request`` hooks, in order, until one answers."""
        if not self.uses_app_hooks_only(self.before_request_funcs):
            return super().preprocess_request()
        for before_func in self.before_request_funcs.get(None, ()):
            rv = self.ensure_sync(before_func)()
            if rv is not None:
                return rv
        return None

    def dispatch_request(self) -> Any:
        """Flask's: the matched view with the path values; Flask's own step for a routing
        refusal or an automatic ``OPTIONS`` answer."""
        req = current_request()
        rule = req.url_rule
        if (
            req.routing_exception is not None or rule is None
            or (req.method == "OPTIONS" and getattr(rule, "provide_automatic_options", False))
        ):
            return super().dispatch_request()
        return self.ensure_sync(self.view_functions[rule.endpoint])(**req.view_args)  # type: ignore[arg-type]

    def handle_http_exception(self, e: HTTPException) -> Any:
        """Flask's, with a routing redirect answered by :func:`bodiless_redirect` (Flask
        hands a routing exception back as the answer, and Werkzeug's is an HTML page)."""
        if isinstance(e, RequestRedirect):
            return bodiless_redirect(e)
        return super().handle_http_exception(e)

    def finalize_request(self, rv: Any, from_error_handler: bool = False) -> flask.Response:
        """Flask's, without sending ``request_finished`` to no receiver; Flask's own step
        for an error handler's answer (which logs a failing hook instead of raising)."""
        if from_error_handler or request_finished.receivers:
            return super().finalize_request(rv, from_error_handler)
        return self.process_response(self.make_response(rv))

    def process_response(self, response: flask.Response) -> flask.Response:
        """Flask's: the request's own ``after_this_request`` functions, then the app's
        ``after_request`` hooks, last registered first, then the session saved unless null."""
        if not self.uses_app_hooks_only(self.after_request_funcs):
            return super().process_response(response)
        ctx = current_request_context()
        for func in ctx._after_request_functions:
            response = self.ensure_sync(func)(response)
        for func in reversed(self.after_request_funcs.get(None, ())):
            response = self.ensure_sync(func)(response)
        session = ctx.session  # (the property, as Flask reads it: it marks the session accessed)
        if not self.session_interface.is_null_session(session):
            self.session_interface.save_session(self, session, response)
        return response

    def do_teardown_request(self, *args: Any, **kwargs: Any) -> None:
        """Flask's, which does nothing without a teardown function or a receiver."""
        if any(self.teardown_request_funcs.values()) or request_tearing_down.receivers:
            super().do_teardown_request(*args, **kwargs)

    def do_teardown_appcontext(self, *args: Any, **kwargs: Any) -> None:
        """Flask's, which does nothing without a teardown function or a receiver."""
        if self.teardown_appcontext_funcs or appcontext_tearing_down.receivers:
            super().do_teardown_appcontext(*args, **kwargs)


def create_app(settings: Settings | None = None) -> Flask:
    """Build the WSGI app with ``settings`` (default: read from the environment)."""
    settings = settings if settings is not None else read_settings()
    app = ServiceFlask("service")
    attach_settings(app, settings)
    app.config.update(OPENAPI_CONFIG, MAX_CONTENT_LENGTH=settings.http.max_body_bytes)
    app.url_map.converters["game"] = GameIdConverter
    api = ProblemApi(
        app,
        answer_headers={REQUEST_ID_HEADER: REQUEST_ID_HEADER_COMPONENT},
        spec_kwargs={"marshmallow_plugin": ContractMarshmallowPlugin(), "flask_plugin": ContractFlaskPlugin()},
    )
    api.register_converter(GameIdConverter, game_id_schema)
    api.register_blueprint(games_blp)
    api.register_blueprint(solver_blp)
    api.register_blueprint(replays_blp)
    app.register_blueprint(ops_blp)
    app.register_blueprint(web_blp)
    init_observability(app)
    init_body(app)  # after the request id is given: body refusals carry it
    app.extensions["api"] = api
    return app
