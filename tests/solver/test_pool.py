"""The pool of solver processes (service/solver/pool.py): same answers as the solver in
process, refusal at once when full, a bounded wait in the queue, abandoned and overrunning
searches stopped (their processes really end), dead processes replaced, no process left
running after the pool closes or when a replacement cannot start, the counts the
metrics show, and solver processes on the CPUs given to them (``SOLVER_CPUS``).

The admission rules (slots, queue, refusal, leaving the queue) are checked first without
processes, on a pool that runs searches in the calling thread (quick). The tests marked
slow share one pool of real processes (the fork server starts once); their long searches
(a 10 s Forty Thieves solve) are always ended early, by the same client-gone check that
serves closed connections, so each takes well under a second once the pool is warm.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY

from service.engine.registry import get_game
from service.http.searches import POOL_METRICS
from service.settings import SOLVER_HARD_CAP_SECONDS, check_searches_leave_threads, read_settings
from service.solver import Limits, SolveResult, first_winnable_deal, hint, solve_position
from service.solver import settings as solver_settings
from service.solver.pool import (
    POLL_SECONDS,
    PoolBusy,
    Refusal,
    Search,
    SearchAbandoned,
    SearchFailed,
    SearchOverran,
    SolverFailed,
    SolverPool,
    SolverProcess,
)
from service.solver.settings import cpus_left_for_play, hold_seconds, longest_search_seconds
from service.solver.worker import SOLVER_NICENESS

LONG = 10.0  # the budget of a search that runs until the test stops it


@pytest.fixture(scope="module")
def pool() -> Iterator[SolverPool]:
    """One process and one place in the queue; warm (its first process started)."""
    pool = SolverPool(1, 1, POOL_METRICS)
    game = get_game("penguin")
    pool.run(Search(solve_position, game, (game.initial_state(1), Limits(1, 1000)), 1))
    yield pool
    pool.close()


def long_search() -> Search[SolveResult]:
    game = get_game("forty-thieves")
    return Search(solve_position, game, (game.initial_state(3), Limits(LONG, 10**7)), LONG)


class Client:
    """A search run in a thread, as a request would, whose client can leave."""

    def __init__(self, pool: SolverPool, search: Search[Any]) -> None:
        self.left = threading.Event()
        self.outcome: list[Any] = []
        self.thread = threading.Thread(target=self.run, args=(pool, search), daemon=True)
        self.thread.start()

    def run(self, pool: SolverPool, search: Search[Any]) -> None:
        try:
            self.outcome.append(pool.run(search, self.left.is_set))
        except Exception as e:
            self.outcome.append(e)

    def leave(self) -> float:
        """Close the connection; the seconds until the pool gave the thread back."""
        started = time.monotonic()
        self.left.set()
        self.thread.join(5)
        assert not self.thread.is_alive()
        return time.monotonic() - started


def wait_until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def same(a: SolveResult, b: SolveResult) -> bool:
    return (a.result, a.moves, a.states, a.stopped_by) == (b.result, b.moves, b.states, b.stopped_by)


def refusals(reason: Refusal) -> float:
    return REGISTRY.get_sample_value("solver_refusals_total", {"reason": reason.value}) or 0.0


def assert_ended(process: SolverProcess) -> None:
    """The process really ended: the fork server reported its exit (killed: a negative
    code), reaped it, and its pid is gone."""
    process.process.join(2)
    assert process.process.exitcode is not None
    if os.path.isdir("/proc"):
        wait_until(lambda: not os.path.exists(f"/proc/{process.pid}"), 2)


def quick_search() -> Search[SolveResult]:
    game = get_game("penguin")
    return Search(solve_position, game, (game.initial_state(1), Limits(1, 10**6)), 1)


# --- admission, without processes ----------------------------------------------------------

def blocked(game: Any, release: threading.Event) -> str:
    """A search that runs until the test releases it."""
    assert release.wait(5)
    return "done"


def test_a_full_pool_refuses_at_once_and_a_queued_search_can_leave() -> None:
    pool = SolverPool(0, 1, POOL_METRICS)
    game = get_game("penguin")
    release = threading.Event()
    running = Client(pool, Search(blocked, game, (release,), 4))
    wait_until(lambda: pool.counts() == (1, 0))
    queued = Client(pool, Search(blocked, game, (release,), 4))
    wait_until(lambda: pool.counts() == (1, 1))
    refused_before = REGISTRY.get_sample_value("solver_refusals_total", {"reason": Refusal.QUEUE_FULL.value}) or 0
    started = time.perf_counter()
    with pytest.raises(PoolBusy) as busy:
        pool.run(Search(blocked, game, (release,), 4))
    assert time.perf_counter() - started < 0.05
    assert busy.value.retry_after == 4  # the running search's budget, rounded up
    assert REGISTRY.get_sample_value("solver_refusals_total", {"reason": Refusal.QUEUE_FULL.value}) == refused_before + 1
    assert queued.leave() < POLL_SECONDS + 0.2
    assert isinstance(queued.outcome[0], SearchAbandoned)
    assert pool.counts() == (1, 0)
    release.set()
    running.thread.join(5)
    assert running.outcome == ["done"] and pool.counts() == (0, 0)


def test_room_is_told_before_a_search_is_asked() -> None:
    """has_room: None while a search would run or queue; once full, the seconds to wait,
    counted as a queue-full refusal (the HTTP layer refuses then, before reading the body)."""
    pool = SolverPool(0, 1, POOL_METRICS)
    game = get_game("penguin")
    release = threading.Event()
    assert pool.has_room() is None
    running = Client(pool, Search(blocked, game, (release,), 3))
    wait_until(lambda: pool.counts() == (1, 0))
    assert pool.has_room() is None  # it would queue
    queued = Client(pool, Search(blocked, game, (release,), 3))
    wait_until(lambda: pool.counts() == (1, 1))
    before = refusals(Refusal.QUEUE_FULL)
    assert pool.has_room() == 3
    assert refusals(Refusal.QUEUE_FULL) == before + 1
    release.set()
    for client in (running, queued):
        client.thread.join(5)
    assert pool.has_room() is None and pool.counts() == (0, 0)


def test_queued_searches_start_in_order_as_places_free() -> None:
    pool = SolverPool(0, 2)
    game = get_game("penguin")
    releases = [threading.Event() for _ in range(3)]
    clients = []
    for i, release in enumerate(releases):
        clients.append(Client(pool, Search(blocked, game, (release,), 4)))
        wait_until(lambda i=i: sum(pool.counts()) == i + 1)
    assert pool.counts() == (1, 2)
    for i, release in enumerate(releases):
        release.set()
        clients[i].thread.join(5)
        assert clients[i].outcome == ["done"]
        assert all(not c.outcome for c in clients[i + 1:])  # the later ones still wait
    assert pool.counts() == (0, 0)


def test_a_queued_search_waits_only_until_the_running_ones_must_be_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A running search holds its place at most hold_seconds(budget) (here its budget
    alone: no ping, grace or stop); a search queued behind it gives up then, refused as
    busy, so that no request outlasts longest_search_seconds."""
    for name in ("PING_SECONDS", "KILL_GRACE_SECONDS", "STOP_SECONDS"):
        monkeypatch.setattr(solver_settings, name, 0.0)
    pool = SolverPool(0, 1, POOL_METRICS)
    game = get_game("penguin")
    release = threading.Event()
    running = Client(pool, Search(blocked, game, (release,), 0.5))  # overruns: it waits for the test
    wait_until(lambda: pool.counts() == (1, 0))
    timed_out_before, full_before = refusals(Refusal.QUEUE_TIMEOUT), refusals(Refusal.QUEUE_FULL)
    started = time.monotonic()
    with pytest.raises(PoolBusy, match="no solver process came free") as busy:
        pool.run(Search(blocked, game, (release,), 0.5))
    assert 0.3 < time.monotonic() - started < 0.5 + POLL_SECONDS
    assert busy.value.retry_after == 1
    assert refusals(Refusal.QUEUE_TIMEOUT) == timed_out_before + 1 and refusals(Refusal.QUEUE_FULL) == full_before
    assert pool.counts() == (1, 0)
    release.set()
    running.thread.join(5)
    assert running.outcome == ["done"] and pool.counts() == (0, 0)


