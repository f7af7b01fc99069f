"""The version gate of the URL adapter and host cache (issue 26, item 2): ``FAST_ROUTING`` of
service/http/app.py is on only where Werkzeug and Flask are at versions
service/private_parts.py was checked on; elsewhere the app runs Werkzeug's own ``Map`` and
Flask's own ``create_url_adapter``, and answers as the cache does.

Three ways in: the app factory's ``fast_routing=False`` (the path itself, in-process); the
gate's reading of the versions (:func:`test_the_gate_follows_the_checked_versions`); and a
Python in which Werkzeug and Flask report their previous minor releases (distribution
metadata first on ``sys.path``, :func:`unchecked_path`; the code is the pinned one), where
the gate closes by itself and a sample of the request-path suites runs as it is
(:func:`test_a_closed_gate_passes_the_request_path_suites`). ``make test-compat`` runs
everything on the real previous releases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import flask
import pytest
from flask import Flask
from werkzeug.routing import Map, MapAdapter

import service.http.app as app_module
from service.http import create_app
from service.http.app import FAST_ROUTING, FAST_ROUTING_LIBRARIES, relative_location
from service.private_parts import CHECKED_VERSIONS, is_checked, unchecked_libraries
from tests.app_settings import settings_for_tests
from tests.contract.test_request_path_round5 import move_bodies, wsgi_answer

REPO = Path(__file__).resolve().parents[2]
SUBPROCESS_SECONDS = 240

# What the gate's libraries report in the gate-closed Python: their previous minor releases
# (requirements-compat), none a version CHECKED_VERSIONS holds.
UNCHECKED = {"werkzeug": "3.0.6", "flask": "3.0.3"}

# The request-path suites run again with the gate closed (answers, strict input and
# redirects, the hooks' headers, whole answers and metrics against Flask's own path).
SAMPLE = (
    "tests/contract/test_api.py",
    "tests/contract/test_strict_input.py",
    "tests/contract/test_request_path.py",
    "tests/contract/test_request_path_round4.py",
    "tests/contract/test_request_path_round5.py",
    "tests/contract/test_request_path_round6.py",
)
# What the sample may not pass with the gate closed: tests of the cache's own classes.
NOT_WITHOUT_THE_GATE = (
    "tests/contract/test_strict_input.py::test_a_redirect_url_is_a_path_with_one_leading_slash",
)


def test_the_gate_follows_the_checked_versions() -> None:
    assert FAST_ROUTING is not bool(unchecked_libraries().keys() & FAST_ROUTING_LIBRARIES)
    assert CHECKED_VERSIONS.keys() >= FAST_ROUTING_LIBRARIES
    for library, version in UNCHECKED.items():
        assert not is_checked(version, CHECKED_VERSIONS[library])


def test_the_app_follows_the_gate() -> None:
    app = create_app(settings_for_tests())
    assert app.fast_routing is FAST_ROUTING  # type: ignore[attr-defined]
    assert (type(app.url_map) is app_module.ServiceMap) is FAST_ROUTING
    closed = create_app(settings_for_tests(), fast_routing=False)
    assert type(closed.url_map) is Map and closed.fast_routing is False  # type: ignore[attr-defined]


@pytest.fixture
def cache_untouched(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Any of the cache's code called from now on fails the test; the calls of Flask's own
    ``create_url_adapter`` with a request are counted (their names, listed)."""
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the URL adapter cache ran with the gate closed")

    for name in ("reads_segments_alone",):
        monkeypatch.setattr(app_module, name, refuse)
    monkeypatch.setattr(app_module.ServiceMap, "bind_to_environ", refuse)
    monkeypatch.setattr(app_module.RememberingAdapter, "match", refuse)
    monkeypatch.setattr(app_module.RelativeRedirectAdapter, "like", refuse)
    flasks = Flask.create_url_adapter
    called: list[str] = []

    def counting(self: Flask, request: flask.Request | None) -> MapAdapter | None:
        if request is not None:
            called.append("create_url_adapter")
        return flasks(self, request)

    monkeypatch.setattr(Flask, "create_url_adapter", counting)
    yield called


@pytest.fixture(scope="module")
def a_move() -> dict[str, Any]:
    return move_bodies(1)[0]


def test_without_the_gate_werkzeugs_map_and_flasks_adapter_answer(a_move: dict[str, Any], cache_untouched: list[str]) -> None:
    app = create_app(settings_for_tests(), fast_routing=False)
    client = app.test_client()
    body = a_move
    assert client.post("/v1/games/penguin/moves", json=body).status_code == 200
    assert client.get("/v1/games").status_code == 200
    assert client.get("/v1/games/chess").status_code == 404
    assert client.put("/v1/games/penguin/moves").status_code == 405
    assert client.get("/v1//games").status_code == 308
    assert cache_untouched == ["create_url_adapter"] * 6  # (the redirect's Location asks once more)


