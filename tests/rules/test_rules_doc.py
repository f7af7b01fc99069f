"""docs/rules.md against the service: the rules in the repository are the rules it serves.

Each game's section of docs/rules.md holds a generated block: the game's id and summary,
then exactly the ``rules`` text ``GET /v1/games/{game}`` answers
(``Game.rules_description()``: the game's ``rules_text`` and its autoplay rule). The
Penguin family's table of options is generated from the presets' option specs. Every
other line of the file is written by hand (the terms, determinism, deal numbers and
decisions all games share). A block sits between ``<!-- begin NAME -->`` and
``<!-- end NAME -->`` lines.

After changing a game's rules text, rewrite the generated blocks with
``RULES_DOC_UPDATE=1 .venv/bin/python -m pytest tests/rules/test_rules_doc.py`` (a new
game's section is appended at the end of the file: move it where it belongs).

The file also checks the citations: every ``docs/rules.md "Section"`` (or
``**Section**``) named in the code, tests, benchmarks and docs is a heading of the file,
and nothing cites the rules from outside the repository.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from service.engine.penguin import PRESETS
from service.engine.registry import GAME_CLASSES, get_game

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "rules.md"
UPDATE = bool(os.environ.get("RULES_DOC_UPDATE"))
FAMILY_OPTIONS = "penguin-family-options"
BLOCK = re.compile(r"^<!-- begin (?P<name>[\w:-]+) -->\n(?:(?P<body>.*?)\n)?<!-- end (?P=name) -->$", re.M | re.S)
HEADING = re.compile(r"^#{1,6} +(.+?) *$", re.M)
# `docs/rules.md "Name"`, `docs/rules.md, "Name"`, `docs/rules.md ("Name")`,
# `docs/rules.md **Name**`, also when a Python string literal is split between the two.
CITATION = re.compile(r'docs/rules\.md[\s,(:"\\]*?(?:\\?"|\*\*)([A-Z][^"*\\\n]*?)(?:\\?"|\*\*)')
CITING = ("service", "tests", "bench", "docs", "README.md", "deploy", "Makefile")
CITING_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".html", ".js", ".sh", ""}


def game_block(game_id: str) -> str:
    """A game's generated block: its id and summary, then the rules it serves."""
    game = get_game(game_id)
    return f"Id `{game_id}`: {game.summary}\n\n{game.rules_description()}"


def family_options_block() -> str:
    """The Penguin family's options: what each sets and each preset's value."""
    presets = [get_game(cls.id) for cls in PRESETS]
    specs = type(presets[0]).option_specs()
    head = "| option | what it sets | allowed | " + " | ".join(g.name for g in presets) + " |"
    rule = "|" + "---|" * (3 + len(presets))
    rows = []
    for spec in specs:
        limits = f"{spec.minimum} to {spec.maximum}"
        allowed = ", ".join(f"`{c}`" for c in spec.choices) if spec.choices else limits
        values = " | ".join(f"`{g.options[spec.name]}`" for g in presets)
        rows.append(f"| `{spec.name}` | {spec.description} | {allowed} | {values} |")
    return "\n".join([head, rule, *rows])


def expected_blocks() -> dict[str, str]:
    blocks = {f"rules:{gid}": game_block(gid) for gid in GAME_CLASSES}
    blocks[FAMILY_OPTIONS] = family_options_block()
    return blocks


def doc_blocks(text: str) -> dict[str, str]:
    return {m["name"]: m["body"] or "" for m in BLOCK.finditer(text)}


def regenerate(text: str) -> str:
    """``text`` with every generated block rewritten; missing games appended."""
    expected = expected_blocks()

    def rewrite(m: re.Match[str]) -> str:
        name = m["name"]
        return f"<!-- begin {name} -->\n{expected[name]}\n<!-- end {name} -->" if name in expected else m[0]

    text = BLOCK.sub(rewrite, text)
    present = doc_blocks(text)
    for name, body in expected.items():
        if name not in present:
            title = GAME_CLASSES[name.removeprefix("rules:")].name if name.startswith("rules:") else name
            text = text.rstrip("\n") + f"\n\n## {title}\n\n<!-- begin {name} -->\n{body}\n<!-- end {name} -->\n"
    return text


def headings(text: str) -> list[str]:
    return [m[1].replace("`", "").strip() for m in HEADING.finditer(text)]


def citing_files() -> list[Path]:
    out: list[Path] = []
    for name in CITING:
        path = ROOT / name
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        out.extend(p for p in files if p.suffix in CITING_SUFFIXES and p != Path(__file__).resolve())
    return out


@pytest.fixture(scope="module")
def doc() -> str:
    if UPDATE:
        DOC.write_text(regenerate(DOC.read_text()))
    return DOC.read_text()


def test_every_game_has_its_block_and_no_other(doc: str) -> None:
    assert set(doc_blocks(doc)) == set(expected_blocks()), "RULES_DOC_UPDATE=1 rewrites the blocks"


@pytest.mark.parametrize("game_id", list(GAME_CLASSES))
def test_game_section_is_what_the_service_serves(doc: str, client: FlaskClient, game_id: str) -> None:
    served = client.get(f"/v1/games/{game_id}").get_json()["rules"]
    assert served == get_game(game_id).rules_description()
    assert doc_blocks(doc).get(f"rules:{game_id}") == game_block(game_id), (
        f"docs/rules.md's {game_id} section differs from what the service serves; RULES_DOC_UPDATE=1 rewrites it"
    )


@pytest.mark.parametrize("game_id", list(GAME_CLASSES))
def test_game_block_sits_under_the_games_name(doc: str, game_id: str) -> None:
    start = doc.index(f"<!-- begin rules:{game_id} -->")
    assert headings(doc[:start])[-1] == GAME_CLASSES[game_id].name


def test_penguin_family_options_table(doc: str) -> None:
    assert doc_blocks(doc).get(FAMILY_OPTIONS) == family_options_block()


def test_every_cited_section_exists(doc: str) -> None:
    sections = set(headings(doc))
    cited = {
        (str(path.relative_to(ROOT)), name.strip())
        for path in citing_files()
        for name in CITATION.findall(path.read_text(errors="replace"))
    }
    assert cited, "the citation pattern found nothing: has the way code cites docs/rules.md changed?"
    missing = sorted((where, name) for where, name in cited if name not in sections)
    assert not missing, f"cited sections that docs/rules.md lacks: {missing}"


def test_nothing_cites_rules_outside_the_repository() -> None:
    outside = re.compile(r"(?<![\w/])RULES\.md|shared/RULES")
    found = [str(p.relative_to(ROOT)) for p in citing_files() if outside.search(p.read_text(errors="replace"))]
    assert not found, f"these cite a rules file outside the repository (cite docs/rules.md): {found}"
