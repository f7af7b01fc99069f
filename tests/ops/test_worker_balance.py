"""Keep-alive connections spread over gunicorn's workers (service.gunicorn_worker).

Every worker waits on the one listening socket. Without a bound, a burst of keep-alive
connections (wrk's, or a balancer's pool) went mostly to the worker the scheduler ran first
and stayed there, often all of them: one core of two served the whole load. A worker now
accepts at once only up to its share of connections (one per thread at first) and leaves
the next ones in the backlog briefly for another worker; one left by every other worker it
still takes, doubling its share. The first tests drive that rule on
one worker in-process, with a real listening socket; the rest run gunicorn as `make run`
starts it (2 workers x 4 threads) on loopback.
"""

from __future__ import annotations

import http.client
import logging
import os
import selectors
import signal
import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest
from gunicorn.config import Config

from service.gunicorn_worker import WholeRequestWorker
from tests.ops.servers import Backend, connections_by_worker, needs_the_service_worker, wait_for

WORKERS = 2
THREADS = 4
BURST = 16  # wrk's connections in bench/http_load_bench.py
BURSTS = 5


# --- the rule on one worker, in-process ------------------------------------------------------

@contextmanager
def worker_on_listener(workers: int) -> Iterator[tuple[WholeRequestWorker, socket.socket]]:
    """A worker of a ``workers``-worker server (``THREADS`` threads), accepting on a
    loopback listener, with its poller but no thread pool and no main loop."""
    cfg = Config()
    cfg.set("workers", workers)
    cfg.set("threads", THREADS)
    listener = socket.create_server(("127.0.0.1", 0))
    worker = WholeRequestWorker(1, os.getpid(), [listener], None, 30, cfg, logging.getLogger("test"))
    worker.configure(max_body_bytes=1000, read_seconds=5.0)
    worker.poller = selectors.DefaultSelector()
    try:
        worker.set_accept_enabled(True)
        yield worker, listener
    finally:
        for waiting in list(worker.waiting.values()):
            worker.drop(waiting)
        worker.poller.close()
        worker.tmp.close()
        listener.close()


def connect(listener: socket.socket, count: int, stack: ExitStack) -> None:
    """``count`` connections to ``listener``, in its backlog until accepted."""
    for _ in range(count):
        stack.enter_context(socket.create_connection(listener.getsockname()))


def accept_waiting(worker: WholeRequestWorker, listener: socket.socket) -> None:
    """What the worker's loop does while it polls the listener and a connection waits."""
    while worker._accepting and readable(listener):
        worker.accept(listener)


def readable(listener: socket.socket) -> bool:
    with selectors.DefaultSelector() as selector:
        selector.register(listener, selectors.EVENT_READ)
        return bool(selector.select(0))


def test_a_worker_accepts_its_share_at_once_then_leaves_the_next_connection_waiting() -> None:
    with worker_on_listener(WORKERS) as (worker, listener), ExitStack() as clients:
        connect(listener, THREADS + 1, clients)
        worker.accept(listener)
        assert worker.nr_conns == THREADS, "one connection per thread, in one go"
        worker.accept(listener)
        assert worker.accept_deferred_until and not worker._accepting, "the listener is no longer polled"
        assert readable(listener), "the next connection stays in the backlog, for another worker"
        worker.set_accept_enabled(True)  # what gthread's loop asks below worker_connections
        assert not worker._accepting, "not while the deferral runs"


def test_a_connection_no_other_worker_took_is_accepted_and_the_share_doubles() -> None:
    with worker_on_listener(WORKERS) as (worker, listener), ExitStack() as clients:
        connect(listener, 3 * THREADS, clients)
        accept_waiting(worker, listener)
        worker.accept_deferred()  # its deferral is over: the connections are still waiting
        assert worker.share == 2 * THREADS and worker._accepting
        accept_waiting(worker, listener)
        assert worker.nr_conns == 2 * THREADS and readable(listener)
        worker.accept_deferred()
        accept_waiting(worker, listener)
        assert worker.nr_conns == 3 * THREADS and not readable(listener), "every connection taken"


def test_a_deferral_another_worker_answered_leaves_the_share_as_it_was() -> None:
    with worker_on_listener(WORKERS) as (worker, listener), ExitStack() as clients:
        connect(listener, THREADS + 1, clients)
        accept_waiting(worker, listener)
        other, _ = listener.accept()  # another worker takes the waiting connection
        other.close()
        worker.accept_deferred()
        assert worker.share == THREADS and worker.nr_conns == THREADS and worker._accepting


