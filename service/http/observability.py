"""Request ids, request metrics, log context and CORS: what every request goes through.

- Request id: taken from ``X-Request-ID`` when it is short and made of safe characters,
  generated otherwise; kept in ``flask.g.request_id`` (problem bodies carry it), echoed in
  the response header, and added to every log record written while the request runs.
- Metrics: Prometheus counters and histograms, every label from a fixed set
  (:func:`request_labels`: an unknown method counts as ``other``), so no request can add a
  series. The gunicorn worker's own answers (408, 413, 414, 431, the 400s of broken framing
  and of gunicorn's parser) are counted in ``http_requests_total`` too, with the endpoint
  ``<worker>`` (:func:`count_worker_answer`): the app never routed them. Under gunicorn
  (several worker processes) ``PROMETHEUS_MULTIPROC_DIR`` is set
  before this module is imported (deploy/gunicorn.conf.py sees to it) and prometheus_client
  then keeps the values in files that :func:`metrics_payload` adds up; without it (tests,
  ``flask run``) one in-process registry is used.
- CORS: any origin by default, never credentials (the API has none to protect).
- Settings (CORS origins, proxy hops, the metrics directory) come from the app's
  :class:`~service.settings.Settings` (:mod:`.app_settings`), never from the environment.
- Logs are formatted (as JSON, one access line per request) by gunicorn's logging config in
  deploy/gunicorn.conf.py; nothing here logs request or response bodies, so game states
  never reach the logs.
"""

from __future__ import annotations

import http
import logging
import os
import re
import time
from functools import cache
from pathlib import Path
from typing import Any, Final

import flask
from flask import Flask
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector
from werkzeug.datastructures import Headers
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.routing import Rule

from .app_settings import current_settings, settings_of
from .problems import request_id
from .request_context import current_g, current_request, environ_key, header_value

REQUEST_ID_HEADER = "X-Request-ID"
# Long enough for a UUID or a W3C trace id with a prefix, short enough to log safely.
REQUEST_ID_PATTERN = re.compile(r"[A-Za-z0-9._:@/+=-]{1,128}")

# How openapi.yaml documents the request id: a header of every answer, and an optional
# header of every request (both components named REQUEST_ID_HEADER_COMPONENT).
REQUEST_ID_HEADER_COMPONENT = "RequestId"
REQUEST_ID_ANSWER_DOC: dict[str, Any] = {
    "description": "The request's id: the one the request sent in X-Request-ID if it was usable, else a new one. "
                   "Problems carry it too (`request_id`), and every log line written for the request.",
    "schema": {"type": "string"},
}
REQUEST_ID_REQUEST_DOC: dict[str, Any] = {
    "description": "An id for the request (up to 128 of A-Z a-z 0-9 . _ : @ / + = -), echoed in the answer's "
                   "X-Request-ID and written in the logs; any other value is replaced by a new id.",
    "schema": {"type": "string"},
    "required": False,
}

CORS_ALLOWED_HEADERS = "Content-Type, X-Request-ID"
# The CORS headers of an answer (a preflight's take the last three too).
ALLOW_ORIGIN_HEADER = "Access-Control-Allow-Origin"
EXPOSE_HEADERS_HEADER = "Access-Control-Expose-Headers"
ALLOW_METHODS_HEADER = "Access-Control-Allow-Methods"
ALLOW_HEADERS_HEADER = "Access-Control-Allow-Headers"
MAX_AGE_HEADER = "Access-Control-Max-Age"
CORS_ALLOWED_METHODS = "GET, POST, OPTIONS"

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
SOLVER_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0)

# Metric objects are process-wide: the app factory runs many times in the tests, and
# registering a metric twice is an error. Only counters and histograms: they add up
# across gunicorn workers without a multiprocess mode of their own.
HTTP_REQUESTS = Counter(
    "http_requests",
    "HTTP requests answered, by method, endpoint (the route template) and status.",
    ["method", "endpoint", "status"],
)
HTTP_LATENCY = Histogram(
    "http_request_duration_seconds",
    "Time from the request reaching the app to the response leaving it.",
    ["method", "endpoint", "status"],
    buckets=LATENCY_BUCKETS,
)
SOLVER_RUNS = Counter(
    "solver_runs",
    "Solver runs, by game and result (e.g. solved, unsolvable, budget-exhausted).",
    ["game", "result"],
)
SOLVER_SECONDS = Histogram(
    "solver_run_duration_seconds",
    "Wall time of solver runs, by game and result.",
    ["game", "result"],
    buckets=SOLVER_BUCKETS,
)

