"""The committed pacts (contracts/pacts/) against a live server: `make pact-verify` passes,
deliberately broken providers (tests/pact/broken_providers.py) fail it where the contract
promises, and the example consumers still record the committed pacts.

Each run starts gunicorn with the verification app as `make run` starts the service
(contracts/provider/verify.py) and runs pact-python's Verifier in contracts/.venv, which
`make` builds from contracts/requirements.txt. Pact's usage tracking is off (the Makefile
exports PACT_DO_NOT_TRACK=true; set here too for the direct runs)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PACTS = REPO / "contracts" / "pacts"
CONTRACTS_PYTHON = REPO / "contracts" / ".venv" / "bin" / "python"
ENV = {**os.environ, "PACT_DO_NOT_TRACK": "true", "SCARF_ANALYTICS": "false"}
TIMEOUT = 600

pytestmark = pytest.mark.slow


def run(*command: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in command], cwd=REPO, env=env or ENV, capture_output=True, text=True, timeout=TIMEOUT,
    )


@pytest.fixture(scope="module")
def contracts_venv() -> Path:
    """contracts/.venv, built by make if missing."""
    done = run("make", "-s", "contracts/.venv/.installed")
    assert done.returncode == 0, done.stdout + done.stderr
    return CONTRACTS_PYTHON


def verify_against(app: str) -> subprocess.CompletedProcess[str]:
    return run(CONTRACTS_PYTHON, "-m", "contracts.provider.verify", "--server-python", REPO / ".venv" / "bin" / "python",
               "--app", app)


def failed_interactions(report: str) -> list[str]:
    """The failing interactions the verifier's summary names (``1) Verifying a pact
    between X and Y Given S - description``)."""
    return [line.split(" - ", 1)[1] for line in report.splitlines() if line[:1].isdigit() and ") Verifying" in line]


def test_committed_pacts_verify(contracts_venv: Path) -> None:
    """`make pact-verify`: every interaction of every committed pact, provider states
    included, against gunicorn serving the verification app."""
    pacts = sorted(p.name for p in PACTS.glob("*.json"))
    assert pacts == [
        "python-play-loop-patience-engine.json", "readme-reader-patience-engine.json", "web-play-patience-engine.json",
    ]
    done = run("make", "-s", "pact-verify")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "pact verification: passed" in done.stdout
    assert done.stdout.count("Verifying a pact between") == len(pacts)


def test_a_renamed_field_fails_verification(contracts_venv: Path) -> None:
    """``legal_moves`` answered as ``legalMoves``: every interaction that reads it fails."""
    done = verify_against("tests.pact.broken_providers:renamed_field()")
    assert done.returncode == 1, done.stdout[-3000:]
    failed = failed_interactions(done.stdout)
    assert "open: a deal of Penguin 1" in failed and "sealed: a move" in failed, failed


def test_reversed_legal_moves_fail_verification(contracts_venv: Path) -> None:
    """Legal moves listed in reverse: exactly the interactions that pin their order (the
    open deal, in both pacts) fail; the others match them by type and still pass."""
    done = verify_against("tests.pact.broken_providers:reversed_legal_moves()")
    assert done.returncode == 1, done.stdout[-3000:]
    assert failed_interactions(done.stdout) == ["open: a deal of Penguin 1"] * 2, done.stdout[-3000:]


def interactions(path: Path) -> list[dict[str, Any]]:
    """A pact file's interactions, by description (the tools' versions aside)."""
    pact = json.loads(path.read_text())
    return sorted(pact["interactions"], key=lambda i: str(i["description"]))


def test_python_consumers_record_the_committed_pacts(contracts_venv: Path, tmp_path: Path) -> None:
    """The Python consumers (the example and the README reader), run again, write the
    committed pacts: a change to one, or to the examples, is committed with its pact
    (`make pact-record`)."""
    done = run(CONTRACTS_PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "contracts/consumers/python",
               env={**ENV, "PACT_OUTPUT_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stdout[-3000:]
    for name in ("python-play-loop-patience-engine.json", "readme-reader-patience-engine.json"):
        assert interactions(tmp_path / name) == interactions(PACTS / name), name


def test_typescript_consumer_records_the_committed_pact(tmp_path: Path) -> None:
    """The TypeScript example consumer (tsc, node --test), run again, writes the committed
    pact (make installs Node and clients/node_modules first when they are missing)."""
    done = run("make", "-s", "pact-record-ts", env={**ENV, "PACT_OUTPUT_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    name = "web-play-patience-engine.json"
    assert interactions(tmp_path / name) == interactions(PACTS / name)
