"""A search never fails because play is busy (issue 25, item 3): with every CPU saturated by
play (clients posting /moves as fast as a sealed-mode server answers them), its hints and
solves still finish within their budget and grace, answer 200 (never 503 ``solver-failed``,
no overrun counted) and answer what they answer on a quiet server: their budgets are
positions, and the solver processes keep a share of a busy CPU (service/solver/worker.py's
``SOLVER_NICENESS``, a moderate niceness in the normal class, not the idle class).
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from service.solver.pool import Refusal
from service.solver.settings import KILL_GRACE_SECONDS
from tests.app_settings import TEST_RESULT_KEYS, key_for_tests
from tests.ops.servers import Backend
from tests.solver.test_deterministic_under_load import masked

pytestmark = pytest.mark.slow

GAMES = ("forty-thieves", "boomerang", "abandon-hope", "small-billee", "binary-star")
SOLVE_SECONDS = 4.0  # a sealed-mode solve's budget here (player knowledge: sampled positions)
HINT_SECONDS = 1.0  # the server's default hint budget (HINT_SECONDS)
MOVES_RULE = "/v1/games/<game:game_id>/moves"  # the endpoint label of /moves in the metrics

# One play client: posts one move to /moves over one kept-alive connection, as fast as it is
# answered, until killed (argv: port, path, body); prints nothing.
FLOOD = """
import http.client, sys
port, path, body = int(sys.argv[1]), sys.argv[2], sys.argv[3].encode()
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
while True:
    conn.request("POST", path, body, {"Content-Type": "application/json"})
    answer = conn.getresponse()
    answer.read()
    assert answer.status == 200, answer.status
"""


def post(conn: http.client.HTTPConnection, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    answer = conn.getresponse()
    return answer.status, answer.read()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    backend = Backend(
        "share", tmp_path_factory.mktemp("share"), workers=2, threads=4,
        env={
            "STATE_PROTECTION": "sealed", "STATE_KEYS": key_for_tests("k1"), "DEAL_KEYS": key_for_tests("k1"),
            "RESULT_KEYS": TEST_RESULT_KEYS, "HINT_SECONDS": str(HINT_SECONDS),
        },
    )
    backend.start()
    try:
        yield backend
    finally:
        backend.kill()


def searches(conn: http.client.HTTPConnection) -> list[tuple[str, dict[str, Any], float]]:
    """A sealed-mode hint and solve of each game's deal 5: (path, body, budget)."""
    asked = []
    for game in GAMES:
        status, dealt = post(conn, f"/v1/games/{game}/deals", {"deal": 5})
        assert status == 200, dealt
        state = json.loads(dealt)["state"]
        asked.append((f"/v1/games/{game}/hint", {"state": state}, HINT_SECONDS))
        asked.append((f"/v1/games/{game}/solve", {"state": state, "limits": {"max_seconds": SOLVE_SECONDS}}, SOLVE_SECONDS))
    return asked


def run_all(port: int, asked: list[tuple[str, dict[str, Any], float]]) -> list[tuple[int, float, bytes]]:
    """Each search in turn: status, seconds, masked body."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    got = []
    try:
        for path, body, _ in asked:
            started = time.monotonic()
            status, raw = post(conn, path, body)
            got.append((status, time.monotonic() - started, masked(raw)))
    finally:
        conn.close()
    return got


def flood(port: int, clients: int) -> list[subprocess.Popen[bytes]]:
    """``clients`` play clients posting a move of a sealed Forty Thieves deal."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    status, dealt = post(conn, "/v1/games/forty-thieves/deals", {"deal": 9})
    assert status == 200
    state = json.loads(dealt)["state"]
    status, legal = post(conn, "/v1/games/forty-thieves/legal-moves", {"state": state})
    conn.close()
    assert status == 200
    body = json.dumps({"state": state, "move": json.loads(legal)["legal_moves"][0]})
    return [
        subprocess.Popen([sys.executable, "-c", FLOOD, str(port), "/v1/games/forty-thieves/moves", body])
        for _ in range(clients)
    ]


def test_searches_finish_within_budget_and_grace_while_play_saturates_the_cpus(server: Backend) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    asked = searches(conn)
    conn.close()
    quiet = run_all(server.port, asked)
    assert all(status == 200 for status, _, _ in quiet), quiet
    moves_before = server.metric("http_requests_total", method="POST", endpoint=MOVES_RULE, status="200")
    clients = flood(server.port, 3 * (os.cpu_count() or 1))
    try:
        time.sleep(1.0)  # the flood under way
        loaded = run_all(server.port, asked)
        assert all(c.poll() is None for c in clients), "a play client failed"
    finally:
        for c in clients:
            c.kill()
        for c in clients:
            c.wait(5)
    played = server.metric("http_requests_total", method="POST", endpoint=MOVES_RULE, status="200") - moves_before
    for (path, _, budget), (status, seconds, body), (_, _, quiet_body) in zip(asked, loaded, quiet, strict=True):
        assert status == 200, (path, status, body[:300])
        assert seconds < budget + KILL_GRACE_SECONDS, (path, seconds)
        assert body == quiet_body, (path, body, quiet_body)  # every position searched: the same answer
    assert server.metric("solver_refusals_total", reason=Refusal.OVERRUN.value) == 0
    assert played > 100, played  # play really was busy meanwhile
