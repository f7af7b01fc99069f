"""Writes contracts/consumers/examples.json: the example bodies the example consumers give
Pact's mock server, taken from the service's real answers (open mode, Penguin deal 1; sealed
mode, Forty Thieves deal 1) with every signature and sealed part replaced by a placeholder,
so that no signature is frozen in a pact. Run with the service's venv:
``.venv/bin/python -m contracts.consumers.make_examples`` (``make pact-examples``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from service.http import create_app
from service.settings import read_settings

OUT = Path(__file__).with_name("examples.json")
# Example-only keys (never a real ring's): the examples' signatures are replaced anyway.
EXAMPLE_KEYS = "example:" + "A" * 43 + ",older:" + "B" * 43
EXAMPLE_RESULT_KEYS = "example:" + "C" * 43  # the result key ring the signed and sealed modes need
PLACEHOLDER_MAC = "example-mac-not-a-real-signature-0123456789"  # 43 base64url characters
PLACEHOLDER_SEALED = "example-sealed-part-not-a-real-one"


def scrub(value: Any) -> Any:
    """``value`` with every ``signature.mac`` and ``sealed`` replaced by placeholders."""
    if isinstance(value, dict):
        out = {k: scrub(v) for k, v in value.items()}
        if isinstance(out.get("signature"), dict):
            out["signature"] = {"kid": "example", "mac": PLACEHOLDER_MAC}
        if "sealed" in out:
            out["sealed"] = PLACEHOLDER_SEALED
        if "request_id" in out:
            out["request_id"] = "0" * 32
        return out
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def play(mode: str, game: str) -> dict[str, Any]:
    """The answers of one play loop of ``game`` deal 1 in ``mode``."""
    env = {"SOLVER_PROCESSES": "0", "STATE_PROTECTION": mode}
    if mode != "open":
        env["STATE_KEYS"] = EXAMPLE_KEYS
        env["RESULT_KEYS"] = EXAMPLE_RESULT_KEYS
    client = create_app(read_settings(env)).test_client()
    base = f"/v1/games/{game}"

    def post(path: str, body: dict[str, Any]) -> Any:
        return client.post(base + path, json=body).get_json()

    dealt = post("/deals", {"deal": "1"})
    move = next(m for m in dealt["legal_moves"] if m["action"] == "move")
    moved = post("/moves", {"state": dealt["state"], "move": move})
    illegal = next(
        answer for answer in (
            post("/moves", {"state": dealt["state"], "move": {"action": "move", "from": f"tableau:{a}", "to": f"tableau:{b}", "count": 1}})
            for a in range(7) for b in range(7) if a != b
        ) if answer.get("code") == "illegal-move"
    )
    hint = post("/hint", {"state": dealt["state"]})
    solved = post("/solve", {"state": dealt["state"], "limits": {"max_seconds": 1}})
    solved["moves"] = solved["moves"][:2]
    replayed = post("/replays", {"deal": "1", "moves": [move]})
    unknown = client.post("/v1/games/no-such-game/deals", json={"deal": "1"}).get_json()
    return scrub({
        "deal": dealt, "move": move, "moved": moved, "illegal": illegal, "hint": hint,
        "solved": solved, "replayed": replayed, "unknown_game": unknown,
    })


def main() -> None:
    examples = {"open": play("open", "penguin"), "sealed": play("sealed", "forty-thieves")}
    OUT.write_text(json.dumps(examples, indent=1) + "\n")


if __name__ == "__main__":
    main()
