"""The solver pool's 503s, as the contract documents them: ``solver-busy`` (a full pool
answers searches at once, with ``Retry-After``), ``solver-failed`` (a solver process killed
mid-search, with ``Retry-After``; the pool recovers), ``client-gone`` (a search whose client
left, told apart from overload); and, through a real gunicorn on loopback, a search whose
client closed its connection stops within a second and its process ends.

The quick tests fill the app's own pool (searches in the request thread under the test
settings' sizes) with a search that waits for the test; the slow ones run real solver
processes, or start gunicorn as `make run` does (one worker, one solver process, one place
in the queue).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from prometheus_client import REGISTRY

from service.engine.registry import get_game
from service.http import create_app, searches
from service.http.app_settings import settings_of
from service.http.problems import PROBLEM_JSON, ProblemCode
from service.http.searches import GUNICORN_SOCKET, POOL_METRICS, client_gone
from service.http.wire import state_to_json
from service.solver.pool import Refusal, Search, SolverPool, shared_pool
from tests.app_settings import settings_for_tests
from tests.ops.servers import Backend, child_pids, http_get, wait_for

SEARCH_OPERATIONS = ("solve", "hint", "deal_game")


def search_requests() -> list[tuple[str, dict[str, Any]]]:
    """One request of each kind that runs a search: solve, hint, winnable deal."""
    game = get_game("forty-thieves")
    state = state_to_json(game, game.initial_state(3))
    return [
        ("/v1/games/forty-thieves/solve", {"state": state}),
        ("/v1/games/forty-thieves/hint", {"state": state}),
        ("/v1/games/forty-thieves/deals", {"deal": 3, "winnable": True}),
    ]


def test_the_contract_documents_solver_busy_with_retry_after(client: Any) -> None:
    spec = client.get("/openapi.json").json
    operations = {op["operationId"]: op for path in spec["paths"].values() for op in path.values() if "operationId" in op}
    for name in SEARCH_OPERATIONS:
        assert operations[name]["responses"]["503"] == {"$ref": "#/components/responses/SERVICE_UNAVAILABLE"}, name
    assert "503" not in operations["play_move"]["responses"]
    busy = spec["components"]["responses"]["SERVICE_UNAVAILABLE"]
    assert busy["headers"]["Retry-After"]["schema"] == {"type": "integer", "minimum": 1}
    assert busy["content"][PROBLEM_JSON]["example"]["code"] == ProblemCode.SOLVER_BUSY
    for code in (ProblemCode.SOLVER_BUSY, ProblemCode.SOLVER_FAILED, ProblemCode.CLIENT_GONE):
        assert f"`{code}`" in busy["description"], code


def waiting_search(game: Any, release: threading.Event) -> None:
    assert release.wait(10)


@contextlib.contextmanager
def held_place(queue: str) -> Iterator[tuple[Flask, SolverPool]]:
    """An app whose solver pool's one place runs a search that waits for the test (its
    queue has ``queue`` places), and that pool; the search ends when the block does."""
    app = create_app(settings_for_tests(SOLVER_PROCESSES="0", SOLVER_QUEUE=queue, SOLVER_MAX_SECONDS="2"))
    solver = settings_of(app).solver
    pool = shared_pool(solver.processes, solver.queue, POOL_METRICS)
    release = threading.Event()
    holder = threading.Thread(target=pool.run, args=(Search(waiting_search, get_game("penguin"), (release,), 2),))
    holder.start()
    try:
        while pool.counts() != (1, 0):
            time.sleep(0.005)
        yield app, pool
    finally:
        release.set()
        holder.join(5)


@pytest.fixture()
def full_app() -> Iterator[Flask]:
    """An app whose solver pool is full: its one place runs a search that waits for the
    test, and its queue has no place."""
    with held_place(queue="0") as (app, _):
        yield app


@pytest.mark.parametrize(("path", "body"), search_requests(), ids=SEARCH_OPERATIONS)
def test_a_full_pool_answers_503_at_once(full_app: Flask, path: str, body: dict[str, Any]) -> None:
    client = full_app.test_client()
    started = time.perf_counter()
    r = client.post(path, json=body)
    elapsed = time.perf_counter() - started
    assert r.status_code == 503 and r.mimetype == PROBLEM_JSON
    assert r.json["code"] == ProblemCode.SOLVER_BUSY and r.json["status"] == 503
    assert 1 <= int(r.headers["Retry-After"]) <= 2
    assert elapsed < 0.1
    game = get_game("forty-thieves")  # play goes on
    state = game.initial_state(3)
    move = client.post("/v1/games/forty-thieves/legal-moves", json={"state": state_to_json(game, state)}).json
    assert move["legal_moves"]


def test_a_search_whose_client_left_is_not_counted_as_overload(monkeypatch: pytest.MonkeyPatch) -> None:
    """Queued behind a running search, the client leaves: 503 ``client-gone``, counted only
    as that refusal, never as ``solver-busy`` overload."""
    with held_place(queue="1") as (app, pool):
        monkeypatch.setattr(searches, "client_gone", lambda wsgi: lambda: True)

        def count(reason: Refusal) -> float:
            return REGISTRY.get_sample_value("solver_refusals_total", {"reason": reason.value}) or 0.0

        gone_before, full_before = count(Refusal.CLIENT_GONE), count(Refusal.QUEUE_FULL)
        path, body = search_requests()[0]
        r = app.test_client().post(path, json=body)
        assert r.status_code == 503 and r.json["code"] == ProblemCode.CLIENT_GONE
        assert "Retry-After" not in r.headers
        assert (count(Refusal.CLIENT_GONE), count(Refusal.QUEUE_FULL)) == (gone_before + 1, full_before)
        assert pool.counts() == (1, 0)


@pytest.mark.slow
def test_a_solver_process_killed_mid_search_answers_503_solver_failed_and_the_pool_recovers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = create_app(settings_for_tests(SOLVER_PROCESSES="1", SOLVER_QUEUE="1", SOLVER_MAX_SECONDS="10"))
    solver = settings_of(app).solver
    pool = shared_pool(solver.processes, solver.queue, POOL_METRICS)
    game = get_game("forty-thieves")
    body = {"state": state_to_json(game, game.initial_state(3)), "limits": {"max_seconds": 10}}
    answers: list[Any] = []
    asking = threading.Thread(target=lambda: answers.append(app.test_client().post("/v1/games/forty-thieves/solve", json=body)))
    asking.start()
    wait_for("the search to run", lambda: bool(pool.processes_in_use()), 10, 0.01)
    time.sleep(0.3)  # past the ping of an idle process: the search is under way
    [process] = pool.processes_in_use()
    assert process.pid is not None
    os.kill(process.pid, signal.SIGKILL)
    asking.join(5)
    [r] = answers
    assert r.status_code == 503 and r.mimetype == PROBLEM_JSON
    assert r.json["code"] == ProblemCode.SOLVER_FAILED and r.headers["Retry-After"] == "1"
    assert any(rec.levelno == logging.ERROR and "solver process failed" in rec.getMessage() for rec in caplog.records)
    again = app.test_client().post("/v1/games/penguin/solve", json={"state": state_to_json(get_game("penguin"), get_game("penguin").initial_state(1))})
    assert again.status_code == 200 and again.json["result"] == "solved"
    assert pool.counts() == (0, 0)


@pytest.mark.parametrize("rdhup", ["linux", "elsewhere"])
def test_the_client_gone_check_reads_the_socket_without_taking_bytes(monkeypatch: pytest.MonkeyPatch, rdhup: str) -> None:
    """With POLLRDHUP (Linux) or without it (other systems, where the peek sees the EOF)."""
    if rdhup == "elsewhere":
        monkeypatch.setattr(searches, "POLLRDHUP", 0)
    elif not searches.POLLRDHUP:
        pytest.skip("no POLLRDHUP on this system")
    assert client_gone({}) is None  # the test client gives no socket
    server_end, client_end = socket.socketpair()
    with server_end, client_end:
        gone = client_gone({GUNICORN_SOCKET: server_end})
        assert gone is not None and not gone()
        client_end.sendall(b"GET /next HTTP/1.1\r\n")  # a kept-alive client's next request
        assert not gone() and not gone()
        client_end.close()
        assert gone()
        assert server_end.recv(100) == b"GET /next HTTP/1.1\r\n"  # nothing was consumed


# --- through gunicorn -----------------------------------------------------------------------

def metric(server: Backend, name: str) -> float:
    """An unlabelled metric of the server, summed over its workers."""
    status, body = http_get(server.port, "/metrics")
    assert status == 200
    for line in body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} is not in /metrics")


def long_solve_request() -> bytes:
    """A max-budget Forty Thieves solve (10 s: it does not end by itself in the test)."""
    game = get_game("forty-thieves")
    body = json.dumps({"state": state_to_json(game, game.initial_state(3)), "limits": {"max_seconds": 10}}).encode()
    head = (
        "POST /v1/games/forty-thieves/solve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def open_solve(server: Backend) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    sock.sendall(long_solve_request())
    return sock


def post(server: Backend, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], float]:
    """Status, headers and seconds of one POST on a fresh connection."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
    try:
        started = time.perf_counter()
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        return r.status, dict(r.getheaders()), time.perf_counter() - started
    finally:
        conn.close()