def test_the_longest_search_request_is_two_holds_of_the_budget() -> None:
    """What HAProxy's search timeout is checked against: a wait behind a running search,
    then a search of its own, each held at most budget + ping + grace + stop."""
    assert hold_seconds(10.0) == 10.0 + solver_settings.PING_SECONDS + solver_settings.KILL_GRACE_SECONDS + solver_settings.STOP_SECONDS
    assert longest_search_seconds(SOLVER_HARD_CAP_SECONDS) == 2 * hold_seconds(SOLVER_HARD_CAP_SECONDS)
    assert longest_search_seconds(SOLVER_HARD_CAP_SECONDS) < 75  # HAProxy's search timeout (deploy/haproxy.cfg)


def test_the_metrics_show_searches_running_and_queued() -> None:
    def gauges() -> tuple[float, float]:
        return (REGISTRY.get_sample_value("solver_searches_running") or 0.0,
                REGISTRY.get_sample_value("solver_searches_queued") or 0.0)

    before = gauges()
    pool = SolverPool(0, 1, POOL_METRICS)
    game = get_game("penguin")
    release = threading.Event()
    running = Client(pool, Search(blocked, game, (release,), 4))
    queued = Client(pool, Search(blocked, game, (release,), 4))
    wait_until(lambda: gauges() == (before[0] + 1, before[1] + 1))
    gone_before = REGISTRY.get_sample_value("solver_refusals_total", {"reason": Refusal.CLIENT_GONE.value}) or 0
    queued.leave()
    assert gauges() == (before[0] + 1, before[1])
    assert REGISTRY.get_sample_value("solver_refusals_total", {"reason": Refusal.CLIENT_GONE.value}) == gone_before + 1
    release.set()
    running.thread.join(5)
    assert gauges() == before


