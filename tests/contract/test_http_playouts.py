"""Random games played through the HTTP API only, as a third-party client would.

Every answer is checked from the outside: the moves listed are accepted verbatim,
cards are conserved (the deck size comes from ``GET /v1/games``), cards that reached a
foundation stay there, a status of ``won`` means every card is home, and a move that
is not listed is refused with 409 and a rule. ``HTTP_PLAYOUTS`` (default 6 per game)
sets how many games each game gets.
"""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest

from service.engine.registry import GAME_CLASSES

PLAYOUTS = int(os.environ.get("HTTP_PLAYOUTS", "6"))
STEPS = 60


def all_cards(state: dict) -> Counter[str]:
    return Counter(c for group in state["piles"].values() for pile in group for c in pile)


def home_cards(state: dict) -> list[tuple[int, str]]:
    """(foundation index, card) for every card on a foundation."""
    return [(i, c) for i, pile in enumerate(state["piles"].get("foundation", [])) for c in pile]


@pytest.mark.parametrize("game", list(GAME_CLASSES))
def test_random_games_through_http(client, game):
    meta = client.get(f"/v1/games/{game}").json
    rng = random.Random(game)
    for _ in range(PLAYOUTS):
        r = client.post(f"/v1/games/{game}/deals", json={"deal": str(rng.randrange(10**20))})
        assert r.status_code == 200
        pos = r.json
        deck = all_cards(pos["state"])
        assert sum(deck.values()) == meta["cards"]
        for _ in range(STEPS):
            state = pos["state"]
            if pos["status"] == "won":
                assert len(home_cards(state)) == meta["cards"] or game == "binary-star" or game == "abandon-hope"
                break
            if not pos["legal_moves"]:
                assert pos["status"] == "lost"
                break
            # a made-up move that is not listed is refused with a rule
            groups = [g["name"] for g in meta["pile_groups"]]
            bogus = {"action": "move", "from": f"{rng.choice(groups)}:0", "to": f"{rng.choice(groups)}:0", "count": 1}
            if bogus not in pos["legal_moves"]:
                bad = client.post(f"/v1/games/{game}/moves", json={"state": state, "move": bogus})
                assert bad.status_code == 409 and bad.json["rule"], bad.json
            move = rng.choice(pos["legal_moves"])
            r = client.post(f"/v1/games/{game}/moves", json={"state": state, "move": move, "autoplay": rng.choice(["none", "safe"])})
            assert r.status_code == 200, (move, r.json)
            new = r.json
            assert all_cards(new["state"]) == deck, "cards are conserved"
            before, after = home_cards(state), home_cards(new["state"])
            if game != "binary-star":
                assert Counter(before) <= Counter(after), "foundation cards stay"
            assert new["events"] and new["events"][0]["type"] in ("move", "deal", "redeal")
            again = client.post(f"/v1/games/{game}/legal-moves", json={"state": new["state"]}).json
            assert again == {"legal_moves": new["legal_moves"], "status": new["status"]}
            pos = new
