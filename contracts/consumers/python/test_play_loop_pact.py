"""The Python example consumer (pact-python 4, Pact V4): a bot's play loop against the
engine, recorded in open and sealed mode (and a signed mode key rotation) into
contracts/pacts/python-play-loop-patience-engine.json.

What it pins follows README's "Contract testing" section: values where the engine
promises them (an open deal's layout and its legal moves in order, statuses, problem
codes, the first event of a move), types or patterns where it does not (signatures,
sealed parts, search stats, request ids, texts). Every state it sends back is injected
by the provider state (``generate.provider_state("${state}")``): the example here is only
what the mock server answers, and no signature is frozen in the pact.

Run by ``make pact-record`` in contracts/.venv (contracts/requirements.txt)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

os.environ["PACT_DO_NOT_TRACK"] = "true"  # before pact is imported: nothing leaves the machine

from pact import Pact, generate, match

from .play_client import EngineProblem, PlayClient

CONSUMERS = Path(__file__).resolve().parents[1]
PACTS = Path(os.environ.get("PACT_OUTPUT_DIR") or CONSUMERS.parent / "pacts")  # elsewhere: tests/pact compares
EXAMPLES: dict[str, Any] = json.loads((CONSUMERS / "examples.json").read_text())
OPEN, SEALED = EXAMPLES["open"], EXAMPLES["sealed"]

# Patterns of what a consumer matches by form only.
CARD = r"^[A23456789TJQK][CDHS]$"
PILE = r"^[a-z][a-z_-]*:[0-9]+$"
KEY_ID = r"^[A-Za-z0-9_-]{1,32}$"
MAC = r"^[A-Za-z0-9_-]{43}$"
SEALED_PART = r"^[A-Za-z0-9_-]+={0,2}$"
RULE = r"^[a-z0-9]+(-[a-z0-9]+)*$"
ACTION = r"^(move|deal|redeal)$"
SHA256 = r"^[0-9a-f]{64}$"
RESULT = r"^(solved|unsolvable|unknown)$"
JSON = "application/json"
PROBLEM = "application/problem+json"


def injected(name: str, example: Any) -> Any:
    """A request value the provider state supplies (``${name}``), ``example`` at the mock."""
    return match.like(example, generator=generate.provider_state(f"${{{name}}}"))


def any_move(example: dict[str, Any]) -> Any:
    """Legal moves: every one has an ``action``; only card moves have from/to/count."""
    return match.each_like({"action": match.regex(example["action"], regex=ACTION)})


def card_move(example: dict[str, Any]) -> dict[str, Any]:
    return {
        "action": "move", "from": match.regex(example["from"], regex=PILE),
        "to": match.regex(example["to"], regex=PILE), "count": match.int(example["count"]),
    }


def signature() -> dict[str, Any]:
    return {"kid": match.regex("example", regex=KEY_ID), "mac": match.regex("A" * 43, regex=MAC)}


def signed_state(example: dict[str, Any], *, sealed: bool) -> dict[str, Any]:
    """A signed (or sealed) state: its game and deal pinned, its layout by type, its
    signature and sealed part by pattern."""
    state = {
        "format": 1, "game": example["game"], "deal": example["deal"],
        "options": match.like(example["options"]), "piles": match.like(example["piles"]),
        "counters": match.like(example["counters"]), "signature": signature(),
    }
    if sealed:
        state["face_down"] = match.like(example["face_down"])
        state["sealed"] = match.regex("c2VhbGVk", regex=SEALED_PART)
    return state


def stats() -> Any:
    """Search stats: all by type (they vary with the machine and the clock)."""
    return match.like({"states": 1, "seconds": 0.5, "states_per_second": 1.5, "max_seconds": 1.0, "max_states": 1})


def problem(code: str, status: int, example: dict[str, Any], **pinned: Any) -> dict[str, Any]:
    """A problem+json body: ``code`` and ``status`` pinned, texts and request id by type."""
    return {
        "status": status, "code": code, "title": match.str(example["title"]),
        "detail": match.str(example["detail"]), "request_id": match.str(example["request_id"]), **pinned,
    }


PACT_FILE = PACTS / "python-play-loop-patience-engine.json"


@pytest.fixture(scope="module", autouse=True)
def fresh_pact_file() -> None:
    """The pact file is written anew by this module's run (each interaction merges into it)."""
    PACTS.mkdir(exist_ok=True)
    PACT_FILE.unlink(missing_ok=True)


