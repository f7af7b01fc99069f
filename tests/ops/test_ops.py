"""Operational behaviour in one process: health, readiness, metrics, request ids, CORS, logs,
and the gunicorn settings. The multi-process side (gunicorn workers, HAProxy) is in
test_load_balancer.py.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import flask
import pytest
from flask.testing import FlaskClient
from prometheus_client import REGISTRY

from service.gunicorn_worker import worker_refusal
from service.http import create_app
from service.http.observability import record_solver_run
from service.settings import SOLVER_HARD_CAP_SECONDS
from tests.app_settings import settings_for_tests

REPO = Path(__file__).resolve().parents[2]
DEALS = "/v1/games/<game:game_id>/deals"


def app_with(**environ: str) -> flask.Flask:
    """An app built with the test settings and ``environ`` (variable name -> text) on top."""
    return create_app(settings_for_tests(**environ))


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


# --- health and readiness ---------------------------------------------------------------

def test_healthz_is_ok_and_not_cached(client: FlaskClient) -> None:
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json == {"status": "ok"}
    assert r.headers["Cache-Control"] == "no-store"


def test_readyz_is_ready_until_the_drain_file_appears(tmp_path: Path) -> None:
    flag = tmp_path / "draining"
    client = app_with(DRAIN_FILE=str(flag)).test_client()
    assert client.get("/readyz").status_code == 200
    flag.touch()  # what the gunicorn master does on SIGTERM
    r = client.get("/readyz", headers={"X-Request-ID": "drain-1"})
    assert r.status_code == 503
    assert r.mimetype == "application/problem+json"
    assert r.json["code"] == "draining"
    assert r.json["request_id"] == "drain-1"
    assert client.get("/healthz").status_code == 200  # alive all the same: no restart


def test_readiness_reads_the_drain_file_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    flag = tmp_path / "draining"
    flag.touch()
    monkeypatch.setenv("DRAIN_FILE", str(flag))
    assert create_app().test_client().get("/readyz").status_code == 503  # no settings given: the environment's


def test_ops_endpoints_stay_out_of_the_contract(client: FlaskClient) -> None:
    paths = client.get("/openapi.json").json["paths"]
    assert not {"/healthz", "/readyz", "/metrics"} & set(paths)


# --- request ids ------------------------------------------------------------------------

def test_a_safe_request_id_is_echoed(client: FlaskClient) -> None:
    r = client.post("/v1/games/penguin/deals", json={"deal": 1}, headers={"X-Request-ID": "web-7f3a.2:x"})
    assert r.status_code == 200
    assert r.headers["X-Request-ID"] == "web-7f3a.2:x"


@pytest.mark.parametrize("bad", ["", "a" * 129, "two words", "tab\there", "é", "<script>"])
def test_an_unsafe_request_id_is_replaced(client: FlaskClient, bad: str) -> None:
    r = client.get("/healthz", headers={"X-Request-ID": bad})
    rid = r.headers["X-Request-ID"]
    assert rid != bad
    assert len(rid) == 32 and all(c in "0123456789abcdef" for c in rid)


def test_every_answer_has_an_id_and_error_bodies_carry_it(client: FlaskClient) -> None:
    r = client.post("/v1/games/no-such-game/deals", json={})
    assert r.status_code == 404
    assert r.json["request_id"] == r.headers["X-Request-ID"]
    other = client.post("/v1/games/no-such-game/deals", json={})
    assert other.headers["X-Request-ID"] != r.headers["X-Request-ID"]


def test_log_records_of_a_request_carry_its_id(caplog: pytest.LogCaptureFixture) -> None:
    app = app_with()

    @app.get("/_log-probe")
    def probe() -> str:
        logging.getLogger("service.probe").warning("probe")
        return "ok"

    with caplog.at_level(logging.WARNING, logger="service.probe"):
        app.test_client().get("/_log-probe", headers={"X-Request-ID": "log-1"})
    (record,) = [r for r in caplog.records if r.name == "service.probe"]
    assert record.request_id == "log-1"  # type: ignore[attr-defined]


# --- metrics ----------------------------------------------------------------------------

def test_requests_are_counted_and_timed_by_endpoint_and_status(client: FlaskClient) -> None:
    ok = {"method": "POST", "endpoint": DEALS, "status": "200"}
    missing = {"method": "POST", "endpoint": DEALS, "status": "404"}
    before = (sample("http_requests_total", **ok), sample("http_requests_total", **missing),
              sample("http_request_duration_seconds_count", **ok))
    client.post("/v1/games/penguin/deals", json={"deal": 2})
    client.post("/v1/games/nope/deals", json={"deal": 2})
    after = (sample("http_requests_total", **ok), sample("http_requests_total", **missing),
             sample("http_request_duration_seconds_count", **ok))
    assert [b - a for a, b in zip(before, after, strict=True)] == [1, 1, 1]


def test_unrouted_paths_share_one_label(client: FlaskClient) -> None:
    labels = {"method": "GET", "endpoint": "<unmatched>", "status": "404"}
    before = sample("http_requests_total", **labels)
    client.get("/no/such/path/1")
    client.get("/no/such/path/2")
    assert sample("http_requests_total", **labels) - before == 2


def test_solver_runs_are_counted_by_game_and_result() -> None:
    labels = {"game": "penguin", "result": "solved"}
    before = sample("solver_runs_total", **labels), sample("solver_run_duration_seconds_sum", **labels)
    record_solver_run("penguin", "solved", 0.25)
    after = sample("solver_runs_total", **labels), sample("solver_run_duration_seconds_sum", **labels)
    assert after[0] - before[0] == 1
    assert after[1] - before[1] == pytest.approx(0.25)


def test_metrics_endpoint_speaks_prometheus_text(client: FlaskClient) -> None:
    client.get("/healthz")
    r = client.get("/metrics")
    assert r.status_code == 200
    assert r.mimetype == "text/plain"
    text = r.get_data(as_text=True)
    assert "# TYPE http_requests_total counter" in text
    assert "# TYPE http_request_duration_seconds histogram" in text
    assert 'http_requests_total{endpoint="/healthz",method="GET",status="200"}' in text
    assert "# TYPE solver_runs_total counter" in text


# --- CORS -------------------------------------------------------------------------------

def test_cors_allows_any_origin_by_default_without_credentials(client: FlaskClient) -> None:
    r = client.post("/v1/games/penguin/deals", json={"deal": 1}, headers={"Origin": "https://game.example"})
    assert r.headers["Access-Control-Allow-Origin"] == "*"
    assert "X-Request-ID" in r.headers["Access-Control-Expose-Headers"]
    assert "Access-Control-Allow-Credentials" not in r.headers


def test_cors_preflight_is_answered(client: FlaskClient) -> None:
    r = client.options("/v1/games/penguin/moves", headers={
        "Origin": "https://game.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
    })
    assert r.status_code == 204
    assert r.headers["Access-Control-Allow-Origin"] == "*"
    assert "POST" in r.headers["Access-Control-Allow-Methods"]
    assert "Content-Type" in r.headers["Access-Control-Allow-Headers"]
    assert int(r.headers["Access-Control-Max-Age"]) > 0
    assert "Access-Control-Allow-Credentials" not in r.headers


def test_cors_can_list_origins() -> None:
    client = app_with(CORS_ALLOW_ORIGINS="https://a.example, https://b.example").test_client()
    allowed = client.get("/v1/games", headers={"Origin": "https://b.example"})
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://b.example"
    assert "Origin" in allowed.headers["Vary"]
    other = client.get("/v1/games", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers
    assert "Origin" in other.headers["Vary"]


def test_cors_can_be_switched_off() -> None:
    client = app_with(CORS_ALLOW_ORIGINS="").test_client()
    r = client.get("/v1/games", headers={"Origin": "https://game.example"})
    assert "Access-Control-Allow-Origin" not in r.headers
    preflight = client.options("/v1/games", headers={"Origin": "https://x.example", "Access-Control-Request-Method": "GET"})
    assert "Access-Control-Allow-Origin" not in preflight.headers


# --- proxy headers ----------------------------------------------------------------------

@pytest.mark.parametrize(("hops", "seen"), [(0, "127.0.0.1"), (1, "203.0.113.9")])
def test_client_address_comes_from_the_balancer_only_when_trusted(hops: int, seen: str) -> None:
    app = app_with(TRUSTED_PROXY_HOPS=str(hops))

    @app.get("/_addr-probe")
    def probe() -> str:
        return flask.request.remote_addr or ""

    r = app.test_client().get("/_addr-probe", headers={"X-Forwarded-For": "203.0.113.9"},
                              environ_base={"REMOTE_ADDR": "127.0.0.1"})
    assert r.get_data(as_text=True) == seen


# --- gunicorn settings ------------------------------------------------------------------

def gunicorn_settings(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Load deploy/gunicorn.conf.py in a fresh interpreter (it sets environment variables)."""
    code = (
        "import json, runpy; ns = runpy.run_path('deploy/gunicorn.conf.py'); "
        "print(json.dumps({k: ns[k] for k in ('bind', 'workers', 'threads', 'timeout', 'graceful_timeout', "
        "'max_requests', 'max_requests_jitter', 'worker_class', 'METRICS_DIR', 'DRAIN_PATH')}, default=str))"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GUNICORN_", "WEB_CONCURRENCY", "SOLVER_"))}
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env={**clean, **env},
                          capture_output=True, text=True, timeout=60)


