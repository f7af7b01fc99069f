"""The v1 HTTP contract: every endpoint's answers, and every kind of bad input."""

from __future__ import annotations

import copy

import pytest

from service.engine.registry import GAME_CLASSES

PROBLEM = "application/problem+json"


def deal(client, game="penguin", n=1, **extra):
    r = client.post(f"/v1/games/{game}/deals", json={"deal": n, **extra})
    assert r.status_code == 200, r.json
    return r.json


def problem(r, status, code):
    assert r.status_code == status, r.get_data(as_text=True)
    assert r.mimetype == PROBLEM
    body = r.json
    assert body["status"] == status and body["code"] == code and body["detail"] and body["title"]
    return body


# --- games ----------------------------------------------------------------------------
def test_list_games_describes_every_game_for_a_generic_frontend(client):
    r = client.get("/v1/games")
    games = r.json["games"]
    assert [g["id"] for g in games] == list(GAME_CLASSES)
    assert len(games) == 11
    for g in games:
        assert g["cards"] in (28, 52, 64, 104) and g["decks"] in (1, 2)
        assert g["pile_groups"] and all({"row", "column", "fan", "face_down", "per_row"} <= set(pg) for pg in g["pile_groups"])
        assert "move" in g["actions"]
    penguin = games[0]
    assert {o["name"] for o in penguin["options"]} == {"cells", "foundation_base", "runs", "empty_pile", "deal"}


def test_game_detail_has_rules_in_words(client):
    r = client.get("/v1/games/opus")
    assert r.status_code == 200
    assert "5 cells" in r.json["rules"] and r.json["autoplay"]


def test_unknown_game_is_404_problem(client):
    problem(client.get("/v1/games/chess"), 404, "unknown-game")
    problem(client.post("/v1/games/chess/deals", json={}), 404, "unknown-game")


# --- deals ----------------------------------------------------------------------------
@pytest.mark.parametrize("game", list(GAME_CLASSES))
def test_deal_every_game_is_deterministic(client, game):
    a, b = deal(client, game, 7), deal(client, game, 7)
    assert a == b and a["deal"] == "7" and a["state"]["deal"] == "7"
    assert a["status"] == "playing" and a["legal_moves"]
    assert deal(client, game, 8)["state"] != a["state"]


def test_deal_without_number_picks_one_and_says_which(client):
    r = client.post("/v1/games/penguin/deals", json={})
    n = r.json["deal"]
    assert n.isdigit() and r.json["state"]["deal"] == n
    assert deal(client, "penguin", int(n))["state"] == r.json["state"]
    assert client.post("/v1/games/penguin/deals").status_code == 200, "the body is optional"


def test_twenty_digit_deal_numbers_survive_as_strings(client):
    big = "98765432109876543210"
    a = deal(client, "penguin", big)
    assert a["deal"] == big and a["state"]["deal"] == big
    assert deal(client, "penguin", big) == a


def test_json_integer_deal_numbers_stop_at_2_to_the_53(client):
    """Past 2^53-1 a JSON number is not exact in every parser: such deals are sent as strings."""
    largest = 2**53 - 1
    assert deal(client, "penguin", largest) == deal(client, "penguin", str(largest))
    for body in ({"deal": largest + 1}, {"deal": 98765432109876543210}):
        problem(client.post("/v1/games/penguin/deals", json=body), 400, "invalid-body")
    state = deal(client)["state"]
    state["deal"] = largest + 1
    problem(client.post("/v1/games/penguin/legal-moves", json={"state": state}), 400, "invalid-body")


@pytest.mark.parametrize("bad", [-1, "12a", "1" * 21, 10**20, 1.5, True, None, [1]])
def test_bad_deal_numbers_are_400(client, bad):
    problem(client.post("/v1/games/penguin/deals", json={"deal": bad}), 400, "invalid-body")


def test_deal_with_options_and_bad_options(client):
    d = deal(client, "penguin", 3, options={"cells": 4})
    assert d["state"]["options"]["cells"] == 4 and len(d["state"]["piles"]["cell"]) == 4
    body = problem(client.post("/v1/games/penguin/deals", json={"options": {"cells": 40}}), 422, "invalid-options")
    assert body["errors"][0]["where"] == "/options/cells"
    problem(client.post("/v1/games/penguin/deals", json={"options": {"deal": "pelican"}}), 422, "invalid-options")
    problem(client.post("/v1/games/amazons/deals", json={"options": {"cells": 4}}), 422, "invalid-options")