def test_without_processes_searches_run_in_the_calling_thread() -> None:
    pool = SolverPool(0, 0)
    game = get_game("penguin")
    seen: list[int] = []

    def note_thread(game: Any, state: Any) -> int:
        seen.append(threading.get_ident())
        return len(state.piles)

    assert pool.run(Search(note_thread, game, (game.initial_state(1),), 1)) == len(game.initial_state(1).piles)
    assert seen == [threading.get_ident()]


# --- solver processes (slow: they start processes) ------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize(("game_id", "deal", "max_states"), [
    ("penguin", 1, 10**6), ("penguin", 2, 10**6), ("penguin", 7, 300),
    ("small-billee", 1, 5000), ("small-billee", 2, 5000), ("small-billee", 3, 400),
])
def test_the_pool_answers_as_the_solver_in_process(pool: SolverPool, game_id: str, deal: int, max_states: int) -> None:
    """Position limits only (no time limit reached): the searches are deterministic."""
    game = get_game(game_id)
    args = (game.initial_state(deal), Limits(30, max_states))
    assert same(pool.run(Search(solve_position, game, args, 30)), solve_position(game, *args))


@pytest.mark.slow
def test_hints_and_winnable_deals_through_the_pool(pool: SolverPool) -> None:
    game = get_game("penguin", {"cells": 7})
    args = (game.initial_state(3), Limits(30, 10**6))
    given, here = pool.run(Search(hint, game, args, 30)), hint(game, *args)
    assert (given.move, given.reason.split(" found in")[0], given.winnable) == (here.move, here.reason.split(" found in")[0], here.winnable)
    found = pool.run(Search(first_winnable_deal, game, (5, 5.0, 3, 10**6, 30.0), 30))
    assert found == first_winnable_deal(game, 5, 5.0, 3, 10**6, 30.0)