# Every label takes its values from a fixed set, so no request can add a time series:
# the method from the usual verbs (any other method a client sends counts as `other`), the
# endpoint from the route templates (every unmatched path shares one value), the status
# from the HTTP status codes.
LABELLED_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})
OTHER_LABEL = "other"
UNMATCHED_ENDPOINT = "<unmatched>"
WORKER_ENDPOINT = "<worker>"  # refused by the gunicorn worker before the app saw it
KNOWN_STATUSES = frozenset(int(s) for s in http.HTTPStatus)


def request_labels(method: str, rule: Rule | None, status: int) -> tuple[str, str, str]:
    """The (method, endpoint, status) labels of a request, each from a fixed set.

    >>> request_labels("BREW", None, 418)
    ('other', '<unmatched>', '418')
    >>> request_labels("GET", None, 799)
    ('GET', '<unmatched>', 'other')
    """
    return label_values(method, rule.rule if rule is not None else UNMATCHED_ENDPOINT, status)


def label_values(method: str, endpoint: str, status: int) -> tuple[str, str, str]:
    """The (method, endpoint, status) labels, the method and status from their fixed sets;
    ``endpoint`` must be a route template or one of the fixed values above.

    >>> label_values("get", WORKER_ENDPOINT, 400)
    ('other', '<worker>', '400')
    """
    return (
        method if method in LABELLED_METHODS else OTHER_LABEL,
        endpoint,
        str(status) if status in KNOWN_STATUSES else OTHER_LABEL,
    )


@cache  # as many as label_values has label sets for WORKER_ENDPOINT: a fixed number
def worker_answers(labels: tuple[str, str, str]) -> Any:
    return HTTP_REQUESTS.labels(*labels)


def count_worker_answer(method: str, status: int) -> None:
    """Count in ``http_requests_total`` a request the gunicorn worker answered itself
    (service/gunicorn_worker.py), with the endpoint ``WORKER_ENDPOINT``; ``method`` is what
    the request line began with, whatever it is (it counts as ``other`` unless a usual verb).
    Not in the latency histogram, which times the app. Safe from any thread of the worker.
    """
    worker_answers(label_values(method, WORKER_ENDPOINT, status)).inc()


def record_solver_run(game_id: str, result: str, seconds: float) -> None:
    """Count one solver run. The solver endpoint calls this once per run.

    ``game_id`` must be a registered game id and ``result`` one of a small fixed set:
    every distinct value is a new time series, so never pass anything a client chose.
    """
    SOLVER_RUNS.labels(game_id, result).inc()
    SOLVER_SECONDS.labels(game_id, result).observe(seconds)


def metrics_payload(multiprocess_dir: Path | None) -> tuple[bytes, str]:
    """The Prometheus text exposition of this process, or of all gunicorn workers when
    they keep their values in ``multiprocess_dir`` (``PROMETHEUS_MULTIPROC_DIR``)."""
    if multiprocess_dir is not None:
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=str(multiprocess_dir))
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def incoming_request_id(value: str | None) -> str:
    """The client's request id if it is safe to log and echo, else a new one.

    >>> incoming_request_id("abc-123")
    'abc-123'
    >>> len(incoming_request_id("no spaces or newlines\\n"))
    32
    """
    if value and REQUEST_ID_PATTERN.fullmatch(value):
        return value
    return new_request_id()


def new_request_id() -> str:
    """A random version-4 UUID in hex, as ``uuid.uuid4().hex`` writes it, without building
    the ``UUID`` object (its checks cost more than the 16 random bytes).

    >>> import uuid
    >>> rid = new_request_id()
    >>> uuid.UUID(rid).version, rid == uuid.UUID(rid).hex
    (4, True)
    """
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # the RFC 4122 variant
    return raw.hex()


REQUEST_ID_ENVIRON_KEY = environ_key(REQUEST_ID_HEADER)
ORIGIN_ENVIRON_KEY = environ_key("Origin")


def begin_request() -> flask.Response | None:
    """Give the request its id and start its clock; answer CORS preflights at once."""
    request, g = current_request(), current_g()
    g.request_id = incoming_request_id(header_value(request, REQUEST_ID_ENVIRON_KEY))
    g.request_started = time.perf_counter()
    if (
        request.method == "OPTIONS"
        and "Access-Control-Request-Method" in request.headers
        and current_settings().cors.allow_origins is not None
    ):
        preflight = flask.current_app.response_class(status=204)
        del preflight.headers["Content-Type"]
        return preflight
    return None


