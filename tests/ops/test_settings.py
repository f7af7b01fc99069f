"""The settings: one declaration (service/settings.py), the README's table that documents
it, the parsers, and the app factory that receives the result."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import service.settings as settings_module
from service.http import create_app
from service.http.app_settings import settings_of
from service.settings import (
    SOLVER_HARD_CAP_SECONDS,
    VARIABLES,
    CorsSettings,
    GunicornSettings,
    HttpSettings,
    OpsSettings,
    Settings,
    StateProtection,
    StateProtectionSettings,
    Variable,
    WebSettings,
    read_gunicorn_settings,
    read_settings,
)
from service.solver import SolverSettings
from tests.app_settings import result_key_for_tests, settings_for_tests

REPO = Path(__file__).resolve().parents[2]


def readme_table() -> dict[str, str]:
    """The README's configuration table: variable name -> default, as written (no backticks)."""
    text = (REPO / "README.md").read_text()
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    table: dict[str, str] = {}
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        names_cell, default_cell, _meaning = (cell.strip() for cell in line.strip().strip("|").split("|"))
        names = re.findall(r"`([A-Z0-9_]+)`", names_cell)
        # One row for several variables has one quoted default each.
        defaults = [default_cell.replace("`", "")] if len(names) == 1 else re.findall(r"`([^`]*)`", default_cell)
        assert len(defaults) == len(names), line
        for name, default in zip(names, defaults, strict=True):
            assert name not in table, f"{name} has two rows"
            table[name] = default
    return table


def haproxy_defaults() -> dict[str, str]:
    """The variables deploy/haproxy.cfg reads, with the defaults it sets for them."""
    text = (REPO / "deploy" / "haproxy.cfg").read_text()
    return dict(re.findall(r'^\s*presetenv\s+(\w+)\s+"([^"]*)"', text, flags=re.MULTILINE))


# --- the declaration and the README ---------------------------------------------------------

def test_the_readme_table_lists_every_variable_with_its_default() -> None:
    declared = {v.name: v.documented_default for v in VARIABLES}
    assert readme_table() == {**declared, **haproxy_defaults()}


def test_every_declared_variable_is_listed_once() -> None:
    in_module = {v.name for v in vars(settings_module).values() if isinstance(v, Variable)}
    names = [v.name for v in VARIABLES]
    assert len(names) == len(set(names))
    assert set(names) == in_module


