"""Schemathesis's command line as a third party first runs it (issue 24, item 8): every
check and every phase from `openapi.yaml` against a live gunicorn server, with no
configuration at all. The only failures it may report are the ones README's
"Testing your integration against the contract" explains and configures away:

- ST202 answered 422 (or 409) for data the schema cannot judge because the rule joins two
  fields (a state of another game than the path, another game's options, a move list of
  another deal);
- in the stateful phase, ST202 answered 400 `invalid-body` for a link body Schemathesis
  sent without a required field (it applies each `body.<field>` link parameter by a coin
  flip and does not complete the body);
- ST201 answered 413 `body-too-large` for a replay of more moves than `maxItems` whose
  body is also over MAX_BODY_BYTES (the size is judged first, before the body is read).

Any other failure (a 5xx, an answer off its schema, a missing header, a wrong status for
bad data...) fails this test. Marked slow, as the other command-line runs.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.clients.tools import base_url, output, run
from tests.ops.servers import REPO, Backend

pytestmark = pytest.mark.slow

SCHEMATHESIS = REPO / ".venv" / "bin" / "schemathesis"
EXAMPLES = int(os.environ.get("SCHEMATHESIS_CLI_EXAMPLES", "20"))

FAILURES_SECTION = re.compile(r"^=+ FAILURES =+\n(.*?)(?=^=+ [A-Z]+ =+$)", re.M | re.S)
FAILURE_BLOCK = re.compile(r"^\s*\d+\. Test Case ID: \S+\n(.*?)(?=^\s*\d+\. Test Case ID:|\Z)", re.M | re.S)
CHECK_CODE = re.compile(r"^- (ST\d+|[A-Z]{2}\d{3}) ", re.M)
STATUS = re.compile(r"^\[(\d{3})\] ", re.M)


def failure_blocks(report: str) -> list[str]:
    """Each failure of the run's FAILURES section (its WARNINGS, such as a link that found
    nothing to follow in an answer, are not failures)."""
    section = FAILURES_SECTION.search(report)
    return [] if section is None else FAILURE_BLOCK.findall(section.group(1))


def explained(block: str) -> str | None:
    """Why a reported failure is one README explains, or None if it is not."""
    codes = set(CHECK_CODE.findall(block))
    statuses = [int(s) for s in STATUS.findall(block)]
    if len(codes) != 1 or len(statuses) != 1:
        return None
    if codes == {"ST201"}:
        return "a body over the size limit" if statuses[0] == 413 and '"code": "body-too-large"' in block else None
    if codes != {"ST202"}:
        return None
    if statuses[0] in (409, 422):
        return "a cross-field rule"
    if statuses[0] == 400 and '"code": "invalid-body"' in block and "Missing data for required field" in block:
        return "an incomplete link body"
    return None


def test_the_explainer_reads_failure_blocks() -> None:
    """The reader above tells the explained failures from the rest."""
    cross = "- ST202 Schema-valid request rejected\n\n[422] Unprocessable Content:\n"
    link = '- ST202 Schema-valid request rejected\n\n[400] Bad Request:\n {"code": "invalid-body", "errors": [{"message": "Missing data for required field."}]}'
    assert explained(cross) == "a cross-field rule"
    assert explained(link) == "an incomplete link body"
    assert explained("- ST202 Schema-valid request rejected\n\n[400] Bad Request:\n {\"code\": \"invalid-body\"}") is None
    assert explained("- ST101 Server error\n\n[500] Internal Server Error:\n") is None
    assert explained(cross.replace("ST202", "ST201")) is None
    assert explained('- ST201 Schema-violating request accepted\n\n[413] Content Too Large:\n {"code": "body-too-large"}') == "a body over the size limit"


def test_schemathesis_with_no_configuration(server: Backend, tmp_path: Path) -> None:
    """Every failure the unconfigured run reports is one of the two kinds README explains.
    It runs in an empty folder, so that no schemathesis.toml is found."""
    result = run(
        SCHEMATHESIS, "--no-color", "run", REPO / "openapi.yaml", "--url", base_url(server),
        "--checks", "all", "--phases", "examples,coverage,fuzzing,stateful",
        "--max-examples", str(EXAMPLES), "--generation-deterministic", "--workers", "1", "--request-timeout", "30",
        timeout=600, cwd=tmp_path,
    )
    text = result.stdout
    assert "Test Phases:" in text, output(result)  # the run got as far as its summary
    blocks = failure_blocks(text)
    unexplained = [block[:2000] for block in blocks if explained(block) is None]
    assert unexplained == [], "\n\n".join(unexplained)
    if result.returncode != 0:
        assert blocks, output(result)  # a failing run reported what failed
