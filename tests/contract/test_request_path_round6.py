"""The sixth round's shortcuts of the request path (issue 14) answer as the long ways they
stand for: matches remembered by the URL adapter (``RememberingAdapter``) with the
request's host (``ServiceFlask.create_url_adapter``), where the version gate has them on
(``FAST_ROUTING``), and views called without flask-smorest's response wrapper when they
answer with a response object (``body.Blueprint.response``). (Flask's steps of a request
are Flask's own again, issue 26; the tests of the app's hooks, signals and teardowns stay,
as tests of the answers.)

The reference for whole answers is the same app with Werkzeug's own URL map and Flask's
own adapter (:func:`flask_steps_app`: ``fast_routing=False``, the path the version gate
takes on a version not checked): every request below gets the same status, header list
(names, values, order), bytes and metrics from both. The remembered adapter gives way to
Flask's own when the app is configured otherwise (trusted hosts, a server name)."""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from functools import partial
from typing import Any

import flask
import pytest
from flask import Flask, signals
from marshmallow import Schema, fields
from prometheus_client import REGISTRY
from werkzeug.exceptions import HTTPException
from werkzeug.routing import BaseConverter, Map, MapAdapter
from werkzeug.test import EnvironBuilder
from werkzeug.wsgi import get_host

import service.http.app as app_module
from service.http import body, create_app
from service.http.app import FAST_ROUTING, RememberingAdapter, ServiceMap
from service.http.body import Blueprint
from tests.app_settings import settings_for_tests
from tests.contract.test_request_path_round5 import REQUESTS as ROUND5_REQUESTS
from tests.contract.test_request_path_round5 import fast_routing_only, move_bodies, wsgi_answer

# The step ServiceFlask takes its own way (where the version gate has it on).
SHORTENED_STEPS = ("create_url_adapter",)


def flask_steps_app() -> Flask:
    """The service's app with Werkzeug's own URL map and Flask's own adapter (its adapters
    remember nothing)."""
    app = create_app(settings_for_tests(), fast_routing=False)
    assert type(app.url_map) is Map
    return app


def metric_samples() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The request metrics' counts (requests, latency observations), by name and labels."""
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in REGISTRY.collect():
        if family.name in ("http_requests", "http_request_duration_seconds"):
            for sample in family.samples:
                if sample.name.endswith(("_total", "_count")):  # times (buckets, sums) differ run to run
                    out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def answer_and_metrics(app: Flask, method: str, path: str, kwargs: dict[str, Any]) -> tuple[Any, dict[Any, float]]:
    """One request's answer (:func:`wsgi_answer`) and what it added to the metrics."""
    before = metric_samples()
    answer = wsgi_answer(app, method, path, kwargs)
    after = metric_samples()
    return answer, {key: value - before.get(key, 0.0) for key, value in after.items() if value != before.get(key, 0.0)}


def more_requests() -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Requests beyond the fifth round's: refusals by the rules, redirects, odd hosts."""
    rid = {"X-Request-ID": "round6"}
    body = move_bodies(1)[0]
    illegal = {**body, "move": {"action": "move", "from": "foundation:0", "to": "tableau:0", "count": 1}}
    yield "POST", "/v1/games/penguin/moves", {"json": illegal, "headers": rid}
    yield "POST", "/v1/games/penguin/moves", {"json": {"state": {}, "move": {}}, "headers": rid}
    yield "POST", "/v1/games/penguin/legal-moves", {"json": {"state": body["state"]}, "headers": rid}
    yield "POST", "/v1/games/penguin/validate", {"json": {"state": body["state"]}, "headers": rid}
    yield "POST", "/v1/games/penguin/deals", {"data": b"x" * (2 << 20), "content_type": "application/json", "headers": rid}
    yield "GET", "/v1/games/penguin", {"headers": rid}
    yield "GET", "/v1/games/", {"headers": rid}
    yield "GET", "/play/", {"headers": rid}
    yield "GET", "/docs", {"headers": rid}
    yield "PUT", "/v1/games/penguin/moves", {"headers": rid}
    yield "BREW", "/v1/games", {"headers": rid}
    for host in ("b\u00fccher.example", "a b.example", "[::1]:8080", "example.org:80", ""):
        yield "GET", "/v1/games/penguin", {"headers": {**rid, "Host": host}}
    yield "GET", "/v1/games/penguin", {"headers": rid, "base_url": "https://example.org:443/"}
    yield "GET", "/v1/games/penguin", {"headers": rid, "base_url": "http://example.org/prefix/"}


