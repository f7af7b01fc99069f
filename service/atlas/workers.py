"""The atlas commands' worker processes.

:func:`processes` is a :class:`~concurrent.futures.ProcessPoolExecutor` on forked workers
(they inherit the loaded games and compiled solver). It is used instead of
:class:`multiprocessing.pool.Pool` because a worker that dies (the kernel's OOM killer, a
``kill -9``, a crash in compiled code) breaks the executor, whose waiting callers get
:class:`~concurrent.futures.process.BrokenProcessPool` at once, where ``Pool`` replaces the
worker and waits for its lost task forever: a batch hung at 0% CPU once that way.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any

__all__ = ["BrokenProcessPool", "processes"]


@contextmanager
def processes(
    workers: int, initializer: Callable[..., object] | None = None, initargs: tuple[Any, ...] = (),
) -> Iterator[ProcessPoolExecutor]:
    """``workers`` forked processes, killed on leaving, however the block is left, as
    ``Pool.__exit__`` terminated its own: a caller that stops reading a ``map`` early
    waits for nothing, and an error (a dead worker, Ctrl-C, the SIGTERM of a pod) does not
    wait for running tasks (a batch's lines are written deal by deal, and a resume drops
    a line cut short). Tasks not started are cancelled."""
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("fork"), initializer=_start_worker,
        initargs=(initializer, initargs))
    try:
        yield pool
    finally:
        for child in set(multiprocessing.active_children()) - before:  # the pool's: it forked them
            child.kill()
        pool.shutdown(wait=True, cancel_futures=True)  # its manager sees them dead and reaps them


def _start_worker(initializer: Callable[..., object] | None, initargs: tuple[Any, ...]) -> None:
    """A worker dies of SIGTERM (the executor's own way to stop the rest when one dies)
    rather than run the handler it inherits from the command line, and leaves Ctrl-C to
    the command, which kills it."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)
