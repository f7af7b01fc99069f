"""Golden deals: a few deals of every game pinned as JSON, so a deal never changes.

docs/rules.md makes the shuffle part of the public contract: once released, deal N of a
game never changes. If a change here is intended (a bug in matching PySolFC), rewrite
the file with ``GOLDEN_UPDATE=1 pytest tests/rules/test_golden_deals.py`` and say why in
the commit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from service.engine.notation import state_to_json
from service.engine.registry import GAME_CLASSES, get_game

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "deals.json"
DEALS = (0, 1, 2, 31999, 32000, 123456789, 98765432109876543210)


def current() -> dict[str, dict[str, dict]]:
    out: dict[str, dict[str, dict]] = {}
    for gid in GAME_CLASSES:
        game = get_game(gid)
        out[gid] = {str(d): state_to_json(game, game.initial_state(d)) for d in DEALS}
    return out


def test_golden_file_covers_every_game() -> None:
    if os.environ.get("GOLDEN_UPDATE"):
        GOLDEN.write_text(json.dumps(current(), indent=1) + "\n")
    assert set(json.loads(GOLDEN.read_text())) == set(GAME_CLASSES)


@pytest.mark.parametrize("game_id", list(GAME_CLASSES))
def test_deals_match_golden(game_id: str) -> None:
    golden = json.loads(GOLDEN.read_text())[game_id]
    game = get_game(game_id)
    for deal in DEALS:
        assert state_to_json(game, game.initial_state(deal)) == golden[str(deal)], f"{game_id} deal {deal} changed"