REQUESTS = [*ROUND5_REQUESTS, *more_requests()]


@pytest.fixture(scope="module")
def ours_and_flasks() -> tuple[Flask, Flask]:
    """The service's app and :func:`flask_steps_app`, built once for every request kind (so
    that later kinds also meet adapters remembered by earlier ones)."""
    return create_app(settings_for_tests()), flask_steps_app()


@pytest.mark.parametrize(("method", "path", "kwargs"), REQUESTS, ids=[f"{m} {p}" for m, p, _ in REQUESTS])
def test_every_answer_and_metric_is_the_one_flasks_own_steps_give(
    ours_and_flasks: tuple[Flask, Flask], method: str, path: str, kwargs: dict[str, Any]
) -> None:
    for _ in range(2):  # the second time, the match and the host are remembered ones
        ours, flasks = (answer_and_metrics(app, method, path, kwargs) for app in ours_and_flasks)
        assert ours == flasks


# --- Flask's steps: the app's hooks, signals and teardowns -------------------------------

@pytest.fixture
def flask_steps_called(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of Flask's own steps (of :data:`SHORTENED_STEPS`) called from now on."""
    called: list[str] = []
    for step in SHORTENED_STEPS:
        flasks = getattr(Flask, step)

        def recording(self: Flask, *args: Any, _step: str = step, _flasks: Any = flasks, **kwargs: Any) -> Any:
            if getattr(self, "fast_routing", False) and not (_step == "create_url_adapter" and args[0] is None):
                called.append(_step)  # (an app context's adapter, outside a request, is always Flask's)
            return _flasks(self, *args, **kwargs)

        monkeypatch.setattr(Flask, step, recording)
    return called


@fast_routing_only
def test_the_service_takes_every_short_way(flask_steps_called: list[str]) -> None:
    app = create_app(settings_for_tests())
    client = app.test_client()
    body = move_bodies(1)[0]
    for _ in range(2):
        assert client.post("/v1/games/penguin/moves", json=body).status_code == 200
        assert client.get("/v1/games").status_code == 200
    assert flask_steps_called == []


def test_an_unexpected_error_is_answered_as_flask_answers_it(flask_steps_called: list[str]) -> None:
    apps = [create_app(settings_for_tests()), flask_steps_app()]
    for app in apps:
        @app.get("/boom")
        def boom() -> str:
            raise RuntimeError("boom")

    ours, theirs = (wsgi_answer(app, "GET", "/boom", {"headers": {"X-Request-ID": "r6"}}) for app in apps)
    assert ours == theirs and ours[0].startswith("500")
    assert flask_steps_called == []


def test_an_error_handlers_answer_is_finalized_by_flask() -> None:
    """Flask finalizes the answer of an error that escaped the error handlers in its safe
    mode (a failing hook is logged, not raised): that is Flask's own step."""
    app = create_app(settings_for_tests())

    @app.after_request
    def failing(response: flask.Response) -> flask.Response:
        raise RuntimeError("hook")

    with app.test_request_context("/v1/games"):
        answer = app.finalize_request(("failed", 500), from_error_handler=True)
    assert (answer.status_code, answer.data) == (500, b"failed")


SIGNALS = {
    "request_started": signals.request_started,
    "request_finished": signals.request_finished,
    "request_tearing_down": signals.request_tearing_down,
    "appcontext_tearing_down": signals.appcontext_tearing_down,
}


@pytest.mark.parametrize("name", list(SIGNALS))
def test_a_connected_signal_receiver_is_sent_to_by_flasks_step(name: str) -> None:
    signal = SIGNALS[name]
    app = create_app(settings_for_tests())
    received: list[Any] = []

    def receiver(sender: Any, **kwargs: Any) -> None:
        received.append(sender)

    with signal.connected_to(receiver, app):
        answer = app.test_client().get("/v1/games/penguin")
    assert answer.status_code == 200
    assert received == [app]


def test_a_blueprints_hooks_run_as_flask_runs_them() -> None:
    ran: list[str] = []
    apps = []
    for make in (lambda: create_app(settings_for_tests()), flask_steps_app):
        app = make()
        hooked = flask.Blueprint("hooked", __name__)

        @hooked.before_request
        def before() -> None:
            ran.append(f"before {flask.request.blueprint}")

        @hooked.after_request
        def after(response: flask.Response) -> flask.Response:
            ran.append("after")
            response.headers["X-Hooked"] = "1"
            return response

        @hooked.teardown_request
        def teardown(exc: BaseException | None) -> None:
            ran.append(f"teardown {exc!r}")

        @hooked.get("/hooked")
        def view() -> str:
            return "ok"

        app.register_blueprint(hooked)
        apps.append(app)
    answers = [wsgi_answer(app, "GET", "/hooked", {"headers": {"X-Request-ID": "r6"}}) for app in apps]
    assert answers[0] == answers[1] and ("X-Hooked", "1") in answers[0][1]
    assert ran == ["before hooked", "after", "teardown None"] * 2


def test_a_url_value_preprocessor_runs_as_flask_runs_it() -> None:
    app = create_app(settings_for_tests())
    seen: list[tuple[str | None, Any]] = []

    @app.url_value_preprocessor
    def note(endpoint: str | None, values: dict[str, Any] | None) -> None:
        seen.append((endpoint, dict(values or {})))

    assert app.test_client().get("/v1/games/penguin").status_code == 200
    assert seen == [("games.get_game_view", {"game_id": "penguin"})]


def test_teardown_functions_run_with_the_error() -> None:
    app = create_app(settings_for_tests())
    torn: list[str] = []

    @app.teardown_request
    def request_down(exc: BaseException | None) -> None:
        torn.append(f"request {exc!r}")

    @app.teardown_appcontext
    def app_down(exc: BaseException | None) -> None:
        torn.append(f"app {exc!r}")

    assert app.test_client().get("/v1/games/penguin").status_code == 200
    assert torn == ["request None", "app None"]


def test_a_before_request_answer_and_after_this_request_run_in_flasks_order() -> None:
    """The app's own hooks (one answering early, one added for this request alone) run in
    Flask's order."""
    app = create_app(settings_for_tests())
    ran: list[str] = []

    @app.before_request
    def early() -> Any:
        def later(response: flask.Response) -> flask.Response:
            ran.append("after this request")
            return response

        flask.after_this_request(later)
        return ("early", 203) if flask.request.path == "/early" else None

    @app.after_request
    def last(response: flask.Response) -> flask.Response:
        ran.append("after")
        return response

    answer = app.test_client().get("/early")
    assert (answer.status_code, answer.data, answer.headers["Access-Control-Allow-Origin"]) == (203, b"early", "*")
    assert ran == ["after this request", "after"]


# --- the request's host ------------------------------------------------------------------

HOSTS = ["api.example", "API.example:8080", "b\u00fccher.example", "a b.example", "[::1]:8080", "example.org:80", "", None]


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("base_url", ["http://localhost/", "https://localhost:443/", "http://10.0.0.1:8000/p/"])
def test_the_request_host_is_the_one_flask_sets(host: str | None, base_url: str) -> None:
    app = create_app(settings_for_tests())
    headers = [] if host is None else [("Host", host)]
    for _ in range(2):
        environ = EnvironBuilder(path="/v1/games", base_url=base_url, headers=headers).get_environ()
        if host is None:
            del environ["HTTP_HOST"]
        with app.request_context(environ) as ctx:
            assert ctx.request.host == get_host(environ)
            if FAST_ROUTING:  # (set by the adapter's creation, as Flask 3.1 sets it)
                assert ctx.request.__dict__["host"] == get_host(environ)
            assert isinstance(ctx.url_adapter, RememberingAdapter) is FAST_ROUTING


@pytest.mark.parametrize(
    "config", [{"TRUSTED_HOSTS": ["api.example"]}, {"SERVER_NAME": "api.example"}], ids=["trusted-hosts", "server-name"]
)
def test_with_trusted_hosts_or_a_server_name_the_adapter_is_flasks(
    config: dict[str, Any], flask_steps_called: list[str]
) -> None:
    ours = create_app(settings_for_tests())
    theirs = flask_steps_app()
    for app in (ours, theirs):
        app.config.update(config)
    for host in ("api.example", "evil.example"):
        kwargs = {"headers": {"X-Request-ID": "r6", "Host": host}}
        assert wsgi_answer(ours, "GET", "/v1/games/penguin", kwargs) == wsgi_answer(theirs, "GET", "/v1/games/penguin", kwargs)
    assert ("create_url_adapter" in flask_steps_called) is FAST_ROUTING  # (without the gate, always Flask's)


# --- remembered matches ------------------------------------------------------------------

def every_path(app: Flask) -> Iterator[tuple[str, str]]:
    """(method, path) of every rule of the app with sample values, and some that match none."""
    for rule in app.url_map.iter_rules():
        values = {name: "penguin" if name == "game_id" else "x.js" for name in rule.arguments}
        path = rule.rule
        for name, value in values.items():
            path = path.replace(f"<game:{name}>", value).replace(f"<path:{name}>", value).replace(f"<{name}>", value)
        for method in sorted(rule.methods or ()):
            yield method, path
    yield from [("GET", "/nowhere"), ("POST", "/v1/games"), ("GET", "/play/"), ("GET", "/v1/games/")]


def match_outcome(match: Any) -> Any:
    """What ``match()`` answers: its match, or the refusal it raises (kind, redirect, methods)."""
    try:
        return match()
    except HTTPException as e:  # a 404, 405 or redirect: the refusal itself is compared
        return type(e), getattr(e, "new_url", None), getattr(e, "valid_methods", None)


@fast_routing_only
def test_a_remembered_match_is_the_one_werkzeug_makes() -> None:
    app = create_app(settings_for_tests())
    for method, path in every_path(app):
        environ = EnvironBuilder(path=path, method=method).get_environ()
        adapter = app.url_map.bind_to_environ(environ, subdomain="")
        assert isinstance(adapter, RememberingAdapter)
        plain = app.url_map.bind_to_environ(dict(environ), server_name="localhost")  # never remembered
        for _ in range(2):
            ours = match_outcome(partial(adapter.match, return_rule=True))
            assert ours == match_outcome(partial(MapAdapter.match, plain, return_rule=True)), (method, path)
        assert match_outcome(adapter.match) == match_outcome(plain.match)  # other forms: Werkzeug's each time


def test_each_match_has_its_own_path_values() -> None:
    app = create_app(settings_for_tests())
    environ = EnvironBuilder(path="/v1/games/penguin/moves", method="POST").get_environ()
    adapter = app.url_map.bind_to_environ(environ, subdomain="")
    rule, values = adapter.match(return_rule=True)
    values.pop("game_id")  # type: ignore[attr-defined]  # as a URL value preprocessor may
    assert adapter.match(return_rule=True) == (rule, {"game_id": "penguin"})


@fast_routing_only
def test_refusals_are_not_remembered() -> None:
    app = create_app(settings_for_tests())
    for method, path in [("GET", "/nowhere"), ("GET", "/v1/games/penguin/moves"), ("GET", "/play/")]:
        adapter = app.url_map.bind_to_environ(EnvironBuilder(path=path, method=method).get_environ(), subdomain="")
        assert isinstance(adapter, RememberingAdapter)
        for _ in range(2):
            with pytest.raises(HTTPException):  # a 404, 405 or redirect, each time
                adapter.match(return_rule=True)
        assert adapter._found is None


class CountingConverter(BaseConverter):
    """A converter whose reading of a segment is not the segment alone (it counts)."""

    reads = 0

    def to_python(self, value: str) -> Any:
        CountingConverter.reads += 1
        return value


@fast_routing_only
def test_a_match_through_a_converter_of_its_own_is_made_each_time() -> None:
    url_map = ServiceMap([])
    url_map.converters["counting"] = CountingConverter
    url_map.add(app_module.Rule("/c/<counting:x>", endpoint="c"))
    adapter = url_map.bind_to_environ(EnvironBuilder(path="/c/a").get_environ())
    before = CountingConverter.reads
    for _ in range(3):
        assert adapter.match(return_rule=True)[1] == {"x": "a"}
    assert CountingConverter.reads == before + 3


def test_an_added_rule_drops_the_remembered_matches() -> None:
    app = create_app(settings_for_tests())
    app.add_url_rule("/late/<name>", "late_any", lambda name: f"any {name}")
    client = app.test_client()
    assert client.get("/late/one").data == b"any one"
    app._got_first_request = False  # let the test add a rule after a request
    app.add_url_rule("/late/one", "late_one", lambda: "one")
    assert client.get("/late/one").data == b"one"


@fast_routing_only
def test_distinct_paths_keep_the_remembered_adapters_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ServiceMap, "MAX_ADAPTERS", 16)
    app = create_app(settings_for_tests())
    client = app.test_client()
    rng = random.Random(6)
    for i in range(200):
        name = "".join(rng.choices(string.ascii_lowercase, k=12))
        path = f"/v1/games/{name}" if i % 2 else f"/{name}"
        assert client.get(path).status_code == 404
        assert len(app.url_map._adapters) <= 16  # type: ignore[attr-defined]
    assert client.get("/v1/games/penguin").status_code == 200


