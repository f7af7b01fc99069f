"""Every private or undocumented part of a third-party library the service touches, in one list.

The request path is fast because it reaches into the libraries' insides (issue 26): a
marshmallow field's ``_deserialize``, Werkzeug's ``Rule._converters``, gunicorn's gthread
worker, CPython's ``_PyDict_NewPresized``... None of these is a
promise of the library's: a release may rename, move or change any of them, a security
release included. So each is listed here (:data:`PRIVATE_PARTS`), with what it buys and
which of our files use it, and the versions of each library they were checked on
(:data:`CHECKED_VERSIONS`).

``tests/ops/test_private_parts.py`` holds the list to the code both ways: a private name
the code touches and the list does not hold fails it, and so does an entry whose name no
longer appears in the files it names; and so does an installed library at a version the
list was not checked on (so that bumping a pin makes someone recheck the entries).
:func:`unchecked_libraries` answers which installed libraries are at an unchecked version;
the app says so once, at start (:func:`warn_unchecked`). Each fast path's version gate reads
it once, at import (``FAST_ROUTING`` of service/http/app.py, ``FAST_READER``,
``FAST_BLUEPRINT``...): the fast path runs only where every library it relies on is at a
checked version, the library's own path otherwise.

What bought little for its risk is gone (issue 26): Flask's request steps restated, Werkzeug's
response and request classes restated, the JSON provider's private ``response`` shortcut and
Werkzeug's header list written directly.

How to bump a pin: README, "Private parts of libraries".
"""

from __future__ import annotations

import logging
import platform
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from types import MappingProxyType
from typing import Final

CPYTHON: Final = "cpython"  # the library name of CPython's C API (its version is the interpreter's)


@dataclass(frozen=True)
class PrivatePart:
    """One private or undocumented name of a library, as the service touches it.

    ``library``: the distribution (a key of :data:`CHECKED_VERSIONS`). ``name``: what of
    the library it is, dotted where the library defines it. ``touched_as``: the identifiers
    by which our code touches it, as written there (an attribute, an imported name, a C
    identifier), each found in every one of ``modules`` (paths from the repository's root).
    ``buys``: what it buys, in one line. ``instead``: the library's own way to the same
    result, for a version gate to run on a version not checked (empty: there is none, the
    code is written on the part)."""

    library: str
    name: str
    touched_as: tuple[str, ...]
    modules: tuple[str, ...]
    buys: str
    instead: str = ""


CHECKED_VERSIONS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    "flask": ("3.1.3",),
    "werkzeug": ("3.1.9",),
    "gunicorn": ("27.0.1",),
    "marshmallow": ("4.4.0",),
    "flask-smorest": ("0.47.0",),
    "webargs": ("8.7.1",),
    # No private name of apispec's is touched (the contract's plugins use its documented
    # plugin API), but the contract it writes was checked on this one.
    "apispec": ("6.10.1",),
    # No private name of orjson's is touched, but the fast paths' equivalence with Python's
    # json (CompactJSONProvider, body's _read_plain) was checked on this one.
    "orjson": ("3.13.0",),
    CPYTHON: ("3.11",),  # a series: the C modules are compiled against one CPython minor
})
"""The versions of each library the entries of :data:`PRIVATE_PARTS` were checked on
(a version with fewer parts names a series: ``3.11`` is every ``3.11.x``)."""


_APP: Final = "service/http/app.py"
_BODY: Final = "service/http/body.py"
_FAST_LOAD: Final = "service/http/fast_load.py"
_SCHEMAS: Final = "service/http/schemas.py"
_PROBLEMS: Final = "service/http/problems.py"
_REQUEST_CONTEXT: Final = "service/http/request_context.py"
_WORKER: Final = "service/gunicorn_worker.py"
_WIRE_C: Final = "service/http/_wire_native.c"
_MOVES_C: Final = "service/engine/_penguin_moves_native.c"
_GUNICORN_CONF: Final = "deploy/gunicorn.conf.py"


