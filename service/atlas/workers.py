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
    """``workers`` forked processes. On leaving, tasks not yet started are cancelled (a
    caller that stops reading a ``map`` early does not wait for the rest); on an error (a
    dead worker, Ctrl-C, the SIGTERM of a pod) the workers are killed at once instead of
    finishing their tasks (a batch's lines are written deal by deal, and a resume drops a
    line cut short)."""
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("fork"), initializer=initializer, initargs=initargs)
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        for child in set(multiprocessing.active_children()) - before:  # the pool's: it forked them
            child.kill()  # not SIGTERM: a worker reports a task's SystemExit and takes the next
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