# --- moves ----------------------------------------------------------------------------
def test_move_applies_and_reports_events(client):
    d = deal(client)
    move = d["legal_moves"][0]
    r = client.post("/v1/games/penguin/moves", json={"state": d["state"], "move": move})
    assert r.status_code == 200
    body = r.json
    assert body["events"][0]["type"] == "move" and body["events"][0]["from"] == move["from"]
    assert body["state"] != d["state"] and body["status"] == "playing"


def test_every_listed_move_is_accepted_verbatim(client):
    d = deal(client, "forty-thieves", 11)
    for move in d["legal_moves"]:
        r = client.post("/v1/games/forty-thieves/moves", json={"state": d["state"], "move": move})
        assert r.status_code == 200, (move, r.json)


def test_illegal_move_is_409_with_the_rule(client):
    d = deal(client)
    state = d["state"]
    body = problem(
        client.post("/v1/games/penguin/moves", json={"state": state, "move": {"action": "move", "from": "tableau:0", "to": "tableau:1", "count": 1}}),
        409, "illegal-move",
    )
    assert body["rule"] == "tableau-builds-down-in-suit"
    body = problem(client.post("/v1/games/penguin/moves", json={"state": state, "move": {"action": "deal"}}), 409, "illegal-move")
    assert body["rule"] == "no-deal"


def test_move_naming_a_missing_pile_is_409(client):
    d = deal(client)
    body = problem(
        client.post("/v1/games/penguin/moves", json={"state": d["state"], "move": {"action": "move", "from": "tableau:9", "to": "cell:0", "count": 1}}),
        409, "illegal-move",
    )
    assert body["rule"] == "no-such-pile"
    problem(
        client.post("/v1/games/penguin/moves", json={"state": d["state"], "move": {"action": "move", "from": "reserve:0", "to": "cell:0", "count": 1}}),
        409, "illegal-move",
    )


def test_card_move_without_from_or_to_is_422(client):
    d = deal(client)
    problem(client.post("/v1/games/penguin/moves", json={"state": d["state"], "move": {"action": "move", "to": "cell:0", "count": 1}}), 422, "invalid-move")


@pytest.mark.parametrize(
    "move",
    [{"action": "jump"}, {"action": "move", "from": "tableau 1", "to": "cell:0"}, {"action": "move", "from": "tableau:0", "to": "cell:0", "count": 0},
     {"action": "move", "from": "tableau:0", "to": "cell:0", "count": "1"}, {"action": "move", "from": "tableau:0", "to": "cell:0", "extra": 1}, [], "deal"],
)
def test_malformed_moves_are_400(client, move):
    d = deal(client)
    problem(client.post("/v1/games/penguin/moves", json={"state": d["state"], "move": move}), 400, "invalid-body")


def test_autoplay_safe_plays_foundation_moves_and_says_so(client):
    d = deal(client, "penguin", 1)
    state = d["state"]
    # play until some move opens a foundation move, then ask for autoplay
    for move in d["legal_moves"]:
        r = client.post("/v1/games/penguin/moves", json={"state": state, "move": move, "autoplay": "safe"})
        assert r.status_code == 200
        kinds = [e["type"] for e in r.json["events"]]
        assert kinds[0] == "move" and set(kinds[1:]) <= {"autoplay"}
        for e in r.json["events"][1:]:
            assert e["to"].startswith("foundation:")
    r = client.post("/v1/games/penguin/moves", json={"state": state, "move": d["legal_moves"][0], "autoplay": "sometimes"})
    problem(r, 400, "invalid-body")


def test_legal_moves_and_status(client):
    d = deal(client, "binary-star", 5)
    r = client.post("/v1/games/binary-star/legal-moves", json={"state": d["state"]})
    assert r.status_code == 200 and r.json == {"legal_moves": d["legal_moves"], "status": d["status"]}


# --- validate and forged states ---------------------------------------------------------------
def forged(state, group, pile, cards):
    s = copy.deepcopy(state)
    s["piles"][group][pile] = cards
    return s


