"""What the tests of tests/clients share: the paths of the clients' tools and bots, and
commands run in the repository with their output kept for assertion messages."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.ops.servers import REPO, Backend

CLIENTS = REPO / "clients"
TSC = CLIENTS / "node_modules" / ".bin" / "tsc"
CLIENTS_PYTHON = CLIENTS / ".venv" / "bin" / "python"
PY_CLIENT_ROOT = CLIENTS / "generated" / "python"
OGEN_PY_CLIENT_ROOT = CLIENTS / "generated" / "ogen-python"


def run(
    *command: str | Path, timeout: float, env: dict[str, str] | None = None, cwd: Path = REPO,
) -> subprocess.CompletedProcess[str]:
    """``command`` in ``cwd`` (the repository unless said), with ``env`` on top of this
    process's environment."""
    return subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def output(result: subprocess.CompletedProcess[str]) -> str:
    """A finished command's exit code and output, for an assertion message."""
    return f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"


def base_url(server: Backend) -> str:
    """The server's root URL on loopback."""
    return f"http://127.0.0.1:{server.port}"
