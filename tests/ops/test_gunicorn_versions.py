"""The worker's gunicorn range (issue 26, item 2): ``WholeRequestWorker`` runs on the gunicorn
versions its use of gunicorn's insides was checked on (``WORKER_GUNICORN``, from
service/private_parts.py) and refuses to start on any other, naming the range and the
alternative; deploy/gunicorn.conf.py then chooses gunicorn's own gthread, with a warning.

The slow tests put gunicorn 26.2.0, one release back, first on the path of the venv's
Python (pip, into a temporary folder, no dependencies): there the worker still imports (the
names 26.2.0 lacks are guarded), refuses when named, and the settings file serves with gthread.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from service import gunicorn_worker
from service.gunicorn_worker import WORKER_GUNICORN, WholeRequestWorker, worker_refusal
from service.private_parts import CHECKED_VERSIONS, installed_version, is_checked
from tests.ops.servers import Backend, free_port, http_get

REPO = Path(__file__).resolve().parents[2]
PREVIOUS_GUNICORN = "26.2.0"
INSTALL_SECONDS = 180
START_SECONDS = 30


def test_the_range_is_the_checked_versions() -> None:
    """The worker runs on the installed gunicorn exactly when it is a checked version (the
    pinned one is; make test-compat's is not)."""
    assert CHECKED_VERSIONS["gunicorn"] == WORKER_GUNICORN
    version = installed_version("gunicorn")
    in_range = version is not None and is_checked(version, WORKER_GUNICORN)
    assert (worker_refusal() is None) is in_range
    if in_range:
        assert not gunicorn_worker.MISSING_PARTS


@pytest.mark.parametrize("version", [PREVIOUS_GUNICORN, "27.0.2", "27.1.0", "28.0.0"])
def test_outside_the_range_the_refusal_names_range_and_alternative(version: str) -> None:
    refusal = worker_refusal(version)
    assert refusal is not None
    assert f"not on gunicorn {version}" in refusal
    assert all(checked in refusal for checked in WORKER_GUNICORN)
    assert '"gthread"' in refusal and "deploy/haproxy.cfg" in refusal and "http-buffer-request" in refusal


def test_check_config_refuses_outside_the_range(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gunicorn_worker, "installed_version", lambda library: PREVIOUS_GUNICORN)
    with pytest.raises(RuntimeError, match=f"not on gunicorn {re.escape(PREVIOUS_GUNICORN)}"):
        WholeRequestWorker.check_config(object(), None)


def test_the_balancer_reads_requests_whole() -> None:
    """The alternative the refusal names is what deploy/haproxy.cfg does."""
    assert re.search(r"^\s*option\s+http-buffer-request\b", (REPO / "deploy/haproxy.cfg").read_text(), re.M)


@pytest.fixture(scope="module")
def previous_gunicorn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding gunicorn 26.2.0 alone, to be put first on a Python's path."""
    if installed_version("gunicorn") == PREVIOUS_GUNICORN:
        return tmp_path_factory.mktemp("empty")  # the venv has it already (make test-compat)
    target = tmp_path_factory.mktemp("gunicorn-previous")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check",
         "--target", str(target), f"gunicorn=={PREVIOUS_GUNICORN}"],
        capture_output=True, text=True, timeout=INSTALL_SECONDS, check=False,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    return target


def with_path(folder: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(folder), os.environ.get("PYTHONPATH"))))}


def python(folder: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=with_path(folder), capture_output=True,
                          text=True, timeout=START_SECONDS, check=False)


@pytest.mark.slow
def test_the_worker_imports_on_the_previous_gunicorn_and_says_why_not(previous_gunicorn: Path) -> None:
    run = python(previous_gunicorn, "import gunicorn, service.gunicorn_worker as w; "
                                    "print(gunicorn.__version__); print(w.worker_refusal())")
    assert run.returncode == 0, run.stderr[-2000:]
    version, refusal = run.stdout.splitlines()[-2:]
    assert version == PREVIOUS_GUNICORN
    assert f"not on gunicorn {PREVIOUS_GUNICORN}" in refusal and "CHUNK_EXT_RE" in refusal
    settings = python(previous_gunicorn, "import runpy; print(runpy.run_path('deploy/gunicorn.conf.py')['worker_class'])")
    assert settings.returncode == 0, settings.stderr[-2000:]
    assert settings.stdout.splitlines()[-1] == "gthread"


@pytest.mark.slow
def test_named_on_the_previous_gunicorn_the_worker_refuses_to_start(previous_gunicorn: Path, tmp_path: Path) -> None:
    env = {**with_path(previous_gunicorn), "TMPDIR": str(tmp_path), "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "m"),
           "DRAIN_FILE": str(tmp_path / "draining")}
    run = subprocess.run(
        [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "-k", "service.gunicorn_worker.WholeRequestWorker",
         "-b", f"127.0.0.1:{free_port()}", "service.wsgi:app"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=START_SECONDS, check=False,
    )
    assert run.returncode != 0
    assert f"not on gunicorn {PREVIOUS_GUNICORN}" in run.stderr and '"gthread"' in run.stderr
    assert "Booting worker" not in run.stderr


@pytest.mark.slow
def test_the_settings_file_serves_with_gthread_on_the_previous_gunicorn(previous_gunicorn: Path, tmp_path: Path) -> None:
    server = Backend("previous", tmp_path, workers=1, threads=3, env={"PYTHONPATH": with_path(previous_gunicorn)["PYTHONPATH"]})
    try:
        server.start(ready_timeout=START_SECONDS)
        status, _ = http_get(server.port, "/healthz")
        assert status == 200
    finally:
        server.kill()
    log: Any = server.error_log.read_text()
    assert f"Starting gunicorn {PREVIOUS_GUNICORN}" in log
    assert "Using worker: gthread" in log
    assert log.count("This server chose gthread instead") == 1