def redirects() -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Routing redirects (slashes merged) from odd hosts, a script name, a POST."""
    rid = {"X-Request-ID": "paths"}
    # (Not a run of three slashes: Werkzeug merges those only from 3.1; 3.0 answers 404.)
    for path in ("/v1//games", "/v1//games?x=1&y=%20", "/v1/games//penguin", "/v1//games//penguin"):
        for host in ("evil.example", "evil.example:8443", "a/b", "127.0.0.1", "b\u00fccher.example", ""):
            yield "GET", path, {"headers": {**rid, "Host": host}}
    yield "GET", "/v1//games", {"headers": rid, "base_url": "https://api.example:8443/app/"}
    yield "GET", "/v1//games", {"headers": rid, "base_url": "http://api.example/"}
    yield "POST", "/v1/games//penguin//deals", {"json": {"deal": 1}, "headers": {**rid, "Host": "evil.example"}}


REDIRECTS = list(redirects())


@pytest.fixture(scope="module")
def open_and_closed() -> tuple[Flask, Flask]:
    return create_app(settings_for_tests()), create_app(settings_for_tests(), fast_routing=False)


@pytest.mark.parametrize(("method", "path", "kwargs"), REDIRECTS, ids=[f"{m} {p} {k}" for m, p, k in REDIRECTS])
def test_a_redirect_is_relative_and_bodiless_either_way(
    open_and_closed: tuple[Flask, Flask], method: str, path: str, kwargs: dict[str, Any]
) -> None:
    answers = [wsgi_answer(app, method, path, kwargs) for app in open_and_closed]
    assert answers[0] == answers[1]
    status, headers, data, _ = answers[1]
    location = dict(headers)["Location"]
    assert status.startswith("308") and data == b"" and "Content-Type" not in dict(headers)
    assert location.startswith("/") and not location.startswith("//")
    assert location.split("?")[0].replace("/app", "", 1) in ("/v1/games", "/v1/games/penguin", "/v1/games/penguin/deals")


def test_relative_location_strips_the_adapters_scheme_and_host() -> None:
    url_map = Map()
    for host, script in (("a/b", ""), ("evil.example:8443", "/app"), ("", "")):
        adapter = url_map.bind(host, script_name=script, url_scheme="https")
        absolute = adapter.make_redirect_url("//v1//games", "a=1")
        assert relative_location(absolute, adapter) == f"{script}/v1//games?a=1"
    assert relative_location("/v1/games?a=1", None) == "/v1/games?a=1"  # relative already: as it is
    assert relative_location("http://h.example//x/y?q", None) == "/x/y?q"  # not the adapter's: parsed
    assert relative_location("//h.example/x", None) == "/x"


# --- the gate closed by the versions themselves ------------------------------------------

def unchecked_path(folder: Path) -> Path:
    """A folder of distribution metadata for :data:`UNCHECKED` (no code): first on
    ``sys.path``, it is what ``importlib.metadata`` answers for those libraries."""
    for name, version in UNCHECKED.items():
        info = folder / f"{name}-{version}.dist-info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return folder


def gate_closed_python(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The venv's Python run with ``args`` and :func:`unchecked_path` first on its path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(unchecked_path(folder)),
                                                                        os.environ.get("PYTHONPATH"))))}
    return subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=SUBPROCESS_SECONDS, check=False)


GATE_STATE = (
    "import json; from service.http.app import FAST_ROUTING; from service.http import create_app; "
    "from tests.app_settings import settings_for_tests; app = create_app(settings_for_tests()); "
    "print(json.dumps([FAST_ROUTING, type(app.url_map).__name__]))"
)


def test_unchecked_versions_close_the_gate(tmp_path: Path) -> None:
    done = gate_closed_python(tmp_path, "-c", GATE_STATE)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [False, "Map"]


@pytest.mark.slow
def test_a_closed_gate_passes_the_request_path_suites(tmp_path: Path) -> None:
    """The sample suites, as they are, in a Python whose Werkzeug and Flask report versions
    not checked (about 20 s)."""
    deselect = [arg for test in NOT_WITHOUT_THE_GATE for arg in ("--deselect", test)]
    done = gate_closed_python(tmp_path / "metadata", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow",
                              *deselect, *SAMPLE)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" in done.stdout  # the cache's own tests skip
