"""The contract as the common OpenAPI tools judge it (issues 13, 24), each on the committed
openapi.yaml: Redocly CLI's recommended ruleset and Spectral's spectral:oas report no error
and no warning, openapi-spec-validator passes, openapi-generator's validator reports no
issue and no recommendation (`make contract-lint`, one target per tool), and Schemathesis's
command line, every check and every phase, finds no failure against a live gunicorn server.

``SCHEMATHESIS_CLI_EXAMPLES`` (default 20) sets the examples per operation and phase.
Marked slow: the tools install themselves on the first run (npm, pip, a JRE from Debian).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.clients.tools import base_url, output, run
from tests.ops.servers import REPO, Backend

pytestmark = pytest.mark.slow

SCHEMATHESIS = REPO / ".venv" / "bin" / "schemathesis"
SCHEMATHESIS_CONFIG = REPO / "tests" / "clients" / "schemathesis.toml"
EXAMPLES = int(os.environ.get("SCHEMATHESIS_CLI_EXAMPLES", "20"))


@pytest.mark.parametrize("linter", ["redocly", "spectral", "validator", "generator"])
def test_contract_lint(linter: str) -> None:
    """`make contract-lint-<linter>`: Redocly (recommended-strict: the recommended rules,
    warnings as errors), Spectral (spectral:oas, failing on warnings), openapi-spec-validator,
    and `openapi-generator-cli validate` (openapi-generator 7.26: what `generate` refuses a
    contract for, and its recommendations)."""
    result = run("make", "-s", f"contract-lint-{linter}", timeout=900)
    assert result.returncode == 0, output(result)


def test_schemathesis_command_line(server: Backend, tmp_path: Path) -> None:
    """`schemathesis run openapi.yaml` against the live server: all checks, the four phases,
    deterministic data, one worker (so that no search waits for another: 503 solver-busy is
    a load answer, not a contract one), and only tests/clients/schemathesis.toml's statuses.
    It runs in an empty folder: Schemathesis writes the failures it finds to ./.schemathesis
    (for `schemathesis replay`), which then lands neither in the repository nor in a later run."""
    result = run(
        SCHEMATHESIS, "--config-file", SCHEMATHESIS_CONFIG, "--no-color", "run", REPO / "openapi.yaml",
        "--url", base_url(server),
        "--checks", "all", "--phases", "examples,coverage,fuzzing,stateful",
        "--max-examples", str(EXAMPLES), "--generation-deterministic", "--workers", "1",
        "--request-timeout", "30",
        timeout=600, cwd=tmp_path,
    )
    assert result.returncode == 0, output(result)
