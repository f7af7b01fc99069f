"""Daily challenges (``GET /v1/games/{game_id}/daily``, service/http/daily.py) and the deal
keys apart from the state keys (``DEAL_KEYS``).

- every caller gets one answer a day; the next day is another deal; no future day, and
  no day older than ``DAILY_PAST_DAYS`` (its edge both ways); bad dates 400, days out of
  the window 422;
- sealed mode: the day's deal depends on the deal key and on nothing else secret (other
  deal keys: another deal; other state keys, same deal keys: the same deal), and rotating
  the state keys leaves every deal (``POST /deals``) and every daily as it was;
- a CDN can serve it: ``Cache-Control`` until the answer may change, a weak ``ETag``, 304;
- a replay of a daily carries ``daily`` in its signed result, and another day's moves
  replayed as a daily are another game.

The clock is fixed (:data:`NOW`): a run across midnight sees one day.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.engine.core import MAX_DEAL
from service.engine.registry import get_game
from service.http import create_app, daily
from service.http.problems import ProblemCode
from service.http.replays_api import REPLAY_DOMAIN
from service.http.state_protection import read_position
from service.http.state_sealing import KeyedDeals, derived_key
from service.settings import Settings
from tests.app_settings import (
    key_for_tests,
    sealed_settings_for_tests,
    settings_for_tests,
    signed_settings_for_tests,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TODAY = NOW.date()
PAST_DAYS = 3
GAMES = ("forty-thieves", "penguin")  # one that keeps secrets in sealed mode, one that does not
DEAL_KEYS = key_for_tests("d1")
OTHER_DEAL_KEYS = key_for_tests("d2")


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(daily, "utc_now", lambda: NOW)


def client(settings: Settings) -> FlaskClient:
    return create_app(settings).test_client()


def open_client() -> FlaskClient:
    return client(settings_for_tests(DAILY_PAST_DAYS=str(PAST_DAYS)))


def sealed_client(keys: str = key_for_tests("k1"), deal_keys: str = DEAL_KEYS) -> FlaskClient:
    return client(sealed_settings_for_tests(keys, deal_keys, DAILY_PAST_DAYS=str(PAST_DAYS)))


def get_daily(c: FlaskClient, game: str, day: date | str | None = None, **headers: str) -> Any:
    url = f"/v1/games/{game}/daily" + ("" if day is None else f"?date={day}")
    return c.get(url, headers=headers)


def answer(c: FlaskClient, game: str, day: date | str | None = None) -> dict[str, Any]:
    response = get_daily(c, game, day)
    assert response.status_code == 200, response.get_json()
    data: dict[str, Any] = response.get_json()
    return data


def layout(settings: Settings, game: str, state: dict[str, Any]) -> Any:
    """The whole layout a state holds (its sealed part opened with the server's keys)."""
    return read_position(settings.state, game, state).state.piles


def assert_problem(response: Any, code: ProblemCode) -> None:
    assert response.status_code == code.status, response.get_json()
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["code"] == code.value


# --- one deal a day ---------------------------------------------------------------------------

@pytest.mark.parametrize("game", GAMES)
def test_two_callers_get_one_answer(game: str) -> None:
    ours, theirs = answer(open_client(), game), answer(open_client(), game)
    assert ours == theirs
    assert ours["date"] == TODAY.isoformat() and answer(open_client(), game, TODAY) == ours
    assert 1 <= int(ours["deal"]) <= 10**9
    settings = sealed_settings_for_tests(key_for_tests("k1"), DEAL_KEYS)
    sealed = [answer(client(settings), game) for _ in range(2)]
    assert sealed[0]["deal"] == sealed[1]["deal"] and sealed[0]["legal_moves"] == sealed[1]["legal_moves"]
    assert layout(settings, game, sealed[0]["state"]) == layout(settings, game, sealed[1]["state"])


@pytest.mark.parametrize("game", GAMES)
def test_the_next_day_is_another_deal(game: str) -> None:
    c = open_client()
    days = [answer(c, game, TODAY - timedelta(days=n)) for n in range(PAST_DAYS + 1)]
    assert len({d["deal"] for d in days}) == len(days)
    assert len({json.dumps(d["state"]["piles"], sort_keys=True) for d in days}) == len(days)


@pytest.mark.parametrize("game", GAMES)
def test_the_daily_is_the_deal_of_its_number(game: str) -> None:
    """Dealt by the path /deals takes: the same state as a deal request of its number."""
    c = open_client()
    day = answer(c, game)
    dealt = c.post(f"/v1/games/{game}/deals", json={"deal": day["deal"]}).get_json()
    assert {k: v for k, v in day.items() if k != "date"} == dealt
    settings = sealed_settings_for_tests(key_for_tests("k1"), DEAL_KEYS)
    s = client(settings)
    day = answer(s, game)
    dealt = s.post(f"/v1/games/{game}/deals", json={"deal": day["deal"]}).get_json()
    assert layout(settings, game, day["state"]) == layout(settings, game, dealt["state"])


def test_options_make_another_daily_and_bad_ones_are_refused() -> None:
    c = open_client()
    default = answer(c, "penguin")
    with_options = c.get("/v1/games/penguin/daily", query_string={"options": json.dumps({"cells": 5})})
    assert with_options.status_code == 200, with_options.get_json()
    assert with_options.get_json()["state"]["options"]["cells"] == 5
    assert with_options.get_json()["deal"] != default["deal"]
    # The defaults spelt out are the defaults: every option, defaults included, names the daily.
    spelt = c.get("/v1/games/penguin/daily", query_string={"options": json.dumps({"cells": 7})})
    assert spelt.get_json() == default
    assert_problem(c.get("/v1/games/forty-thieves/daily", query_string={"options": "[1]"}), ProblemCode.INVALID_QUERY)
    assert_problem(c.get("/v1/games/forty-thieves/daily", query_string={"options": "{"}), ProblemCode.INVALID_QUERY)
    assert_problem(c.get("/v1/games/forty-thieves/daily", query_string={"options": '{"a":1,"a":2}'}), ProblemCode.INVALID_QUERY)
    assert_problem(c.get("/v1/games/forty-thieves/daily", query_string={"options": "[" * 5000}), ProblemCode.INVALID_QUERY)
    assert_problem(c.get("/v1/games/forty-thieves/daily", query_string={"options": '{"nope":1}'}), ProblemCode.INVALID_OPTIONS)
    assert_problem(c.get("/v1/games/chess/daily"), ProblemCode.UNKNOWN_GAME)


def test_open_and_signed_dailies_are_a_public_hash_of_game_options_and_day() -> None:
    """As documented: anyone can compute them (which is why a contest runs sealed mode)."""
    game = get_game("penguin")
    text = json.dumps([game.id, dict(game.options), TODAY.isoformat()], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    digest = hashlib.sha256(b"patience-engine public daily v1\n" + text.encode()).digest()
    expected = 1 + int.from_bytes(digest[:16], "big") % 10**9
    assert answer(open_client(), "penguin")["deal"] == str(expected)
    assert answer(client(signed_settings_for_tests(DAILY_PAST_DAYS=str(PAST_DAYS))), "penguin")["deal"] == str(expected)


# --- the window ---------------------------------------------------------------------------------

@pytest.mark.parametrize("game", GAMES)
def test_the_window_holds_today_and_its_past_days_and_no_future_day(game: str) -> None:
    c = open_client()
    assert answer(c, game, TODAY - timedelta(days=PAST_DAYS))["date"] == (TODAY - timedelta(days=PAST_DAYS)).isoformat()
    for day in (TODAY + timedelta(days=1), TODAY + timedelta(days=400), TODAY - timedelta(days=PAST_DAYS + 1), date(1, 1, 1), date(9999, 12, 31)):
        response = get_daily(c, game, day)
        assert_problem(response, ProblemCode.DAILY_OUT_OF_WINDOW)
        assert response.get_json()["errors"] == [{"where": "/date", "message": "out of the daily window"}]


def test_a_window_of_no_past_day_answers_today_only() -> None:
    c = client(settings_for_tests(DAILY_PAST_DAYS="0"))
    assert answer(c, "penguin", TODAY)["date"] == TODAY.isoformat()
    assert_problem(get_daily(c, "penguin", TODAY - timedelta(days=1)), ProblemCode.DAILY_OUT_OF_WINDOW)


@pytest.mark.parametrize("text", ["2026-13-01", "2026-02-30", "yesterday", "2026-3-1", "20260301", "", "2026-03-01T00:00"])
def test_a_date_that_is_not_a_day_is_a_bad_query(text: str) -> None:
    response = get_daily(open_client(), "penguin", text)
    assert_problem(response, ProblemCode.INVALID_QUERY)
    assert response.get_json()["errors"][0]["where"] == "/date"


def test_an_unknown_query_parameter_is_refused() -> None:
    assert_problem(open_client().get("/v1/games/penguin/daily?day=2026-03-01"), ProblemCode.INVALID_QUERY)


# --- sealed mode: the deal key, and nothing else -----------------------------------------------

@pytest.mark.parametrize("game", GAMES)
def test_a_sealed_daily_cannot_be_derived_without_the_deal_key(game: str) -> None:
    ours_settings = sealed_settings_for_tests(key_for_tests("k1"), DEAL_KEYS)
    theirs_settings = sealed_settings_for_tests(key_for_tests("k1"), OTHER_DEAL_KEYS)
    ours, theirs = answer(client(ours_settings), game), answer(client(theirs_settings), game)
    assert ours["deal"] != theirs["deal"]
    assert layout(ours_settings, game, ours["state"]) != layout(theirs_settings, game, theirs["state"])
    public = answer(open_client(), game)
    assert ours["deal"] != public["deal"]  # not the public hash of the open and signed modes
    # The layout is the keyed deal of the number under the deal key: not its PySolFC deal.
    g = get_game(game)
    seed = KeyedDeals.of(ours_settings.state, g)(int(ours["deal"]))
    assert layout(ours_settings, game, ours["state"]) == g.initial_state(seed).piles != g.initial_state(int(ours["deal"])).piles


@pytest.mark.parametrize("game", GAMES)
def test_state_keys_play_no_part_in_a_deal(game: str) -> None:
    """Same deal keys, other state keys: the same daily and the same deals."""
    one = sealed_settings_for_tests(key_for_tests("k1"), DEAL_KEYS)
    other = sealed_settings_for_tests(key_for_tests("k9"), DEAL_KEYS)
    ours, theirs = answer(client(one), game), answer(client(other), game)
    assert ours["deal"] == theirs["deal"]
    assert layout(one, game, ours["state"]) == layout(other, game, theirs["state"])


@pytest.mark.parametrize("game", GAMES)
def test_rotating_the_state_keys_leaves_every_deal_and_every_daily_unchanged(game: str) -> None:
    """Before: k1 signs. After the rotation: k2 signs, k1 still verifies. Deal numbers
    dealt by /deals and the daily of every day of the window are the same layouts."""
    before = sealed_settings_for_tests(key_for_tests("k1"), DEAL_KEYS, DAILY_PAST_DAYS=str(PAST_DAYS))
    after = sealed_settings_for_tests(f"{key_for_tests('k2')},{key_for_tests('k1')}", DEAL_KEYS, DAILY_PAST_DAYS=str(PAST_DAYS))
    old, new = client(before), client(after)
    for deal in (1, 2, 123, 10**9, 98765432109876543210):
        dealt_before = old.post(f"/v1/games/{game}/deals", json={"deal": str(deal)}).get_json()
        dealt_after = new.post(f"/v1/games/{game}/deals", json={"deal": str(deal)}).get_json()
        assert dealt_after["state"]["signature"]["kid"] == "k2"
        assert layout(before, game, dealt_before["state"]) == layout(after, game, dealt_after["state"])
    for n in range(PAST_DAYS + 1):
        day = TODAY - timedelta(days=n)
        daily_before, daily_after = answer(old, game, day), answer(new, game, day)
        assert daily_before["deal"] == daily_after["deal"]
        assert layout(before, game, daily_before["state"]) == layout(after, game, daily_after["state"])


def test_the_documented_migration_keeps_every_deal() -> None:
    """DEAL_KEYS set to the old first STATE_KEYS entry: every keyed deal is the one the
    state key used to key (its derivation, with that key)."""
    settings = sealed_settings_for_tests(key_for_tests("k1"), key_for_tests("k1"))
    g = get_game("forty-thieves")
    dealt = client(settings).post("/v1/games/forty-thieves/deals", json={"deal": 7}).get_json()
    old_key = derived_key((b"k1" * 32)[:32], b"patience-engine deal v1")
    text = json.dumps([g.id, dict(g.options)], sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    seed = int.from_bytes(hmac.digest(old_key, text + b"\n7", "sha256")[:16], "big") % (MAX_DEAL + 1)
    assert layout(settings, "forty-thieves", dealt["state"]) == g.initial_state(seed).piles


# --- caching ------------------------------------------------------------------------------------

def test_today_is_cached_until_the_next_utc_midnight_and_a_past_day_until_it_leaves_the_window() -> None:
    c = open_client()
    today = get_daily(c, "penguin")
    assert today.headers["Cache-Control"] == f"public, max-age={12 * 3600}"
    edge = get_daily(c, "penguin", TODAY - timedelta(days=PAST_DAYS))
    assert edge.headers["Cache-Control"] == f"public, max-age={12 * 3600}"  # it leaves the window at midnight
    yesterday = get_daily(c, "penguin", TODAY - timedelta(days=1))
    assert yesterday.headers["Cache-Control"] == f"public, max-age={12 * 3600 + (PAST_DAYS - 1) * 86400}"
    long_window = client(settings_for_tests(DAILY_PAST_DAYS="5000"))
    assert get_daily(long_window, "penguin", TODAY - timedelta(days=1)).headers["Cache-Control"] == f"public, max-age={365 * 86400}"


def test_the_etag_is_weak_stable_and_answers_304() -> None:
    c = open_client()
    first = get_daily(c, "penguin")
    etag = first.headers["ETag"]
    assert etag.startswith('W/"') and get_daily(open_client(), "penguin").headers["ETag"] == etag
    assert get_daily(c, "penguin", TODAY - timedelta(days=1)).headers["ETag"] != etag
    cached = get_daily(c, "penguin", **{"If-None-Match": etag})
    assert cached.status_code == 304 and cached.data == b""
    assert cached.headers["ETag"] == etag and cached.headers["Cache-Control"] == first.headers["Cache-Control"]
    strong_spelling = etag.removeprefix("W/")
    assert get_daily(c, "penguin", **{"If-None-Match": f'"other", {strong_spelling}'}).status_code == 304
    assert get_daily(c, "penguin", **{"If-None-Match": '"other"'}).status_code == 200
    sealed = sealed_client()
    sealed_tag = get_daily(sealed, "forty-thieves").headers["ETag"]
    assert get_daily(sealed_client(), "forty-thieves").headers["ETag"] == sealed_tag  # sealed afresh, the same deal
    assert get_daily(sealed_client(deal_keys=OTHER_DEAL_KEYS), "forty-thieves").headers["ETag"] != sealed_tag
    assert get_daily(sealed, "forty-thieves", **{"If-None-Match": sealed_tag}).status_code == 304


def test_an_out_of_window_day_is_not_cached_as_an_answer() -> None:
    response = get_daily(open_client(), "penguin", TODAY + timedelta(days=1))
    assert "public" not in response.headers.get("Cache-Control", "") and "ETag" not in response.headers


# --- replays of a daily -------------------------------------------------------------------------

def replay(c: FlaskClient, game: str, moves: list[dict[str, Any]], **start: Any) -> Any:
    """A replay of ``moves``: of a daily at POST .../daily/replays when ``start`` names a
    ``daily``, else of a deal at POST .../replays."""
    path = "daily/replays" if "daily" in start else "replays"
    return c.post(f"/v1/games/{game}/{path}", json={**start, "moves": moves})


def first_moves(c: FlaskClient, game: str, state: dict[str, Any], legal: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """``count`` moves played through /moves from a position (the first legal each time)."""
    played = []
    for _ in range(count):
        move = legal[0]
        after = c.post(f"/v1/games/{game}/moves", json={"state": state, "move": move}).get_json()
        played.append(move)
        state, legal = after["state"], after["legal_moves"]
    return played


def mac_of(secret: bytes, result: dict[str, Any]) -> str:
    body = {k: v for k, v in result.items() if k != "signature"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    return base64.urlsafe_b64encode(hmac.digest(secret, REPLAY_DOMAIN + text, "sha256")).rstrip(b"=").decode()


@pytest.mark.parametrize("mode", ["signed", "sealed"])
def test_a_daily_replay_carries_its_day_in_its_signed_result(mode: str) -> None:
    keys = key_for_tests("k1")
    settings = (
        signed_settings_for_tests(keys, DAILY_PAST_DAYS=str(PAST_DAYS)) if mode == "signed"
        else sealed_settings_for_tests(keys, DEAL_KEYS, DAILY_PAST_DAYS=str(PAST_DAYS))
    )
    c = client(settings)
    day = answer(c, "forty-thieves")
    moves = first_moves(c, "forty-thieves", day["state"], day["legal_moves"], 3)
    replayed = replay(c, "forty-thieves", moves, daily=TODAY.isoformat())
    assert replayed.status_code == 200, replayed.get_json()
    result = replayed.get_json()["result"]
    assert result["daily"] == TODAY.isoformat() and result["deal"] == day["deal"] and result["moves"] == 3
    assert hmac.compare_digest(result["signature"]["mac"], mac_of((b"k1" * 32)[:32], result))
    forged = {**result, "daily": (TODAY - timedelta(days=1)).isoformat()}
    assert not hmac.compare_digest(result["signature"]["mac"], mac_of((b"k1" * 32)[:32], forged))
    by_number = replay(c, "forty-thieves", moves, deal=day["deal"]).get_json()
    assert "daily" not in by_number["result"]  # v1's results gain `daily` only when a replay names one
    if mode == "signed":
        assert by_number["state"] == replayed.get_json()["state"]
    else:
        assert layout(settings, "forty-thieves", by_number["state"]) == layout(settings, "forty-thieves", replayed.get_json()["state"])


def test_another_days_moves_replayed_as_a_daily_are_another_game() -> None:
    c = open_client()
    day = answer(c, "penguin")
    moves = first_moves(c, "penguin", day["state"], day["legal_moves"], 4)
    today = replay(c, "penguin", moves, daily=TODAY.isoformat())
    assert today.status_code == 200
    yesterday = replay(c, "penguin", moves, daily=(TODAY - timedelta(days=1)).isoformat())
    if yesterday.status_code == 200:  # the moves happen to be legal there: another position, another deal
        assert yesterday.get_json()["state"]["piles"] != today.get_json()["state"]["piles"]
        assert yesterday.get_json()["result"]["deal"] != today.get_json()["result"]["deal"]
    else:
        assert_problem(yesterday, ProblemCode.ILLEGAL_MOVE)


def test_a_replay_names_a_deal_or_a_day_and_a_day_in_the_window() -> None:
    c = open_client()
    both = replay(c, "penguin", [], deal=1, daily=TODAY.isoformat())
    assert_problem(both, ProblemCode.INVALID_BODY)
    assert_problem(replay(c, "penguin", []), ProblemCode.INVALID_BODY)
    assert_problem(replay(c, "penguin", [], daily="2026-02-30"), ProblemCode.INVALID_BODY)
    future = replay(c, "penguin", [], daily=(TODAY + timedelta(days=1)).isoformat())
    assert_problem(future, ProblemCode.DAILY_OUT_OF_WINDOW)
    assert future.get_json()["errors"] == [{"where": "/daily", "message": "out of the daily window"}]
    assert_problem(replay(c, "penguin", [], daily=(TODAY - timedelta(days=PAST_DAYS + 1)).isoformat()), ProblemCode.DAILY_OUT_OF_WINDOW)


# --- a daily of a difficulty grade (issue 28 item 3) -----------------------------------------

from collections.abc import Iterator  # noqa: E402  (this section's own imports, kept with it)

from service.atlas import grades  # noqa: E402
from service.atlas.grades import GRADES, Grade  # noqa: E402
from tests.contract.test_solver_busy import held_place  # noqa: E402


@pytest.fixture(autouse=True)
def no_graded_daily_remembered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test starts with an empty memory of graded dailies: each searches afresh."""
    monkeypatch.setattr(daily, "_graded_dailies", {})
    yield


def graded(c: FlaskClient, game: str, grade: str, day: date | None = None, **headers: str) -> Any:
    query = f"difficulty={grade}" + ("" if day is None else f"&date={day}")
    return c.get(f"/v1/games/{game}/daily?{query}", headers=headers)


def graded_answer(c: FlaskClient, game: str, grade: str, day: date | None = None) -> dict[str, Any]:
    response = graded(c, game, grade, day)
    assert response.status_code == 200, response.get_json()
    data: dict[str, Any] = response.get_json()
    return data


@pytest.mark.parametrize("mode", ["open", "sealed"])
def test_a_graded_daily_is_one_answer_for_every_caller(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two callers (two servers of one configuration, no memory shared) get one deal."""
    settings = (
        settings_for_tests(DAILY_PAST_DAYS=str(PAST_DAYS)) if mode == "open"
        else sealed_settings_for_tests(key_for_tests("k1"), DEAL_KEYS, DAILY_PAST_DAYS=str(PAST_DAYS))
    )
    ours = graded_answer(client(settings), "penguin", "medium")
    monkeypatch.setattr(daily, "_graded_dailies", {})
    theirs = graded_answer(client(settings), "penguin", "medium")
    assert ours["deal"] == theirs["deal"] and ours["difficulty"] == theirs["difficulty"] == "medium"
    assert ours["date"] == theirs["date"] == TODAY.isoformat()
    assert layout(settings, "penguin", ours["state"]) == layout(settings, "penguin", theirs["state"])
    # from the day's deal on: never before it, and another day's graded deal is another deal
    assert int(ours["deal"]) >= int(answer(client(settings), "penguin")["deal"])
    yesterday = graded_answer(client(settings), "penguin", "medium", TODAY - timedelta(days=1))
    assert yesterday["deal"] != ours["deal"]


@pytest.mark.parametrize("mode", ["open", "sealed"])
def test_each_grades_daily_is_of_that_grade(mode: str) -> None:
    """The deal answered (keyed in sealed mode) is graded as asked, and it is the deal
    ``POST /deals`` finds for that grade from the day's number."""
    settings = (
        settings_for_tests(DAILY_PAST_DAYS=str(PAST_DAYS)) if mode == "open"
        else sealed_settings_for_tests(key_for_tests("k1"), DEAL_KEYS, DAILY_PAST_DAYS=str(PAST_DAYS))
    )
    c = client(settings)
    start = answer(c, "penguin")["deal"]
    game = get_game("penguin")
    for grade in GRADES:
        day = graded_answer(c, "penguin", grade.value)
        assert day["difficulty"] == grade.value
        if mode == "open":
            assert grades.grade_of("penguin", int(day["deal"])) is grade
        assert grades.grade_state(game, read_position(settings.state, "penguin", day["state"]).state) is grade
        dealt = c.post("/v1/games/penguin/deals", json={"deal": start, "difficulty": grade.value}).get_json()
        assert dealt["deal"] == day["deal"]
        assert layout(settings, "penguin", dealt["state"]) == layout(settings, "penguin", day["state"])


def test_a_daily_without_difficulty_is_as_it_was() -> None:
    """No `difficulty` in the answer, and its ETag, unless the query asks for a grade."""
    c = open_client()
    plain = get_daily(c, "penguin")
    assert "difficulty" not in plain.get_json()
    deal = daily.daily_deal(settings_for_tests().state, get_game("penguin"), TODAY)
    assert plain.headers["ETag"] == daily.daily_etag(settings_for_tests().state, get_game("penguin"), TODAY, deal)
    assert plain.get_json()["deal"] == str(deal)


def test_each_grade_has_its_own_etag_and_304() -> None:
    c = open_client()
    tags = {grade: graded(c, "penguin", grade.value).headers["ETag"] for grade in GRADES}
    plain = get_daily(c, "penguin").headers["ETag"]
    assert len(set(tags.values()) | {plain}) == len(GRADES) + 1
    again = graded(c, "penguin", "hard", **{"If-None-Match": tags[Grade.HARD]})
    assert again.status_code == 304 and again.headers["ETag"] == tags[Grade.HARD]
    assert graded(c, "penguin", "easy", **{"If-None-Match": tags[Grade.HARD]}).status_code == 200
    assert get_daily(c, "penguin", **{"If-None-Match": tags[Grade.HARD]}).status_code == 200
    assert graded(c, "penguin", "hard").headers["Cache-Control"] == get_daily(c, "penguin").headers["Cache-Control"]


def test_forty_thieves_and_other_options_have_no_graded_daily() -> None:
    c = open_client()
    assert_problem(graded(c, "forty-thieves", "easy"), ProblemCode.NOT_GRADED)
    assert_problem(c.get('/v1/games/penguin/daily?difficulty=easy&options={"cells":3}'), ProblemCode.NOT_GRADED)
    tag = get_daily(c, "forty-thieves").headers["ETag"]
    assert_problem(graded(c, "forty-thieves", "easy", **{"If-None-Match": tag}), ProblemCode.NOT_GRADED)


@pytest.mark.parametrize("text", ["EASY", "trivial", "", "1", "null"])
def test_a_bad_grade_is_a_bad_query(text: str) -> None:
    response = graded(open_client(), "penguin", text)
    assert_problem(response, ProblemCode.INVALID_QUERY)
    assert response.get_json()["errors"][0]["where"] == "/difficulty"


def test_no_deal_of_the_grade_within_the_budget_is_a_422_problem_never_remembered() -> None:
    c = client(settings_for_tests(DAILY_PAST_DAYS=str(PAST_DAYS), SOLVER_MAX_SECONDS="0.000004"))
    start = answer(c, "penguin")["deal"]
    wanted = next(g for g in reversed(GRADES) if grades.grade_of("penguin", int(start)) is not g)
    assert_problem(graded(c, "penguin", wanted.value), ProblemCode.NO_GRADED_DEAL)
    assert daily._graded_dailies == {}


def test_a_graded_daily_is_searched_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    searches: list[int] = []
    search = daily.graded_deal

    def counted(game: Any, grade: Grade, start: int) -> Any:
        searches.append(start)
        return search(game, grade, start)

    monkeypatch.setattr(daily, "graded_deal", counted)
    c = open_client()
    first = graded_answer(c, "penguin", "hard")
    assert graded_answer(c, "penguin", "hard") == first and len(searches) == 1
    graded_answer(c, "penguin", "easy")
    assert len(searches) == 2


def test_a_full_solver_pool_refuses_a_graded_daily_at_once() -> None:
    with held_place(queue="0") as (app, _):
        response = app.test_client().get("/v1/games/penguin/daily?difficulty=easy")
        assert_problem(response, ProblemCode.SOLVER_BUSY)
        assert "Retry-After" in response.headers


def payload_of(jws: str) -> Any:
    part = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


@pytest.mark.parametrize("mode", ["signed", "sealed"])
def test_a_graded_daily_replay_carries_its_difficulty_in_its_signed_result(mode: str) -> None:
    keys = key_for_tests("k1")
    settings = (
        signed_settings_for_tests(keys, DAILY_PAST_DAYS=str(PAST_DAYS)) if mode == "signed"
        else sealed_settings_for_tests(keys, DEAL_KEYS, DAILY_PAST_DAYS=str(PAST_DAYS))
    )
    c = client(settings)
    day = graded_answer(c, "penguin", "hard")
    moves = first_moves(c, "penguin", day["state"], day["legal_moves"], 3)
    replayed = replay(c, "penguin", moves, daily=TODAY.isoformat(), difficulty="hard", result_jws=True)
    assert replayed.status_code == 200, replayed.get_json()
    body = replayed.get_json()
    result = body["result"]
    assert result["difficulty"] == "hard" and result["daily"] == TODAY.isoformat() and result["deal"] == day["deal"]
    assert hmac.compare_digest(result["signature"]["mac"], mac_of((b"k1" * 32)[:32], result))
    forged = {**result, "difficulty": "easy"}
    assert not hmac.compare_digest(result["signature"]["mac"], mac_of((b"k1" * 32)[:32], forged))
    assert payload_of(body["result_jws"]) == result  # the JWS covers it too
    ungraded = replay(c, "penguin", [], daily=TODAY.isoformat()).get_json()["result"]
    assert "difficulty" not in ungraded and ungraded["deal"] == answer(c, "penguin")["deal"]
    assert "difficulty" not in replay(c, "penguin", [], deal=day["deal"]).get_json()["result"]


def test_a_replay_takes_difficulty_only_with_daily() -> None:
    c = open_client()
    with_deal = replay(c, "penguin", [], deal=1, difficulty="easy")
    assert_problem(with_deal, ProblemCode.INVALID_BODY)
    assert any(e["where"] == "/difficulty" for e in with_deal.get_json()["errors"])  # no such field of a deal's replay
    assert_problem(replay(c, "penguin", [], difficulty="easy"), ProblemCode.INVALID_BODY)
    assert_problem(replay(c, "penguin", [], daily=TODAY.isoformat(), difficulty="EASY"), ProblemCode.INVALID_BODY)
    assert_problem(replay(c, "forty-thieves", [], daily=TODAY.isoformat(), difficulty="easy"), ProblemCode.NOT_GRADED)
    future = replay(c, "penguin", [], daily=(TODAY + timedelta(days=1)).isoformat(), difficulty="easy")
    assert_problem(future, ProblemCode.DAILY_OUT_OF_WINDOW)
