"""What state protection costs: one POST /moves round trip through the Flask test client
in open, signed and sealed mode (``STATE_PROTECTION``), side by side in one run.

Per game, one random playout (fixed seed, restarting a deal when a game ends) is played
through the open app; each of its positions is then written as each mode answers it
(:func:`service.http.state_protection.answer_state`: signed, or sealed and signed, with
the app's own key ring), so that the three apps are sent the same positions and the same
moves. Sealed mode deals keyed layouts, so a playout of its own would not play the same
games: the sealed states here hold the open deal's cards, sealed with its number as seed,
which the sealed app opens like any state it answered. A first pass checks that the three
apps answer every request alike (status and legal moves) and warms them; then, in each of
a few rounds, each request is timed in the three modes in turn, the order rotating from
one request to the next, so that the machine's load moves the three figures alike. Medians per game and mode, their
ratios to open mode, and the median over all games.

Signed mode checks the state's MAC before reading it and signs the answer's state; sealed
mode also opens the sealed part (AES-GCM) and seals the answer's face-down cards. The
issue's target: each adds at most 15% to the open round trip (ratio at most 1.15), over
all games; the worst game is shown too. ``--profile GAME`` shows instead where a sealed
round trip's time goes (cProfile over the same requests, by cumulative time).

    .venv/bin/python -m bench.state_protection_bench [--requests 300] [--rounds 2] [--profile forty-thieves]
        [--games penguin,forty-thieves] [--clock cpu] [--through gunicorn]

``--clock cpu`` times each round trip by the CPU time of the bench's thread instead of the
wall clock: through the test client that is the app's own work, which other processes of a
shared machine cannot stretch by taking the CPU away (they still slow it down through the
caches they share).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import cProfile
import http.client
import json as json_module
import pstats
import secrets
import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from flask import Flask

from bench.http_bench import bodies as move_bodies
from bench.http_load_bench import Server
from service.engine.registry import GAME_CLASSES
from service.http import create_app
from service.http.app_settings import settings_of
from service.http.state_protection import answer_state, read_position
from service.settings import StateProtection, StateProtectionSettings, read_settings

TARGET_RATIO = 1.15
MODES = tuple(StateProtection)  # open first: the baseline
WARM_REQUESTS = 20  # per game and mode, timed by nobody

Body = dict[str, Any]  # a POST /moves request
class Poster(Protocol):
    """What the bench needs of a client: FlaskClient, or :class:`ServerClient`."""

    def post(self, url: str, json: Body) -> Any: ...


Clients = Mapping[StateProtection, Poster]
Bodies = Mapping[StateProtection, list[Body]]  # the same requests, as each mode's app answered their states


def environs() -> dict[StateProtection, dict[str, str]]:
    """Each mode's environment: default settings; the signed and sealed modes share a
    fresh two-key ring."""
    ring = ",".join(f"{kid}:{base64.b64encode(secrets.token_bytes(32)).decode()}" for kid in ("k2", "k1"))
    results = f"r1:{base64.b64encode(secrets.token_bytes(32)).decode()}"  # the result key ring these modes need
    environ = {mode: {"STATE_PROTECTION": mode.value, "STATE_KEYS": ring, "RESULT_KEYS": results} for mode in MODES}
    environ[StateProtection.OPEN] = {}  # the default: no ring
    return environ


def apps(environ: Mapping[StateProtection, dict[str, str]]) -> dict[StateProtection, Flask]:
    """One app per mode."""
    return {mode: create_app(read_settings(environ[mode])) for mode in MODES}


class ServerClient:
    """The part of FlaskClient's interface the bench uses, over one keep-alive HTTP/1.1
    connection to a real server on loopback."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def post(self, url: str, json: Body) -> ServerAnswer:
        payload = json_module.dumps(json).encode()
        self.connection.request("POST", url, payload, {"Content-Type": "application/json"})
        answer = self.connection.getresponse()
        return ServerAnswer(answer.status, answer.read())