@pytest.mark.slow
def test_a_full_pool_of_processes_refuses_at_once(pool: SolverPool) -> None:
    running = Client(pool, long_search())
    wait_until(lambda: pool.counts() == (1, 0))
    queued = Client(pool, long_search())
    wait_until(lambda: pool.counts() == (1, 1))
    refused_before = REGISTRY.get_sample_value("solver_refusals_total", {"reason": Refusal.QUEUE_FULL.value}) or 0
    started = time.perf_counter()
    with pytest.raises(PoolBusy) as busy:
        pool.run(long_search())
    assert time.perf_counter() - started < 0.05
    assert 1 <= busy.value.retry_after <= LONG
    assert REGISTRY.get_sample_value("solver_refusals_total", {"reason": Refusal.QUEUE_FULL.value}) == refused_before + 1
    assert queued.leave() < POLL_SECONDS + 0.5
    assert isinstance(queued.outcome[0], SearchAbandoned)
    assert running.leave() < 1.0
    assert isinstance(running.outcome[0], SearchAbandoned)
    assert pool.counts() == (0, 0)


@pytest.mark.slow
def test_a_search_whose_client_left_stops_and_its_process_is_replaced(pool: SolverPool) -> None:
    running = Client(pool, long_search())
    wait_until(lambda: pool.counts() == (1, 0))
    time.sleep(0.3)  # the search is under way in its process
    [worker] = pool.processes_in_use()
    assert running.leave() < 1.0
    assert isinstance(running.outcome[0], SearchAbandoned)
    assert_ended(worker)
    assert worker.process.exitcode == -signal.SIGKILL  # killed, not ended by itself
    assert len(pool.pids()) == 1 and worker.pid not in pool.pids()  # its replacement waits, idle
    game = get_game("penguin")
    started = time.monotonic()
    pool.run(Search(solve_position, game, (game.initial_state(2), Limits(1, 1000)), 1))
    assert time.monotonic() - started < 1.0


@pytest.mark.slow
def test_a_waiting_search_starts_when_the_running_one_ends(pool: SolverPool) -> None:
    running = Client(pool, long_search())
    wait_until(lambda: pool.counts() == (1, 0))
    game = get_game("penguin")
    waiting = Client(pool, Search(solve_position, game, (game.initial_state(1), Limits(1, 10**6)), 1))
    wait_until(lambda: pool.counts() == (1, 1))
    running.leave()
    waiting.thread.join(5)
    assert waiting.outcome[0].result == "solved"
    assert pool.counts() == (0, 0)


@pytest.mark.slow
def test_a_killed_process_is_replaced(pool: SolverPool) -> None:
    game = get_game("penguin")
    quick = Search(solve_position, game, (game.initial_state(1), Limits(1, 10**6)), 1)
    [idle] = pool.pids()
    os.kill(idle, signal.SIGKILL)  # dies while idle: the next search gets a new process
    assert pool.run(quick).result == "solved"
    assert idle not in pool.pids()
    running = Client(pool, long_search())  # dies during a search: that search fails, the next runs
    wait_until(lambda: pool.counts() == (1, 0) and bool(pool.processes_in_use()))
    time.sleep(0.3)  # past the ping that checks an idle process: the search is under way
    [busy] = pool.processes_in_use()
    assert busy.pid is not None
    os.kill(busy.pid, signal.SIGKILL)
    running.thread.join(5)
    assert isinstance(running.outcome[0], SolverFailed)
    assert f"exit code {-signal.SIGKILL}" in str(running.outcome[0])  # read after the fork server reported it
    assert pool.processes_in_use() == [] and len(pool.pids()) == 1
    assert pool.run(quick).result == "solved"


def sleeper(game: Any, seconds: float) -> str:
    """A search that reads no clock: only the kill stops it before ``seconds``."""
    time.sleep(seconds)
    return "done"


