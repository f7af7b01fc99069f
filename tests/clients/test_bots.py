"""The contract as client generators read it (issues 13, 24): `make clients` generates four
clients from openapi.yaml — openapi-typescript + openapi-fetch and openapi-python-client,
and openapi-generator's typescript-fetch and python — and a bot on each, written as a
frontend author writes one (clients/bot.ts, clients/python/bot.py, clients/ogen-ts/bot.ts,
clients/ogen-python/bot.py), type-checks with no cast and plays Penguin deal 1 to `won`
against a live gunicorn server: a hint and 20 first legal moves with safe autoplay, then
the solver's line (with the same autoplay), replayed from the deal.

The escape-hatch test reads the bots only; the others generate the clients first (npm, pip
and JRE installs on the first run) and are marked slow.
"""

from __future__ import annotations

import configparser
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.clients.tools import (
    CLIENTS,
    CLIENTS_PYTHON,
    OGEN_PY_CLIENT_ROOT,
    PY_CLIENT_ROOT,
    TSC,
    base_url,
    output,
    run,
)
from tests.ops.servers import Backend


@dataclass(frozen=True)
class TsBot:
    """A TypeScript bot: its source, the tsc settings it is checked and built with, and the
    script tsc builds (into clients/generated/build/, the tsconfig's outDir)."""

    source: Path
    tsconfig: Path
    built: Path
    problems: tuple[str, ...]


@dataclass(frozen=True)
class PyBot:
    """A Python bot: its source, its mypy settings, and where its generated client is."""

    source: Path
    mypy_ini: Path
    client_root: Path
    problems: tuple[str, ...]


BUILD = CLIENTS / "generated" / "build"
# Each bot, by its client; `problems` are the refusals it prints (status and code).
TS_BOTS = {
    "openapi-fetch": TsBot(
        CLIENTS / "bot.ts", CLIENTS / "tsconfig.json", BUILD / "bot.js", ("409 illegal-move", "422 invalid-state"),
    ),
    "ogen-typescript-fetch": TsBot(
        CLIENTS / "ogen-ts" / "bot.ts", CLIENTS / "ogen-ts" / "tsconfig.json", BUILD / "ogen-ts" / "bot.js",
        ("409 illegal-move",),
    ),
}
PY_BOTS = {
    "openapi-python-client": PyBot(
        CLIENTS / "python" / "bot.py", CLIENTS / "python" / "mypy.ini", PY_CLIENT_ROOT,
        ("409 illegal-move", "422 invalid-state"),
    ),
    "ogen-python": PyBot(
        CLIENTS / "ogen-python" / "bot.py", CLIENTS / "ogen-python" / "mypy.ini", OGEN_PY_CLIENT_ROOT,
        ("409 illegal-move",),
    ),
}

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


@pytest.mark.parametrize("bot", [*TS_BOTS, *PY_BOTS])
def test_bots_use_no_escape_hatch(bot: str) -> None:
    """No cast, no non-null assertion, no `any` (TypeScript), no `cast`, no `Any` (Python),
    and no comment that silences the checker: the types the contract gives are enough."""
    if bot in TS_BOTS:
        assert escapes(TS_BOTS[bot].source.read_text(), TS_TEXT, TS_ESCAPES, TS_SILENCERS) == []
    else:
        assert escapes(PY_BOTS[bot].source.read_text(), PY_TEXT, PY_ESCAPES, PY_SILENCERS) == []


def test_typescript_settings_are_strict() -> None:
    """The TypeScript bots are checked with strict, exactOptionalPropertyTypes (an optional
    field is absent, never `undefined`) and noUncheckedIndexedAccess (a list's item may be
    absent): clients/tsconfig.json's settings, which the other tsconfigs extend."""
    settings = (CLIENTS / "tsconfig.json").read_text()
    for option in ("strict", "exactOptionalPropertyTypes", "noUncheckedIndexedAccess"):
        assert re.search(rf'"{option}":\s*true', settings), option
    for bot in TS_BOTS.values():
        assert bot.tsconfig == CLIENTS / "tsconfig.json" or '"extends": "../tsconfig.json"' in bot.tsconfig.read_text()


def test_python_settings_are_strict() -> None:
    """The Python bots are checked with `strict = True`, and no setting silences an error in
    them: the only `ignore_errors` is openapi-generator's own package's (its generated code
    is not strict-clean; clients/ogen-python/mypy.ini says why), and nothing turns a
    missing import into Any."""
    for bot in PY_BOTS.values():
        config = configparser.ConfigParser()
        config.read(bot.mypy_ini)
        assert config.getboolean("mypy", "strict"), bot.mypy_ini
        for section in config.sections():
            options = config[section]
            assert not options.getboolean("ignore_missing_imports", fallback=False), (bot.mypy_ini, section)
            assert not options.getboolean("follow_imports_for_stubs", fallback=False), (bot.mypy_ini, section)
            assert options.get("follow_imports", "normal") == "normal", (bot.mypy_ini, section)
            if options.getboolean("ignore_errors", fallback=False):
                assert section == "mypy-patience_engine_ogen.*", (bot.mypy_ini, section)


@pytest.mark.slow
@pytest.mark.parametrize("bot", TS_BOTS)
def test_typescript_bot_type_checks(generated: None, bot: str) -> None:
    """`tsc --noEmit` on the bot and its generated client, with its tsconfig (strict)."""
    result = run(TSC, "--noEmit", "-p", TS_BOTS[bot].tsconfig, timeout=180)
    assert result.returncode == 0, output(result)


@pytest.mark.slow
@pytest.mark.parametrize("bot", PY_BOTS)
def test_python_bot_type_checks(generated: None, bot: str) -> None:
    """`mypy --strict` on the bot, which imports its generated client."""
    checked = PY_BOTS[bot]
    result = run(
        CLIENTS_PYTHON, "-m", "mypy", "--strict", "--config-file", checked.mypy_ini,
        "--cache-dir", CLIENTS / "generated" / ".mypy_cache", checked.source,
        timeout=300, env={"MYPYPATH": str(checked.client_root)},
    )
    assert result.returncode == 0, output(result)


def assert_won(result: subprocess.CompletedProcess[str], problems: tuple[str, ...]) -> None:
    """The bot ran to its end, the replay's status and its result's were `won` (the bot
    stops otherwise), its last line says `won`, and it read each refusal it makes."""
    assert result.returncode == 0, output(result)
    assert result.stdout.splitlines()[-1] == "won", output(result)
    assert "replayed" in result.stdout and "won, result won" in result.stdout, output(result)
    for problem in problems:
        assert problem in result.stdout, output(result)


@pytest.mark.slow
@pytest.mark.parametrize("bot", TS_BOTS)
def test_typescript_bot_wins(generated: None, server: Backend, bot: str) -> None:
    """The TypeScript bot, compiled by tsc (emitted even where the type check fails, so that
    this test says whether the client works, and the one above whether it types), plays
    Penguin deal 1 to `won`."""
    built = TS_BOTS[bot]
    run(TSC, "-p", built.tsconfig, "--noEmit", "false", timeout=180)
    result = run("node", built.built, base_url(server), timeout=60)
    assert_won(result, built.problems)


@pytest.mark.slow
@pytest.mark.parametrize("bot", PY_BOTS)
def test_python_bot_wins(generated: None, server: Backend, bot: str) -> None:
    """The Python bot on its generated client plays the same game to `won`."""
    played = PY_BOTS[bot]
    result = run(CLIENTS_PYTHON, played.source, base_url(server), timeout=60, env={"PYTHONPATH": str(played.client_root)})
    assert_won(result, played.problems)