@cache  # as many as request_labels has label sets: a fixed number
def request_metrics(labels: tuple[str, str, str]) -> tuple[Any, Any]:
    """The request counter and latency histogram of one set of labels."""
    return HTTP_REQUESTS.labels(*labels), HTTP_LATENCY.labels(*labels)


# The CORS headers of every answer but a preflight's when any origin is allowed (``"*"``):
# the same two, whatever the request's ``Origin``.
ANY_ORIGIN_HEADERS: Final = ((ALLOW_ORIGIN_HEADER, "*"), (EXPOSE_HEADERS_HEADER, REQUEST_ID_HEADER))
# The headers :func:`finish_response` may set, in lower case.
FINISHING_HEADERS: Final = frozenset(
    name.lower() for name in (REQUEST_ID_HEADER, ALLOW_ORIGIN_HEADER, EXPOSE_HEADERS_HEADER, ALLOW_METHODS_HEADER,
                              ALLOW_HEADERS_HEADER, MAX_AGE_HEADER)
)


def finish_response(response: flask.Response) -> flask.Response:
    """Echo the request id, add CORS headers and count the request.

    The common answer (a request id, any origin allowed, not a preflight, none of these
    headers set by the view) gets its three headers added (``Headers.add``, which
    appends): setting each through ``response.headers[...]`` looks through the list for
    the same name first, and none can be there. Any other answer goes through
    :func:`add_cors_headers` as before; both write the same headers in the same order
    (tests/contract/test_request_path_round4.py)."""
    request, g = current_request(), current_g()
    rid = getattr(g, "request_id", None)
    origins = current_settings().cors.allow_origins
    if (
        type(rid) is str and rid and origins is not None and "*" in origins and request.method != "OPTIONS"
        and not _has_finishing_header(response.headers)
    ):
        add = response.headers.add
        add(REQUEST_ID_HEADER, rid)
        for name, value in ANY_ORIGIN_HEADERS:
            add(name, value)
    else:
        if rid:
            response.headers[REQUEST_ID_HEADER] = rid
        add_cors_headers(response, request)
    requests, latency = request_metrics(request_labels(request.method, request.url_rule, response.status_code))
    requests.inc()
    started = getattr(g, "request_started", None)
    if started is not None:
        latency.observe(time.perf_counter() - started)
    return response


def _has_finishing_header(headers: Headers) -> bool:
    """Whether a header :func:`finish_response` sets is there already (a view set it)."""
    for name, _ in headers:  # noqa: SIM110 (a plain loop: any() over a generator costs more)
        if name.lower() in FINISHING_HEADERS:
            return True
    return False


def add_cors_headers(response: flask.Response, request: flask.Request) -> None:
    cors = current_settings().cors
    origins = cors.allow_origins
    if origins is None:
        return
    origin = header_value(request, ORIGIN_ENVIRON_KEY)
    if "*" in origins:
        response.headers[ALLOW_ORIGIN_HEADER] = "*"
    else:
        response.vary.add("Origin")
        if origin is None or origin.rstrip("/") not in origins:
            return
        response.headers[ALLOW_ORIGIN_HEADER] = origin
    response.headers[EXPOSE_HEADERS_HEADER] = REQUEST_ID_HEADER
    if request.method == "OPTIONS":
        response.headers[ALLOW_METHODS_HEADER] = CORS_ALLOWED_METHODS
        response.headers[ALLOW_HEADERS_HEADER] = CORS_ALLOWED_HEADERS
        response.headers[MAX_AGE_HEADER] = str(cors.max_age)


_base_record_factory = logging.getLogRecordFactory()


def _record_with_request_id(*args: Any, **kwargs: Any) -> logging.LogRecord:
    """Every log record written during a request carries its id (JSON logs show it)."""
    record = _base_record_factory(*args, **kwargs)
    rid = request_id()
    if rid:
        record.request_id = rid
    return record


def init_observability(app: Flask) -> None:
    """Hook request ids, metrics, log context and CORS into ``app`` (built with its settings)."""
    hops = settings_of(app).http.trusted_proxy_hops
    if hops > 0:
        # Behind the balancer: client address and scheme from its X-Forwarded-* headers.
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops)  # type: ignore[method-assign]
    app.before_request(begin_request)
    app.after_request(finish_response)
    if logging.getLogRecordFactory() is not _record_with_request_id:
        logging.setLogRecordFactory(_record_with_request_id)