def interaction(description: str, state: str) -> tuple[Pact, Any]:
    """A pact of one interaction: one mock server per interaction, so that requests that
    differ only in injected values (a legal and an illegal move) never meet in one mock."""
    pact = Pact("python-play-loop", "patience-engine").with_specification("V4")
    return pact, pact.upon_receiving(description).given(state)


@contextmanager
def engine(pact: Pact, game: str) -> Iterator[PlayClient]:
    """The consumer's client of ``game`` on the pact's mock server; the interaction is
    merged into the pact file when it was played as recorded."""
    with pact.serve() as server:
        yield PlayClient(str(server.url), game)
    pact.write_file(PACTS, overwrite=False)


def test_open_play_loop() -> None:
    """Open mode: deal Penguin 1 (layout and legal moves pinned, in order), move, hint,
    solve, replay, an illegal move (409) and an unknown game (404)."""
    deal, moved, move = OPEN["deal"], OPEN["moved"], OPEN["move"]
    pact, new = interaction("open: a deal of Penguin 1", "the engine in open mode")
    (new.with_request("POST", "/v1/games/penguin/deals").with_body({"deal": "1"}, JSON)
        .will_respond_with(200).with_body(deal, JSON))  # all pinned: PySolFC's layout, legal moves in order
    with engine(pact, "penguin") as play:
        dealt = play.deal("1")
        assert dealt["legal_moves"][0] == move and dealt["status"] == "playing"

    pact, new = interaction("open: a move", "a Penguin deal 1")
    (new.with_request("POST", "/v1/games/penguin/moves")
        .with_body({"state": injected("state", deal["state"]), "move": injected("legal_move", move)}, JSON)
        .will_respond_with(200).with_body({
            "state": match.like(moved["state"]), "legal_moves": any_move(moved["legal_moves"][0]), "status": "playing",
            # The events in order: the move asked for comes first.
            "events": [{"type": "move", "from": match.regex(move["from"], regex=PILE),
                        "to": match.regex(move["to"], regex=PILE), "cards": match.each_like(match.regex("3D", regex=CARD))}],
        }, JSON))
    with engine(pact, "penguin") as play:
        assert play.move(dealt["state"], move)["events"][0]["type"] == "move"

    pact, new = interaction("open: an illegal move", "a Penguin deal 1")
    (new.with_request("POST", "/v1/games/penguin/moves")
        .with_body({"state": injected("state", deal["state"]), "move": injected("illegal_move", move)}, JSON)
        .will_respond_with(409).with_body(
            problem("illegal-move", 409, OPEN["illegal"], rule=match.regex(OPEN["illegal"]["rule"], regex=RULE)), PROBLEM))
    with engine(pact, "penguin") as play, pytest.raises(EngineProblem) as refused:
        play.move(dealt["state"], move)
    assert refused.value.code == "illegal-move"

    pact, new = interaction("open: a hint", "a Penguin deal 1")
    (new.with_request("POST", "/v1/games/penguin/hint").with_body({"state": injected("state", deal["state"])}, JSON)
        .will_respond_with(200).with_body({
            "move": match.like(card_move(OPEN["hint"]["move"])), "reason": match.str(OPEN["hint"]["reason"]),
            "winnable": True, "stats": stats(), "knowledge": "full", "samples": None,
        }, JSON))
    with engine(pact, "penguin") as play:
        assert play.hint(dealt["state"])["move"]["action"] == "move"

    pact, new = interaction("open: a solve", "a Penguin deal 1")
    (new.with_request("POST", "/v1/games/penguin/solve")
        .with_body({"state": injected("state", deal["state"]), "limits": {"max_seconds": 5}}, JSON)
        .will_respond_with(200).with_body({
            "result": "solved", "moves": match.each_like(card_move(OPEN["solved"]["moves"][0])),
            "stats": stats(), "knowledge": "full", "samples": None,
        }, JSON))
    with engine(pact, "penguin") as play:
        assert play.solve(dealt["state"], 5)["result"] == "solved"

    pact, new = interaction("open: a replay", "a Penguin game after 3 moves")
    result = OPEN["replayed"]["result"]
    (new.with_request("POST", "/v1/games/penguin/replays")
        .with_body({"deal": "1", "moves": injected("moves", [move])}, JSON)
        .will_respond_with(200).with_body({
            "state": match.like(OPEN["replayed"]["state"]), "legal_moves": any_move(move), "status": "playing",
            "moves": match.int(1),
            "result": match.like({**result, "moves_sha256": match.regex(result["moves_sha256"], regex=SHA256)}),
        }, JSON))
    with engine(pact, "penguin") as play:
        assert play.replay("1", [move])["status"] == "playing"

    pact, new = interaction("open: a deal of an unknown game", "the engine in open mode")
    (new.with_request("POST", "/v1/games/no-such-game/deals").with_body({"deal": "1"}, JSON)
        .will_respond_with(404).with_body(problem("unknown-game", 404, OPEN["unknown_game"]), PROBLEM))
    with engine(pact, "no-such-game") as play, pytest.raises(EngineProblem) as unknown:
        play.deal("1")
    assert unknown.value.status == 404