def _gthread(name: str, touched_as: str, buys: str) -> PrivatePart:
    """An undocumented part of gunicorn's gthread worker (gunicorn documents its settings,
    server hooks and ``worker_class``, never a worker's insides), used by the worker alone."""
    return PrivatePart("gunicorn", name, (touched_as,), (_WORKER,), buys)


PRIVATE_PARTS: Final[tuple[PrivatePart, ...]] = (
    # --- marshmallow: FastLoadSchema (654k instructions a move request) and the fields -----
    PrivatePart("marshmallow", "marshmallow.Schema._hooks", ("_hooks",), (_FAST_LOAD,),
                "a schema with load hooks is left to marshmallow (the reader runs none)", "Schema.load"),
    PrivatePart("marshmallow", "marshmallow.fields.Field._deserialize", ("_deserialize",),
                (_FAST_LOAD, _SCHEMAS, "service/http/solver_schemas.py", "service/http/daily.py"),
                "the reader calls a field's conversion without Field.deserialize's bookkeeping; the service's fields "
                "override it (marshmallow's documented way to write a field)", "Schema.load"),
    PrivatePart("marshmallow", "marshmallow.fields.Field._serialize", ("_serialize",),
                (_SCHEMAS, "service/http/solver_schemas.py"),
                "the service's fields write their values (marshmallow's documented way to write a field)"),
    PrivatePart("marshmallow", "marshmallow.fields.Field._validate", ("_validate",), (_FAST_LOAD,),
                "a field class that changes how its validators run is left to marshmallow", "Schema.load"),
    PrivatePart("marshmallow", "validator internals: OneOf.choices, Regexp.regex, Range.min/max/min_inclusive/"
                "max_inclusive, and that a Validator raises rather than answers False",
                ("choices", "regex", "min_inclusive", "max_inclusive"), (_FAST_LOAD,),
                "a String's or Integer's validators checked inline by the reader (no call per validator)",
                "Schema.load"),
    PrivatePart("marshmallow", "Field.deserialize's steps restated (missing, allow_none, load_default, then "
                "_deserialize and the validators), Dict.key_field/value_field, Nested.schema",
                ("load_default", "key_field", "value_field"), (_FAST_LOAD,),
                "FastLoadSchema's reader: a nested body's fields read in place, in one function", "Schema.load"),
    # --- webargs and flask-smorest: body.Blueprint (135k) and ProblemApi -----------------------
    PrivatePart("webargs", "webargs.core.Parser._raw_load_json", ("_raw_load_json",), (_BODY,),
                "webargs takes the body the service parsed once, strictly (webargs' docs say to override it)"),
    PrivatePart("flask-smorest", "a view function's _apidoc (flask-smorest's documentation of it)", ("_apidoc",),
                (_BODY,), "doc, alt_response and response document a view without wrapping it",
                "flask_smorest.Blueprint's own decorators"),
    PrivatePart("flask-smorest", "flask_smorest.utils.resolve_schema_instance (undocumented)",
                ("resolve_schema_instance",), (_BODY,),
                "Blueprint.arguments loads a body with the schema itself, without webargs' parse",
                "flask_smorest.Blueprint.arguments"),
    PrivatePart("flask-smorest", "flask_smorest.utils.prepare_response (undocumented)", ("prepare_response",),
                (_PROBLEMS,), "the error answers documented as flask-smorest documents its own"),
    PrivatePart("flask-smorest", "flask_smorest.Api._app", ("_app",), (_PROBLEMS,),
                "ProblemApi registers its error handlers on the app the Api was given"),
    PrivatePart("flask-smorest", "flask_smorest.Api._register_error_handlers", ("_register_error_handlers",),
                (_PROBLEMS,), "every error answered as problem+json, not in flask-smorest's error schema"),
    PrivatePart("flask-smorest", "flask_smorest.Api._register_responses", ("_register_responses",), (_PROBLEMS,),
                "every error documented as a problem, with its example and headers"),
    PrivatePart("flask-smorest", "flask_smorest.Api._register_pagination_header",
                ("_register_pagination_header",), (_PROBLEMS,), "no unused PaginationMetadata schema in the contract"),
    # --- Flask --------------------------------------------------------------------------------
    PrivatePart("flask", "Flask.create_url_adapter's steps restated (TRUSTED_HOSTS, SERVER_NAME, host and subdomain "
                "matching, request.host set before the bind)", ("create_url_adapter",), (_APP,),
                "the request's host remembered with its URL adapter (part of the URL adapter cache's 85k a request; "
                "only where FAST_ROUTING)", "Flask.create_url_adapter"),
    # --- Werkzeug -----------------------------------------------------------------------------
    PrivatePart("werkzeug", "werkzeug.local.LocalProxy._get_current_object (documented, though underscored)",
                ("_get_current_object",), (_REQUEST_CONTEXT,),
                "the request, app and g themselves: later reads skip the proxy"),
    PrivatePart("werkzeug", "werkzeug.routing.Rule._converters", ("_converters",), (_APP,),
                "a match is remembered only for a rule whose converters read a segment alone (only where "
                "FAST_ROUTING)", "Map.bind_to_environ and MapAdapter.match"),
    PrivatePart("werkzeug", "MapAdapter.__init__'s argument order and its attributes (map, server_name, script_name, "
                "subdomain, url_scheme, path_info, default_method, query_args)",
                ("adapter.path_info", "adapter.default_method"), (_APP,),
                "an adapter made again as a RelativeRedirectAdapter or RememberingAdapter (only where "
                "FAST_ROUTING)", "Map.bind_to_environ, and the Location made relative afterwards "
                "(relative_location)"),
    PrivatePart("werkzeug", "the WSGI environ keys Map.bind_to_environ and get_host read (a hand-kept list)",
                ("BIND_ENVIRON_KEYS",), (_APP,),
                "the URL adapter and host remembered per set of those values (85k a request); a key Werkzeug "
                "starts reading and the list lacks would answer for the wrong host (only where "
                "FAST_ROUTING)", "Map.bind_to_environ"),
    PrivatePart("werkzeug", "werkzeug.routing.converters.DEFAULT_CONVERTERS (undocumented)",
                ("DEFAULT_CONVERTERS",), (_APP,), "Werkzeug's own converters known to read a segment alone (only "
                "where FAST_ROUTING; imported so that its absence breaks nothing)",
                "Map.bind_to_environ and MapAdapter.match"),
    PrivatePart("werkzeug", "cached_property's cache in the instance __dict__ (Request.content_length)",
                ('"content_length"',), (_BODY,), "the length cached before the body was read whole is dropped"),
    # --- gunicorn: the worker (every name: gunicorn documents none of a worker's insides) ------
    _gthread("gunicorn.workers.gthread.ThreadWorker", "ThreadWorker",
             "the worker is gthread with each request read whole in its main loop"),
    _gthread("gunicorn.workers.gthread.TConn", "TConn", "the worker's connection is gthread's, with more state"),
    _gthread("gunicorn.workers.gthread.TConn.__init__ and ThreadWorker.__init__ (their arguments), and TConn's "
             "sock and client (names the service's own classes have too)", "__init__",
             "connections made and handed to gthread's handle as gthread makes them"),
    _gthread("gunicorn.workers.gthread.TConn.parser", "parser", "a connection's parser made once, over bytes read"),
    _gthread("gunicorn.workers.gthread.TConn.initialized", "initialized",
             "gthread's handle reads no socket: the request is already read"),
    _gthread("gunicorn.workers.gthread.TConn.data_ready", "data_ready",
             "gthread's handle reads no socket: the request is already read"),
    _gthread("gunicorn.workers.gthread.STOP_KEEPALIVE_LINGER", "STOP_KEEPALIVE_LINGER",
             "a stopping worker keeps idle connections as long as gthread does"),
    _gthread("gunicorn.http.body.CHUNK_EXT_RE", "CHUNK_EXT_RE",
             "the framer refuses a chunk extension exactly as gunicorn's parser would"),
    _gthread("gunicorn.http.get_parser", "get_parser", "a connection's parser made with ParserConfig"),
    _gthread("gunicorn.http.parser.Parser.unreader (and Unreader.unread)", "unreader",
             "the parser reads the request's bytes from a BufferedUnreader"),
    _gthread("gunicorn.http.unreader.Unreader", "Unreader",
             "the thread's parser reads the bytes the main loop read, never the socket"),
    _gthread("gunicorn.http.unreader.Unreader.chunk", "chunk", "BufferedUnreader's source is always at its end"),
    _gthread("gunicorn.http.unreader.Unreader.take_buffered", "take_buffered",
             "bytes the parser read past a request (pipelined) are kept for the next"),
    _gthread("gunicorn.http.message.Request._expected_100_continue", "_expected_100_continue",
             "no second 100 Continue after the main loop sent one"),
    _gthread("gunicorn.http.errors (its exception classes, by name)", "parse_errors",
             "the parser's refusals answered as problem+json (PARSER_REFUSALS)"),
    _gthread("gunicorn.util", "util", "a socket closed as gunicorn closes it"),
    _gthread("gunicorn.util.close", "util.close", "a socket closed as gunicorn closes it"),
    _gthread("gunicorn.config.Config.is_ssl", "is_ssl", "check_config refuses TLS (it ends at the balancer)"),
    _gthread("gunicorn.workers.base.Worker.PIPE", "PIPE",
             "the signal wakeup pipe read by the main loop (the master's death seen at once)"),
    _gthread("gunicorn.workers.base.Worker.cfg", "cfg", "gunicorn's settings as the worker holds them"),
    _gthread("gunicorn.workers.base.Worker.log", "log", "gunicorn's logger"),
    _gthread("gunicorn.workers.base.Worker.ppid", "ppid", "the master's pid, to see it gone"),
    _gthread("gunicorn.workers.base.Worker.sockets", "sockets", "the listeners, closed when the master is gone"),
    _gthread("gunicorn.workers.base.Worker.alive", "alive", "the worker stops accepting when the master is gone"),
    _gthread("gunicorn.workers.base.Worker.wsgi", "wsgi", "the app wrapped to be told each body is whole"),
    _gthread("gunicorn.workers.base.Worker.load_wsgi", "load_wsgi", "the app wrapped to be told each body is whole"),
    _gthread("gunicorn.workers.base.Worker.init_signals", "init_signals", "the master's death signalled (Linux)"),
    _gthread("gunicorn.workers.base.Worker.handle_error", "handle_error",
             "the parser's refusals and failures answered as problem+json, not gunicorn's HTML page"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.check_config", "check_config", "TLS and HTTP/2 refused at boot"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.init_process", "init_process",
             "worker_connections lowered to the fd limit; the worker's answers set up in the worker"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.run", "run", "the wakeup pipe registered on the poller"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.poller", "poller",
             "connections waited on in gthread's own poller, without blocking"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.nr_conns", "nr_conns", "connections counted as gthread counts them"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.worker_connections", "worker_connections",
             "gthread's bound on connections, lowered to fit the fd limit"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.accept", "accept",
             "connections spread over the workers (deferred accepts), none accepted once the master is gone"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.enqueue_req", "enqueue_req", "a whole request handed to a thread"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.handle", "handle",
             "the connection a thread serves, known to handle_error"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.handle_request", "handle_request",
             "an answer's head and body sent in one send (OneSendAnswer)"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.finish_request", "finish_request",
             "back from a thread, the connection waits in the main loop again"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.is_parent_alive", "is_parent_alive",
             "the listeners closed at once when the master is gone"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.murder_pending", "murder_pending",
             "deadlines (408, idle close) and deferred accepts acted on at each turn of the loop"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.set_accept_enabled", "set_accept_enabled",
             "at the connection bound, the oldest idle connection closed rather than accepting stopped"),
    _gthread("gunicorn.workers.gthread.ThreadWorker.wait_for_and_dispatch_events", "wait_for_and_dispatch_events",
             "the poller's wait bounded by the next deadline"),
    # --- gunicorn: the server hooks of deploy/gunicorn.conf.py ----------------------------------
    PrivatePart("gunicorn", "gunicorn.arbiter.Arbiter.handle_term (replaced by a hook)", ("server.handle_term",),
                (_GUNICORN_CONF,), "SIGTERM drains first (/readyz answers 503), then gunicorn's own graceful stop"),
    PrivatePart("gunicorn", "gunicorn.arbiter.Arbiter.log", ("server.log",), (_GUNICORN_CONF,),
                "the hooks log through gunicorn's logger (as gunicorn's example settings file does)"),
    PrivatePart("gunicorn", "gunicorn.workers.base.Worker.pid", ("worker.pid",), (_GUNICORN_CONF,),
                "a dead worker's metrics files marked dead (prometheus_client's multiprocess mode)"),
    # --- CPython's C API ----------------------------------------------------------------------
    PrivatePart(CPYTHON, "_PyDict_NewPresized (private)", ("_PyDict_NewPresized",), (_WIRE_C,),
                "the wire codec's dicts allocated at their size (only where CHECKED_CPYTHON)", "PyDict_New"),
    PrivatePart(CPYTHON, "PyMemberDescrObject.d_member (a member descriptor's layout: type, offset)", ("d_member",),
                (_WIRE_C,), "a ReadPileGroup's codes slot read and written in place (only where CHECKED_CPYTHON)",
                "PyObject_GetAttr and PyObject_SetAttr"),
    PrivatePart(CPYTHON, "PyLongObject.ob_digit (an int's layout before 3.12)", ("ob_digit",), (_WIRE_C, _MOVES_C),
                "a small int read without a call, for every card (before 3.12 only)",
                "PyUnstable_Long_* from 3.12"),
    PrivatePart(CPYTHON, "PyUnstable_Long_IsCompact, PyUnstable_Long_CompactValue (the unstable API, 3.12+)",
                ("PyUnstable_Long_IsCompact", "PyUnstable_Long_CompactValue"), (_WIRE_C, _MOVES_C),
                "a small int read without a call, for every card (from 3.12)", "PyLong_AsSsize_t"),
)