@pytest.mark.slow
def test_a_search_past_its_budget_and_grace_stops_itself(pool: SolverPool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-process safety cap: the search raises, its process answers the overrun
    (a PoolBusy: 503 solver-busy, never an answer cut by the clock) and stays."""
    monkeypatch.setattr(solver_settings, "OVERRUN_GRACE_SECONDS", 0.3)
    game = get_game("forty-thieves")
    overrunning = Search(solve_position, game, (game.initial_state(3), Limits(LONG, 10**7)), 0.2)  # says 0.2 s, runs 10
    [idle] = pool.pids()
    before = refusals(Refusal.OVERRUN)
    started = time.monotonic()
    with pytest.raises(SearchOverran, match="did not get enough of the CPU") as overran:
        pool.run(overrunning)
    assert 0.5 <= time.monotonic() - started < 1.5  # its cap: 0.2 s of budget and 0.3 s of grace
    assert isinstance(overran.value, PoolBusy) and overran.value.retry_after == 1
    assert refusals(Refusal.OVERRUN) == before + 1
    assert pool.pids() == [idle] and pool.counts() == (0, 0)  # the same process, idle again
    assert pool.run(quick_search()).result == "solved"


@pytest.mark.slow
def test_a_search_past_its_budget_and_grace_is_killed(pool: SolverPool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A search that does not stop itself (no clock read) is killed at budget and kill
    grace: also an overrun (503 solver-busy), and its process is replaced."""
    monkeypatch.setattr(solver_settings, "KILL_GRACE_SECONDS", 0.3)
    running = Client(pool, Search(sleeper, get_game("penguin"), (10.0,), 0.2))  # says 0.2 s, runs 10
    wait_until(lambda: bool(pool.processes_in_use()))
    [worker] = pool.processes_in_use()
    started = time.monotonic()
    running.thread.join(5)
    assert time.monotonic() - started < 1.5  # killed 0.5 s after the search was sent
    assert isinstance(running.outcome[0], SearchOverran) and "did not answer within 0.5 s" in str(running.outcome[0])
    assert_ended(worker)
    assert pool.counts() == (0, 0) and pool.processes_in_use() == []
    assert pool.run(quick_search()).result == "solved"


@pytest.mark.slow
def test_a_search_that_raises_is_a_bug_and_keeps_its_process(pool: SolverPool) -> None:
    [idle] = pool.pids()
    with pytest.raises(SearchFailed, match="failed in the solver process"):
        pool.run(Search(solve_position, get_game("penguin"), ("not a state", Limits(1, 1000)), 1))
    assert pool.pids() == [idle]


@pytest.mark.slow
def test_a_search_ending_after_the_pool_closed_stops_its_process() -> None:
    pool = SolverPool(1, 0)
    game = get_game("forty-thieves")
    running = Client(pool, Search(solve_position, game, (game.initial_state(3), Limits(1.0, 10**7)), 1.0))
    wait_until(lambda: bool(pool.processes_in_use()))
    [worker] = pool.processes_in_use()
    pool.close()
    running.thread.join(5)
    assert running.outcome[0].result == "unknown"  # the search itself ended well
    assert_ended(worker)
    assert pool.pids() == [] and pool.processes_in_use() == []


@pytest.mark.slow
def test_a_replacement_that_cannot_start_masks_nothing_and_leaks_nothing(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    pool = SolverPool(1, 0)
    try:
        running = Client(pool, long_search())
        wait_until(lambda: bool(pool.processes_in_use()))
        time.sleep(0.3)
        [worker] = pool.processes_in_use()

        def cannot_start() -> SolverProcess:
            raise OSError("no fork today")

        monkeypatch.setattr(pool, "new_process", cannot_start)
        assert running.leave() < 1.0
        assert isinstance(running.outcome[0], SearchAbandoned)  # the search's own outcome, not the start's error
        assert f"could not replace the solver process {worker.pid}" in caplog.text
        assert_ended(worker)
        assert pool.processes_in_use() == [] and pool.pids() == [] and pool.counts() == (0, 0)
        with pytest.raises(SolverFailed, match="could not start a solver process"):  # a 503: another server may
            pool.run(quick_search())
        assert pool.processes_in_use() == [] and pool.counts() == (0, 0)
        monkeypatch.undo()
        assert pool.run(quick_search()).result == "solved"  # the next search starts a process
    finally:
        pool.close()


# --- sizing -----------------------------------------------------------------------------------

def test_searches_must_leave_play_a_thread() -> None:
    """gunicorn's start refuses a pool whose searches could hold every request thread."""
    defaults = read_settings({}).solver
    check_searches_leave_threads(defaults, 4)  # 1 running + 1 queued of 4 threads
    check_searches_leave_threads(replace(defaults, processes=0, queue=2), 4)
    for processes, queue in ((1, 3), (2, 2), (0, 3)):
        with pytest.raises(RuntimeError, match=r"SOLVER_PROCESSES.*SOLVER_QUEUE.*GUNICORN_THREADS=4"):
            check_searches_leave_threads(replace(defaults, processes=processes, queue=queue), 4)


@pytest.mark.slow
def test_solver_processes_yield_the_cpu_to_play(pool: SolverPool) -> None:
    """Niced moderately, in the normal class: play comes first, a search keeps a share of
    a busy CPU (the idle class would leave it next to nothing)."""
    [pid] = pool.pids()
    assert 0 < SOLVER_NICENESS < 19
    assert os.getpriority(os.PRIO_PROCESS, pid) == SOLVER_NICENESS
    assert os.sched_getscheduler(pid) == os.SCHED_OTHER
    assert os.getsid(pid) == pid != os.getsid(0)  # a session of its own
    solver_group, own_group = autogroup_of(pid), autogroup_of(os.getpid())
    if solver_group is not None:
        assert solver_group[1] == SOLVER_NICENESS
        assert own_group is None or own_group[0] != solver_group[0]


def autogroup_of(pid: int) -> tuple[str, int] | None:
    """The process's scheduling autogroup and its niceness, or None where it has none.

    The kernel prints "/autogroup-<n> nice <n>" for a process in an autogroup, and nothing
    for one that is not (autogroups disabled, or a task group of a cgroup, as in containers).
    """
    path = Path(f"/proc/{pid}/autogroup")
    fields = path.read_text().split() if path.exists() else []
    return (fields[0], int(fields[-1])) if fields else None


# --- CPUs of their own (SOLVER_CPUS) ----------------------------------------------------------

def cpus_of_this_process(game: Any) -> list[int]:
    """A search that answers the CPUs the process running it may use."""
    return sorted(os.sched_getaffinity(0))


def test_solver_cpus_are_read_as_a_cpu_list_and_must_leave_play_a_cpu() -> None:
    assert read_settings({}).solver.cpus == frozenset()  # the default: no pinning
    assert read_settings({"SOLVER_CPUS": "1,3-4"}).solver.cpus == {1, 3, 4}
    for bad in ("one", "2-1", "1;2", "-1", "0-99999"):
        with pytest.raises(RuntimeError, match="SOLVER_CPUS must be a CPU list"):
            read_settings({"SOLVER_CPUS": bad})
    assert cpus_left_for_play(frozenset({1}), frozenset({0, 1})) == {0}
    with pytest.raises(ValueError, match="leaves none for play"):
        cpus_left_for_play(frozenset({0, 1}), frozenset({0, 1}))
    with pytest.raises(ValueError, match=r"CPUs \[2\] are not among this server's \[0, 1\]"):
        cpus_left_for_play(frozenset({1, 2}), frozenset({0, 1}))


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="CPU affinity is Linux's")
def test_solver_processes_run_on_the_solver_cpus_only() -> None:
    """Read back in the solver process itself: pinned to the pool's CPUs, or, without them,
    on every CPU its parent may use."""
    ours = sorted(os.sched_getaffinity(0))
    for cpus, expected in ((frozenset({ours[-1]}), [ours[-1]]), (frozenset(), ours)):
        pool = SolverPool(1, 0, cpus=cpus)
        try:
            # A generous budget: the solver process runs in the idle scheduling class, so on
            # a machine busy with other work it may wait long for its CPU.
            assert pool.run(Search(cpus_of_this_process, get_game("penguin"), (), 20)) == expected
        finally:
            pool.close()
    assert sorted(os.sched_getaffinity(0)) == ours  # the calling process keeps its own