def test_validate_accepts_a_dealt_state(client):
    d = deal(client, "small-billee", 3)
    r = client.post("/v1/games/small-billee/validate", json={"state": d["state"]})
    assert r.json == {"valid": True, "problems": []}


def forgeries():
    """(name, game, change(state) -> state, where the problem is). Long only because it
    is a table: one small change per kind of forgery, each next to its name."""

    def twice(s):
        s["piles"]["cell"][0] = [s["piles"]["tableau"][0][-1]]
        return s

    def missing(s):
        s["piles"]["tableau"][0] = s["piles"]["tableau"][0][:-1]
        return s

    def alien(s):
        s["piles"]["reserve"][0] = ["2H"]  # Amazons has no Twos
        return s

    def out_of_order(s):
        s["piles"]["foundation"][0].append(s["piles"]["tableau"][0].pop())
        return s

    def crowded_cell(s):
        s["piles"]["cell"][0] = [s["piles"]["tableau"][0].pop(), s["piles"]["tableau"][1].pop()]
        return s

    def bad_card(s):
        s["piles"]["tableau"][0][0] = "1X"
        return s

    def wrong_pile_count(s):
        s["piles"]["tableau"].append([])
        return s

    def missing_group(s):
        del s["piles"]["cell"]
        return s

    def foreign_group(s):
        s["piles"]["star"] = [[]]
        return s

    def bad_format(s):
        s["format"] = 2
        return s

    def other_game(s):
        s["game"] = "pelican"
        return s

    def bad_counter(s):
        s["counters"] = {"redeals": 1}
        return s

    return [
        ("card-twice", "penguin", twice, "/state/piles/"),
        ("card-missing", "penguin", missing, "/state/piles"),
        ("card-not-in-deck", "amazons", alien, "/state/piles/reserve/0/0"),
        ("foundation-out-of-order", "penguin", out_of_order, "/state/piles/foundation/0/1"),
        ("too-many-in-cell", "penguin", crowded_cell, "/state/piles/cell/0"),
        ("wrong-pile-count", "penguin", wrong_pile_count, "/state/piles/tableau"),
        ("missing-group", "penguin", missing_group, "/state/piles/cell"),
        ("foreign-group", "penguin", foreign_group, "/state/piles/star"),
        ("format-version", "penguin", bad_format, "/state/format"),
        ("other-game", "penguin", other_game, "/state/game"),
        ("unknown-counter", "penguin", bad_counter, "/state/counters/redeals"),
        ("not-a-card", "penguin", bad_card, "/state/piles/tableau/0/0"),
    ]


@pytest.mark.parametrize("name,game,change,where", forgeries(), ids=[f[0] for f in forgeries()])
def test_forged_states_are_refused_everywhere(client, name, game, change, where):
    state = change(copy.deepcopy(deal(client, game, 2)["state"]))
    move = {"action": "move", "from": "tableau:0", "to": "cell:0", "count": 1}
    for endpoint, body in (("moves", {"state": state, "move": move}), ("legal-moves", {"state": state})):
        r = client.post(f"/v1/games/{game}/{endpoint}", json=body)
        if name in ("not-a-card", "format-version"):
            err = problem(r, 400, "invalid-body")  # the schema already refuses these
        else:
            err = problem(r, 422, "invalid-state")
        assert any(e["where"].startswith(where) for e in err["errors"]), err
    r = client.post(f"/v1/games/{game}/validate", json={"state": state})
    if name not in ("not-a-card", "format-version"):
        assert r.status_code == 200 and r.json["valid"] is False
        assert any(p["where"].startswith(where) for p in r.json["problems"]), r.json


# --- transport-level errors -------------------------------------------------------------
def test_malformed_json_is_400(client):
    r = client.post("/v1/games/penguin/moves", data="{not json", content_type="application/json")
    problem(r, 400, "malformed-json")


def test_wrong_types_are_400_and_say_where(client):
    r = client.post("/v1/games/penguin/moves", json={"state": 5, "move": {"action": "deal"}})
    body = problem(r, 400, "invalid-body")
    assert any(e["where"].startswith("/state") for e in body["errors"])
    problem(client.post("/v1/games/penguin/legal-moves", json=[1, 2]), 400, "invalid-body")
    problem(client.post("/v1/games/penguin/legal-moves", json={"state": {}, "extra": 1}), 400, "invalid-body")


