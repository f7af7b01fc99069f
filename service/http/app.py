"""The application factory: one place that wires settings, errors and blueprints, and the
OpenAPI document's header and shared components."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final, Self
from urllib.parse import urlsplit

import flask
import orjson
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from flask import Flask
from flask.json.provider import DefaultJSONProvider
from flask.sessions import NullSession, SecureCookieSessionInterface
from flask_smorest.spec.plugins import FlaskPlugin
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Map, MapAdapter, RequestRedirect, Rule, RuleFactory
from werkzeug.routing.converters import BaseConverter
from werkzeug.wsgi import get_host

from service.private_parts import unchecked_libraries
from service.settings import Settings, read_settings

from .app_settings import attach_settings
from .body import MAX_JSON_DEPTH, MAX_NUMBER_CHARS, init_body
from .contract_examples import EXAMPLE_GAME
from .daily import blp as daily_blp
from .daily import json_query_parameter
from .games_api import GameIdConverter, game_id_schema
from .games_api import blp as games_blp
from .keys_api import blp as keys_blp
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
from .request_context import current_request
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
        self.converter.add_parameter_attribute_function(json_query_parameter)
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


# The separators of compact JSON text, as Flask's JSON provider asks for it.
COMPACT_SEPARATORS: Final = (",", ":")


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
    (tests/contract/test_moves_answers.py compares the two on every endpoint's answers).

    Only :meth:`dumps`, the provider's documented override point, is Flask's to call:
    Flask's ``response`` asks it for the compact text (``separators=(",", ":")``) and
    makes the answer itself."""

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
                check_circular=False, separators=COMPACT_SEPARATORS,
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

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        """Flask's, with the compact text (Flask's ``response`` out of debug mode asks for
        exactly ``separators=(",", ":")``) written by :meth:`compact_text`."""
        if len(kwargs) == 1 and kwargs.get("separators") == COMPACT_SEPARATORS:
            return self.compact_text(obj).decode()
        return super().dumps(obj, **kwargs)


def werkzeug_converters() -> frozenset[type[BaseConverter]]:
    """Werkzeug's own converters (none known on a Werkzeug without its undocumented
    ``DEFAULT_CONVERTERS``, where :data:`FAST_ROUTING` is off anyway)."""
    try:
        from werkzeug.routing.converters import DEFAULT_CONVERTERS
    except ImportError:
        return frozenset()
    return frozenset(DEFAULT_CONVERTERS.values())


# Converters whose reading of a path segment depends on the segment alone: Werkzeug's own,
# and any that keeps ``BaseConverter.to_python`` (the segment as it is).
WERKZEUG_CONVERTERS: Final = werkzeug_converters()


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


def relative_location(url: str, adapter: MapAdapter | None) -> str:
    """A routing redirect's ``Location`` as a path and query alone (see
    :class:`RelativeRedirectAdapter`): ``url`` as it is when it is one already (the
    adapter was a :class:`RelativeRedirectAdapter`), else Werkzeug's absolute URL without
    its scheme and ``adapter``'s host (``MapAdapter.get_host``: a client's ``Host`` may hold
    a slash, which a URL parser would read as the path's start). The path starts with
    exactly one slash (``//host`` would name another host)."""
    if url.startswith("/") and not url.startswith("//"):
        return url
    after_scheme = url.partition("://")[2]
    host = adapter.get_host(None) if adapter is not None else None
    if host is not None and after_scheme.startswith(host):
        rest = after_scheme[len(host):]
    else:  # (not one this adapter built: its path and query, as a URL parser reads them)
        parts = urlsplit(url)
        rest = f"{parts.path}?{parts.query}" if parts.query else parts.path
    return "/" + rest.lstrip("/")


def bodiless_redirect(redirect: RequestRedirect, location: str) -> flask.Response:
    """A routing redirect to ``location`` answered with no body and no ``Content-Type``:
    Werkzeug's carries an HTML page, and the service answers no HTML from its API paths."""
    response = flask.Response(status=redirect.code, headers={"Location": location})
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