def test_sealed_play_loop() -> None:
    """Sealed mode, Forty Thieves: the same loop; states, signatures and sealed parts by
    type and pattern, search answers in player knowledge."""
    deal, moved, move = SEALED["deal"], SEALED["moved"], SEALED["move"]
    game = "/v1/games/forty-thieves"
    pact, new = interaction("sealed: a deal of Forty Thieves 1", "the engine in sealed mode")
    (new.with_request("POST", game + "/deals").with_body({"deal": "1"}, JSON)
        .will_respond_with(200).with_body({
            "deal": "1", "state": signed_state(deal["state"], sealed=True),
            "legal_moves": any_move(deal["legal_moves"][0]), "status": "playing",
        }, JSON))
    with engine(pact, "forty-thieves") as play:
        dealt = play.deal("1")
        assert "sealed" in dealt["state"] and "signature" in dealt["state"]

    pact, new = interaction("sealed: a move", "a sealed Forty Thieves deal 1")
    (new.with_request("POST", game + "/moves")
        .with_body({"state": injected("state", deal["state"]), "move": injected("legal_move", move)}, JSON)
        .will_respond_with(200).with_body({
            "state": signed_state(moved["state"], sealed=True), "legal_moves": any_move(moved["legal_moves"][0]),
            "status": "playing",
            "events": [{"type": "move", "from": match.regex(move["from"], regex=PILE),
                        "to": match.regex(move["to"], regex=PILE), "cards": match.each_like(match.regex("AD", regex=CARD))}],
        }, JSON))
    with engine(pact, "forty-thieves") as play:
        assert play.move(dealt["state"], move)["events"][0]["type"] == "move"

    pact, new = interaction("sealed: an illegal move", "a sealed Forty Thieves game after 10 moves")
    (new.with_request("POST", game + "/moves")
        .with_body({"state": injected("state", deal["state"]), "move": injected("illegal_move", move)}, JSON)
        .will_respond_with(409).with_body(
            problem("illegal-move", 409, SEALED["illegal"], rule=match.regex(SEALED["illegal"]["rule"], regex=RULE)), PROBLEM))
    with engine(pact, "forty-thieves") as play, pytest.raises(EngineProblem) as refused:
        play.move(dealt["state"], move)
    assert refused.value.code == "illegal-move"

    pact, new = interaction("sealed: a hint", "a sealed Forty Thieves game after 10 moves")
    (new.with_request("POST", game + "/hint").with_body({"state": injected("state", deal["state"])}, JSON)
        .will_respond_with(200).with_body({
            "move": match.like({"action": match.regex(move["action"], regex=ACTION)}),
            "reason": match.str(SEALED["hint"]["reason"]), "stats": stats(), "knowledge": "player",
            "samples": match.like({"won": 0, "of": 8}),
        }, JSON))
    with engine(pact, "forty-thieves") as play:
        assert play.hint(dealt["state"])["knowledge"] == "player"

    pact, new = interaction("sealed: a solve", "a sealed Forty Thieves game after 10 moves")
    (new.with_request("POST", game + "/solve")
        .with_body({"state": injected("state", deal["state"]), "limits": {"max_seconds": 1}}, JSON)
        .will_respond_with(200).with_body({
            "result": match.regex(SEALED["solved"]["result"], regex=RESULT),
            "moves": match.type([{"action": match.regex("move", regex=ACTION)}], min=0),
            "stats": stats(), "knowledge": "player", "samples": match.like({"won": 0, "of": 8}),
        }, JSON))
    with engine(pact, "forty-thieves") as play:
        assert play.solve(dealt["state"], 1)["knowledge"] == "player"

    pact, new = interaction("sealed: a replay", "a sealed Forty Thieves game after 10 moves")
    (new.with_request("POST", game + "/replays")
        .with_body({"deal": "1", "moves": injected("moves", [move])}, JSON)
        .will_respond_with(200).with_body({
            "state": signed_state(SEALED["replayed"]["state"], sealed=True),
            "legal_moves": any_move(move), "status": "playing", "moves": match.int(1),
            "result": match.like({
                "game": "forty-thieves", "deal": "1", "state_protection": "sealed",
                "moves_sha256": match.regex("0" * 64, regex=SHA256), "signature": signature(),
            }),
        }, JSON))
    with engine(pact, "forty-thieves") as play:
        assert play.replay("1", [move])["result"]["state_protection"] == "sealed"

    pact, new = interaction("sealed: a deal of an unknown game", "the engine in sealed mode")
    (new.with_request("POST", "/v1/games/no-such-game/deals").with_body({"deal": "1"}, JSON)
        .will_respond_with(404).with_body(problem("unknown-game", 404, SEALED["unknown_game"]), PROBLEM))
    with engine(pact, "no-such-game") as play, pytest.raises(EngineProblem) as unknown:
        play.deal("1")
    assert unknown.value.code == "unknown-game"


