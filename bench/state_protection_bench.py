"""What signed states cost: one POST /moves round trip through the Flask test client, in
open mode and in signed mode (STATE_PROTECTION=signed), side by side in one run.

Per game, the same positions (random playouts of a fixed seed, played once through each
app so that the signed app's states carry their signatures) are sent as
POST /v1/games/{game}/moves requests to both apps, interleaved request by request (the
order alternating) so that the machine's load moves both figures alike. Signed mode
verifies the state's MAC before reading it and signs the answer's state. The issue's
target: signing adds at most 15% to the open round trip (ratio at most 1.15).

    .venv/bin/python -m bench.state_protection_bench [--requests 300]
"""

from __future__ import annotations

import argparse
import base64
import random
import secrets
import statistics
import time
from typing import Any

from flask.testing import FlaskClient

from service.engine.registry import GAME_CLASSES
from service.http import create_app
from service.settings import read_settings

TARGET_RATIO = 1.15


def clients() -> tuple[FlaskClient, FlaskClient]:
    """An open app's client and a signed app's (a fresh two-key ring), default settings."""
    ring = ",".join(f"{kid}:{base64.b64encode(secrets.token_bytes(32)).decode()}" for kid in ("k2", "k1"))
    open_app = create_app(read_settings({}))
    signed_app = create_app(read_settings({"STATE_PROTECTION": "signed", "STATE_KEYS": ring}))
    return open_app.test_client(), signed_app.test_client()


def bodies(client: FlaskClient, game: str, count: int) -> list[dict[str, Any]]:
    """Move requests along random playouts (seed 7), restarting a deal when a game ends:
    the same positions for any app, each state as that app answered it."""
    rng = random.Random(7)
    out: list[dict[str, Any]] = []
    deal = 1
    while len(out) < count:
        pos = client.post(f"/v1/games/{game}/deals", json={"deal": deal}).get_json()
        deal += 1
        while pos["legal_moves"] and len(out) < count:
            body = {"state": pos["state"], "move": rng.choice(pos["legal_moves"])}
            out.append(body)
            pos = client.post(f"/v1/games/{game}/moves", json=body).get_json()
    return out


def round_trip(client: FlaskClient, url: str, body: dict[str, Any]) -> float:
    t0 = time.perf_counter()
    r = client.post(url, json=body)
    elapsed = time.perf_counter() - t0
    assert r.status_code == 200, r.get_data(as_text=True)
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--requests", type=int, default=300, help="POST /moves per game and mode")
    args = ap.parse_args()
    open_client, signed_client = clients()
    print(f"POST /moves round trip, Flask test client, {args.requests} requests per game and mode, interleaved")
    print(f"{'game':24} {'open ms':>8} {'signed ms':>10} {'signed/open':>12}")
    all_open: list[float] = []
    all_signed: list[float] = []
    ratios: list[float] = []
    for game in GAME_CLASSES:
        url = f"/v1/games/{game}/moves"
        open_bodies = bodies(open_client, game, args.requests)
        signed_bodies = bodies(signed_client, game, args.requests)
        assert [b["move"] for b in open_bodies] == [b["move"] for b in signed_bodies], "the playouts differ"
        for b in signed_bodies[:20]:  # warm both paths before timing
            round_trip(signed_client, url, b)
        for b in open_bodies[:20]:
            round_trip(open_client, url, b)
        open_times: list[float] = []
        signed_times: list[float] = []
        for i, (ob, sb) in enumerate(zip(open_bodies, signed_bodies, strict=True)):
            if i % 2:
                open_times.append(round_trip(open_client, url, ob))
                signed_times.append(round_trip(signed_client, url, sb))
            else:
                signed_times.append(round_trip(signed_client, url, sb))
                open_times.append(round_trip(open_client, url, ob))
        om, sm = statistics.median(open_times) * 1e3, statistics.median(signed_times) * 1e3
        ratios.append(sm / om)
        all_open += open_times
        all_signed += signed_times
        print(f"{game:24} {om:8.3f} {sm:10.3f} {sm / om:12.3f}")
    om, sm = statistics.median(all_open) * 1e3, statistics.median(all_signed) * 1e3
    print(f"{'all games':24} {om:8.3f} {sm:10.3f} {sm / om:12.3f}")
    worst = max(ratios)
    verdict = "within" if sm / om <= TARGET_RATIO else "OVER"
    print(f"signed/open, all games: {sm / om:.3f} ({verdict} the target of {TARGET_RATIO}); worst game {worst:.3f}")


if __name__ == "__main__":
    main()
