"""The contract as client generators read it (issue 13): `make clients` generates a
TypeScript client (openapi-typescript + openapi-fetch) and a Python client
(openapi-python-client) from openapi.yaml, and a bot on each, written as a frontend author
writes one (clients/bot.ts, clients/python/bot.py), type-checks with no cast and plays
Penguin deal 1 to `won` against a live gunicorn server.

The escape-hatch test reads the bots only; the others generate the clients first (npm and
pip installs on the first run) and are marked slow.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.clients.tools import CLIENTS, CLIENTS_PYTHON, PY_CLIENT_ROOT, TSC, base_url, output, run
from tests.ops.servers import Backend

TS_BOT = CLIENTS / "bot.ts"
PY_BOT = CLIENTS / "python" / "bot.py"
TS_BUILD = CLIENTS / "generated" / "build"

# TypeScript's ways around its checker: a cast (`x as T`, `<T>x`), a non-null assertion
# (`x!`), the type that turns checks off, and comments that silence an error.
TS_ESCAPES = {
    "a cast with as": re.compile(r"\bas\b"),
    "an angle-bracket cast": re.compile(r"(?:^|[=(,:?]|\breturn)\s*<[A-Za-z_][\w.\[\]\"' |]*>\s*[\w(\[{]", re.M),
    "a non-null assertion": re.compile(r"[\w)\]]!(?!=)"),
    "the any type": re.compile(r"\bany\b"),
}
TS_SILENCERS = re.compile(r"@ts-(?:ignore|expect-error|nocheck)")
# Python's: typing.cast, the Any type and `# type: ignore`.
PY_ESCAPES = {
    "typing.cast": re.compile(r"\bcast\b"),
    "the Any type": re.compile(r"\bAny\b"),
}
PY_SILENCERS = re.compile(r"#\s*type:\s*ignore")

# Comments and string literals (template literals too), blanked before the escapes are
# looked for: words like "as" in text are not code.
TS_TEXT = re.compile(r"//[^\n]*|/\*.*?\*/|`(?:\\.|[^`\\])*`|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", re.S)
PY_TEXT = re.compile(r"#[^\n]*|\"\"\".*?\"\"\"|'''.*?'''|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)

# A template literal's substitutions (`${...}`, unnested) are code, and stay.
TS_SUBSTITUTION = re.compile(r"\$\{([^{}]*)\}")


def blank_text(text: re.Match[str]) -> str:
    """A comment or string literal as blanks (its newlines kept, so that line numbers hold),
    keeping only a template literal's substitutions."""
    kept = " ".join(TS_SUBSTITUTION.findall(text.group())) if text.group().startswith("`") else ""
    kept = TS_TEXT.sub(blank_text, kept)  # the substitutions' own strings
    return "\n" * text.group().count("\n") + f" {kept} "


def escapes(source: str, text: re.Pattern[str], patterns: dict[str, re.Pattern[str]], silencers: re.Pattern[str]) -> list[str]:
    """Each escape hatch found in ``source``, as "what: line N: the line", in code only
    (comments and string literals blanked)."""
    found = [f"a silenced error: line {source.count(chr(10), 0, m.start()) + 1}" for m in silencers.finditer(source)]
    code = text.sub(blank_text, source)
    lines = code.splitlines()
    for what, pattern in patterns.items():
        for m in pattern.finditer(code):
            number = code.count("\n", 0, m.start()) + 1
            found.append(f"{what}: line {number}: {lines[number - 1].strip()}")
    return found


def test_escapes_are_found() -> None:
    """The checks below see each escape hatch in code, and none in comments and strings."""
    ts = 'const a = b as State; // not "as" here\nconst c = d!.e;\nlet f: any = <T>g;\nconst h = x !== y && !z; // @ts-ignore\n'
    assert [found.split(":")[0] for found in escapes(ts, TS_TEXT, TS_ESCAPES, TS_SILENCERS)] == [
        "a silenced error", "a cast with as", "an angle-bracket cast", "a non-null assertion", "the any type",
    ]
    assert escapes('const s = `as ${"any"}`; /* x! as any */ if (!ok && a !== b) {}\n', TS_TEXT, TS_ESCAPES, TS_SILENCERS) == []
    assert escapes("const t = `${x as T}`;\n", TS_TEXT, TS_ESCAPES, TS_SILENCERS) == ["a cast with as: line 1: const t =  x as T ;"]
    py = 'x = cast(int, y)  # type: ignore\nz: Any = 1\n"""cast Any"""\n'
    assert [found.split(":")[0] for found in escapes(py, PY_TEXT, PY_ESCAPES, PY_SILENCERS)] == [
        "a silenced error", "typing.cast", "the Any type",
    ]


def test_bots_use_no_escape_hatch() -> None:
    """No cast, no non-null assertion, no `any` (TypeScript), no `cast`, no `Any` (Python),
    and no comment that silences the checker: the types the contract gives are enough."""
    assert escapes(TS_BOT.read_text(), TS_TEXT, TS_ESCAPES, TS_SILENCERS) == []
    assert escapes(PY_BOT.read_text(), PY_TEXT, PY_ESCAPES, PY_SILENCERS) == []


@pytest.mark.slow
def test_typescript_bot_type_checks(generated: None) -> None:
    """`tsc --strict --noEmit` on the bot and the generated types (clients/tsconfig.json)."""
    result = run(TSC, "--strict", "--noEmit", "-p", CLIENTS / "tsconfig.json", timeout=180)
    assert result.returncode == 0, output(result)


@pytest.mark.slow
def test_python_bot_type_checks(generated: None) -> None:
    """`mypy --strict` on the bot, which imports the generated client."""
    result = run(
        CLIENTS_PYTHON, "-m", "mypy", "--strict", "--config-file", CLIENTS / "python" / "mypy.ini",
        "--cache-dir", CLIENTS / "generated" / ".mypy_cache", PY_BOT,
        timeout=300, env={"MYPYPATH": str(PY_CLIENT_ROOT)},
    )
    assert result.returncode == 0, output(result)


def assert_won(result: subprocess.CompletedProcess[str]) -> None:
    """The bot ran to its end and its last line says the replayed solution won."""
    assert result.returncode == 0, output(result)
    assert result.stdout.splitlines()[-1] == "won", output(result)
    for problem in ("409 illegal-move", "422 invalid-state"):
        assert problem in result.stdout, output(result)


@pytest.mark.slow
def test_typescript_bot_wins(generated: None, server: Backend) -> None:
    """The TypeScript bot, compiled by tsc (emitted even where the type check fails, so that
    this test says whether the client works, and the one above whether it types), plays
    Penguin deal 1: list, deal, hint, moves with autoplay, solve, replay to `won`, 409, 422."""
    run(TSC, "-p", CLIENTS / "tsconfig.json", "--noEmit", "false", "--outDir", TS_BUILD, timeout=180)
    result = run("node", TS_BUILD / "bot.js", base_url(server), timeout=60)
    assert_won(result)


@pytest.mark.slow
def test_python_bot_wins(generated: None, server: Backend) -> None:
    """The Python bot on the generated client plays the same game to `won`."""
    result = run(CLIENTS_PYTHON, PY_BOT, base_url(server), timeout=60, env={"PYTHONPATH": str(PY_CLIENT_ROOT)})
    assert_won(result)

