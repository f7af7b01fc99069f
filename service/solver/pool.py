"""A bounded pool of solver processes, so that searches run apart from the threads serving play.

Why: a search is CPU-bound Python. In a request thread it shares the worker's interpreter
lock with the threads that serve play, which then wait behind it, and nothing bounds how
many searches run at once. Here every search (solve, hint, winnable deal) runs in a solver
process (:mod:`.worker`, niced so play comes first while a search keeps a share of a busy
CPU, and on CPUs of their own if the server sets ``SOLVER_CPUS``): at most ``processes`` at
once, with at most ``queue`` more waiting for a process; one more is refused at once with
:class:`PoolBusy`, which says after how many seconds a place should be free (the earliest
end of a running search's budget). :meth:`SolverPool.has_room` lets the caller refuse
before it reads the request's state.

Stopping: the thread that waits for a search asks ``client_gone`` every
:data:`POLL_SECONDS`. When the client has left, a queued search leaves the queue and a
running one's process is killed and replaced, so an abandoned search stops within a
second (:class:`SearchAbandoned`). A search counts its budget in positions; the clock
is only a safety net: a search still running
:data:`~.settings.OVERRUN_GRACE_SECONDS` after its budget stops itself in its process
(:class:`~.search.SearchOverrun`), and a process that has not answered
:data:`~.settings.KILL_GRACE_SECONDS` after it is killed and replaced; both are
:class:`SearchOverran`, a :class:`PoolBusy` (the search did not get its share of the CPU:
asking again later may succeed), never an answer cut by the clock. A process that dies
during a search is killed and replaced too (:class:`SolverFailed`: the answer is lost,
not wrong, and asking again may succeed), as is one found dead while idle (the search
takes another). A search that raises in its process is a bug (:class:`SearchFailed`).

Time bounds: a search holds its place at most :func:`~.settings.hold_seconds` of its
budget (processes only: in the calling thread nothing can stop it). A queued search waits
at most until every search running when it arrived must have given its place back;
a search still queued then is refused (:class:`PoolBusy`), so that no request outlasts
:func:`~.settings.longest_search_seconds` of the largest budget, which a proxy in front of
the service can be set to wait for.

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
killed, each ends after its current search, when it finds its pipe closed (each runs in a
session of its own, :func:`~.worker.leave_the_servers_group`, so a signal to the server's
process group does not reach it). The fork server reaps the processes it forked, so a
killed one is not waited for.

``processes=0`` runs searches in the calling thread instead, one at a time, with the same
queue bound (tests, debugging): nothing is isolated and nothing can stop a search early.
"""

from __future__ import annotations

import contextlib
import logging
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

from . import settings
from .settings import hold_seconds
from .worker import PING, Job, Reply, serve

T = TypeVar("T")

POLL_SECONDS = 0.2  # how often a waiting thread asks whether its client is still there
# What the fork server imports once, so that each solver process starts warm.
PRELOAD = ["service.solver.worker"]
log = logging.getLogger("service.solver")


class Refusal(StrEnum):
    """Why a search was not answered (a metric's label: a fixed set)."""

    QUEUE_FULL = "queue-full"  # every process busy, the queue full: refused at once
    QUEUE_TIMEOUT = "queue-timeout"  # queued until the searches ahead had to be out, still no place
    CLIENT_GONE = "client-gone"  # the client closed its connection: the search was stopped
    OVERRUN = "overrun"  # still running past its budget and grace: it did not get its share of the CPU