def test_gunicorn_is_sized_from_the_cpus_and_outlasts_the_solver() -> None:
    run = gunicorn_settings({"PORT": "8123"})
    assert run.returncode == 0, run.stderr
    s = json.loads(run.stdout)
    assert s["bind"] == "127.0.0.1:8123"
    assert s["workers"] == len(os.sched_getaffinity(0))
    # The service's worker where it was checked on the installed gunicorn, else gunicorn's own.
    worker = "service.gunicorn_worker.WholeRequestWorker" if worker_refusal() is None else "gthread"
    assert s["worker_class"] == worker and s["threads"] >= 2
    assert s["timeout"] > SOLVER_HARD_CAP_SECONDS + 5  # whatever SOLVER_MAX_SECONDS says
    assert s["graceful_timeout"] >= SOLVER_HARD_CAP_SECONDS  # an in-flight solve may finish during a stop
    assert s["max_requests"] > 0 and s["max_requests_jitter"] > 0


def test_gunicorn_refuses_a_timeout_shorter_than_the_solver_budget() -> None:
    run = gunicorn_settings({"SOLVER_MAX_SECONDS": "20", "GUNICORN_TIMEOUT": "20"})
    assert run.returncode != 0
    assert "GUNICORN_TIMEOUT" in run.stderr