def installed_version(library: str) -> str | None:
    """The installed version of ``library`` (a distribution, or :data:`CPYTHON`), None if absent."""
    if library == CPYTHON:
        return platform.python_version()
    try:
        return metadata.version(library)
    except metadata.PackageNotFoundError:
        return None


def is_checked(version: str, checked: tuple[str, ...]) -> bool:
    """Whether ``version`` is one of ``checked``, or in a series one of them names.

    >>> is_checked("3.11.7", ("3.11",)), is_checked("3.1.3", ("3.1.3",)), is_checked("3.1.30", ("3.1.3",))
    (True, True, False)
    """
    parts = version.split(".")
    return any(parts[:len(c.split("."))] == c.split(".") for c in checked)


def unchecked_libraries() -> dict[str, str]:
    """The libraries of :data:`CHECKED_VERSIONS` installed at a version not checked, with
    that version (``"absent"`` for one not installed): their private parts run unchecked."""
    unchecked: dict[str, str] = {}
    for library, checked in CHECKED_VERSIONS.items():
        version = installed_version(library)
        if version is None or not is_checked(version, checked):
            unchecked[library] = version or "absent"
    return unchecked


def warn_unchecked(log: logging.Logger) -> dict[str, str]:
    """Log one warning naming every library at an unchecked version (nothing when all are
    checked); the libraries named, with their versions."""
    unchecked = unchecked_libraries()
    if unchecked:
        log.warning(
            "library versions the service's private parts were not checked on (service/private_parts.py): %s; "
            "the fast paths that rely on them are off, the libraries' own paths run instead",
            ", ".join(f"{library} {version} (checked: {', '.join(CHECKED_VERSIONS[library])})"
                      for library, version in unchecked.items()),
        )
    return unchecked
