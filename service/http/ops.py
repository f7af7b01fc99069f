"""Operational endpoints for balancers, orchestrators and Prometheus; not part of the v1 API.

- ``GET /healthz``: liveness. Answers 200 while the process can answer at all; it checks
  no dependency (there are none), so a restart is never triggered by someone else's outage.
- ``GET /readyz``: readiness. 503 while the server drains after SIGTERM, so the balancer
  stops sending before the workers exit. The gunicorn master (deploy/gunicorn.conf.py)
  creates the drain file (the settings' ``ops.drain_file``, ``DRAIN_FILE``) when it gets
  SIGTERM; every worker sees it.
- ``GET /metrics``: Prometheus text format, summed over all gunicorn workers.

A plain Flask blueprint on purpose: these routes stay out of openapi.yaml.
"""

from __future__ import annotations

import flask
from flask import Blueprint

from .app_settings import current_settings
from .observability import metrics_payload
from .problems import ProblemCode, problem_response

blp = Blueprint("ops", __name__)

NO_STORE = {"Cache-Control": "no-store"}


def draining() -> bool:
    """True once the server has begun its graceful stop."""
    path = current_settings().ops.drain_file
    return path is not None and path.exists()


@blp.get("/healthz")
def healthz() -> flask.Response:
    """Liveness: the process is up and serving."""
    return flask.make_response(flask.jsonify(status="ok"), 200, NO_STORE)


@blp.get("/readyz")
def readyz() -> flask.Response:
    """Readiness: 200 while this server takes traffic, 503 while it drains."""
    if draining():
        return problem_response(
            ProblemCode.DRAINING, "the server is shutting down; send requests elsewhere", headers=NO_STORE
        )
    return flask.make_response(flask.jsonify(status="ready"), 200, NO_STORE)


@blp.get("/metrics")
def metrics() -> flask.Response:
    """Prometheus metrics of every worker of this server."""
    payload, content_type = metrics_payload(current_settings().ops.metrics_dir)
    return flask.Response(payload, 200, {"Content-Type": content_type, **NO_STORE})
