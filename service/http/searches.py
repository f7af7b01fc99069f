"""Where the HTTP layer hands searches (solve, hint, winnable deals) to the solver pool.

:func:`run_search` runs a search in this process's :class:`~service.solver.pool.SolverPool`,
sized by the app's settings (``SOLVER_PROCESSES``, ``SOLVER_QUEUE``), and turns the pool's
refusals and failures into problems, each a 503:

- ``solver-busy``, with ``Retry-After``: the pool is full (answered at once, for a solve or a
  hint before its body is validated or its state parsed: :func:`refuse_unless_room`), or the
  search waited in the queue as long as it may (until the searches running when it came
  must be out), or it ran past its budget and grace because the CPU was too busy for it to
  get its share (its work dropped: an answer cut by the clock would differ from run to run).
  Overload: behind HAProxy it may be retried on another server.
- ``solver-failed``, with ``Retry-After: 1``: the search's solver process died (it was
  replaced), or none could start (logged at error level).
  The answer is lost, not wrong, so asking again, here or on another server, may succeed;
  a 500 would say the service has a bug and would not be retried. A search that raises in
  its process is such a bug: that stays a 500 ``internal-error``, logged with its trace.
- ``client-gone``: the client closed its connection while its search waited or ran; the
  search was stopped. Nobody reads this answer, but WSGI has no way to end a request
  without one, and HTTP has no status for it (nginx's 499 is not HTTP). It has a code of its
  own so that it is never counted or logged as overload (``solver-busy``): the metrics and
  the access log tell the two apart by code, and ``solver_refusals_total`` counts it under
  ``client-gone``.

While a search waits or runs, the pool asks :func:`client_gone` whether the client has
closed its connection (under gunicorn, whose socket the WSGI environ carries; the test
client has none), and stops the search if so.

The metrics of the pool live here, not in the solver: searches running and queued (gauges
summed over gunicorn's workers, ``livesum``) and refusals by reason (a fixed set).
"""

from __future__ import annotations

import logging
import select
import socket
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import flask
from prometheus_client import Counter, Gauge

from service.solver.pool import PoolBusy, Refusal, Search, SearchAbandoned, SolverFailed, SolverPool, shared_pool

from .app_settings import current_settings
from .body import GUNICORN_SOCKET
from .problems import ApiError, ProblemCode

T = TypeVar("T")
log = logging.getLogger("service.http")

SEARCHES_RUNNING = Gauge(
    "solver_searches_running", "Searches running in solver processes now.", multiprocess_mode="livesum"
)
SEARCHES_QUEUED = Gauge(
    "solver_searches_queued", "Searches waiting for a solver process now.", multiprocess_mode="livesum"
)
SEARCH_REFUSALS = Counter(
    "solver_refusals",
    "Searches not answered, by reason: queue-full (503 solver-busy at once), queue-timeout "
    "(503 solver-busy after waiting as long as a search may), overrun (503 solver-busy: the "
    "search ran past its budget and grace for lack of CPU), client-gone (the client closed "
    "its connection; the search was stopped).",
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


# The peer shut its side: a poll event of Linux only; elsewhere the peek below sees the EOF.
POLLRDHUP: int = getattr(select, "POLLRDHUP", 0)


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
            poller.register(sock, select.POLLIN | POLLRDHUP)
            events = poller.poll(0)
            if not events:
                return False
            if events[0][1] & (POLLRDHUP | select.POLLERR | select.POLLHUP | select.POLLNVAL):
                return True
            return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except (OSError, ValueError):  # reset, or closed on our side
            return True

    return gone


def this_pool() -> SolverPool:
    """This process's solver pool, sized by the app's settings."""
    solver = current_settings().solver
    return shared_pool(solver.processes, solver.queue, POOL_METRICS, solver.cpus)


def busy(refusal: PoolBusy) -> ApiError:
    """The 503 ``solver-busy`` problem of a refusal."""
    return ApiError(ProblemCode.SOLVER_BUSY, str(refusal), headers={"Retry-After": str(refusal.retry_after)})


def refuse_unless_room() -> None:
    """503 ``solver-busy`` at once when the pool has no room for another search (every
    process busy, the queue full): called before the request's body is validated and its
    state parsed, so that a flood of searches costs little per refusal
    (:meth:`~service.solver.pool.SolverPool.has_room`)."""
    pool = this_pool()
    retry_after = pool.has_room()
    if retry_after is not None:
        raise busy(PoolBusy.full(pool.slots, pool.queue, retry_after))


def run_search(search: Search[T]) -> T:
    """The search's answer, from this process's solver pool; a refusal or a failure of the
    pool as a 503 problem (see the module's docstring)."""
    pool = this_pool()
    try:
        return pool.run(search, client_gone(flask.request.environ))
    except PoolBusy as refused:  # SearchOverran included
        raise busy(refused) from None
    except SolverFailed as failed:
        log.error("solver process failed: %s", failed, exc_info=failed.__cause__ is not None)
        raise ApiError(
            ProblemCode.SOLVER_FAILED,
            "the search's solver process failed and was replaced; ask again",
            headers={"Retry-After": "1"},
        ) from None
    except SearchAbandoned:
        raise ApiError(ProblemCode.CLIENT_GONE, "the client closed its connection: the search was stopped") from None