class RecordingEnvironment(dict[str, str]):
    """An empty environment that notes every variable asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.append(key)
        return super().get(key, default)


def test_every_declared_variable_is_read_by_exactly_one_reader() -> None:
    app_env, server_env = RecordingEnvironment(), RecordingEnvironment()
    read_settings(app_env)
    read_gunicorn_settings(server_env)
    assert not set(app_env.asked) & set(server_env.asked)
    assert sorted(app_env.asked + server_env.asked) == sorted(v.name for v in VARIABLES)


def test_only_the_settings_module_reads_the_environment() -> None:
    readers = re.compile(r"os\.environ|getenv|environ\.get")
    offenders = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "service").rglob("*.py"))
        if path != REPO / "service" / "settings.py" and readers.search(path.read_text())
    ]
    assert offenders == []
    gunicorn_conf = (REPO / "deploy" / "gunicorn.conf.py").read_text()
    assert not re.search(r"os\.environ\.get|os\.environ\[[\"']|getenv", gunicorn_conf)


def deploy_environments() -> dict[str, dict[str, str]]:
    """The environments the deploy files give the API: compose's and the Kubernetes
    Deployment's (values from elsewhere, like the CPU limit, stand in as "1")."""
    compose = yaml.safe_load((REPO / "deploy" / "compose.yaml").read_text())
    envs = {f"compose:{name}": {k: str(v) for k, v in service.get("environment", {}).items()}
            for name, service in compose["services"].items()}
    for path in sorted((REPO / "deploy" / "k8s").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc["kind"] == "Deployment":
                for container in doc["spec"]["template"]["spec"]["containers"]:
                    envs[f"k8s:{container['name']}"] = {e["name"]: str(e.get("value", "1")) for e in container["env"]}
    return envs


@pytest.mark.parametrize("where", sorted(deploy_environments()))
def test_the_deploy_files_set_only_declared_variables_to_readable_values(where: str) -> None:
    environ = deploy_environments()[where]
    assert set(environ) <= {v.name for v in VARIABLES} | set(haproxy_defaults())
    read_settings(environ)
    read_gunicorn_settings(environ)


# --- the defaults ---------------------------------------------------------------------------

def test_the_defaults() -> None:
    assert read_settings({}) == Settings(
        http=HttpSettings(max_body_bytes=65536, trusted_proxy_hops=0),
        cors=CorsSettings(allow_origins=frozenset({"*"}), max_age=600),
        web=WebSettings(asset_max_age=60),
        ops=OpsSettings(drain_file=None, metrics_dir=None),
        solver=SolverSettings(max_seconds=10.0, max_states=1_000_000, hint_seconds=1.0,
                              winnable_deal_seconds=2.0, winnable_deal_tries=10, processes=1, queue=1),
        state=StateProtectionSettings(mode=StateProtection.OPEN, keys=()),
    )
    assert read_gunicorn_settings({}) == GunicornSettings(
        host="127.0.0.1", port=8000, workers=None, threads=4, timeout=60,
        graceful_timeout=int(SOLVER_HARD_CAP_SECONDS) + 5, keepalive=5, max_requests=10000,
        max_requests_jitter=1000, drain_seconds=5.0, log_level="info",
    )


def test_blank_means_unset_except_where_empty_is_a_value() -> None:
    blank = {v.name: "  " for v in VARIABLES}
    assert read_settings({**blank, "CORS_ALLOW_ORIGINS": "*"}) == read_settings({})
    assert read_gunicorn_settings(blank) == read_gunicorn_settings({})
    assert read_settings({"CORS_ALLOW_ORIGINS": ""}).cors.allow_origins is None


def test_values_are_read_and_the_solver_budgets_capped() -> None:
    s = read_settings({
        "SOLVER_MAX_SECONDS": "600", "SOLVER_MAX_STATES": "5_000", "HINT_SECONDS": "45",
        "WINNABLE_DEAL_SECONDS": "0.25", "DRAIN_FILE": "/run/x/draining",
        "CORS_ALLOW_ORIGINS": "https://a.example/, https://b.example", "TRUSTED_PROXY_HOPS": "1",
    })
    assert s.solver.max_seconds == SOLVER_HARD_CAP_SECONDS and s.solver.hint_seconds == SOLVER_HARD_CAP_SECONDS
    assert s.solver.max_states == 5000 and s.solver.winnable_deal_seconds == 0.25
    assert s.ops.drain_file == Path("/run/x/draining")
    assert s.cors.allow_origins == frozenset({"https://a.example", "https://b.example"})
    assert s.http.trusted_proxy_hops == 1
    capped = read_settings({"SOLVER_MAX_SECONDS": "3", "HINT_SECONDS": "5", "WINNABLE_DEAL_SECONDS": "4"}).solver
    assert (capped.max_seconds, capped.hint_seconds, capped.winnable_deal_seconds) == (3, 3, 3)
    g = read_gunicorn_settings({"WEB_CONCURRENCY": "3", "LOG_LEVEL": "DEBUG", "GUNICORN_DRAIN_SECONDS": "0"})
    assert (g.workers, g.log_level, g.drain_seconds) == (3, "debug", 0.0)


# --- the parsers ----------------------------------------------------------------------------

BAD_VALUES = [
    ("MAX_BODY_BYTES", "64k"), ("MAX_BODY_BYTES", "0"), ("TRUSTED_PROXY_HOPS", "-1"),
    ("CORS_MAX_AGE", "ten"), ("WEB_ASSET_MAX_AGE", "1.5"),
    ("SOLVER_MAX_SECONDS", "-1"), ("SOLVER_MAX_SECONDS", "0"), ("SOLVER_MAX_SECONDS", "nan"),
    ("SOLVER_MAX_STATES", "0.5"), ("SOLVER_MAX_STATES", "0"), ("HINT_SECONDS", "soon"),
    ("WINNABLE_DEAL_SECONDS", "2s"), ("WINNABLE_DEAL_TRIES", "many"),
    ("PORT", "http"), ("WEB_CONCURRENCY", "0"), ("GUNICORN_THREADS", "four"), ("GUNICORN_TIMEOUT", "0"),
    ("GUNICORN_GRACEFUL_TIMEOUT", "-5"), ("GUNICORN_KEEPALIVE", "x"), ("GUNICORN_MAX_REQUESTS", "1e4"),
    ("GUNICORN_MAX_REQUESTS_JITTER", "-1"), ("GUNICORN_DRAIN_SECONDS", "-1"),
    ("SOLVER_PROCESSES", "-1"), ("SOLVER_QUEUE", "x"), ("REQUEST_READ_SECONDS", "0"),
    ("GUNICORN_WORKER_CONNECTIONS", "0"),
]


@pytest.mark.parametrize(("name", "raw"), BAD_VALUES)
def test_a_bad_value_stops_the_start_naming_the_variable(name: str, raw: str) -> None:
    environ = {name: raw}
    with pytest.raises(RuntimeError, match=rf"environment variable {name} must be .*, not {re.escape(repr(raw))}"):
        read_settings(environ)
        read_gunicorn_settings(environ)  # the gunicorn variables: the app's reader ignores them


def test_the_app_factory_refuses_a_bad_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WINNABLE_DEAL_TRIES", "lots")
    with pytest.raises(RuntimeError, match="WINNABLE_DEAL_TRIES"):
        create_app()


# --- the app factory ------------------------------------------------------------------------

def test_the_app_keeps_the_settings_it_is_given_and_sets_flask_config_from_them() -> None:
    settings = settings_for_tests(MAX_BODY_BYTES="1000")
    app = create_app(settings)
    assert settings_of(app) is settings
    assert app.config["MAX_CONTENT_LENGTH"] == 1000
    r = app.test_client().post("/v1/games/penguin/deals", data=b"{" + b" " * 1000 + b"}",
                               content_type="application/json")
    assert r.status_code == 413


def test_without_settings_the_app_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_BODY_BYTES", "2048")
    monkeypatch.setenv("HINT_SECONDS", "0.25")
    settings = settings_of(create_app())
    assert settings.http.max_body_bytes == 2048 and settings.solver.hint_seconds == 0.25


def test_the_test_settings_keep_searches_short() -> None:
    solver = settings_for_tests().solver
    assert solver.max_seconds <= 2 and solver.hint_seconds <= 0.5 and solver.winnable_deal_tries <= 3


# --- state protection (signed states) -------------------------------------------------------

SECRET_A = base64.b64encode(b"a" * 32).decode()
SECRET_B = base64.urlsafe_b64encode(b"\xfb" * 40).decode().rstrip("=")  # URL-safe, unpadded


def test_signed_mode_reads_its_key_ring_first_key_first() -> None:
    s = read_settings({"STATE_PROTECTION": "signed", "STATE_KEYS": f" k2:{SECRET_A} , k1:{SECRET_B}", **RESULT_RING}).state
    assert s.mode == StateProtection.SIGNED
    assert [(k.kid, k.secret) for k in s.keys] == [("k2", b"a" * 32), ("k1", b"\xfb" * 40)]
    assert SECRET_A not in repr(s) and "aaaa" not in repr(s)  # a settings object in a log shows no secret


def test_the_key_ring_may_come_from_a_file(tmp_path: Path) -> None:
    ring = tmp_path / "state-keys"
    ring.write_text(f"k2:{SECRET_A}\nk1:{SECRET_B}\n")
    s = read_settings({"STATE_PROTECTION": "signed", "STATE_KEYS_FILE": str(ring), **RESULT_RING}).state
    assert [k.kid for k in s.keys] == ["k2", "k1"]
    with pytest.raises(RuntimeError, match="STATE_KEYS_FILE: cannot read the key file"):
        read_settings({"STATE_KEYS_FILE": str(tmp_path / "missing")})
    with pytest.raises(RuntimeError, match="STATE_KEYS or STATE_KEYS_FILE, not both"):
        read_settings({"STATE_KEYS": f"k1:{SECRET_A}", "STATE_KEYS_FILE": str(ring)})


# The signed and sealed modes also need a result key ring (issue 28).
RESULT_RING = {"RESULT_KEYS": result_key_for_tests("r1")}


@pytest.mark.parametrize("environ", [{"STATE_PROTECTION": "signed"}, {"STATE_PROTECTION": "signed", "STATE_KEYS": " "}])
def test_signed_mode_refuses_to_start_without_a_key(environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RuntimeError, match="STATE_PROTECTION=signed needs a key ring: set STATE_KEYS or STATE_KEYS_FILE"):
        read_settings(environ)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(RuntimeError, match="STATE_KEYS"):
        create_app()


@pytest.mark.parametrize("mode", ["signed", "sealed"])
def test_protected_modes_need_a_key_and_unknown_modes_are_refused(mode: str) -> None:
    keys = {"STATE_KEYS": f"k1:{SECRET_A}", "DEAL_KEYS": f"d1:{SECRET_B}", **RESULT_RING}
    assert read_settings({"STATE_PROTECTION": mode, **keys}).state.mode == mode
    with pytest.raises(RuntimeError, match=f"STATE_PROTECTION={mode} needs a key ring"):
        read_settings({"STATE_PROTECTION": mode})
    with pytest.raises(RuntimeError, match="STATE_PROTECTION must be open or signed or sealed, not 'secret'"):
        read_settings({"STATE_PROTECTION": "secret"})


BAD_RINGS = [
    (",", "holds no key"),
    (f"k2 {SECRET_A}", "key 1 is not <id>:<base64 secret>"),
    (f"k1:{SECRET_A},:{SECRET_A}", "key 2 is not <id>:<base64 secret>"),
    (f"{'k' * 33}:{SECRET_A}", "key 1 is not <id>:<base64 secret>"),
    (f"k.1:{SECRET_A}", "key 1 is not <id>:<base64 secret>"),
    (f"k1:{SECRET_A},k1:{SECRET_B}", "key id 'k1' is listed twice"),
    ("k1:not*base64*at*all", r"key 1 \('k1'\) has a secret that is not base64"),
    (f"k1:{SECRET_A},k0:{base64.b64encode(b'31 bytes is one byte too short.').decode()}",
     r"key 2 \('k0'\) has a secret of 31 bytes; at least 32 random bytes are required"),
]


@pytest.mark.parametrize(("raw", "message"), BAD_RINGS)
def test_a_bad_key_ring_stops_the_start_without_showing_a_secret(raw: str, message: str) -> None:
    with pytest.raises(RuntimeError, match=f"environment variable STATE_KEYS.*{message}") as caught:
        read_settings({"STATE_KEYS": raw})  # read and refused in open mode too: a typo fails loudly
    text = str(caught.value)
    assert SECRET_A not in text and SECRET_B not in text and "base64*at" not in text


def test_an_app_built_with_signed_settings_and_no_key_is_refused() -> None:
    with pytest.raises(RuntimeError, match="needs a key ring"):
        StateProtectionSettings(StateProtection.SIGNED, ())
    assert StateProtectionSettings().mode == StateProtection.OPEN


# --- deal keys and daily challenges -----------------------------------------------------------

def test_sealed_mode_refuses_to_start_without_a_deal_key_and_says_how_to_migrate() -> None:
    with pytest.raises(RuntimeError, match=r"STATE_PROTECTION=sealed needs a deal key ring: set DEAL_KEYS or DEAL_KEYS_FILE.*first entry of STATE_KEYS"):
        read_settings({"STATE_PROTECTION": "sealed", "STATE_KEYS": f"k1:{SECRET_A}", **RESULT_RING})
    assert read_settings({"STATE_PROTECTION": "signed", "STATE_KEYS": f"k1:{SECRET_A}", **RESULT_RING}).state.deal_keys == ()


def test_the_deal_key_ring_is_read_apart_from_the_state_keys(tmp_path: Path) -> None:
    s = read_settings({"STATE_PROTECTION": "sealed", "STATE_KEYS": f"k1:{SECRET_A}", "DEAL_KEYS": f"d2:{SECRET_B},d1:{SECRET_A}", **RESULT_RING}).state
    assert [k.kid for k in s.keys] == ["k1"] and [(k.kid, k.secret) for k in s.deal_keys] == [("d2", b"\xfb" * 40), ("d1", b"a" * 32)]
    assert SECRET_B not in repr(s)
    ring = tmp_path / "deal-keys"
    ring.write_text(f"d1:{SECRET_B}\n")
    s = read_settings({"STATE_PROTECTION": "sealed", "STATE_KEYS": f"k1:{SECRET_A}", "DEAL_KEYS_FILE": str(ring), **RESULT_RING}).state
    assert [k.kid for k in s.deal_keys] == ["d1"]
    with pytest.raises(RuntimeError, match="DEAL_KEYS or DEAL_KEYS_FILE, not both"):
        read_settings({"DEAL_KEYS": f"d1:{SECRET_A}", "DEAL_KEYS_FILE": str(ring), **RESULT_RING})
    with pytest.raises(RuntimeError, match="environment variable DEAL_KEYS: key 1 is not"):
        read_settings({"DEAL_KEYS": "d1 nothing"})


def test_daily_past_days_defaults_to_a_year_and_a_day() -> None:
    assert read_settings({}).daily_past_days == 366
    assert read_settings({"DAILY_PAST_DAYS": "0"}).daily_past_days == 0
    with pytest.raises(RuntimeError, match="DAILY_PAST_DAYS must be at least 0"):
        read_settings({"DAILY_PAST_DAYS": "-1"})