# --- the response wrapper ----------------------------------------------------------------

class Dumped(Schema):
    a = fields.Integer()


def answer_views(blp: Any) -> None:
    """Views of every kind of value a ``response`` view may answer with."""

    @blp.route("/response")
    @blp.response(200, Dumped)
    def response_object() -> flask.Response:
        return flask.jsonify({"a": "as is"})

    @blp.route("/value")
    @blp.response(201, Dumped)
    def value() -> dict[str, Any]:
        return {"a": 1, "b": "dropped by the schema"}

    @blp.route("/tuple")
    @blp.response(200, Dumped)
    def pair() -> tuple[dict[str, Any], int, dict[str, str]]:
        return {"a": 2}, 202, {"X-Extra": "1"}

    @blp.route("/response-tuple")
    @blp.response(200, Dumped)
    def response_pair() -> tuple[flask.Response, int]:
        return flask.jsonify({"a": 3}), 203

    @blp.route("/async")
    @blp.response(200, Dumped)
    async def later() -> dict[str, Any]:
        return {"a": 4}


def test_views_answer_as_through_flask_smorests_wrapper() -> None:
    from flask_smorest import Api
    from flask_smorest import Blueprint as SmorestBlueprint

    apps = []
    for blueprint_class in (Blueprint, SmorestBlueprint):
        app = Flask("answers")
        app.config.update(API_TITLE="t", API_VERSION="1", OPENAPI_VERSION="3.0.3")
        api = Api(app)
        blp = blueprint_class("answers", __name__)
        answer_views(blp)
        api.register_blueprint(blp)
        apps.append((app, api))
    for path in ["/response", "/value", "/tuple", "/response-tuple"]:  # (an async view needs asgiref)
        ours, theirs = (app.test_client().get(path) for app, _ in apps)
        assert (ours.status, ours.headers.to_wsgi_list(), ours.data) == (theirs.status, theirs.headers.to_wsgi_list(), theirs.data)
    assert apps[0][1].spec.to_dict() == apps[1][1].spec.to_dict()


@pytest.mark.skipif(not body.FAST_BLUEPRINT, reason="body.Blueprint's shortcuts are off on these versions")
def test_the_services_json_views_are_called_without_flask_smorests_wrapper() -> None:
    app = create_app(settings_for_tests())
    view = next(f for name, f in app.view_functions.items() if name.endswith(".play_move"))
    chain = []
    while hasattr(view, "__wrapped__"):
        chain.append(view.__code__.co_filename)
        view = view.__wrapped__
    assert view.__name__ == "play_move"
    assert not any("flask_smorest/response.py" in name for name in chain)
