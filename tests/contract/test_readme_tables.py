"""The README's tables and lists of the API, checked against the enums they restate.

The README is what a client reads first, so its error table (every problem code with
its status), the values it lists for statuses, actions, autoplay and solver results,
and its list of games must say what the code declares (:class:`ProblemCode`,
:class:`Status`, :data:`ACTION_NAMES`, :class:`Autoplay`, :class:`Outcome`,
:data:`GAMES`), not what it declared when the README was written.
"""

from __future__ import annotations

import re
from pathlib import Path

from service.engine.core import Status
from service.engine.registry import GAMES
from service.http.problems import ProblemCode
from service.http.schemas import Autoplay
from service.http.wire import ACTION_NAMES
from service.solver import Outcome

README = Path(__file__).resolve().parents[2] / "README.md"
ANY_OTHER_STATUS = "4xx"  # how the table shows http-error, whose status is the HTTP error's


def section(title: str) -> str:
    """The README's text from the heading ``## title`` to the next ``## `` heading."""
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def error_table() -> list[tuple[str, list[str]]]:
    """(status, [codes]) for each row of the table headed ``| status | code | when |``."""
    text = section("Using the API")
    head = text.index("| status | code | when |")
    rows = []
    for line in text[head:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        status, codes, _ = (cell.strip() for cell in line.strip("|").split("|", 2))
        rows.append((status, re.findall(r"`([a-z-]+)`", codes)))
    return rows


def backticked(sentence_start: str, text: str) -> list[str]:
    """The backticked words of the sentence that begins with ``sentence_start``."""
    at = text.index(sentence_start)
    sentence = text[at : text.index(".", at + len(sentence_start))]
    return re.findall(r"`([a-z-]+)`", sentence[len(sentence_start):])


def test_the_error_table_lists_every_problem_code_once_with_its_status() -> None:
    listed = [(status, code) for status, codes in error_table() for code in codes]
    assert sorted(code for _, code in listed) == sorted(c.value for c in ProblemCode)
    for status, code in listed:
        expected = ProblemCode(code).status
        assert status == (ANY_OTHER_STATUS if expected is None else str(expected)), code


def test_the_listed_statuses_are_the_engines() -> None:
    assert backticked("- `status` is", section("Using the API")) == [s.value for s in Status]


def test_the_listed_move_actions_are_the_wires() -> None:
    text = section("Using the API")
    shapes = text[text.index("- A move is") :]
    shapes = shapes[: shapes.index("\n- ")]
    assert re.findall(r'"action": "([a-z]+)"', shapes) == list(ACTION_NAMES.values())


def test_the_autoplay_choices_are_the_schemas() -> None:
    choices = re.search(r'"autoplay"\?: ((?:"[a-z]+"\\\|)*"[a-z]+")', section("Using the API"))
    assert choices, "the moves row lists the autoplay choices"
    assert re.findall(r'"([a-z]+)"', choices[1]) == [a.value for a in Autoplay]


def test_the_solver_results_are_the_solvers() -> None:
    words = backticked("see \"Fair hints\") and answers", section("The solver"))
    assert [w for w in words if w in set(Outcome)] == [o.value for o in Outcome]


def test_the_games_listed_are_the_registrys_in_order() -> None:
    intro = README.read_text().split("\n## ", 1)[0]
    listed = intro[intro.index("Games: ") + len("Games: ") :].split(". ", 1)[0]
    assert [name.strip() for name in listed.replace("\n", " ").split(",")] == [g.name for g in GAMES]
