"""Record the v1 wire corpus, ``tests/golden/wire_v1.json``: request/answer pairs of the v1
API as it answers today, which tests/contract/test_wire_compat.py replays against the
working tree to hold v1 to its wire format.

Re-recording is a deliberate act: it declares the answers of the code it runs on to be
the v1 contract. Record from a checkout of the commit that defines it, not from a tree
being edited, e.g.::

    git worktree add /tmp/wire-head <commit>      # then copy the built *.so files over
    cd /tmp/wire-head && PYTHONPATH=. python -m tests.contract.record_wire_v1 --out <repo>/tests/golden/wire_v1.json

The pairs are built by playing the API (a deal's state is sent back, a solver's moves
replayed...), so every request is one a client could send; each is stored as sent and
answered. Searches are bounded by ``max_states`` (or finish well inside the hint budget)
so that their answers do not depend on the machine's speed: the recorder refuses an
answer a clock stopped, and records everything twice and refuses any difference but the
ones test_wire_compat.py normalises.

This module also holds what the recorder and the test share: the apps' settings
(:data:`MODES`), :func:`send` and :func:`normalise`.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from service.http import create_app
from tests.app_settings import SMALL_SOLVER_BUDGETS, TEST_STATE_KEYS, settings_for_tests

CORPUS_PATH = Path(__file__).resolve().parents[1] / "golden" / "wire_v1.json"

# The settings of each mode's app, in full (as environment variables): stored in the
# corpus, so that a change of the tests' defaults does not change what is replayed.
MODES: dict[str, dict[str, str]] = {
    "open": dict(SMALL_SOLVER_BUDGETS),
    "signed": {**SMALL_SOLVER_BUDGETS, "STATE_PROTECTION": "signed", "STATE_KEYS": TEST_STATE_KEYS},
}

GAMES = [
    "penguin", "penguin-ii", "opus", "pelican", "penguin-freecell-moves", "small-billee",
    "boomerang", "amazons", "abandon-hope", "binary-star", "forty-thieves",
]

# Placeholders of the values test_wire_compat.py does not compare.
ANY_NUMBER = "<number>"
ANY_REQUEST_ID = "<request-id>"
REQUEST_ID_HEADER = "X-Request-ID"
# The time a hint's reason states (service/solver/answers.py's hint: "found in 0.01 s").
HINT_TIMING = re.compile(r"\b(found in|no solution found within) \d+\.\d\d s\b")
UNCOMPARED_HEADERS = frozenset({"content-length"})  # follows the body's bytes (spacing, key order), not its content

Json = Any
Pair = dict[str, Any]


def make_app(environ: dict[str, str]) -> Flask:
    """The app under ``environ`` (the tests' settings, with the corpus's values on top)."""
    app = create_app(settings_for_tests(**environ))
    app.testing = True
    return app


def send(client: FlaskClient, request: dict[str, Any]) -> dict[str, Any]:
    """Send a recorded ``request`` and return its answer as the corpus stores it: status,
    headers (but ``Content-Length``) and body (parsed JSON; ``text`` if it is not JSON).

    A request has ``method``, ``path``, optional ``headers``, and a body: ``json`` (sent
    as JSON with ``Content-Type: application/json`` unless ``headers`` name another) or
    ``data`` (sent as that text, with only the headers given), or none."""
    headers = dict(request.get("headers", {}))
    data: bytes | None = None
    if "json" in request:
        data = json.dumps(request["json"]).encode()
        headers.setdefault("Content-Type", "application/json")
    elif "data" in request:
        data = request["data"].encode()
    answer = client.open(request["path"], method=request["method"], data=data, headers=headers)
    kept = {name: value for name, value in answer.headers.items() if name.lower() not in UNCOMPARED_HEADERS}
    raw = answer.get_data(as_text=True)
    try:
        return {"status": answer.status_code, "headers": kept, "body": json.loads(raw)}
    except ValueError:
        return {"status": answer.status_code, "headers": kept, "text": raw}


def header(headers: dict[str, str], name: str) -> str | None:
    """A header's value, its name matched case-insensitively."""
    return next((v for k, v in headers.items() if k.lower() == name.lower()), None)