class ServerAnswer:
    def __init__(self, status_code: int, data: bytes) -> None:
        self.status_code, self.data = status_code, data

    def get_json(self) -> Any:
        return json_module.loads(self.data)

    def get_data(self, as_text: bool = False) -> Any:
        return self.data.decode() if as_text else self.data


@contextlib.contextmanager
def servers(environ: Mapping[StateProtection, dict[str, str]]) -> Iterator[dict[StateProtection, Poster]]:
    """One gunicorn per mode (deploy/gunicorn.conf.py, one worker each, so that a request
    is always served by a warm process), and a keep-alive client of each."""
    started: list[Server] = []
    try:
        for mode in MODES:
            started.append(Server("service.wsgi:app", "", {**environ[mode], "WEB_CONCURRENCY": "1", "LOG_LEVEL": "warning"}))
        yield {mode: ServerClient(server.port) for mode, server in zip(MODES, started, strict=True)}
    finally:
        for server in started:
            server.stop()


def as_answered(app: Flask, game: str, body: Body) -> Body:
    """``body`` (an open-mode move request) with its state as ``app`` answers that position."""
    position = read_position(StateProtectionSettings(), game, body["state"])
    return {**body, "state": answer_state(settings_of(app).state, position)}


# What a round trip is timed with: the wall clock, or the CPU time of the bench's thread
# (through the test client, the app runs in it: a figure the other processes of a shared
# machine do not stretch by taking the CPU away; through gunicorn it counts only the client).
Clock = Callable[[], float]
CLOCKS: dict[str, Clock] = {"wall": time.perf_counter, "cpu": time.thread_time}


def round_trip(client: Poster, url: str, body: Body, clock: Clock = time.perf_counter) -> float:
    t0 = clock()
    r = client.post(url, json=body)
    elapsed = clock() - t0
    assert r.status_code == 200, r.get_data(as_text=True)
    return elapsed


def check_alike(clients: Clients, url: str, bodies: Bodies) -> None:
    """Every mode answers every request with the open answer's status and legal moves."""
    for i, open_body in enumerate(bodies[StateProtection.OPEN]):
        answers = {mode: clients[mode].post(url, json=bodies[mode][i]).get_json() for mode in MODES}
        seen = {mode: (a["status"], a["legal_moves"]) for mode, a in answers.items()}
        assert len(set(map(repr, seen.values()))) == 1, f"{url} request {i} ({open_body['move']}): the modes differ"


def time_game(clients: Clients, url: str, bodies: Bodies, rounds: int, clock: Clock) -> dict[StateProtection, list[float]]:
    """Seconds per request and mode over ``rounds`` passes of the requests, the modes'
    order rotating from one request to the next."""
    times: dict[StateProtection, list[float]] = {mode: [] for mode in MODES}
    for r in range(rounds):
        for i in range(len(bodies[StateProtection.OPEN])):
            for k in range(len(MODES)):
                mode = MODES[(r + i + k) % len(MODES)]
                times[mode].append(round_trip(clients[mode], url, bodies[mode][i], clock))
    return times


def mode_bodies(by_mode: Mapping[StateProtection, Flask], game: str, count: int) -> Bodies:
    """``count`` move requests of ``game`` for each mode: one open playout, each state as
    each mode answers it."""
    open_app = by_mode[StateProtection.OPEN]
    plain = move_bodies(open_app.test_client(), game, count)
    return {
        mode: plain if mode is StateProtection.OPEN else [as_answered(app, game, b) for b in plain]
        for mode, app in by_mode.items()
    }


def row(name: str, figures: list[float]) -> str:
    return f"{name:24}" + "".join(f"{f:13.3f}" for f in figures)