FAST_ROUTING_LIBRARIES: Final = frozenset({"werkzeug", "flask"})
"""The libraries whose private parts the URL adapter and host cache relies on
(service/private_parts.py: Werkzeug's ``Rule._converters``, ``MapAdapter``'s argument
order, the environ keys ``bind_to_environ`` reads; Flask's ``create_url_adapter`` restated)."""

FAST_ROUTING: Final = not unchecked_libraries().keys() & FAST_ROUTING_LIBRARIES
"""The version gate of the URL adapter and host cache, read once, at import: the app's URL
map is a :class:`ServiceMap` (adapters, matches and the request's host remembered) only
where each of :data:`FAST_ROUTING_LIBRARIES` is at a version its equivalence tests ran on
(tests/contract/test_request_path_round5.py and round6); Werkzeug's own ``Map`` and
Flask's own adapter elsewhere (correct, slower; the server names the versions at start:
``warn_unchecked``)."""


class ServiceFlask(Flask):
    """Flask, with what the service changes of its work on a request (each keeps Flask's
    behaviour; tests/contract/test_request_path_round5.py and round6 compare them):

    - :meth:`ensure_sync` remembers which functions it found synchronous. Flask asks it of
      every hook and view on every request, and flask-smorest's decorators once more per
      layer, each time inspecting the function anew; the answer for a function never
      changes. Async functions are not remembered (Flask wraps them anew, as it always
      did); nor is anything past :data:`MAX_SYNC_FUNCTIONS` (the app's functions are a
      fixed set, far fewer).
    - With ``fast_routing`` (default: :data:`FAST_ROUTING`), URL adapters from
      :class:`ServiceMap`, remembered with their match and the request's host
      (:meth:`create_url_adapter`); without, Werkzeug's ``Map`` and Flask's own adapter.
    - Null sessions from :class:`NullSessionInterface`.
    - A routing redirect (the 308 that merges slashes) answered with a relative
      ``Location`` and no body (:meth:`handle_http_exception`).

    Flask's own steps of a request run as Flask has them (no step restated)."""

    MAX_SYNC_FUNCTIONS = 4096
    json_provider_class = CompactJSONProvider
    session_interface = NullSessionInterface()

    def __init__(self, *args: Any, fast_routing: bool | None = None, **kwargs: Any) -> None:
        fast_routing = FAST_ROUTING if fast_routing is None else fast_routing
        self.fast_routing = fast_routing
        self.url_map_class = ServiceMap if fast_routing else Map  # read by Flask's __init__
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
        environ values include all that ``get_host`` reads. Only with ``fast_routing`` and
        in Flask's plain case (no trusted hosts, no ``SERVER_NAME``, no host or subdomain
        matching); Flask's own method otherwise."""
        url_map = self.url_map
        if (
            not self.fast_routing or request is None or self.config["TRUSTED_HOSTS"] is not None
            or self.config["SERVER_NAME"] is not None or url_map.host_matching or self.subdomain_matching
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

    def handle_http_exception(self, e: HTTPException) -> Any:
        """Flask's, with a routing redirect answered by :func:`bodiless_redirect` to its
        :func:`relative_location` (Flask hands a routing exception back as the answer, and
        Werkzeug's is an HTML page to an absolute URL)."""
        if isinstance(e, RequestRedirect):
            adapter = None if e.new_url.startswith("/") else self.create_url_adapter(current_request())
            return bodiless_redirect(e, relative_location(e.new_url, adapter))
        return super().handle_http_exception(e)


def create_app(settings: Settings | None = None, *, fast_routing: bool | None = None) -> Flask:
    """Build the WSGI app with ``settings`` (default: read from the environment);
    ``fast_routing`` (default: the version gate :data:`FAST_ROUTING`) off runs Werkzeug's
    own URL map and Flask's own adapter (:class:`ServiceFlask`)."""
    settings = settings if settings is not None else read_settings()
    app = ServiceFlask("service", fast_routing=fast_routing)
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
    api.register_blueprint(daily_blp)
    api.register_blueprint(keys_blp)
    app.register_blueprint(ops_blp)
    app.register_blueprint(web_blp)
    init_observability(app)
    init_body(app)  # after the request id is given: body refusals carry it
    app.extensions["api"] = api
    return app