def test_gunicorn_refuses_searches_that_could_hold_every_thread() -> None:
    run = gunicorn_settings({"GUNICORN_THREADS": "4", "SOLVER_PROCESSES": "1", "SOLVER_QUEUE": "3"})
    assert run.returncode != 0
    assert "SOLVER_QUEUE" in run.stderr and "GUNICORN_THREADS" in run.stderr
    assert gunicorn_settings({"GUNICORN_THREADS": "4", "SOLVER_QUEUE": "2"}).returncode == 0


def test_gunicorn_refuses_a_bad_value_of_the_app_settings_before_any_worker_starts() -> None:
    run = gunicorn_settings({"WINNABLE_DEAL_TRIES": "many"})
    assert run.returncode != 0
    assert "environment variable WINNABLE_DEAL_TRIES" in run.stderr


def test_gunicorn_keeps_its_runtime_files_in_a_directory_of_its_own() -> None:
    run = gunicorn_settings({"DRAIN_FILE": "", "PROMETHEUS_MULTIPROC_DIR": " "})  # blank: unset
    assert run.returncode == 0, run.stderr
    s = json.loads(run.stdout)
    metrics, drain = Path(s["METRICS_DIR"]), Path(s["DRAIN_PATH"])
    assert metrics.parent == drain.parent and metrics.parent.name.startswith("patience-engine-")
    assert metrics.is_absolute() and drain.is_absolute()  # never the working directory, emptied at start