class PoolBusy(Exception):
    """No place for the search; one should be free in ``retry_after`` s. Its text says why
    (the HTTP layer answers it as the problem's detail)."""

    def __init__(self, detail: str, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after

    @classmethod
    def full(cls, processes: int, queue: int, retry_after: int) -> PoolBusy:
        """Every one of ``processes`` is busy and ``queue`` searches wait already."""
        return cls(
            f"every solver process is busy ({processes}) and the queue is full ({queue} waiting); "
            f"retry after {retry_after} s",
            retry_after,
        )

    @classmethod
    def waited(cls, seconds: float, retry_after: int) -> PoolBusy:
        """The search waited ``seconds`` in the queue, as long as it may, without a place."""
        return cls(f"no solver process came free within {seconds:.0f} s; retry after {retry_after} s", retry_after)


class SearchOverran(PoolBusy):
    """The search was still running past its budget and grace (it stopped itself at its
    safety cap, or its process was killed and replaced): the CPU was too busy for it to
    get its share. Its work is dropped, never answered; it may be asked again after
    ``retry_after`` s (its budget)."""

    @classmethod
    def after(cls, budget: float, detail: str) -> SearchOverran:
        retry_after = max(1, math.ceil(budget))
        return cls(
            f"the search did not get enough of the CPU to finish within its budget ({budget:g} s) and grace: "
            f"{detail}; retry after {retry_after} s",
            retry_after,
        )


class SearchAbandoned(Exception):
    """The client left while its search waited or ran; the search was stopped."""


class SolverFailed(RuntimeError):
    """The solver process died during the search (it was replaced), or no process could
    start. The answer is lost, not wrong: asking again, here or on another server, may
    succeed."""


class SearchFailed(RuntimeError):
    """The search raised in its solver process (a bug); the text holds its trace."""


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
        """The search as a solver process receives it (the game as its id and options,
        and its wall-clock safety cap)."""
        return (self.function, self.game.id, dict(self.game.options), self.args, self.budget + settings.OVERRUN_GRACE_SECONDS)

    def run_here(self) -> T:
        """The search in the calling thread (a pool without processes)."""
        return self.function(self.game, *self.args)


class SolverProcess:
    """One solver process and the pipe the pool talks to it through."""

    def __init__(self, context: BaseContext, cpus: frozenset[int] = frozenset()) -> None:
        self.conn, child_end = context.Pipe()
        self.process = context.Process(target=serve, args=(child_end, cpus), name="patience-solver", daemon=True)  # type: ignore[attr-defined]
        self.process.start()
        child_end.close()

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def alive(self, timeout: float) -> bool:
        """Answers a ping within ``timeout`` s: more than ``is_alive()``, which reads the
        exit status only once the fork server has reaped the process."""
        try:
            self.conn.send(PING)
            return self.conn.poll(timeout) and self.conn.recv() == PING
        except (EOFError, OSError):
            return False

    def exit_code(self) -> int | None:
        """The exit code of a process that died, waiting :data:`~.settings.STOP_SECONDS`
        at most for the fork server to report it (None if it did not)."""
        self.process.join(settings.STOP_SECONDS)
        return self.process.exitcode

    def stop(self) -> None:
        """Kill the process if it still runs, and close its pipe; never raises. It is not
        waited for: the fork server reaps it (``is_alive()`` first, so that a pid already
        reaped, and perhaps reused, is never signalled)."""
        with contextlib.suppress(OSError, ValueError):
            if self.process.is_alive():
                self.process.kill()
        with contextlib.suppress(OSError):
            self.conn.close()


@dataclass(frozen=True)
class Place:
    """A search's place in the pool: when its budget ends and when it must be out."""

    budget_ends: float
    out_by: float

    @classmethod
    def taken(cls, budget: float) -> Place:
        now = time.monotonic()
        return cls(now + budget, now + hold_seconds(budget))


@dataclass(eq=False)
class Waiter:
    """A search in the queue: it runs once ``granted`` is set."""

    budget: float
    granted: threading.Event = field(default_factory=threading.Event)


class SolverPool:
    """At most ``processes`` searches at once (``0``: in the calling thread, one at a
    time), at most ``queue`` waiting; the processes on ``cpus`` only, if any are given
    (the calling thread is never pinned); see the module's docstring."""

    def __init__(
        self, processes: int, queue: int, listener: PoolListener | None = None, cpus: frozenset[int] = frozenset()
    ) -> None:
        if processes < 0 or queue < 0:
            raise ValueError("processes and queue are counts")
        self.processes = processes
        self.queue = queue
        self.cpus = cpus
        self.slots = max(processes, 1)
        self.listener: PoolListener = listener or QuietListener()
        self.lock = threading.Lock()
        self.running: dict[object, Place] = {}  # a running search's token -> its place
        self.waiting: deque[tuple[object, Waiter]] = deque()
        self.idle: list[SolverProcess] = []
        self.busy: set[SolverProcess] = set()
        self.context: BaseContext | None = None
        self.closed = False

    # --- the public side ---------------------------------------------------------------

    def run(self, search: Search[T], client_gone: Callable[[], bool] | None = None) -> T:
        """The search's answer. Raises :class:`PoolBusy` at once when full, or when it
        waited as long as it may, or (:class:`SearchOverran`) when it ran past its budget
        and grace, :class:`SearchAbandoned` when ``client_gone()`` turns true while it
        waits or runs, :class:`SolverFailed` when its process dies, :class:`SearchFailed`
        when the search raises."""
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

    def has_room(self) -> int | None:
        """None when a search asked now would run or queue; else the seconds after which
        to retry (the caller refuses at once, before it reads the request: a refusal then
        costs next to nothing). :meth:`run` still decides: room may be gone by then."""
        with self.lock:
            if (len(self.running) < self.slots and not self.waiting) or len(self.waiting) < self.queue:
                return None
            self.listener.refused(Refusal.QUEUE_FULL)
            return self.retry_after()

    def pids(self) -> list[int]:
        """The process ids of the idle solver processes (tests, diagnostics)."""
        with self.lock:
            return [p.pid for p in self.idle if p.pid is not None]

    def processes_in_use(self) -> list[SolverProcess]:
        """The solver processes running a search now (tests, diagnostics)."""
        with self.lock:
            return list(self.busy)

    def close(self) -> None:
        """Stop the idle processes; searches still running keep theirs until they end,
        and those are stopped then."""
        with self.lock:
            self.closed = True
            idle, self.idle = self.idle, []
        for process in idle:
            process.stop()

    # --- admission: slots and the queue ---------------------------------------------------

    def admit(self, budget: float, client_gone: Callable[[], bool] | None) -> object:
        """A token holding one place, once one is free (queued in order meanwhile, until
        the searches running now must all be out)."""
        token = object()
        with self.lock:
            if len(self.running) < self.slots and not self.waiting:
                self.running[token] = Place.taken(budget)
                self.listener.changed(1, 0)
                return token
            if len(self.waiting) >= self.queue:
                busy = PoolBusy.full(self.slots, self.queue, self.retry_after())
                self.listener.refused(Refusal.QUEUE_FULL)
                raise busy
            waiter = Waiter(budget)
            self.waiting.append((token, waiter))
            self.listener.changed(0, 1)
            queued_at = time.monotonic()
            give_up_at = max((p.out_by for p in self.running.values()), default=queued_at)
        while not waiter.granted.wait(max(0.0, min(POLL_SECONDS, give_up_at - time.monotonic()))):
            gone = client_gone is not None and client_gone()
            if not gone and time.monotonic() < give_up_at:
                continue
            with self.lock:
                granted = waiter.granted.is_set()
                if not granted:
                    self.waiting.remove((token, waiter))
                    self.listener.changed(0, -1)
                retry_after = self.retry_after()
            if gone:
                if granted:
                    self.release(token)
                self.listener.refused(Refusal.CLIENT_GONE)
                raise SearchAbandoned
            if granted:  # a place came free just in time
                return token
            self.listener.refused(Refusal.QUEUE_TIMEOUT)
            raise PoolBusy.waited(time.monotonic() - queued_at, retry_after)
        return token

    def release(self, token: object) -> None:
        """Give the place back, or straight to the first search in the queue."""
        with self.lock:
            del self.running[token]
            if self.waiting:
                next_token, waiter = self.waiting.popleft()
                self.running[next_token] = Place.taken(waiter.budget)
                waiter.granted.set()
                self.listener.changed(0, -1)
            else:
                self.listener.changed(-1, 0)

    def retry_after(self) -> int:
        """Whole seconds until the earliest running search's budget ends (at least 1):
        then the first queued search starts and the queue has a place. Called locked."""
        ends = min((p.budget_ends for p in self.running.values()), default=time.monotonic() + 1)
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
        self.give_back(process)
        if reply is Reply.FAILED:
            raise SearchFailed("the search failed in the solver process:\n" + value)
        if reply is Reply.OVERRUN:
            self.listener.refused(Refusal.OVERRUN)
            raise SearchOverran.after(search.budget, value)
        return value

    def exchange(
        self, process: SolverProcess, search: Search[Any], client_gone: Callable[[], bool] | None
    ) -> tuple[Reply, Any]:
        """The process's reply to ``search``, asking every :data:`POLL_SECONDS` meanwhile
        whether the client is still there."""
        try:
            process.conn.send(search.job())
        except OSError:
            raise SolverFailed(f"the solver process died before the search (exit code {process.exit_code()})") from None
        allowed = search.budget + settings.KILL_GRACE_SECONDS
        kill_at = time.monotonic() + allowed
        while not process.conn.poll(POLL_SECONDS):
            if client_gone is not None and client_gone():
                self.listener.refused(Refusal.CLIENT_GONE)
                raise SearchAbandoned
            if time.monotonic() > kill_at:
                self.listener.refused(Refusal.OVERRUN)
                raise SearchOverran.after(search.budget, f"its process did not answer within {allowed:g} s and was replaced")
        try:
            reply: tuple[Reply, Any] = process.conn.recv()
        except (EOFError, OSError):
            raise SolverFailed(f"the solver process died during the search (exit code {process.exit_code()})") from None
        return reply

    def take_process(self) -> SolverProcess:
        """An idle live process, or a new one (a dead one found idle is dropped); it
        counts as busy until it is given back or replaced. The pings of idle processes
        take :data:`~.settings.PING_SECONDS` at most together."""
        ping_until = time.monotonic() + settings.PING_SECONDS
        while True:
            with self.lock:
                if not self.idle:
                    break
                process = self.idle.pop()
                self.busy.add(process)
            if process.alive(max(0.0, ping_until - time.monotonic())):
                return process
            with self.lock:
                self.busy.discard(process)
            process.stop()
        try:
            process = self.new_process()
        except Exception as error:  # this server cannot search now; another may
            raise SolverFailed(f"could not start a solver process: {error!r}") from error
        with self.lock:
            self.busy.add(process)
        return process

    def give_back(self, process: SolverProcess) -> None:
        """A process whose search ended goes back to the idle ones; stopped if the pool
        has closed meanwhile."""
        with self.lock:
            self.busy.discard(process)
            if not self.closed:
                self.idle.append(process)
                return
        process.stop()

    def replace(self, process: SolverProcess) -> None:
        """Kill ``process`` and start its replacement, idle, so the next search finds one.
        Never raises: the search's own error is the one to report, and a replacement that
        could not start is started by the next search."""
        with self.lock:
            self.busy.discard(process)
        try:
            process.stop()
            with self.lock:
                if self.closed:
                    return
            replacement = self.new_process()
        except Exception:
            log.exception("could not replace the solver process %s; the next search starts one", process.pid)
            return
        with self.lock:
            if not self.closed:
                self.idle.append(replacement)
                return
        replacement.stop()

    def new_process(self) -> SolverProcess:
        """A new solver process, forked by the fork server (started on first use)."""
        return SolverProcess(self.context or self.start_context(), self.cpus)

    def start_context(self) -> BaseContext:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        with self.lock:
            self.context = self.context or context
            return self.context


_SHARED: dict[tuple[int, int, int, int, frozenset[int]], SolverPool] = {}
_SHARED_LOCK = threading.Lock()


def shared_pool(
    processes: int, queue: int, listener: PoolListener, cpus: frozenset[int] = frozenset()
) -> SolverPool:
    """This process's pool of that size and listener, made on first use (every app in
    one process shares it: the tests' many apps, or a worker's one). Keyed by process id
    too: a pool inherited through a fork belongs to the parent."""
    key = (os.getpid(), processes, queue, id(listener), cpus)
    with _SHARED_LOCK:
        pool = _SHARED.get(key)
        if pool is None:
            pool = _SHARED[key] = SolverPool(processes, queue, listener, cpus)
        return pool
