"""The version gates of the fast paths outside the app (issue 26, item 2): ``FastLoadSchema``'s
reader (service/http/fast_load.py, ``FAST_READER``) and ``body.Blueprint``'s shortcuts
(service/http/body.py, ``FAST_BLUEPRINT``), each on only where the libraries it relies on are
at a version service/private_parts.py was checked on, the libraries' own paths elsewhere.

The gates read the installed versions, once, at import. A closed gate is made here as an
operator would meet it: a Python in which those libraries report the previous minor release
(a distribution's metadata first on ``sys.path``, :func:`unchecked_path`; the code is the
pinned one). There the framework's paths run (marshmallow's ``Schema.load``, flask-smorest's
``Blueprint.arguments``), and they must give the same answers as the fast paths: the same
scripted requests answered alike both ways (:func:`answers`), and a sample of the request
suites passing as they are. ``make test-compat`` runs everything on the real previous releases.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from service.http import body, fast_load
from service.private_parts import CHECKED_VERSIONS, installed_version, is_checked, unchecked_libraries

REPO = Path(__file__).resolve().parents[2]
SUBPROCESS_SECONDS = 120

# What the libraries of the two gates report in the gates-closed Python: the previous minor
# releases (those of requirements-compat.lock), none a version CHECKED_VERSIONS holds.
UNCHECKED = {"marshmallow": "4.3.1", "flask-smorest": "0.46.2", "webargs": "8.6.0"}

# The request tests run again with the gates closed: the API's answers, strict and hostile
# input, replays (the contract is compared directly: test_the_contract_is_the_same_both_ways).
SAMPLE = (
    "tests/contract/test_api.py",
    "tests/contract/test_moves_answers.py",
    "tests/contract/test_strict_input.py",
    "tests/contract/test_hostile_input.py",
    "tests/contract/test_replays.py",
)


def unchecked_path(folder: Path) -> Path:
    """A folder of distribution metadata for :data:`UNCHECKED` (no code): first on
    ``sys.path``, it is what ``importlib.metadata`` answers for those libraries."""
    for name, version in UNCHECKED.items():
        info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return folder


def gates_closed_python(folder: Path, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by the venv's Python with :func:`unchecked_path` first on its path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(unchecked_path(folder)),
                                                                        os.environ.get("PYTHONPATH"))))}
    return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=SUBPROCESS_SECONDS, check=False)


def gate_state() -> dict[str, Any]:
    """The gates, and whether the fast paths are in use: a request schema's reader, a body
    view's shortcut (``webargs_view``: the way flask-smorest's parse goes, kept beside it)."""
    from service.http import games_api, schemas

    schema = schemas.MoveRequestSchema()
    schema.loader()  # builds the schema's reader, where the gate is open
    views = [f for f in vars(games_api).values() if inspect.isfunction(f) and f.__module__ == games_api.__name__]
    return {
        "FAST_READER": fast_load.FAST_READER,
        "FAST_BLUEPRINT": body.FAST_BLUEPRINT,
        "reader_built": schema.__dict__.get("_fast_reader") is not None,
        "shortcut_views": sorted(f.__name__ for f in views if hasattr(f, "webargs_view")),
    }


def answers() -> list[Any]:
    """A scripted session's answers (status, media type, JSON body without the request id):
    deals, moves legal and not, bodies refused by the schemas, the readers' edge cases."""
    from service.http import create_app
    from tests.app_settings import settings_for_tests

    app = create_app(settings_for_tests())
    client = app.test_client()
    out: list[Any] = []

    def ask(path: str, payload: Any = None, **kwargs: Any) -> Any:
        reply = client.post(path, json=payload, **kwargs) if payload is not None or kwargs else client.post(path)
        data = reply.get_json(silent=True)
        if isinstance(data, dict):
            data.pop("request_id", None)
        out.append([path, reply.status_code, reply.mimetype, data])
        return data

    for game in ("penguin", "forty-thieves", "binary-star", "small-billee"):
        dealt = ask(f"/v1/games/{game}/deals", {"deal": 7})
        ask(f"/v1/games/{game}/deals", {"deal": "7"})
        ask(f"/v1/games/{game}/deals", {"deal": 7, "extra": 1})
        ask(f"/v1/games/{game}/deals", {"options": {"cells": 40}})
        ask(f"/v1/games/{game}/deals", data="{}", content_type="text/plain")
        if not isinstance(dealt, dict) or "state" not in dealt:
            continue
        state = dealt["state"]
        ask(f"/v1/games/{game}/legal-moves", {"state": state})
        ask(f"/v1/games/{game}/validate", {"state": state})
        ask(f"/v1/games/{game}/legal-moves", {"state": 5})
        ask(f"/v1/games/{game}/legal-moves", [1, 2])
        for move in dealt.get("legal_moves", [])[:4]:
            ask(f"/v1/games/{game}/moves", {"state": state, "move": move})
            ask(f"/v1/games/{game}/moves", {"state": state, "move": move, "autoplay": "safe"})
            ask(f"/v1/games/{game}/moves", {"state": state, "move": {**move, "count": "1"}})
            ask(f"/v1/games/{game}/moves", {"state": state, "move": {**move, "surplus": True}})
        ask(f"/v1/games/{game}/moves", {"state": state, "move": {"action": "move", "to": "cell:0", "count": 1}})
        ask(f"/v1/games/{game}/moves", {"state": state, "move": {"action": "deal"}})
        ask(f"/v1/games/{game}/moves", {"state": state, "move": {"action": "move", "from": "tableau:00",
                                                                 "to": "cell:0", "count": 1}})
        ask(f"/v1/games/{game}/moves", {"state": {**state, "piles": None}, "move": {"action": "deal"}}
            if isinstance(state, dict) else {"state": state[:-1], "move": {"action": "deal"}})
    return out