def quick_solve(server: Backend) -> tuple[int, dict[str, str], float]:
    game = get_game("penguin")
    return post(server, "/v1/games/penguin/solve", {"state": state_to_json(game, game.initial_state(1))})


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """gunicorn as `make run` starts it: one worker, one solver process, one queue place."""
    backend = Backend(
        "solver", Path(tmp_path_factory.mktemp("solver-busy")), workers=1, threads=4,
        env={"SOLVER_PROCESSES": "1", "SOLVER_QUEUE": "1", "SOLVER_MAX_SECONDS": "10"},
    )
    backend.start()
    try:
        assert quick_solve(backend)[0] == 200  # the fork server and the first process start
        yield backend
    finally:
        backend.kill()


def solver_pids(server: Backend) -> set[int]:
    """The server's solver processes: the children of its workers' fork servers."""
    return {pid for worker in server.worker_pids() for child in child_pids(worker) for pid in child_pids(child)}


@pytest.mark.slow
def test_a_closed_connection_stops_its_search_within_a_second(server: Backend) -> None:
    [solver] = solver_pids(server)  # idle, warm: the one the solve will take
    sock = open_solve(server)
    wait_for("the solve to run", lambda: metric(server, "solver_searches_running") == 1, 5, 0.02)
    time.sleep(0.5)  # well under way
    sock.close()
    stopped = wait_for("the search to stop", lambda: metric(server, "solver_searches_running") == 0, 3, 0.02)
    assert stopped < 1.0
    wait_for("its process to end", lambda: not Path(f"/proc/{solver}").exists(), 1, 0.02)  # killed and reaped
    [replacement] = solver_pids(server)
    assert replacement != solver
    status, _, seconds = quick_solve(server)
    assert status == 200 and seconds < 1.0  # a process is free at once (the killed one's replacement)


@pytest.mark.slow
def test_a_full_server_answers_503_at_once_and_play_goes_on(server: Backend) -> None:
    running = open_solve(server)
    wait_for("the solve to run", lambda: metric(server, "solver_searches_running") == 1, 5, 0.02)
    queued = open_solve(server)
    wait_for("the second to wait", lambda: metric(server, "solver_searches_queued") == 1, 5, 0.02)
    try:
        for path, body in search_requests():
            status, headers, seconds = post(server, path, body)
            assert status == 503 and seconds < 0.1, (path, status, seconds)
            assert headers["Content-Type"] == PROBLEM_JSON
            assert 1 <= int(headers["Retry-After"]) <= 10
        game = get_game("forty-thieves")
        state = game.initial_state(3)
        move = state_to_json(game, state)
        legal = post(server, "/v1/games/forty-thieves/legal-moves", {"state": move})
        assert legal[0] == 200 and legal[2] < 0.5
    finally:
        queued.close()
        running.close()
    wait_for("both to stop", lambda: metric(server, "solver_searches_running") + metric(server, "solver_searches_queued") == 0, 2, 0.02)
