"""Golden deals: the opening layout of a few deals of every game, pinned in one file.

docs/rules.md makes the shuffle part of the public contract: once released, deal N of a
game never changes. ``tests/golden/deals.json`` is the one place deal layouts are
pinned: for every game and every deal number in ``DEALS``, and for a few more, the
state ``state_to_json`` gives for ``game.initial_state(deal)``.

Most entries are a snapshot of the service's own output. An entry with a ``checked``
field was compared with a source outside this code (PySolFC's deal of that number as
docs/pysolfc-deals.md records it, or Microsoft FreeCell's deal 1 dealt by the game's
rules); the field names the source and the parts of the layout it gave. Those entries
are facts from outside, not a record of this code: regenerating never rewrites them, and
refuses to run while the code disagrees with one.

If a change of a deal is intended (a bug in matching PySolFC), rewrite the snapshot with
``GOLDEN_UPDATE=1 pytest tests/rules/test_golden_deals.py`` and say why in the commit; a
checked entry can only be changed by hand.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from service.engine.registry import GAME_CLASSES, get_game
from service.http.wire import state_to_json

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "deals.json"
# Both shuffles (the FreeCell generator below 32000, the Mersenne Twister from 32000 on),
# their boundary, and numbers of every length up to 20 digits.
DEALS = (0, 1, 2, 31999, 32000, 100000, 123456789, 98765432109876543210)

Entry = dict[str, Any]  # {"state": <state_to_json output>} plus "checked": <source> if checked


def load() -> dict[str, dict[str, Entry]]:
    """The golden file's entries: game id -> deal number (as text) -> entry."""
    games: dict[str, dict[str, Entry]] = json.loads(GOLDEN.read_text())["games"]
    return games


def deal_state(game_id: str, deal: int) -> dict[str, Any]:
    game = get_game(game_id)
    return state_to_json(game, game.initial_state(deal))


def regenerate(old: dict[str, dict[str, Entry]]) -> dict[str, dict[str, Entry]]:
    """The snapshot entries anew from the code, the checked entries as they were.

    Raises AssertionError, before anything is written, if the code no longer deals a
    checked entry's layout: that is a bug to fix, not a snapshot to refresh.
    """
    out: dict[str, dict[str, Entry]] = {}
    broken: list[str] = []
    for gid in GAME_CLASSES:
        checked = {d: e for d, e in old.get(gid, {}).items() if "checked" in e}
        broken += [f"{gid} deal {d}" for d, e in checked.items() if deal_state(gid, int(d)) != e["state"]]
        fresh = {str(d): {"state": deal_state(gid, d)} for d in DEALS}
        merged = {**fresh, **checked}
        out[gid] = {d: merged[d] for d in sorted(merged, key=int)}
    assert not broken, f"checked deals no longer dealt as checked, nothing written: {broken}"
    return out


# A list of card codes (one pile), and a list of empty lists (a group of empty piles).
ONE_LINE = (r"\[\s+((?:\"\w\w\",\s+)*\"\w\w\")\s+\]", r"\[\s+((?:\[\],\s+)*\[\])\s+\]")


def dump(games: dict[str, dict[str, Entry]]) -> str:
    """The file's text: indented JSON with each pile, and each group of empty piles, on
    one line (the file stays short enough to read a deal at a glance)."""
    text = json.dumps({"games": games}, indent=1)
    for pattern in ONE_LINE:
        text = re.sub(pattern, lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text)
    assert json.loads(text) == {"games": games}
    return text + "\n"


def test_golden_file_pins_every_game_and_deal() -> None:
    if os.environ.get("GOLDEN_UPDATE"):
        GOLDEN.write_text(dump(regenerate(load())))
    golden = load()
    assert set(golden) == set(GAME_CLASSES)
    for gid, entries in golden.items():
        assert {str(d) for d in DEALS} <= set(entries), f"{gid}: deals missing from the golden file"
        for deal, entry in entries.items():
            assert set(entry) <= {"state", "checked"} and "state" in entry, f"{gid} deal {deal}: {sorted(entry)}"
            assert entry.get("checked", "x").strip(), f"{gid} deal {deal}: a checked entry names its source"


@pytest.mark.parametrize("game_id", list(GAME_CLASSES))
def test_deals_match_golden(game_id: str) -> None:
    for deal, entry in load()[game_id].items():
        assert deal_state(game_id, int(deal)) == entry["state"], f"{game_id} deal {deal} changed"


def test_update_keeps_checked_entries_and_refuses_to_overwrite_them() -> None:
    golden = load()
    assert regenerate(golden) == golden, "the golden file is what regeneration writes"
    assert GOLDEN.read_text() == dump(golden), "the golden file is laid out as regeneration writes it"
    gid, deal = next((g, d) for g, es in golden.items() for d, e in es.items() if "checked" in e)
    tampered = json.loads(json.dumps(golden))
    tampered[gid][deal]["state"]["deal"] = "tampered"
    with pytest.raises(AssertionError, match=f"{gid} deal {deal}"):
        regenerate(tampered)
