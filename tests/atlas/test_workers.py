"""The atlas commands' worker processes (service/atlas/workers.py): a worker that dies
fails the command at once instead of hanging it, and a stopped command leaves no worker
behind."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from service.atlas import batch, validate
from service.atlas.__main__ import main
from service.atlas.grades import calibrations
from service.atlas.workers import BrokenProcessPool

REPO = Path(__file__).resolve().parents[2]
GAME = "amazons"  # a few ms a deal
DYING_DEAL = 3
SCORED = multiprocessing.get_context("fork").Value("q", 0)  # created before any worker forks
REAL_SCORE = validate._score


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail (rather than hang the suite) when the block takes longer than ``seconds``:
    ``multiprocessing.Pool`` waits forever for a dead worker's task."""
    def expired(*_: object) -> None:
        raise TimeoutError(f"still waiting after {seconds} s: the dead worker hung the command")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def dies_on_one_deal(task: batch.Task, tick: Callable[[], None] = lambda: None) -> int:
    """``batch.run_task``, but the worker dies (as under the OOM killer) at one deal."""
    if DYING_DEAL in task.deals:
        os._exit(137)
    return sum(1 for _ in task.deals)


def scores_but_dies_on_one_deal(task: tuple[str, int]) -> tuple[int, int | None]:
    """``validate._score``, but the worker dies at one deal."""
    if task[1] == DYING_DEAL + calibrations()[GAME].first_deal:
        os._exit(137)
    return task[1], None


def test_a_batch_worker_that_dies_fails_the_run_instead_of_hanging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(batch, "run_task", dies_on_one_deal)  # the workers fork after this
    with deadline(60), pytest.raises(BrokenProcessPool):
        batch.run(tmp_path, GAME, range(1, 9), workers=2, progress=None)


def sigterms_itself_on_one_deal(task: batch.Task, tick: Callable[[], None] = lambda: None) -> int:
    """``batch.run_task``, but the worker gets a SIGTERM at one deal (as the executor sends
    the other workers when one dies, or an operator's ``kill``)."""
    if DYING_DEAL in task.deals:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)
    return sum(1 for _ in task.deals)


def test_a_worker_dies_of_sigterm_despite_the_handler_the_command_line_installs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The command line turns SIGTERM into an exit (service/atlas/__main__.py); a worker
    inheriting that would report a SystemExit as its task's result and play on."""
    monkeypatch.setattr(batch, "run_task", sigterms_itself_on_one_deal)
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        with deadline(60), pytest.raises(BrokenProcessPool):
            batch.run(tmp_path, GAME, range(1, 9), workers=2, progress=None)
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_the_command_line_says_a_worker_died_and_that_the_run_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(batch, "run_task", dies_on_one_deal)
    with deadline(60):
        status = main(["run", "--games", GAME, "--deals", "1-8", "--out", str(tmp_path), "--workers", "2"])
    err = capsys.readouterr().err
    assert status == 1
    assert "a worker process died" in err and "resumes" in err, err


def test_a_validate_worker_that_dies_fails_the_scan_instead_of_hanging(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validate, "_score", scores_but_dies_on_one_deal)
    with deadline(60), pytest.raises(BrokenProcessPool):
        validate.winnable(GAME, calibrations()[GAME], 5, workers=2, known={})


def counts_scores(task: tuple[str, int]) -> tuple[int, int | None]:
    """``validate._score``, counting its calls in memory the workers share."""
    with SCORED.get_lock():
        SCORED.value += 1
    return REAL_SCORE(task)


def test_a_scan_that_stops_early_does_not_play_the_rest_of_its_range(monkeypatch: pytest.MonkeyPatch) -> None:
    """``winnable`` stops reading once it has its deals: its workers are stopped and the
    tasks not started cancelled, not played (the calibration range is thousands of deals)."""
    calibration = calibrations()[GAME]
    monkeypatch.setattr(validate, "_score", counts_scores)
    SCORED.value = 0
    with deadline(120):
        found = validate.winnable(GAME, calibration, 3, workers=2, known={})
    assert len(found) == 3 and found == sorted(found)
    assert found[-1] - calibration.first_deal < 40  # else the bound below says little
    assert SCORED.value <= 500 < calibration.last_deal - calibration.first_deal


def test_a_sigterm_to_the_run_kills_its_workers_at_once(tmp_path: Path) -> None:
    """A pod's SIGTERM reaches the command alone (PID 1); its workers must not outlive it."""
    run = subprocess.Popen(
        [sys.executable, "-m", "service.atlas", "run", "--games", "boomerang", "--deals", "1-2000",
         "--out", str(tmp_path), "--workers", "2"],
        cwd=REPO, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline_at = time.monotonic() + 120
        while not any(p.stat().st_size for p in tmp_path.glob("boomerang/*.jsonl")) and time.monotonic() < deadline_at:
            time.sleep(0.05)
        os.kill(run.pid, signal.SIGTERM)
        _, err = run.communicate(timeout=20)
        assert run.returncode == 128 + signal.SIGTERM, err.decode()[-2000:]
        gone_by = time.monotonic() + 10
        while time.monotonic() < gone_by:
            try:
                os.killpg(run.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            pytest.fail("a worker outlived the command")
    finally:
        with suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