def compare(
    by_mode: Mapping[StateProtection, Flask],
    clients: Clients,
    through: str,
    requests: int,
    rounds: int,
    games: list[str],
    clock: Clock,
) -> None:
    """The comparison table: per game, then over all games, and the verdicts."""
    print(f"POST /moves round trip, {through}: {requests} requests per game and mode, {rounds} rounds, {clock.__name__}")
    print("medians in ms, and their ratios to open mode's")
    header = [f"{m.value} ms" for m in MODES] + [f"{m.value}/open" for m in MODES[1:]]
    print(f"{'game':24}" + "".join(f"{h:>13}" for h in header))
    every: dict[StateProtection, list[float]] = {mode: [] for mode in MODES}
    ratios: dict[StateProtection, dict[str, float]] = {mode: {} for mode in MODES[1:]}
    for game in games:
        url = f"/v1/games/{game}/moves"
        bodies = mode_bodies(by_mode, game, requests)
        check_alike(clients, url, bodies)
        for mode in MODES:
            for body in bodies[mode][:WARM_REQUESTS]:
                round_trip(clients[mode], url, body)
        times = time_game(clients, url, bodies, rounds, clock)
        medians = {mode: statistics.median(t) * 1e3 for mode, t in times.items()}
        for mode in MODES:
            every[mode] += times[mode]
        for mode in MODES[1:]:
            ratios[mode][game] = medians[mode] / medians[StateProtection.OPEN]
        print(row(game, [medians[m] for m in MODES] + [ratios[m][game] for m in MODES[1:]]))
    overall = {mode: statistics.median(t) * 1e3 for mode, t in every.items()}
    open_ms = overall[StateProtection.OPEN]
    print(row("all games", [overall[m] for m in MODES] + [overall[m] / open_ms for m in MODES[1:]]))
    for mode in MODES[1:]:
        ratio = overall[mode] / open_ms
        worst = max(ratios[mode], key=ratios[mode].__getitem__)
        verdict = "within" if ratio <= TARGET_RATIO else "OVER"
        print(
            f"{mode.value}/open, all games: {ratio:.3f} ({verdict} the target of {TARGET_RATIO}); "
            f"worst game {worst} {ratios[mode][worst]:.3f}"
        )


def profile(by_mode: Mapping[StateProtection, Flask], game: str, requests: int) -> None:
    """cProfile over ``requests`` sealed round trips of ``game``: the top functions by
    cumulative time, then by own time."""
    client = by_mode[StateProtection.SEALED].test_client()
    url = f"/v1/games/{game}/moves"
    bodies = mode_bodies(by_mode, game, requests)[StateProtection.SEALED]
    for body in bodies[:WARM_REQUESTS]:
        round_trip(client, url, body)
    profiler = cProfile.Profile()
    profiler.enable()
    for body in bodies:
        round_trip(client, url, body)
    profiler.disable()
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(25)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=300, help="POST /moves per game and mode")
    ap.add_argument("--rounds", type=int, default=2, help="timed passes over the requests")
    ap.add_argument("--profile", choices=list(GAME_CLASSES), help="profile sealed round trips of this game instead")
    ap.add_argument("--games", type=lambda text: text.split(","), default=list(GAME_CLASSES), help="games to compare, comma-separated (default: all)")
    ap.add_argument(
        "--through", choices=["test-client", "gunicorn"], default="test-client",
        help="the Flask test client (the app's own cost), or real gunicorn servers on loopback (what a client sees)",
    )
    ap.add_argument("--clock", choices=list(CLOCKS), default="wall", help="time round trips by the wall clock or by CPU time")
    args = ap.parse_args()
    environ = environs()
    by_mode = apps(environ)
    if args.profile:
        profile(by_mode, args.profile, args.requests)
    elif args.through == "gunicorn":
        with servers(environ) as clients:
            compare(by_mode, clients, "gunicorn on loopback, keep-alive", args.requests, args.rounds, args.games, CLOCKS[args.clock])
    else:
        clients = {mode: app.test_client() for mode, app in by_mode.items()}
        compare(by_mode, clients, "Flask test client", args.requests, args.rounds, args.games, CLOCKS[args.clock])


if __name__ == "__main__":
    main()
