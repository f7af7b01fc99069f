"""No request can add a metrics series: 1,000 made-up methods and 1,000 made-up paths leave
``/metrics`` with the same series and the same size, give or take the digits of the
counters they move. Through the test client (one process) and a real gunicorn on
loopback (several workers, prometheus_client's multiprocess mode).
"""

from __future__ import annotations

import http.client
import re
from collections.abc import Iterator
from itertools import product
from pathlib import Path
from string import ascii_uppercase

import pytest
from flask.testing import FlaskClient

from service.http.observability import LABELLED_METHODS, OTHER_LABEL, UNMATCHED_ENDPOINT
from tests.ops.servers import Backend

MADE_UP = 1000
# Each series line may change by a few digits (a counter going from 1 to 1001, a histogram
# sum); anything beyond that is a new series.
DIGITS_PER_LINE = 12


def made_up_methods(count: int) -> list[str]:
    """Methods no one uses, made of capital letters (what gunicorn lets through)."""
    return ["X" + "".join(letters) for letters in product(ascii_uppercase, repeat=3)][:count]


def made_up_paths(count: int) -> list[str]:
    return [f"/no/such/{i}" for i in range(count)]


def series(body: str) -> set[str]:
    """The series of a Prometheus text body: each sample line without its value."""
    return {line.rsplit(" ", 1)[0] for line in body.splitlines() if line and not line.startswith("#")}


def changed_lines(before: str, after: str) -> int:
    return len(set(before.splitlines()) ^ set(after.splitlines()))


def assert_same_series(before: str, after: str) -> None:
    assert series(after) == series(before)
    assert abs(len(after) - len(before)) <= DIGITS_PER_LINE * changed_lines(before, after)


def test_method_labels_come_from_a_fixed_set(client: FlaskClient) -> None:
    client.open("/v1/games", method="XYZZY")
    body = client.get("/metrics").get_data(as_text=True)
    methods = set(re.findall(r'http_requests_total\{[^}]*method="([^"]*)"', body))
    assert "XYZZY" not in methods
    assert OTHER_LABEL in methods
    assert methods <= LABELLED_METHODS | {OTHER_LABEL}


@pytest.mark.slow
def test_made_up_methods_and_paths_add_no_series_in_one_process(client: FlaskClient) -> None:
    def scrape() -> str:
        return client.get("/metrics").get_data(as_text=True)

    # One of each first, so that the series they share exist before the first scrape.
    client.open("/v1/games", method="XAAAA")
    client.get("/no/such/path")
    client.post("/no/such/path")
    scrape()
    before = scrape()
    for method in made_up_methods(MADE_UP):
        client.open("/v1/games", method=method)
    for path in made_up_paths(MADE_UP):
        client.get(path)
    after = scrape()
    assert_same_series(before, after)
    assert f'endpoint="{UNMATCHED_ENDPOINT}"' in after


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[Backend]:
    backend = Backend("metrics", tmp_path, workers=2, threads=4)
    backend.start()
    try:
        yield backend
    finally:
        backend.kill()


def send_all(port: int, requests: list[tuple[str, str]]) -> list[int]:
    """Send each (method, path) on one keep-alive connection (a fresh one when the server
    closes it): the statuses."""
    statuses: list[int] = []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        for method, path in requests:
            for attempt in range(2):
                try:
                    conn.request(method, path)
                    r = conn.getresponse()
                    r.read()
                    statuses.append(r.status)
                    if r.getheader("Connection", "").lower() == "close":
                        conn.close()
                    break
                except (http.client.RemoteDisconnected, ConnectionError):
                    conn.close()
                    if attempt:
                        raise
    finally:
        conn.close()
    return statuses


@pytest.mark.slow
def test_made_up_methods_and_paths_add_no_series_under_gunicorn(server: Backend) -> None:
    def scrape() -> str:
        return send_and_read(server.port, "/metrics")

    send_all(server.port, [("XAAAA", "/v1/games"), ("GET", "/no/such/path"), ("POST", "/no/such/path")] * 4)
    scrape()
    before = scrape()
    statuses = send_all(server.port, [(m, "/v1/games") for m in made_up_methods(MADE_UP)])
    statuses += send_all(server.port, [("GET", p) for p in made_up_paths(MADE_UP)])
    assert len(statuses) == 2 * MADE_UP
    assert all(400 <= s < 500 for s in statuses), set(statuses)
    after = scrape()
    assert_same_series(before, after)
    metrics_files = list((server.dir / "metrics").iterdir())
    assert sum(f.stat().st_size for f in metrics_files) < 10 * 1024 * 1024


def send_and_read(port: int, path: str) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        assert r.status == 200
        return r.read().decode()
    finally:
        conn.close()
