"""One HTTP apply round trip through the Flask test client: median and p99.

Per game, replays the same positions (random playouts of fixed seeds) as
POST /v1/games/{game}/moves requests. The baseline, in the same process and run, is a
trivial JSON endpoint on a bare Flask app called through the same test client: the
ratio says what our parsing, validation, engine and serialization cost on top of
Flask itself.

    .venv/bin/python bench/http_bench.py [--requests 300]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from flask.testing import FlaskClient
from werkzeug.test import TestResponse

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flask import Flask

from service.engine.registry import GAME_CLASSES
from service.http import create_app


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def trivial_app() -> Flask:
    """A bare Flask app: one POST route answering {"ok": true}, no hook, body unread."""
    app = Flask("baseline")

    @app.post("/echo")
    def echo() -> dict[str, bool]:
        return {"ok": True}

    return app


HOOKS_PATH = "/bench/echo"  # outside /v1: not part of the API (and never in the real app)


def hooks_app() -> Flask:
    """The service's app (settings from the environment) with one more POST route that
    answers {"ok": true}: a request to it goes through every hook of the service (request
    id, metrics, CORS, the strict body read and parse) and no view of it."""
    app = create_app()

    @app.post(HOOKS_PATH)
    def echo() -> dict[str, bool]:
        return {"ok": True}

    return app


def bodies(client: FlaskClient, game: str, count: int) -> list[dict]:
    """Move requests along random playouts, restarting a deal when a game ends."""
    rng = random.Random(7)
    out: list[dict] = []
    deal = 1
    while len(out) < count:
        pos = client.post(f"/v1/games/{game}/deals", json={"deal": deal}).get_json()
        deal += 1
        while pos["legal_moves"] and len(out) < count:
            move = rng.choice(pos["legal_moves"])
            body = {"state": pos["state"], "move": move}
            out.append(body)
            pos = client.post(f"/v1/games/{game}/moves", json=body).get_json()
    return out


def timed(call: Callable[[Any], TestResponse], items: Iterable[Any]) -> list[float]:
    out: list[float] = []
    for item in items:
        t0 = time.perf_counter()
        r = call(item)
        out.append(time.perf_counter() - t0)
        assert r.status_code == 200, r.get_data(as_text=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--requests", type=int, default=300)
    args = ap.parse_args()
    client = create_app().test_client()
    base_client = trivial_app().test_client()
    base = timed(lambda _: base_client.post("/echo", json={"x": 1}), range(args.requests))
    bm, b99 = statistics.median(base) * 1e3, percentile(base, 0.99) * 1e3
    print(f"baseline trivial endpoint: median {bm:.3f} ms, p99 {b99:.3f} ms")
    print(f"{'game':24} {'median ms':>9} {'p99 ms':>8} {'x baseline (median)':>20}")
    for game in GAME_CLASSES:
        items = bodies(client, game, args.requests)
        url = f"/v1/games/{game}/moves"
        lat = timed(lambda b: client.post(url, json=b), items)  # noqa: B023 (called at once)
        med, p99 = statistics.median(lat) * 1e3, percentile(lat, 0.99) * 1e3
        print(f"{game:24} {med:9.3f} {p99:8.3f} {med / bm:20.1f}")


if __name__ == "__main__":
    main()