def test_a_stopping_worker_ends_its_deferral_without_accepting() -> None:
    with worker_on_listener(WORKERS) as (worker, listener), ExitStack() as clients:
        connect(listener, THREADS + 1, clients)
        accept_waiting(worker, listener)
        worker.alive = False  # SIGTERM: the connection is left to the backlog (and the next worker)
        worker.accept_deferred()
        assert worker.nr_conns == THREADS and not worker.accept_deferred_until and readable(listener)


def test_the_share_falls_back_as_connections_close() -> None:
    with worker_on_listener(WORKERS) as (worker, listener), ExitStack() as clients:
        connect(listener, 4 * THREADS, clients)
        accept_waiting(worker, listener)
        worker.accept_deferred()
        accept_waiting(worker, listener)
        worker.accept_deferred()
        accept_waiting(worker, listener)
        assert worker.share == 4 * THREADS and worker.nr_conns == 4 * THREADS
        for waiting in list(worker.waiting.values())[:3 * THREADS]:
            worker.drop(waiting)
        connect(listener, 1, clients)
        worker.accept(listener)  # 4 held: the share falls to twice that
        assert worker.share == 2 * THREADS and worker.nr_conns == THREADS + 1


def test_a_lone_worker_never_defers() -> None:
    with worker_on_listener(1) as (worker, listener), ExitStack() as clients:
        connect(listener, 5 * THREADS, clients)
        accept_waiting(worker, listener)
        assert worker.nr_conns == 5 * THREADS and not worker.accept_deferred_until


def test_taking_connections_in_one_go_stops_at_worker_connections() -> None:
    with worker_on_listener(1) as (worker, listener), ExitStack() as clients:
        worker.worker_connections = 3  # as init_process lowers it to fit the descriptor limit
        connect(listener, 5, clients)
        worker.accept(listener)
        assert worker.nr_conns == 3 and readable(listener)


# --- real gunicorn on loopback --------------------------------------------------------------

@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    server = Backend("balance", tmp_path_factory.mktemp("balance"), workers=WORKERS, threads=THREADS)
    try:
        server.start()
        # /readyz answered: one worker is up; the other may still be loading the app.
        wait_for("every worker to accept", lambda: all(spread(server)), 30)
        yield server
    finally:
        server.kill()


def burst(port: int, count: int) -> list[http.client.HTTPConnection]:
    """``count`` keep-alive connections, all opened before the first request (as wrk and a
    balancer's pool do), each then answered once."""
    connections = [http.client.HTTPConnection("127.0.0.1", port, timeout=30) for _ in range(count)]
    for c in connections:
        c.connect()
    for c in connections:
        c.request("GET", "/healthz")
        response = c.getresponse()
        response.read()
        assert response.status == 200 and not response.will_close
    return connections


def held(server: Backend) -> dict[int, int]:
    return connections_by_worker(server.pid, server.port)


def close_all(server: Backend, connections: list[http.client.HTTPConnection]) -> None:
    for c in connections:
        c.close()
    wait_for("the workers to close the connections", lambda: sum(held(server).values()) == 0, 10)


def spread(server: Backend) -> list[int]:
    """The connections of one burst each worker took, fewest first."""
    connections = burst(server.port, BURST)
    try:
        return sorted(held(server).values())
    finally:
        close_all(server, connections)


@needs_the_service_worker
def test_bursts_of_keep_alive_connections_spread_over_the_workers(backend: Backend) -> None:
    spreads = [spread(backend) for _ in range(BURSTS)]
    assert all(sum(s) == BURST for s in spreads), spreads
    # Each worker takes its first THREADS at once; the rest alternate between the workers.
    # On a loaded machine a worker's loop may miss its turn within a deferral now and then
    # (13+3 was seen under load), so: every burst leaves each worker at least 2, and most
    # bursts at least THREADS. The worker before the share rule failed both (0+16, 1+15).
    assert all(len(s) == WORKERS and s[0] >= 2 for s in spreads), spreads
    assert sorted(s[0] for s in spreads)[BURSTS // 2] >= THREADS, spreads


def test_a_worker_left_alone_accepts_every_connection(backend: Backend) -> None:
    """One worker stopped (SIGSTOP, as if stuck): the other takes the whole burst, past its
    share, and answers every connection."""
    stuck, awake = backend.worker_pids()
    os.kill(stuck, signal.SIGSTOP)
    try:
        connections = burst(backend.port, BURST)
        try:
            assert held(backend) == {stuck: 0, awake: BURST}
        finally:
            for c in connections:
                c.close()
    finally:
        os.kill(stuck, signal.SIGCONT)
    wait_for("the workers to close the connections", lambda: sum(held(backend).values()) == 0, 10)
