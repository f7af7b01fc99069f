"""Wrong calls must not type-check (issue 24): clients/wrong-calls.ts (openapi-typescript +
openapi-fetch) and clients/python/wrong_calls.py (openapi-python-client) hold one mistake a
line — a move given as a string, 42 or `{}`, a wrong action, a state where a move goes, a
wrong enum value, a missing required field... — each ending with a "wrong" comment. The
checker (tsc with the bot's settings, `mypy --strict`) must report an error on each such
line and on no other: a wrong call that compiles, because the contract or a generator
typed its request too loosely, fails the test, and so does a right call that does not.

A TypeScript line ending with a "gap" comment is a mistake the checker is known to miss for
a reason outside the contract (openapi-fetch checks a body without TypeScript's
excess-property check); it must compile, so that the file is updated the day it stops.

The line-matching tests generate the clients first and are marked slow; the parsing is
checked on its own.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.clients.test_bots import PY_ESCAPES, PY_SILENCERS, PY_TEXT, TS_ESCAPES, TS_SILENCERS, TS_TEXT, escapes
from tests.clients.tools import CLIENTS, CLIENTS_PYTHON, PY_CLIENT_ROOT, TSC, output, run

TS_WRONG = CLIENTS / "wrong-calls.ts"
PY_WRONG = CLIENTS / "python" / "wrong_calls.py"

# tsc's plain diagnostics (--pretty false): `file(line,col): error TSnnnn: message`; mypy's:
# `file:line: error: message  [code]` (its `note:` lines are not errors).
TSC_ERROR = re.compile(r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+),\d+\): error TS\d+: ", re.M)
MYPY_ERROR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+): error: ", re.M)
# A marked line: code, then the comment, last on the line (no quote after it: not in a string).
TS_MARK = re.compile(r"\S.*//\s*(wrong|gap):[^\"`]*$")
PY_MARK = re.compile(r"\S.*#\s*(wrong):[^\"]*$")


def marked_lines(source: str, mark: re.Pattern[str], kind: str) -> set[int]:
    """The numbers (from 1) of the lines whose closing comment is of ``kind``."""
    return {n for n, line in enumerate(source.splitlines(), 1) if (m := mark.search(line)) and m.group(1) == kind}


def error_lines(report: str, pattern: re.Pattern[str], name: str) -> set[int]:
    """The lines of the file named ``name`` that a checker's report has an error on."""
    return {int(m.group("line")) for m in pattern.finditer(report) if Path(m.group("file")).name == name}


def mismatches(source: str, wrong: set[int], gaps: set[int], errors: set[int]) -> list[str]:
    """Every wrong line without an error, gap line with one, and other line with one,
    each with its text, for the assertion message (empty when the report matches)."""
    lines = source.splitlines()
    found = [f"line {n} compiles but is marked wrong: {lines[n - 1].strip()}" for n in sorted(wrong - errors)]
    found += [f"line {n} errs but is marked as a known gap: {lines[n - 1].strip()}" for n in sorted(gaps & errors)]
    found += [f"line {n} errs but is not marked wrong: {lines[n - 1].strip()}" for n in sorted(errors - wrong - gaps)]
    return found


def test_reports_are_parsed() -> None:
    """The markers and both checkers' error lines are read as they are written, and each
    kind of mismatch is told."""
    ts = 'f(1); // wrong: one\nf("x"); // gap: two\nconst s = "// wrong: not a mark";\n// wrong: a comment alone\n'
    assert marked_lines(ts, TS_MARK, "wrong") == {1}
    assert marked_lines(ts, TS_MARK, "gap") == {2}
    tsc = "wrong-calls.ts(1,3): error TS2345: no\nwrong-calls.ts(1,9): error TS2345: no\nbot.ts(3,1): error TS1: x\n"
    assert error_lines(tsc, TSC_ERROR, "wrong-calls.ts") == {1}
    mypy = "clients/python/wrong_calls.py:7: error: x  [arg-type]\nclients/python/wrong_calls.py:8: note: y\n"
    assert error_lines(mypy, MYPY_ERROR, "wrong_calls.py") == {7}
    assert marked_lines('f(1)  # wrong: one\n# wrong: alone\ns = "# wrong: no"\n', PY_MARK, "wrong") == {1}
    assert [m.split(" ", 2)[1] for m in mismatches("a\nb\nc\nd\n", {1, 2}, {3}, {2, 3, 4})] == ["1", "3", "4"]


def test_wrong_calls_use_no_escape_hatch() -> None:
    """The files' right lines type-check without a cast or a silenced error, and each file
    marks many mistakes (a file emptied of them would prove nothing)."""
    ts, py = TS_WRONG.read_text(), PY_WRONG.read_text()
    assert escapes(ts, TS_TEXT, TS_ESCAPES, TS_SILENCERS) == []
    assert escapes(py, PY_TEXT, PY_ESCAPES, PY_SILENCERS) == []
    assert len(marked_lines(ts, TS_MARK, "wrong")) >= 40
    assert len(marked_lines(py, PY_MARK, "wrong")) >= 25


@pytest.mark.slow
def test_typescript_wrong_calls_fail_line_by_line(generated: None) -> None:
    """tsc (clients/tsconfig.wrong-calls.json: the bot's settings) errs on each wrong line
    of clients/wrong-calls.ts, and on no other line."""
    result = run(TSC, "-p", CLIENTS / "tsconfig.wrong-calls.json", "--pretty", "false", timeout=180)
    source = TS_WRONG.read_text()
    report = result.stdout + result.stderr
    errors = error_lines(report, TSC_ERROR, TS_WRONG.name)
    assert {Path(m.group("file")).name for m in TSC_ERROR.finditer(report)} <= {TS_WRONG.name}, output(result)
    found = mismatches(source, marked_lines(source, TS_MARK, "wrong"), marked_lines(source, TS_MARK, "gap"), errors)
    assert found == [], "\n".join(found) + "\n" + output(result)


@pytest.mark.slow
def test_python_wrong_calls_fail_line_by_line(generated: None) -> None:
    """`mypy --strict` (clients/python/mypy.ini) errs on each wrong line of
    clients/python/wrong_calls.py, and on no other line."""
    result = run(
        CLIENTS_PYTHON, "-m", "mypy", "--strict", "--config-file", CLIENTS / "python" / "mypy.ini",
        "--cache-dir", CLIENTS / "generated" / ".mypy_cache", PY_WRONG,
        timeout=300, env={"MYPYPATH": str(PY_CLIENT_ROOT)},
    )
    source = PY_WRONG.read_text()
    report = result.stdout + result.stderr
    errors = error_lines(report, MYPY_ERROR, PY_WRONG.name)
    assert {Path(m.group("file")).name for m in MYPY_ERROR.finditer(report)} <= {PY_WRONG.name}, output(result)
    found = mismatches(source, marked_lines(source, PY_MARK, "wrong"), set(), errors)
    assert found == [], "\n".join(found) + "\n" + output(result)
