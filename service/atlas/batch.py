"""The atlas batch: play a game's deals over a range, one JSON line per deal.

Each deal is played by the solver or by the hint player (:mod:`.players`) with budgets
counted in positions, never read off the clock, so a deal's line is the same on any
machine, under any load, with any number of workers: the merge (:func:`merge`) of any set
of runs over a range is one file, byte for byte.

Layout under an output directory ``out`` (a hint player's the same under ``out/hints`` or ``out/full-hints``)::

    out/<game>/deals-<first>-<last>.jsonl   lines as they are decided, any order
    out/<game>.jsonl                        the merge: one line per deal, by deal

A run (:func:`run`) is resumable: it reads the deals the files of its range already hold,
drops a last line a kill cut short, and solves only the others. Deals are shared among
worker processes by blocks (:func:`block_size`); the one process writing a block's file
holds a lock on it, so a second run on the same deals fails instead of writing twice. The
pods of an Indexed Job share the folder; each reads and writes only the files of its range.
"""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_EXCEPTION, wait
from dataclasses import asdict, dataclass
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import TextIO

from service.engine.registry import get_game

from .players import PLAYS, Player
from .workers import processes

BLOCK = 1000  # the most deals one worker's task holds (one file)
PROGRESS_EVERY = 0.5  # seconds between progress lines on a terminal
PROGRESS_EVERY_LOG = 30.0  # seconds between progress lines in a log


@dataclass(frozen=True)
class DealLine:
    """One deal's verdict and the solver's figures difficulty grades read."""

    deal: int
    result: str  # the solver's: an Outcome's value; the hint player's: a HintStop's
    positions: int  # distinct positions the search (the hint player's: all its hints') visited
    moves: int  # the solution's length (0 unless solved); the hint player's: hints followed
    stopped_by: str | None  # a StopReason's value when result is "unknown"

    def dumps(self) -> str:
        """The line, canonical (sorted keys, no spaces), with its newline."""
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":")) + "\n"

    @classmethod
    def loads(cls, text: str) -> DealLine:
        return cls(**json.loads(text))


def play_deal(player: Player, game_id: str, deal: int) -> DealLine:
    """``game_id``'s deal ``deal`` played by ``player`` (:mod:`.players`; no wall-clock cap)."""
    return DealLine(deal, *PLAYS[player](game_id, deal))


def game_dir(out: Path, game_id: str, player: Player = Player.SOLVER) -> Path:
    """Where a run writes the game's lines as they are decided."""
    return player_dir(out, player) / game_id


def merged_path(out: Path, game_id: str, player: Player = Player.SOLVER) -> Path:
    """The game's merged file: one line per deal, by deal."""
    return player_dir(out, player) / f"{game_id}.jsonl"


def player_dir(out: Path, player: Player) -> Path:
    """The solver's results at the top of ``out``, a hint player's in ``out/<player>`` (``hints``, ``full-hints``)."""
    return out if player is Player.SOLVER else out / player.value


class BadResults(ValueError):
    """A results file holds something that is not a deal's line, or a file is being written
    by another run."""


def read_lines(path: Path, repair: bool = False) -> list[DealLine]:
    """The complete lines of ``path``; with ``repair``, a last line without its newline (a
    kill cut it short) is cut off the file, which no other run may be writing."""
    with path.open("r+b" if repair else "rb") as f:
        if repair:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise BadResults(f"{path} is being written by another run") from None
        data = f.read()
        end = data.rfind(b"\n") + 1
        if end < len(data) and repair:
            f.truncate(end)
    lines = []
    for number, text in enumerate(data[:end].decode().splitlines(), 1):
        try:
            lines.append(DealLine.loads(text))
        except (ValueError, TypeError) as e:
            raise BadResults(f"{path}:{number}: not a deal's line ({e})") from None
    return lines


FILE_NAME = re.compile(r"deals-(\d+)-(\d+)\.jsonl")