def test_absurd_sizes_are_refused(client):
    d = deal(client)
    huge = forged(d["state"], "tableau", 0, ["AS"] * 500)
    problem(client.post("/v1/games/penguin/legal-moves", json={"state": huge}), 400, "invalid-body")
    many = copy.deepcopy(d["state"])
    many["piles"]["tableau"] = [[]] * 30
    problem(client.post("/v1/games/penguin/legal-moves", json={"state": many}), 400, "invalid-body")
    r = client.post("/v1/games/penguin/legal-moves", data="[" * 70000, content_type="application/json")
    problem(r, 413, "body-too-large")


def test_not_json_content_type_is_refused(client):
    r = client.post("/v1/games/penguin/moves", data="state=1", content_type="application/x-www-form-urlencoded")
    problem(r, 415, "unsupported-media-type")


POST_ENDPOINTS = ["deals", "moves", "legal-moves", "validate", "hint", "solve", "replays"]


@pytest.mark.parametrize("endpoint", POST_ENDPOINTS)
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None])
def test_a_post_body_that_is_not_json_is_415_never_ignored(client, endpoint, content_type):
    """curl's default (no -H) sends form-encoded; a body with no Content-Type is not JSON either."""
    headers = {} if content_type is None else {"Content-Type": content_type}
    r = client.post(f"/v1/games/penguin/{endpoint}", data=b'{"deal": 1}', headers=headers)
    problem(r, 415, "unsupported-media-type")


def test_a_deal_needs_no_body_but_a_non_json_content_type_is_415_even_when_empty(client):
    assert client.post("/v1/games/penguin/deals").status_code == 200
    problem(client.post("/v1/games/penguin/deals", headers={"Content-Type": "text/plain"}), 415, "unsupported-media-type")


def test_json_media_types_are_json(client):
    for content_type in ("application/json", "application/json; charset=utf-8", "application/vnd.patience+json"):
        r = client.post("/v1/games/penguin/deals", data=b'{"deal": 1}', headers={"Content-Type": content_type})
        assert r.status_code == 200 and r.json["deal"] == "1", content_type


def test_a_non_json_body_to_a_wrong_path_or_method_says_so_first(client):
    problem(client.post("/v1/games/penguin/nowhere", data=b"x", content_type="text/plain"), 404, "not-found")
    problem(client.post("/v1/games", data=b"x", content_type="text/plain"), 405, "method-not-allowed")


def test_a_card_move_without_count_is_refused_by_the_schema(client):
    """The contract requires `count` (it used to default to 1)."""
    d = deal(client)
    move = {k: v for k, v in d["legal_moves"][0].items() if k != "count"}
    body = problem(client.post("/v1/games/penguin/moves", json={"state": d["state"], "move": move}), 400, "invalid-body")
    assert [e["where"] for e in body["errors"]] == ["/move/count"]


@pytest.mark.parametrize("move", [{"action": "deal", "from": "stock:0"}, {"action": "redeal", "count": 1}, {"action": None}, {}])
def test_a_move_is_read_by_the_schema_of_its_action(client, move):
    d = deal(client, "amazons")
    body = problem(client.post("/v1/games/amazons/moves", json={"state": d["state"], "move": move}), 400, "invalid-body")
    assert all(e["where"].startswith("/move/") for e in body["errors"]), body


def test_wrong_method_is_405_with_allow(client):
    r = client.get("/v1/games/penguin/moves")
    problem(r, 405, "method-not-allowed")
    assert "POST" in r.headers["Allow"]


def test_unknown_path_is_404_problem(client):
    problem(client.get("/v2/nothing"), 404, "not-found")


def test_winnable_deal_is_the_first_proved_winnable_from_the_number(client):
    r = client.post("/v1/games/opus/deals", json={"deal": 1, "winnable": True})
    assert r.status_code == 200
    n = int(r.json["deal"])
    assert n >= 1
    assert deal(client, "opus", n)["state"] == r.json["state"]
    solved = client.post("/v1/games/opus/solve", json={"state": r.json["state"], "limits": {"max_seconds": 5}})
    assert solved.json["result"] == "solved"