def contract() -> dict[str, Any]:
    """The OpenAPI document the app writes (flask-smorest's documentation of every view)."""
    from service.http import create_app
    from tests.app_settings import settings_for_tests

    document: dict[str, Any] = create_app(settings_for_tests()).extensions["api"].spec.to_dict()
    return document


CONTRACT = "import json; from tests.contract.test_gates import contract; print(json.dumps(contract()))"
GATE_STATE = "import json; from tests.contract.test_gates import gate_state; print(json.dumps(gate_state()))"
ANSWERS = "import json; from tests.contract.test_gates import answers; print(json.dumps(answers()))"


def test_the_gates_follow_the_checked_versions() -> None:
    """On the pinned versions both gates are open, and each follows its own libraries."""
    unchecked = unchecked_libraries().keys()
    assert fast_load.FAST_READER is not bool(unchecked & fast_load.FAST_READER_LIBRARIES)
    assert body.FAST_BLUEPRINT is not bool(unchecked & body.FAST_BLUEPRINT_LIBRARIES)
    assert CHECKED_VERSIONS.keys() >= fast_load.FAST_READER_LIBRARIES | body.FAST_BLUEPRINT_LIBRARIES
    for library in UNCHECKED:
        version = installed_version(library)
        assert version is not None and not is_checked(UNCHECKED[library], CHECKED_VERSIONS[library])


def test_open_gates_run_the_fast_paths() -> None:
    if unchecked_libraries().keys() & (fast_load.FAST_READER_LIBRARIES | body.FAST_BLUEPRINT_LIBRARIES):
        pytest.skip("a gate is closed on these versions (make test-compat)")
    state = gate_state()
    assert state["FAST_READER"] and state["FAST_BLUEPRINT"] and state["reader_built"]
    assert state["shortcut_views"], "no view of games_api takes the body shortcut"


def test_closed_gates_run_the_frameworks_paths(tmp_path: Path) -> None:
    """Where the libraries report an unchecked version, neither fast path runs."""
    run = gates_closed_python(tmp_path, GATE_STATE)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout.splitlines()[-1]) == {
        "FAST_READER": False, "FAST_BLUEPRINT": False, "reader_built": False, "shortcut_views": [],
    }


def test_both_paths_give_the_same_answers(tmp_path: Path) -> None:
    run = gates_closed_python(tmp_path, ANSWERS)
    assert run.returncode == 0, run.stderr[-3000:]
    closed = json.loads(run.stdout.splitlines()[-1])
    opened = json.loads(json.dumps(answers()))
    assert len(closed) == len(opened) > 50
    for fast, framework in zip(opened, closed, strict=True):
        assert fast == framework


def test_the_contract_is_the_same_both_ways(tmp_path: Path) -> None:
    """flask-smorest documents a view alike whether ``body.Blueprint`` wraps it or not."""
    run = gates_closed_python(tmp_path, CONTRACT)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout.splitlines()[-1]) == json.loads(json.dumps(contract()))


@pytest.mark.slow
def test_request_suites_pass_with_the_gates_closed(tmp_path: Path) -> None:
    """A sample of the request tests, unchanged, on the frameworks' paths."""
    code = ("import sys, pytest; from service.http import body, fast_load; "
            "assert not (fast_load.FAST_READER or body.FAST_BLUEPRINT); "
            "sys.exit(pytest.main(sys.argv[1:]))")
    run = gates_closed_python(tmp_path, code, "-q", "-p", "no:cacheprovider", "-m", "not slow", *SAMPLE)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
