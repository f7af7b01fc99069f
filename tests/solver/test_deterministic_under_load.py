"""The same request gets the same answer under any load (issue 25, item 4): a real gunicorn
server answers player-knowledge hints and solves of every game, and full-knowledge solves
that run out of their budget, once on a quiet machine and twice more with every CPU kept
busy by processes at niceness 0; the three answers of each request are the same, byte for
byte, but for the timings an answer reports (``stats.seconds``, ``stats.states_per_second``
and the seconds a hint's reason states: what tests/contract/record_wire_v1.py's ``normalise``
masks too). Budgets are counted in positions (service/solver/search.py's ``budget_of``); a
search cut by the clock would have visited fewer positions under load, and another answer.

A quick check comes first: every search of every game, run in the test process, decides
the same with a clock that races (1,000 s between two readings) as with the real one.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.engine.registry import game_ids, get_game
from service.http.wire import state_to_json
from service.solver import (
    Limits,
    SolveResult,
    first_winnable_deal,
    hint,
    player_hint,
    player_solve,
    solve_position,
)
from tests.contract.record_wire_v1 import HINT_TIMING
from tests.ops.servers import Backend

# A deal of each game whose player-knowledge searches sample hidden cards where the game
# has any (a full-information game searches exactly: it must repeat too).
DEAL = 7
# Full-knowledge solves that run out of their budget (stopped by "time": the positions the
# budget buys), whose positions a clock would cut under load: (game, deal, seconds).
BUDGET_BOUND = (("forty-thieves", 1, 0.5), ("boomerang", 124, 0.5))
PLAYER_SOLVE_LIMITS = {"max_seconds": 2}
# The timings of an answer, as they appear in its bytes (numbers in JSON).
TIMINGS = re.compile(rb'"(seconds|states_per_second)":\s*-?[0-9.eE+-]+')
BUSY = "while True: pass"


def masked(body: bytes) -> bytes:
    """``body`` with its timings replaced by a placeholder; every other byte kept."""
    body = TIMINGS.sub(rb'"\1":"<number>"', body)
    return HINT_TIMING.sub(r"\1 <number> s", body.decode()).encode()


def requests() -> list[tuple[str, dict[str, Any]]]:
    """Every request of the test: each game's player-knowledge hint and solve, and the
    full-knowledge solves that run out of their budget."""
    asked: list[tuple[str, dict[str, Any]]] = []
    for game_id in game_ids():
        game = get_game(game_id)
        state = state_to_json(game, game.initial_state(DEAL))
        asked.append((f"/v1/games/{game_id}/hint", {"state": state, "knowledge": "player"}))
        asked.append((f"/v1/games/{game_id}/solve", {"state": state, "knowledge": "player", "limits": PLAYER_SOLVE_LIMITS}))
    for game_id, deal, seconds in BUDGET_BOUND:
        game = get_game(game_id)
        state = state_to_json(game, game.initial_state(deal))
        asked.append((f"/v1/games/{game_id}/solve", {"state": state, "knowledge": "full", "limits": {"max_seconds": seconds}}))
    return asked


def answers(port: int) -> list[bytes]:
    """The masked body of each request, in order (each must answer 200)."""
    got = []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        for path, body in requests():
            conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
            answer = conn.getresponse()
            raw = answer.read()
            assert answer.status == 200, (path, answer.status, raw[:300])
            got.append(masked(raw))
    finally:
        conn.close()
    return got


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[Backend]:
    backend = Backend("same", tmp_path, workers=1, threads=4)
    backend.start()
    try:
        yield backend
    finally:
        backend.kill()


@pytest.fixture()
def busy_cpus() -> Iterator[None]:
    """Two busy processes per CPU at niceness 0, for as long as the test runs."""
    count = 2 * (os.cpu_count() or 1)
    procs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(count)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait(5)


def test_the_timings_alone_are_masked() -> None:
    body = b'{"move":null,"reason":"first move of a solution of 9 move(s) found in 0.02 s","stats":{"seconds":0.0123,"states":5,"states_per_second":406.0}}'
    assert masked(body) == (
        b'{"move":null,"reason":"first move of a solution of 9 move(s) found in <number> s",'
        b'"stats":{"seconds":"<number>","states":5,"states_per_second":"<number>"}}'
    )
    assert masked(body.replace(b'"states":5', b'"states":6')) != masked(body)


class RacingClock:
    """A clock that runs 1,000 s between two readings: a search that let it decide
    anything would stop at once."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1000.0
        return self.now


def decided(game_id: str) -> list[Any]:
    """What every search of ``game_id``'s deal 7 decides (all but the seconds it reports):
    player-knowledge hint and solve (with autoplay too), full-knowledge hint and solve,
    with budgets small enough that most run out of positions, and a winnable-deal search."""
    game = get_game(game_id)
    state = game.initial_state(DEAL)
    limits = Limits(0.05, 1_000_000)

    def found(r: SolveResult) -> tuple[Any, ...]:
        return (r.result, r.moves, r.states, r.stopped_by)

    hinted = [player_hint(game, state, limits, 8), hint(game, state, limits, True)]
    solved = [player_solve(game, state, limits, 8, True).search, player_solve(game, state, limits, 8).search]
    winnable = first_winnable_deal(game, 1, 0.01, 3, total_seconds=0.02)
    return [
        *[(h.move, h.reason.split(" found in ")[0], h.winnable, found(h.search), h.samples) for h in hinted],
        *[found(r) for r in solved],
        found(solve_position(game, state, limits, True)),
        (winnable.tried, winnable.found),
    ]


@pytest.mark.parametrize("game_id", game_ids())
def test_no_search_lets_the_clock_decide(game_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every answer of every game is the same when the clock races (1,000 s between two
    readings): budgets, shares of budgets between passes and samples, the tries of a
    winnable-deal search and the searches of a line for autoplay are all counted in
    positions (the compiled passes read their own clock only for the safety cap, which a
    search in the calling thread does not have)."""
    calm = decided(game_id)
    monkeypatch.setattr(time, "monotonic", RacingClock())
    assert decided(game_id) == calm


@pytest.mark.slow
def test_identical_requests_get_identical_answers_under_load(server: Backend, request: pytest.FixtureRequest) -> None:
    quiet = answers(server.port)
    request.getfixturevalue("busy_cpus")
    first = answers(server.port)
    second = answers(server.port)
    for (path, body), a, b, c in zip(requests(), quiet, first, second, strict=True):
        assert a == b == c, (path, body.get("knowledge"), a, b, c)
