"""Where the HTTP layer hands searches (solve, hint, winnable deals) to the solver pool.

:func:`run_search` runs a search in this process's :class:`~service.solver.pool.SolverPool`,
sized by the app's settings (``SOLVER_PROCESSES``, ``SOLVER_QUEUE``), and turns the pool's
refusals into problems: a full pool answers 503 ``solver-busy`` at once, with
``Retry-After``. While a search waits or runs, the pool asks :func:`client_gone` whether
the client has closed its connection (under gunicorn, whose socket the WSGI environ
carries; the test client has none), and stops the search if so.

The metrics of the pool live here, not in the solver: searches running and queued (gauges
summed over gunicorn's workers, ``livesum``) and refusals by reason (a fixed set).
"""

from __future__ import annotations

import select
import socket
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import flask
from prometheus_client import Counter, Gauge

from service.solver.pool import PoolBusy, Refusal, Search, SearchAbandoned, shared_pool

from .app_settings import current_settings
from .problems import ApiError, ProblemCode

T = TypeVar("T")

SEARCHES_RUNNING = Gauge(
    "solver_searches_running", "Searches running in solver processes now.", multiprocess_mode="livesum"
)
SEARCHES_QUEUED = Gauge(
    "solver_searches_queued", "Searches waiting for a solver process now.", multiprocess_mode="livesum"
)
SEARCH_REFUSALS = Counter(
    "solver_refusals",
    "Searches not answered, by reason: queue-full (503 solver-busy at once), client-gone "
    "(the client closed its connection; the search was stopped).",
    ["reason"],
)
for _reason in Refusal:
    SEARCH_REFUSALS.labels(_reason.value)  # every reason shows, at 0, from the start


class PoolMetrics:
    """The pool's listener: its counts and refusals as Prometheus metrics."""

    def changed(self, running: int, queued: int) -> None:
        if running:
            SEARCHES_RUNNING.inc(running)
        if queued:
            SEARCHES_QUEUED.inc(queued)

    def refused(self, reason: Refusal) -> None:
        SEARCH_REFUSALS.labels(reason.value).inc()


POOL_METRICS = PoolMetrics()


GUNICORN_SOCKET = "gunicorn.socket"  # the WSGI environ's key of the client's socket, under gunicorn


def client_gone(wsgi: Mapping[str, Any]) -> Callable[[], bool] | None:
    """A check that the request's client closed its connection, or None where the
    server gives no socket (the test client, ``flask run``).

    Closed means the peer shut its side (even with bytes still unread), the socket is
    in error, or it reads as EOF; a client that sent its next request on a kept-alive
    connection is still there."""
    sock = wsgi.get(GUNICORN_SOCKET)
    if not isinstance(sock, socket.socket):
        return None

    def gone() -> bool:
        try:
            poller = select.poll()
            poller.register(sock, select.POLLIN | select.POLLRDHUP)
            events = poller.poll(0)
            if not events:
                return False
            if events[0][1] & (select.POLLRDHUP | select.POLLERR | select.POLLHUP | select.POLLNVAL):
                return True
            return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except (OSError, ValueError):  # reset, or closed on our side
            return True

    return gone


def run_search(search: Search[T]) -> T:
    """The search's answer, from this process's solver pool (503 ``solver-busy`` with
    ``Retry-After`` when it is full or when the client has gone)."""
    solver = current_settings().solver
    pool = shared_pool(solver.processes, solver.queue, POOL_METRICS)
    try:
        return pool.run(search, client_gone(flask.request.environ))
    except PoolBusy as busy:
        raise ApiError(
            ProblemCode.SOLVER_BUSY,
            f"every solver process is busy ({max(solver.processes, 1)}) and {solver.queue} search(es) wait already; "
            f"retry after {busy.retry_after} s",
            headers={"Retry-After": str(busy.retry_after)},
        ) from None
    except SearchAbandoned:
        raise ApiError(
            ProblemCode.SOLVER_BUSY,
            "the client closed its connection: the search was stopped",
            headers={"Retry-After": "1"},
        ) from None