def block_files(out: Path, game_id: str, deals: range | None = None, player: Player = Player.SOLVER) -> list[Path]:
    """The game's block files (``deals-<first>-<last>.jsonl``), those whose deals meet
    ``deals`` if given: a Job's pods share the folder, and each reads only its own."""
    folder = game_dir(out, game_id, player)
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.iterdir()):
        name = FILE_NAME.fullmatch(path.name)
        if name is None:
            continue
        first, last = int(name.group(1)), int(name.group(2))
        if deals is None or (first < deals.stop and last >= deals.start):
            found.append(path)
    return found


def done_deals(out: Path, game_id: str, deals: range, player: Player = Player.SOLVER) -> set[int]:
    """The deals of ``deals`` the game's block files already hold (cut lines repaired)."""
    return {line.deal for path in block_files(out, game_id, deals, player) for line in read_lines(path, repair=True)
            if line.deal in deals}


def blocks(deals: range, size: int = BLOCK) -> Iterator[range]:
    """``deals`` in consecutive ranges of at most ``size``."""
    for start in range(deals.start, deals.stop, size):
        yield range(start, min(start + size, deals.stop))


def block_size(deals: range, workers: int) -> int:
    """Blocks of at most :data:`BLOCK` deals, and at least four per worker, so that no core
    idles long at the end of a run.

    >>> block_size(range(1, 100_001), 2), block_size(range(1, 41), 2)
    (1000, 5)
    """
    return max(1, min(BLOCK, -(-len(deals) // (4 * workers))))


@dataclass(frozen=True)
class Task:
    """One worker's share: ``deals`` of ``game_id`` played by ``player``, appended to ``path``."""

    player: Player
    game_id: str
    deals: tuple[int, ...]
    path: str


def run_task(task: Task, tick: Callable[[], None] = lambda: None) -> int:
    """Solve ``task``'s deals, one line written (and flushed) as each is decided, then
    ``tick()``. The file is locked meanwhile: a second run on the same block fails."""
    with open(task.path, "a", encoding="utf-8") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BadResults(f"{task.path} is being written by another run") from None
        for deal in task.deals:
            f.write(play_deal(task.player, task.game_id, deal).dumps())
            f.flush()
            tick()
    return len(task.deals)


def plan(out: Path, player: Player, game_id: str, deals: range, block: int = BLOCK) -> list[Task]:
    """The tasks that play the deals of ``deals`` no file of ``out`` holds yet."""
    done = done_deals(out, game_id, deals, player)
    folder = game_dir(out, game_id, player)
    tasks = []
    for part in blocks(deals, block):
        todo = tuple(d for d in part if d not in done)
        if todo:
            tasks.append(Task(player, game_id, todo, str(folder / f"deals-{part.start}-{part.stop - 1}.jsonl")))
    return tasks


_DONE: Synchronized[int] | None = None  # a pool worker's shared count of deals decided


def _init_worker(done: Synchronized[int]) -> None:
    global _DONE
    _DONE = done


def _count_one() -> None:
    assert _DONE is not None
    with _DONE.get_lock():
        _DONE.value += 1


def _run_in_worker(task: Task) -> int:
    return run_task(task, _count_one)


def run(
    out: Path, game_id: str, deals: range, workers: int = 0, player: Player = Player.SOLVER,
    progress: TextIO | None = sys.stderr,
) -> int:
    """Play the deals of ``deals`` not yet in ``out`` on ``workers`` processes (0: one per
    core this process may run on); the number played now. Progress goes to ``progress``."""
    get_game(game_id)  # an unknown game fails here, before any process starts
    workers = workers or len(os.sched_getaffinity(0))
    tasks = plan(out, player, game_id, deals, block_size(deals, workers))
    total = sum(len(t.deals) for t in tasks)
    if not tasks:
        return 0
    game_dir(out, game_id, player).mkdir(parents=True, exist_ok=True)
    bar = Progress(game_id, total, len(deals) - total, progress)
    if workers == 1:
        done = 0

        def tick() -> None:
            nonlocal done
            done += 1
            bar.show(done)

        for task in tasks:
            run_task(task, tick)
    else:
        shared = multiprocessing.get_context("fork").Value("q", 0)
        with processes(workers, _init_worker, (shared,)) as pool:
            pending = {pool.submit(_run_in_worker, task) for task in tasks}
            while pending:
                finished, pending = wait(pending, bar.every, FIRST_EXCEPTION)
                for future in finished:
                    future.result()  # a task's error, or BrokenProcessPool for a dead worker
                bar.show(shared.value)
    bar.show(total, final=True)
    return total


class Progress:
    """A progress line: deals done of the total, the rate, and the time left. On a
    terminal it is redrawn in place; in a log, a line now and then."""

    def __init__(self, game_id: str, total: int, skipped: int, stream: TextIO | None) -> None:
        self.game_id, self.total, self.skipped, self.stream = game_id, total, skipped, stream
        self.started = self.last = time.monotonic()
        self.tty = bool(stream is not None and stream.isatty())
        self.every = PROGRESS_EVERY if self.tty else PROGRESS_EVERY_LOG

    def line(self, done: int, now: float) -> str:
        elapsed = max(now - self.started, 1e-9)
        rate = done / elapsed
        left = (self.total - done) / rate if rate > 0 else float("inf")
        width = 30
        filled = int(width * done / self.total) if self.total else width
        resumed = f", {self.skipped} already done" if self.skipped else ""
        return (f"{self.game_id}: [{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} deals{resumed}, "
                f"{rate:.1f} deals/s, {clock(elapsed)} spent, {clock(left)} left")

    def show(self, done: int, final: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not final and now - self.last < self.every:
            return
        self.last = now
        end = "\n" if final or not self.tty else ""
        self.stream.write(("\r" if self.tty else "") + self.line(done, now) + end)
        self.stream.flush()


def clock(seconds: float) -> str:
    """``seconds`` as h:mm:ss (``?`` when unknown).

    >>> clock(3725.2), clock(float("inf"))
    ('1:02:05', '?')
    """
    if seconds == float("inf"):
        return "?"
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class ConflictingResults(ValueError):
    """Two files hold different lines for one deal (a different budget, or a bug)."""


def merge(
    out: Path, game_id: str, deals: range | None = None, write: bool = True, player: Player = Player.SOLVER,
) -> list[DealLine]:
    """Every line of the game's block files, one per deal, by deal (within ``deals`` if
    given); with ``write``, written to ``out/<game>.jsonl``. Raises
    :class:`ConflictingResults` when two lines of one deal differ."""
    by_deal: dict[int, DealLine] = {}
    for path in block_files(out, game_id, deals, player):
        for line in read_lines(path):
            if deals is not None and line.deal not in deals:
                continue
            seen = by_deal.setdefault(line.deal, line)
            if seen != line:
                raise ConflictingResults(f"{game_id} deal {line.deal}: {seen} and {line}")
    lines = [by_deal[d] for d in sorted(by_deal)]
    if write:
        target = merged_path(out, game_id, player)
        temporary = target.with_name(target.name + ".tmp")
        temporary.write_text("".join(line.dumps() for line in lines), encoding="utf-8")
        temporary.replace(target)
    return lines


def job_block(deals: range, blocks_count: int, index: int) -> range:
    """The ``index``-th of ``blocks_count`` near-equal consecutive parts of ``deals`` (a
    Kubernetes Indexed Job's share).

    >>> job_block(range(1, 101), 3, 0), job_block(range(1, 101), 3, 2)
    (range(1, 34), range(67, 101))
    """
    if not 0 <= index < blocks_count:
        raise ValueError(f"index {index} is not in 0..{blocks_count - 1}")
    n = len(deals)
    start = deals.start + n * index // blocks_count
    stop = deals.start + n * (index + 1) // blocks_count
    return range(start, stop)

