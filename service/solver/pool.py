"""A bounded pool of solver processes, so that searches run apart from the threads serving play.

Why: a search is CPU-bound Python. In a request thread it shares the worker's interpreter
lock with the threads that serve play, which then wait behind it, and nothing bounds how
many searches run at once. Here every search (solve, hint, winnable deal) runs in a solver
process (:mod:`.worker`, niced so play keeps the CPU): at most ``processes`` at once, with
at most ``queue`` more waiting for a process; one more is refused at once with
:class:`PoolBusy`, which says after how many seconds a place should be free (the earliest
end of a running search's budget).

Stopping: the thread that waits for a search asks ``client_gone`` every
:data:`POLL_SECONDS`. When the client has left, a queued search leaves the queue and a
running one's process is killed and replaced, so an abandoned search stops within a
second. A process that has not answered :data:`KILL_GRACE_SECONDS` after its search's
budget is killed and replaced too, as is one found dead.

How processes start: multiprocessing's ``forkserver``, lazily, on the first search that
needs one (a worker, or a test run, that never searches starts none). Not ``fork`` of the
worker itself: a gunicorn worker has threads, and a child forked while one of them holds a
lock (logging's, an import lock, the garbage-collector pause's in :mod:`.search`) can
deadlock on it. The fork server is a clean single-threaded process that imports the
solver once, on the worker's first search; each solver process is a fork of it, sharing
its memory copy-on-write and starting warm, so a killed process is replaced at once
(multiprocessing still imports the main module in each new process: a cheap one under
gunicorn or pytest). ``spawn`` would import everything again for every new process. The
processes are daemonic: when the worker exits, multiprocessing ends them; if the worker is
killed, each ends after its current search, when it finds its pipe closed.

``processes=0`` runs searches in the calling thread instead, one at a time, with the same
queue bound (tests, debugging): nothing is isolated and nothing can stop a search early.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from multiprocessing.context import BaseContext
from typing import Any, Generic, Protocol, TypeVar

from service.engine.core import Game

from .worker import PING, Job, Reply, serve

T = TypeVar("T")

POLL_SECONDS = 0.2  # how often a waiting thread asks whether its client is still there
KILL_GRACE_SECONDS = 5.0  # past its budget, a search that has not answered is killed
PING_SECONDS = 1.0  # an idle process that does not answer a ping this soon is replaced
# What the fork server imports once, so that each solver process starts warm.
PRELOAD = ["service.solver.worker"]


class Refusal(StrEnum):
    """Why a search was not answered (a metric's label: a fixed set)."""

    QUEUE_FULL = "queue-full"  # every process busy, the queue full: refused at once
    CLIENT_GONE = "client-gone"  # the client closed its connection: the search was stopped


class PoolBusy(Exception):
    """Every process is busy and the queue is full; a place should be free in ``retry_after`` s."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"solver pool busy; retry after {retry_after} s")
        self.retry_after = retry_after


class SearchAbandoned(Exception):
    """The client left while its search waited or ran; the search was stopped."""


class SolverFailed(RuntimeError):
    """The solver process died, hung past its budget, or the search raised (a bug)."""


class PoolListener(Protocol):
    """What the pool reports as it works (the HTTP layer turns it into metrics)."""

    def changed(self, running: int, queued: int) -> None:
        """The searches running and queued changed by these amounts."""

    def refused(self, reason: Refusal) -> None:
        """A search was refused or stopped for ``reason``."""


class QuietListener:
    """A listener that ignores everything."""

    def changed(self, running: int, queued: int) -> None:
        pass

    def refused(self, reason: Refusal) -> None:
        pass


@dataclass(frozen=True)
class Search(Generic[T]):
    """One search: ``function(game, *args)``, expected to end within ``budget`` seconds."""

    function: Callable[..., T]
    game: Game
    args: tuple[Any, ...]
    budget: float

    def job(self) -> Job:
        """The search as a solver process receives it (the game as its id and options)."""
        return (self.function, self.game.id, dict(self.game.options), self.args)

    def run_here(self) -> T:
        """The search in the calling thread (a pool without processes)."""
        return self.function(self.game, *self.args)


class SolverProcess:
    """One solver process and the pipe the pool talks to it through."""

    def __init__(self, context: BaseContext) -> None:
        self.conn, child_end = context.Pipe()
        self.process = context.Process(target=serve, args=(child_end,), name="patience-solver", daemon=True)  # type: ignore[attr-defined]
        self.process.start()
        child_end.close()

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def alive(self) -> bool:
        """Answers a ping: more than ``is_alive()``, which reads the exit status only
        once the fork server has reaped the process."""
        try:
            self.conn.send(PING)
            return self.conn.poll(PING_SECONDS) and self.conn.recv() == PING
        except (EOFError, OSError):
            return False

    def stop(self) -> None:
        """Kill the process (if it still runs) and wait for it, briefly."""
        self.process.kill()
        self.process.join(1.0)
        self.conn.close()


@dataclass(eq=False)
class Waiter:
    """A search in the queue: it runs once ``granted`` is set."""

    budget: float
    granted: threading.Event = field(default_factory=threading.Event)


class SolverPool:
    """At most ``processes`` searches at once (``0``: in the calling thread, one at a
    time), at most ``queue`` waiting; see the module's docstring."""

    def __init__(self, processes: int, queue: int, listener: PoolListener | None = None) -> None:
        if processes < 0 or queue < 0:
            raise ValueError("processes and queue are counts")
        self.processes = processes
        self.queue = queue
        self.slots = max(processes, 1)
        self.listener: PoolListener = listener or QuietListener()
        self.lock = threading.Lock()
        self.running: dict[object, float] = {}  # a running search's token -> the end of its budget
        self.waiting: deque[tuple[object, Waiter]] = deque()
        self.idle: list[SolverProcess] = []
        self.busy: set[SolverProcess] = set()
        self.context: BaseContext | None = None
        self.closed = False

    # --- the public side ---------------------------------------------------------------

    def run(self, search: Search[T], client_gone: Callable[[], bool] | None = None) -> T:
        """The search's answer. Raises :class:`PoolBusy` at once when full,
        :class:`SearchAbandoned` when ``client_gone()`` turns true while it waits or runs,
        :class:`SolverFailed` when its process fails."""
        token = self.admit(search.budget, client_gone)
        try:
            if self.processes == 0:
                return search.run_here()
            return self.run_in_process(search, client_gone)
        finally:
            self.release(token)

    def counts(self) -> tuple[int, int]:
        """Searches running and queued now."""
        with self.lock:
            return len(self.running), len(self.waiting)

    def pids(self) -> list[int]:
        """The process ids of the idle solver processes (tests, diagnostics)."""
        with self.lock:
            return [p.pid for p in self.idle if p.pid is not None]

    def processes_in_use(self) -> list[SolverProcess]:
        """The solver processes running a search now (tests, diagnostics)."""
        with self.lock:
            return list(self.busy)

    def close(self) -> None:
        """Stop the idle processes; searches still running keep theirs until they end."""
        with self.lock:
            self.closed = True
            idle, self.idle = self.idle, []
        for process in idle:
            process.stop()

    # --- admission: slots and the queue ---------------------------------------------------

    def admit(self, budget: float, client_gone: Callable[[], bool] | None) -> object:
        """A token holding one slot, once one is free (queued in order meanwhile)."""
        token = object()
        with self.lock:
            if len(self.running) < self.slots and not self.waiting:
                self.running[token] = time.monotonic() + budget
                self.listener.changed(1, 0)
                return token
            if len(self.waiting) >= self.queue:
                retry_after = self.retry_after()
                self.listener.refused(Refusal.QUEUE_FULL)
                raise PoolBusy(retry_after)
            waiter = Waiter(budget)
            self.waiting.append((token, waiter))
            self.listener.changed(0, 1)
        while not waiter.granted.wait(POLL_SECONDS):
            if client_gone is not None and client_gone():
                with self.lock:
                    granted = waiter.granted.is_set()
                    if not granted:
                        self.waiting.remove((token, waiter))
                        self.listener.changed(0, -1)
                if granted:
                    self.release(token)
                self.listener.refused(Refusal.CLIENT_GONE)
                raise SearchAbandoned
        return token

    def release(self, token: object) -> None:
        """Give the slot back, or straight to the first search in the queue."""
        with self.lock:
            del self.running[token]
            if self.waiting:
                next_token, waiter = self.waiting.popleft()
                self.running[next_token] = time.monotonic() + waiter.budget
                waiter.granted.set()
                self.listener.changed(0, -1)
            else:
                self.listener.changed(-1, 0)

    def retry_after(self) -> int:
        """Whole seconds until the earliest running search's budget ends (at least 1):
        then the first queued search starts and the queue has a place. Called locked."""
        ends = min(self.running.values(), default=time.monotonic() + 1)
        return max(1, math.ceil(ends - time.monotonic()))

    # --- the processes ----------------------------------------------------------------------

    def run_in_process(self, search: Search[T], client_gone: Callable[[], bool] | None) -> T:
        """Send the search to a solver process and wait for its answer. However the
        wait ends short of an answer (client gone, process dead or hung, any error), the
        process is killed and replaced: it may still be searching."""
        process = self.take_process()
        try:
            reply, value = self.exchange(process, search, client_gone)
        except BaseException:
            self.replace(process)
            raise
        with self.lock:
            self.busy.discard(process)
            self.idle.append(process)
        if reply is Reply.FAILED:
            raise SolverFailed("the search failed in the solver process:\n" + value)
        return value

    def exchange(
        self, process: SolverProcess, search: Search[Any], client_gone: Callable[[], bool] | None
    ) -> tuple[Reply, Any]:
        """The process's reply to ``search``, asking every :data:`POLL_SECONDS` meanwhile
        whether the client is still there."""
        try:
            process.conn.send(search.job())
        except OSError:
            raise SolverFailed("the solver process died before the search") from None
        kill_at = time.monotonic() + search.budget + KILL_GRACE_SECONDS
        while not process.conn.poll(POLL_SECONDS):
            if client_gone is not None and client_gone():
                self.listener.refused(Refusal.CLIENT_GONE)
                raise SearchAbandoned
            if time.monotonic() > kill_at:
                raise SolverFailed(f"the solver process did not answer within {search.budget + KILL_GRACE_SECONDS:g} s")
        try:
            reply: tuple[Reply, Any] = process.conn.recv()
        except (EOFError, OSError):
            raise SolverFailed(f"the solver process died during the search (exit code {process.process.exitcode})") from None
        return reply

    def take_process(self) -> SolverProcess:
        """An idle live process, or a new one (a dead one found idle is dropped); it
        counts as busy until it is given back or replaced."""
        while True:
            with self.lock:
                if not self.idle:
                    break
                process = self.idle.pop()
                self.busy.add(process)
            if process.alive():
                return process
            with self.lock:
                self.busy.discard(process)
            process.stop()
        process = SolverProcess(self.context or self.start_context())
        with self.lock:
            self.busy.add(process)
        return process

    def replace(self, process: SolverProcess) -> None:
        """Kill ``process`` and start its replacement, idle, so the next search finds one."""
        process.stop()
        replacement = SolverProcess(self.context or self.start_context())
        with self.lock:
            self.busy.discard(process)
            if not self.closed:
                self.idle.append(replacement)
                return
        replacement.stop()

    def start_context(self) -> BaseContext:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        with self.lock:
            self.context = self.context or context
            return self.context


_SHARED: dict[tuple[int, int, int, int], SolverPool] = {}
_SHARED_LOCK = threading.Lock()


def shared_pool(processes: int, queue: int, listener: PoolListener) -> SolverPool:
    """This process's pool of that size and listener, made on first use (every app in
    one process shares it: the tests' many apps, or a worker's one). Keyed by process id
    too: a pool inherited through a fork belongs to the parent."""
    key = (os.getpid(), processes, queue, id(listener))
    with _SHARED_LOCK:
        pool = _SHARED.get(key)
        if pool is None:
            pool = _SHARED[key] = SolverPool(processes, queue, listener)
        return pool