def test_key_rotation_and_won_game() -> None:
    """Signed mode: a state signed with a retired key still plays (its answer is signed
    again, under the current key); one signed with a removed key is refused with 403
    ``state-key-unknown``; a won game has no legal move left."""
    example = OPEN["deal"]["state"] | {"signature": {"kid": "older", "mac": "A" * 43}}
    move = OPEN["move"]
    pact, new = interaction("signed: a move from a state signed with a retired key", "a state signed with a retired key")
    (new.with_request("POST", "/v1/games/penguin/moves")
        .with_body({"state": injected("state", example), "move": injected("legal_move", move)}, JSON)
        .will_respond_with(200).with_body({
            "state": signed_state(OPEN["moved"]["state"], sealed=False), "legal_moves": any_move(move),
            "status": "playing", "events": match.each_like({"type": "move"}),
        }, JSON))
    with engine(pact, "penguin") as play:
        assert play.move(example, move)["state"]["signature"]["kid"]

    pact, new = interaction("signed: a move from a state signed with a removed key", "a state signed with a removed key")
    (new.with_request("POST", "/v1/games/penguin/moves")
        .with_body({"state": injected("state", example), "move": injected("legal_move", move)}, JSON)
        .will_respond_with(403).with_body(problem("state-key-unknown", 403, OPEN["unknown_game"]), PROBLEM))
    with engine(pact, "penguin") as play, pytest.raises(EngineProblem) as refused:
        play.move(example, move)
    assert refused.value.code == "state-key-unknown"

    pact, new = interaction("open: the legal moves of a won game", "a won game")
    (new.with_request("POST", "/v1/games/penguin/legal-moves")
        .with_body({"state": injected("state", OPEN["deal"]["state"])}, JSON)
        .will_respond_with(200).with_body({"legal_moves": [], "status": "won"}, JSON))
    with engine(pact, "penguin") as play:
        assert play.legal_moves(OPEN["deal"]["state"])["status"] == "won"