def is_number(value: Json) -> bool:
    return type(value) in (int, float)


def normalise(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` with the values that legitimately vary between two runs replaced by
    placeholders, each only where it is expected and only when it has its expected form
    (so that a value of the wrong form still shows as a difference):

    - the request id, when the request sent none (the server makes a new one): the
      ``X-Request-ID`` header and a problem's ``request_id``, if they are equal strings;
    - a search's ``stats.seconds`` and ``stats.states_per_second`` (timings), if numbers,
      in answers of ``/solve`` and ``/hint``, and the seconds a hint's ``reason`` states
      (``found in 0.01 s``, ``no solution found within 0.50 s``: :data:`HINT_TIMING`);
    - the order of the methods an ``Allow`` header lists (Werkzeug lists a set: the order
      changes with the process's hash seed); they are sorted.

    >>> normalise({"path": "/v1/games/x/hint"}, {"status": 200, "headers": {"X-Request-ID": "a1"},
    ...     "body": {"stats": {"seconds": 0.1, "states_per_second": 9.0, "states": 3}}})["body"]["stats"]
    {'seconds': '<number>', 'states_per_second': '<number>', 'states': 3}
    >>> normalise({"path": "/v1/games/x/hint"}, {"status": 200, "headers": {},
    ...     "body": {"reason": "first move of a solution of 9 move(s) found in 0.02 s", "stats": {}}})["body"]["reason"]
    'first move of a solution of 9 move(s) found in <number> s'
    """
    out = copy.deepcopy(answer)
    body = out.get("body")
    out["headers"] = {k: (", ".join(sorted(v.split(", "))) if k.lower() == "allow" else v) for k, v in out["headers"].items()}
    if header(request.get("headers", {}), REQUEST_ID_HEADER) is None:
        rid = header(out["headers"], REQUEST_ID_HEADER)
        if isinstance(rid, str) and rid:
            if isinstance(body, dict) and "request_id" in body:
                if body["request_id"] == rid:
                    body["request_id"] = ANY_REQUEST_ID
                    out["headers"] = {k: (ANY_REQUEST_ID if k.lower() == REQUEST_ID_HEADER.lower() else v) for k, v in out["headers"].items()}
            else:
                out["headers"] = {k: (ANY_REQUEST_ID if k.lower() == REQUEST_ID_HEADER.lower() else v) for k, v in out["headers"].items()}
    if request.get("path", "").endswith(("/solve", "/hint")) and isinstance(body, dict) and isinstance(body.get("stats"), dict):
        for name in ("seconds", "states_per_second"):
            if is_number(body["stats"].get(name)):
                body["stats"][name] = ANY_NUMBER
        if request["path"].endswith("/hint") and isinstance(body.get("reason"), str):
            body["reason"] = HINT_TIMING.sub(rf"\1 {ANY_NUMBER} s", body["reason"])
    return out


# --- recording -------------------------------------------------------------------------


class Recorder:
    """Sends requests to one mode's app and keeps each pair under a unique name."""

    def __init__(self, mode: str, pairs: list[Pair]) -> None:
        self.mode = mode
        self.client = make_app(MODES[mode]).test_client()
        self.pairs = pairs

    def __call__(
        self, name: str, method: str, path: str, *, json_body: Json = None, data: str | None = None,
        headers: dict[str, str] | None = None, expect: int = 200,
    ) -> Json:
        """Send the request, keep the pair, and return the answer's body (``expect``: the
        status the recording must get, so that a scenario that went wrong is noticed)."""
        request: dict[str, Any] = {"method": method, "path": path}
        if headers:
            request["headers"] = headers
        if json_body is not None:
            request["json"] = json_body
        elif data is not None:
            request["data"] = data
        answer = send(self.client, request)
        if answer["status"] != expect or "body" not in answer:
            raise SystemExit(f"{name}: expected {expect}, got {answer['status']}: {answer.get('body', answer.get('text'))}")
        stats = answer["body"].get("stats") if isinstance(answer["body"], dict) else None
        if isinstance(stats, dict) and stats.get("stopped_by") == "time":
            raise SystemExit(f"{name}: the search was stopped by the clock; its answer would not be stable")
        if any(p["name"] == name for p in self.pairs):
            raise SystemExit(f"two pairs are named {name!r}")
        self.pairs.append({"name": name, "mode": self.mode, "request": request, "answer": answer})
        return answer["body"]


def client_written(state: Json) -> Json:
    """A state as a client writes it: the deal a JSON integer, options and counters left out."""
    return {"format": state["format"], "game": state["game"], "deal": int(state["deal"]), "piles": state["piles"]}


def with_a_card_doubled(state: Json) -> Json:
    """``state`` with the second card of its first non-empty tableau pile copied over the first."""
    broken = copy.deepcopy(state)
    pile = next(p for p in broken["piles"]["tableau"] if len(p) >= 2)
    pile[0] = pile[1]
    return broken


def first_of_each_action(moves: list[Json]) -> Iterator[Json]:
    seen: set[str] = set()
    for move in moves:
        if move["action"] not in seen:
            seen.add(move["action"])
            yield move


def record_open(rec: Recorder) -> None:
    """The open mode's pairs: every operation, every game's deal, and the main refusals."""
    v1 = "/v1/games"
    rec("list-games", "GET", v1)
    for game in GAMES:
        rec(f"get-game/{game}", "GET", f"{v1}/{game}")
    rec("get-game/unknown-404", "GET", f"{v1}/no-such-game", expect=404)
    rec("get-game/with-request-id", "GET", f"{v1}/pelican", headers={REQUEST_ID_HEADER: "wire-v1-replay-1"})
    rec("get-game/unknown-404-with-request-id", "GET", f"{v1}/nope", headers={REQUEST_ID_HEADER: "wire-v1-replay-2"}, expect=404)
    rec("unknown-path-404", "GET", "/v1/nothing-here", expect=404)

    # Deals: every game as a JSON integer; strings, options and winnable on a few.
    dealt: dict[str, Json] = {}
    for game in GAMES:
        dealt[game] = rec(f"deal/{game}/int", "POST", f"{v1}/{game}/deals", json_body={"deal": 1})
    rec("deal/penguin/string", "POST", f"{v1}/penguin/deals", json_body={"deal": "7"})
    rec("deal/forty-thieves/string-20-digits", "POST", f"{v1}/forty-thieves/deals", json_body={"deal": "12345678901234567890"})
    rec("deal/amazons/zero", "POST", f"{v1}/amazons/deals", json_body={"deal": 0})
    rec("deal/opus/options", "POST", f"{v1}/opus/deals", json_body={"deal": 3, "options": {"cells": 4, "runs": "whole"}})
    rec("deal/penguin/winnable", "POST", f"{v1}/penguin/deals", json_body={"deal": 1, "winnable": True})
    rec("deal/bad-deal-400", "POST", f"{v1}/penguin/deals", json_body={"deal": "x"}, expect=400)
    rec("deal/unknown-field-400", "POST", f"{v1}/penguin/deals", json_body={"deal": 1, "colour": "red"}, expect=400)
    rec("deal/malformed-json-400", "POST", f"{v1}/penguin/deals", data='{"deal": 1', headers={"Content-Type": "application/json"}, expect=400)
    rec("deal/unknown-game-404", "POST", f"{v1}/no-such-game/deals", json_body={"deal": 1}, expect=404)
    rec("deal/get-405", "GET", f"{v1}/penguin/deals", expect=405)
    rec("deal/text-plain-415", "POST", f"{v1}/penguin/deals", data="deal=1", headers={"Content-Type": "text/plain"}, expect=415)
    rec("deal/bad-options-422", "POST", f"{v1}/penguin/deals", json_body={"deal": 1, "options": {"cells": 99}}, expect=422)
    rec("deal/unknown-option-422", "POST", f"{v1}/binary-star/deals", json_body={"deal": 1, "options": {"cells": 2}}, expect=422)

    # Moves: every game's first move with each autoplay, and the first move of each other action.
    for game in GAMES:
        position = dealt[game]
        first = position["legal_moves"][0]
        rec(f"moves/{game}/none", "POST", f"{v1}/{game}/moves", json_body={"state": position["state"], "move": first, "autoplay": "none"})
        rec(f"moves/{game}/safe", "POST", f"{v1}/{game}/moves", json_body={"state": position["state"], "move": first, "autoplay": "safe"})
        for move in first_of_each_action(position["legal_moves"]):
            if move["action"] != "move":
                rec(f"moves/{game}/{move['action']}", "POST", f"{v1}/{game}/moves", json_body={"state": position["state"], "move": move})
    for game in ("penguin", "forty-thieves"):
        rec(f"moves/{game}/client-written-state", "POST", f"{v1}/{game}/moves",
            json_body={"state": client_written(dealt[game]["state"]), "move": dealt[game]["legal_moves"][0]})

    # Solutions: solve (full), then find along each solution a move whose safe autoplay adds moves.
    solutions: dict[str, Json] = {}
    for game in ("penguin", "pelican", "boomerang", "small-billee", "amazons", "abandon-hope"):
        solutions[game] = rec(f"solve/{game}/full", "POST", f"{v1}/{game}/solve",
                              json_body={"state": dealt[game]["state"], "limits": {"max_states": 20000}, "knowledge": "full"})
        assert solutions[game]["result"] == "solved", (game, solutions[game]["result"])
    for game in ("penguin", "boomerang", "small-billee"):
        record_a_cascade(rec, game, dealt[game]["state"], solutions[game]["moves"])

    # Refusals of /moves.
    penguin = dealt["penguin"]
    illegal = {"action": "move", "from": "tableau:0", "to": "foundation:0", "count": 1}
    rec("moves/illegal-409", "POST", f"{v1}/penguin/moves", json_body={"state": penguin["state"], "move": illegal}, expect=409)
    rec("moves/no-such-pile-409", "POST", f"{v1}/penguin/moves",
        json_body={"state": penguin["state"], "move": {"action": "move", "from": "tableau:9", "to": "cell:0", "count": 1}}, expect=409)
    rec("moves/deal-in-penguin-409", "POST", f"{v1}/penguin/moves", json_body={"state": penguin["state"], "move": {"action": "deal"}}, expect=409)
    rec("moves/unreadable-move-422", "POST", f"{v1}/penguin/moves",
        json_body={"state": penguin["state"], "move": {"action": "move", "from": "tableau:0", "count": 1}}, expect=422)
    rec("moves/unknown-group-pile", "POST", f"{v1}/penguin/moves",
        json_body={"state": penguin["state"], "move": {"action": "move", "from": "tableau:0", "to": "nowhere:0", "count": 1}}, expect=409)
    rec("moves/no-count-400", "POST", f"{v1}/penguin/moves",
        json_body={"state": penguin["state"], "move": {"action": "move", "from": "tableau:0", "to": "cell:0"}}, expect=400)
    rec("moves/unknown-action-400", "POST", f"{v1}/penguin/moves", json_body={"state": penguin["state"], "move": {"action": "fly"}}, expect=400)
    rec("moves/bad-autoplay-400", "POST", f"{v1}/penguin/moves",
        json_body={"state": penguin["state"], "move": penguin["legal_moves"][0], "autoplay": "always"}, expect=400)
    rec("moves/no-state-400", "POST", f"{v1}/penguin/moves", json_body={"move": penguin["legal_moves"][0]}, expect=400)
    rec("moves/invalid-state-422", "POST", f"{v1}/penguin/moves",
        json_body={"state": with_a_card_doubled(penguin["state"]), "move": penguin["legal_moves"][0]}, expect=422)
    rec("moves/other-games-state-422", "POST", f"{v1}/opus/moves", json_body={"state": penguin["state"], "move": penguin["legal_moves"][0]}, expect=422)
    rec("moves/unknown-game-404", "POST", f"{v1}/no-such-game/moves", json_body={"state": penguin["state"], "move": penguin["legal_moves"][0]}, expect=404)
    rec("moves/text-plain-415", "POST", f"{v1}/penguin/moves", data=json.dumps({"state": penguin["state"], "move": illegal}),
        headers={"Content-Type": "text/plain"}, expect=415)

    # Legal moves and validate: answered states, client-written ones, a won one, broken ones.
    for game in ("penguin", "small-billee", "amazons", "forty-thieves"):
        rec(f"legal-moves/{game}", "POST", f"{v1}/{game}/legal-moves", json_body={"state": dealt[game]["state"]})
        rec(f"validate/{game}", "POST", f"{v1}/{game}/validate", json_body={"state": dealt[game]["state"]})
    for game in ("penguin", "forty-thieves"):
        rec(f"legal-moves/{game}/client-written-state", "POST", f"{v1}/{game}/legal-moves", json_body={"state": client_written(dealt[game]["state"])})
        rec(f"validate/{game}/client-written-state", "POST", f"{v1}/{game}/validate", json_body={"state": client_written(dealt[game]["state"])})
    rec("validate/invalid-state", "POST", f"{v1}/penguin/validate", json_body={"state": with_a_card_doubled(penguin["state"])})
    rec("validate/forty-thieves/invalid-state", "POST", f"{v1}/forty-thieves/validate", json_body={"state": with_a_card_doubled(dealt["forty-thieves"]["state"])})
    rec("legal-moves/invalid-state-422", "POST", f"{v1}/penguin/legal-moves", json_body={"state": with_a_card_doubled(penguin["state"])}, expect=422)
    rec("legal-moves/unknown-field-400", "POST", f"{v1}/penguin/legal-moves", json_body={"state": penguin["state"], "extra": 1}, expect=400)
    rec("validate/unknown-game-404", "POST", f"{v1}/no-such-game/validate", json_body={"state": penguin["state"]}, expect=404)
    rec("validate/bad-format-400", "POST", f"{v1}/penguin/validate", json_body={"state": {**penguin["state"], "format": 2}}, expect=400)

    # Replays: a solution replayed to `won`, with safe autoplay, and refused ones.
    won = rec("replays/penguin/solution", "POST", f"{v1}/penguin/replays", json_body={"deal": 1, "moves": solutions["penguin"]["moves"]})
    assert won["status"] == "won", won["status"]
    rec("replays/pelican/solution-string-deal", "POST", f"{v1}/pelican/replays",
        json_body={"deal": "1", "moves": solutions["pelican"]["moves"], "autoplay": "none"})
    rec("replays/boomerang/safe", "POST", f"{v1}/boomerang/replays",
        json_body={"deal": 1, "moves": solutions["boomerang"]["moves"][:5], "autoplay": "safe"})
    rec("replays/forty-thieves/first-moves", "POST", f"{v1}/forty-thieves/replays",
        json_body={"deal": 1, "moves": [dealt["forty-thieves"]["legal_moves"][0]]})
    rec("replays/opus/options-no-moves", "POST", f"{v1}/opus/replays", json_body={"deal": 2, "options": {"cells": 6}, "moves": []})
    rec("replays/illegal-409", "POST", f"{v1}/penguin/replays", json_body={"deal": 1, "moves": [solutions["penguin"]["moves"][0], illegal]}, expect=409)
    rec("replays/unreadable-move-422", "POST", f"{v1}/penguin/replays",
        json_body={"deal": 1, "moves": [{"action": "move", "from": "tableau:0", "count": 1}]}, expect=422)
    rec("replays/no-moves-400", "POST", f"{v1}/penguin/replays", json_body={"deal": 1}, expect=400)
    rec("replays/unknown-game-404", "POST", f"{v1}/no-such-game/replays", json_body={"deal": 1, "moves": []}, expect=404)

    # Searches: exact (Penguin family, Binary Star, opus proved lost), sampled (stock games), a won position.
    for game in ("penguin", "opus", "penguin-ii", "binary-star"):
        rec(f"hint/{game}/full", "POST", f"{v1}/{game}/hint", json_body={"state": dealt[game]["state"], "knowledge": "full"})
    rec("hint/penguin/player-exact", "POST", f"{v1}/penguin/hint", json_body={"state": dealt["penguin"]["state"], "knowledge": "player"})
    rec("hint/penguin/default-knowledge-client-written", "POST", f"{v1}/penguin/hint", json_body={"state": client_written(dealt["penguin"]["state"])})
    rec("hint/small-billee/full", "POST", f"{v1}/small-billee/hint", json_body={"state": dealt["small-billee"]["state"]})
    rec("hint/abandon-hope/player-sampled", "POST", f"{v1}/abandon-hope/hint", json_body={"state": dealt["abandon-hope"]["state"], "knowledge": "player"})
    rec("hint/small-billee/player-sampled", "POST", f"{v1}/small-billee/hint", json_body={"state": dealt["small-billee"]["state"], "knowledge": "player"})
    rec("hint/penguin/won", "POST", f"{v1}/penguin/hint", json_body={"state": won["state"]})
    rec("legal-moves/penguin/won", "POST", f"{v1}/penguin/legal-moves", json_body={"state": won["state"]})
    rec("hint/bad-knowledge-400", "POST", f"{v1}/penguin/hint", json_body={"state": dealt["penguin"]["state"], "knowledge": "psychic"}, expect=400)
    rec("hint/limits-refused-400", "POST", f"{v1}/penguin/hint", json_body={"state": dealt["penguin"]["state"], "limits": {"max_states": 5}}, expect=400)
    rec("solve/opus/unsolvable", "POST", f"{v1}/opus/solve", json_body={"state": dealt["opus"]["state"], "limits": {"max_states": 20000}})
    rec("solve/penguin/client-written-default-limits", "POST", f"{v1}/penguin/solve", json_body={"state": client_written(dealt["penguin"]["state"])})
    rec("solve/penguin/states-limit-unknown", "POST", f"{v1}/penguin/solve", json_body={"state": dealt["penguin"]["state"], "limits": {"max_states": 50}})
    rec("solve/forty-thieves/full-states-limit", "POST", f"{v1}/forty-thieves/solve",
        json_body={"state": dealt["forty-thieves"]["state"], "limits": {"max_states": 3000}, "knowledge": "full"})
    rec("solve/forty-thieves/player-sampled", "POST", f"{v1}/forty-thieves/solve",
        json_body={"state": dealt["forty-thieves"]["state"], "limits": {"max_states": 3000}, "knowledge": "player"})
    rec("solve/small-billee/player-sampled", "POST", f"{v1}/small-billee/solve",
        json_body={"state": dealt["small-billee"]["state"], "limits": {"max_states": 20000}, "knowledge": "player"})
    rec("solve/abandon-hope/player-states-limit", "POST", f"{v1}/abandon-hope/solve",
        json_body={"state": dealt["abandon-hope"]["state"], "limits": {"max_states": 2000}, "knowledge": "player"})
    rec("solve/penguin/won", "POST", f"{v1}/penguin/solve", json_body={"state": won["state"], "limits": {"max_states": 100}})
    rec("solve/bad-limits-400", "POST", f"{v1}/penguin/solve", json_body={"state": dealt["penguin"]["state"], "limits": {"max_states": 0}}, expect=400)
    rec("solve/invalid-state-422", "POST", f"{v1}/penguin/solve", json_body={"state": with_a_card_doubled(penguin["state"])}, expect=422)
    rec("solve/unknown-game-404", "POST", f"{v1}/no-such-game/solve", json_body={"state": penguin["state"]}, expect=404)


def record_a_cascade(rec: Recorder, game: str, state: Json, solution: list[Json]) -> None:
    """Play ``solution`` from ``state`` until a move whose safe autoplay plays more than the
    move itself, and record that move with ``none`` and with ``safe``."""
    client = rec.client
    path = f"/v1/games/{game}/moves"
    for move in solution:
        safe = send(client, {"method": "POST", "path": path, "json": {"state": state, "move": move, "autoplay": "safe"}})
        if len(safe["body"]["events"]) > 1:
            rec(f"moves/{game}/cascade-none", "POST", path, json_body={"state": state, "move": move, "autoplay": "none"})
            rec(f"moves/{game}/cascade-safe", "POST", path, json_body={"state": state, "move": move, "autoplay": "safe"})
            return
        state = send(client, {"method": "POST", "path": path, "json": {"state": state, "move": move}})["body"]["state"]
    raise SystemExit(f"{game}: no move of the solution autoplays")


def record_signed(rec: Recorder) -> None:
    """The signed mode's pairs: signed answers, a signed state played, and the 403s."""
    v1 = "/v1/games"
    rec("signed/get-game", "GET", f"{v1}/penguin")
    dealt = rec("signed/deal", "POST", f"{v1}/penguin/deals", json_body={"deal": 1})
    first = dealt["legal_moves"][0]
    rec("signed/moves", "POST", f"{v1}/penguin/moves", json_body={"state": dealt["state"], "move": first, "autoplay": "safe"})
    rec("signed/legal-moves", "POST", f"{v1}/penguin/legal-moves", json_body={"state": dealt["state"]})
    rec("signed/solve", "POST", f"{v1}/penguin/solve", json_body={"state": dealt["state"], "limits": {"max_states": 50}})
    rec("signed/replay", "POST", f"{v1}/penguin/replays", json_body={"deal": 1, "moves": [first]})
    unsigned = {k: v for k, v in dealt["state"].items() if k != "signature"}
    rec("signed/unsigned-403", "POST", f"{v1}/penguin/moves", json_body={"state": unsigned, "move": first}, expect=403)
    flipped = copy.deepcopy(dealt["state"])
    tableau = flipped["piles"]["tableau"]
    tableau[0][-1], tableau[1][-1] = tableau[1][-1], tableau[0][-1]
    rec("signed/changed-state-403", "POST", f"{v1}/penguin/moves", json_body={"state": flipped, "move": first}, expect=403)
    rec("signed/client-written-403", "POST", f"{v1}/penguin/validate", json_body={"state": client_written(dealt["state"])}, expect=403)
    bad_mac = copy.deepcopy(dealt["state"])
    bad_mac["signature"]["mac"] = "not a mac"
    rec("signed/malformed-signature-403", "POST", f"{v1}/penguin/hint", json_body={"state": bad_mac}, expect=403)


RECORDINGS: dict[str, Callable[[Recorder], None]] = {"open": record_open, "signed": record_signed}


def record() -> list[Pair]:
    """Every pair, in order."""
    pairs: list[Pair] = []
    for mode, scenario in RECORDINGS.items():
        scenario(Recorder(mode, pairs))
    return pairs


def commit_of(repo: Path) -> str:
    """The commit checked out where the recorded code lies (``unknown`` outside git)."""
    try:
        return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    """Record twice, check the two agree once normalised, and write the corpus."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=CORPUS_PATH, help="where to write the corpus (default: %(default)s)")
    args = parser.parse_args(argv)
    first, second = record(), record()
    unstable = [
        a["name"] for a, b in zip(first, second, strict=True)
        if a["request"] != b["request"] or normalise(a["request"], a["answer"]) != normalise(b["request"], b["answer"])
    ]
    if unstable:
        print("answers that differ between two recordings:", ", ".join(unstable), file=sys.stderr)
        return 1
    import service

    corpus = {
        "about": "v1 request/answer pairs replayed by tests/contract/test_wire_compat.py; re-record with "
                 "`python -m tests.contract.record_wire_v1` (see its docstring).",
        "recorded_from": commit_of(Path(service.__file__).resolve().parents[1]),
        "modes": MODES,
        "pairs": first,
    }
    args.out.write_text(json.dumps(corpus, indent=None, separators=(",", ":"), ensure_ascii=False).replace('},{"name"', '},\n{"name"') + "\n")
    print(f"{len(first)} pairs written to {args.out} ({args.out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
