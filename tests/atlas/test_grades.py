"""Difficulty grades (service/atlas/grades.py): the shipped thresholds, the grade of a deal,
a deal of each grade for every graded game, and ``POST /deals`` with ``difficulty`` or
``"grade": true`` in open and sealed modes."""

from __future__ import annotations

import time
from typing import Any

import pytest
from flask import Flask

from service.atlas import grades, validate
from service.atlas.__main__ import main
from service.atlas.batch import DealLine
from service.atlas.grades import GRADES, SHARES, Calibration, Grade, NotGraded
from service.atlas.validate import (
    LADDERS,
    TUNING_BAND,
    TUNING_TARGET,
    Baseline,
    Deals,
    Row,
    Validation,
    gap,
    nearest,
    play,
)
from service.engine.registry import game_ids, get_game
from service.http import create_app
from service.http.app_settings import settings_of
from service.http.problems import PROBLEM_JSON, ProblemCode
from service.http.state_protection import deal_seeds
from tests.app_settings import sealed_settings_for_tests, settings_for_tests
from tests.contract.test_solver_busy import held_place

CALIBRATED = grades.calibrations()
GRADED = sorted(CALIBRATED)


def test_the_asset_covers_every_game_once_with_monotone_thresholds() -> None:
    reasons = grades.not_graded_reasons()
    assert set(CALIBRATED) | set(reasons) == set(game_ids())
    assert not set(CALIBRATED) & set(reasons)
    assert "forty-thieves" in reasons
    assert len(GRADED) >= 5
    for gid, c in CALIBRATED.items():
        assert len(c.thresholds) == len(GRADES) - 1, gid
        assert list(c.thresholds) == sorted(c.thresholds) and c.thresholds[0] >= 1, gid
        assert sum(c.counts.values()) == c.won, gid
        for grade in GRADES:  # each grade's share as designed, within what ties allow
            assert abs(c.counts[grade] / c.won - SHARES[grade]) < 0.03, (gid, grade)


def test_a_score_is_graded_by_the_thresholds() -> None:
    c = Calibration((10, 20, 30), 1, 100, 100, {})
    assert [c.grade(s) for s in (1, 10, 11, 20, 21, 30, 31, 10**6)] == [
        Grade.EASY, Grade.EASY, Grade.MEDIUM, Grade.MEDIUM, Grade.HARD, Grade.HARD, Grade.EXPERT, Grade.EXPERT]


def test_calibration_cuts_the_winnable_deals_by_the_design_shares() -> None:
    lines = [DealLine(d, "solved", d, 50, None) for d in range(1, 101)] + [DealLine(101, "lost", 5, 0, None)]
    c = grades.calibrate(lines)
    assert c.thresholds == (40, 70, 90) and c.won == 100
    assert c.counts == {"easy": 40, "medium": 30, "hard": 20, "expert": 10}
    assert (c.first_deal, c.last_deal) == (1, 101)


def test_grade_of_reads_the_positions_of_a_solve_at_the_atlas_budget() -> None:
    # Penguin's deal 1 takes 699 positions, deal 2 takes 20 (the atlas's lines).
    penguin = CALIBRATED["penguin"]
    assert grades.score_of(get_game("penguin"), get_game("penguin").deal_state(1)) == 699
    assert grades.grade_of("penguin", 1) is penguin.grade(699)
    assert grades.grade_of("penguin", 2) is penguin.grade(20) is Grade.EASY
    # A deal the solver proves lost has no grade: Opus loses about half its deals.
    opus = get_game("opus")
    lost = next(d for d in range(1, 50) if grades.score_of(opus, opus.deal_state(d)) is None)
    assert grades.grade_of("opus", lost) is None


def test_ungraded_games_and_options_are_refused() -> None:
    with pytest.raises(NotGraded, match="undecided"):
        grades.grade_of("forty-thieves", 1)
    with pytest.raises(NotGraded, match="default options"):
        grades.calibration_of(get_game("penguin", {"cells": 3}))


@pytest.mark.parametrize("game_id", GRADED)
def test_a_deal_of_each_grade(game_id: str) -> None:
    game = get_game(game_id)
    for grade in GRADES:
        search = grades.first_graded_deal(game, grade, 1, grades.GRADED_DEAL_TRIES)
        assert search.found is not None, (game_id, grade)
        deal, state = search.found
        assert state == game.deal_state(deal) and search.tried.stop == deal + 1
        assert grades.grade_of(game_id, deal) is grade, (game_id, grade, deal)


def test_a_graded_search_stops_at_its_budget() -> None:
    game = get_game("penguin")  # deal 2 is easy: no expert deal within a budget of 1 position
    search = grades.first_graded_deal(game, Grade.EXPERT, 2, 50, total_seconds=1 / 250_000)
    assert search.found is None and search.tried == range(2, 3)


def test_the_baseline_players_play_by_the_rules() -> None:
    game = get_game("penguin")
    played = play(game, game.deal_state(2))  # an easy deal: a small search wins it
    assert played.greedy is not None and 1 <= played.greedy <= LADDERS[Baseline.GREEDY][-1]
    assert played.won(Baseline.GREEDY, played.greedy) and not played.won(Baseline.GREEDY, played.greedy - 1)
    assert play(game, game.deal_state(2)) == played  # no clock, no chance: the same game each time
    assert played.won(Baseline.FIRST, 0) is played.first and played.won(Baseline.FRESH, 0) is played.fresh
    assert validate.looks_ahead("penguin", 2, 3_000)  # looking far enough ahead wins an easy deal


def test_a_player_is_tuned_to_win_about_half_of_the_tuning_deals() -> None:
    assert nearest({10: 0.0, 100: 0.3, 1_000: 0.6, 3_000: 0.9}) == 1_000
    assert nearest({10: 0.4, 100: 0.6}) == 10  # a tie: the lower budget
    assert nearest({10: 0.0, 100: 0.0}) == 10
    assert TUNING_TARGET - TUNING_BAND > 0 and TUNING_TARGET + TUNING_BAND < 1
    for ladder in LADDERS.values():
        assert list(ladder) == sorted(set(ladder))


def row(grade: Grade, won: int, deals: int = 200) -> Row:
    return Row(grade, Deals(deals, 1, deals), {Baseline.GREEDY: won}, {Baseline.GREEDY: deals})


@pytest.mark.parametrize(("won", "monotone", "rises", "separated"), [
    ((150, 110, 90, 60), True, False, True),
    ((150, 110, 115, 60), False, False, True),  # a rise of 5 in 200: noise
    ((150, 60, 110, 60), False, True, True),  # hard's interval lies above medium's
    ((30, 28, 27, 25), True, False, False),  # falling, but easy is not told from expert
])
def test_the_verdict_reads_the_tuned_player(won: tuple[int, ...], monotone: bool, rises: bool, separated: bool) -> None:
    rows = [row(g, n) for g, n in zip(GRADES, won, strict=True)]
    v = Validation("penguin", Baseline.GREEDY, 1_000, Deals(2, 1, 2), {Baseline.GREEDY: {1_000: 0.5}}, rows)
    assert (v.monotone, v.rises, v.separated, v.holds) == (monotone, rises, separated, separated and not rises)
    kept = Validation.from_json("penguin", v.as_json())
    assert kept == v  # the asset keeps all a verdict reads


@pytest.mark.parametrize(("game_id", "lookahead"), [("abandon-hope", False), ("penguin", True)])
def test_a_small_validation_runs_end_to_end(monkeypatch: pytest.MonkeyPatch, game_id: str, lookahead: bool) -> None:
    """4 tuning deals, 2 deals a grade. In Penguin, greedy gets 1 position (it wins nothing:
    out of band), so lookahead is tuned and plays, leaving out the deals its first look solves."""
    monkeypatch.setattr(validate, "TUNING_DEALS", 4)
    if lookahead:
        monkeypatch.setattr(validate, "LADDERS", {Baseline.GREEDY: (1,), Baseline.LOOKAHEAD: (30,)})
    v = validate.validate(game_id, 2, 200, workers=1)
    c, game = CALIBRATED[game_id], get_game(game_id)
    assert v.player is (Baseline.LOOKAHEAD if lookahead else Baseline.GREEDY)
    assert v.tuning_deals.count == 4 and v.tuning_deals.last <= c.last_deal
    assert v.budget == nearest(v.tuning_shares[v.player])
    for r in v.rows:
        assert r.deals.count == 2 and r.deals.first > c.last_deal
        assert r.played[Baseline.FIRST] == 2 and 0 <= r.won[v.player] <= r.played[v.player] <= 2
        scores = [grades.score_of(game, game.deal_state(d)) for d in (r.deals.first, r.deals.last)]
        assert all(s is not None and c.grade(s) is r.grade for s in scores)
        if lookahead:
            assert r.played[Baseline.LOOKAHEAD] == sum(s is not None and s > v.budget for s in scores)
        else:
            assert Baseline.LOOKAHEAD not in r.played


@pytest.mark.parametrize("game_id", GRADED)
def test_every_graded_game_s_grades_hold_on_deals_the_calibration_did_not_use(game_id: str) -> None:
    """The asset's validation (``validate --write``), its verdict computed again from its
    counts: a game is graded only if a tuned cheap player wins more on easier grades."""
    c = CALIBRATED[game_id]
    kept = grades.validation_of(game_id)
    assert kept is not None, f"{game_id}: calibrated but not validated (python -m service.atlas validate --write)"
    v = Validation.from_json(game_id, kept)
    assert v.tuning_deals.count == validate.TUNING_DEALS and c.first_deal <= v.tuning_deals.first
    assert v.tuning_deals.last <= c.last_deal
    assert v.budget == nearest(v.tuning_shares[v.player])  # the tuning rule
    greedy = v.tuning_shares[Baseline.GREEDY]
    if gap(greedy[nearest(greedy)]) <= TUNING_BAND:
        assert v.player is Baseline.GREEDY
    else:  # lookahead was tuned too, and the nearer to the target plays
        looks = v.tuning_shares[Baseline.LOOKAHEAD]
        nearer = gap(looks[nearest(looks)]) < gap(greedy[nearest(greedy)])
        assert v.player is (Baseline.LOOKAHEAD if nearer else Baseline.GREEDY)
    for r in v.rows:
        assert r.deals.count >= 200 and r.deals.first > c.last_deal, (game_id, r.grade)
        assert r.played[v.player] >= 100, (game_id, r.grade)  # lookahead: what its first look did not solve
    assert v.holds, f"{game_id}: {v.verdict}"
    assert (kept["monotone"], kept["rises"], kept["separated"]) == (v.monotone, v.rises, v.separated)


def test_the_kept_validations_print_without_playing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--games", "all", "--kept"]) == 0
    out, err = capsys.readouterr()
    for gid in GRADED:
        kept = Validation.from_json(gid, grades.validation_of(gid) or {})
        assert f"| {gid} | easy | {kept.rows[0].deals.count} (" in out
        assert f"`{kept.player.value}` | " in out and f"at {kept.budget:,} |" in out
    assert "forty-thieves: not graded" in err
    assert main(["validate", "--games", "penguin"]) == 2  # neither --per-game nor --kept


# --- over HTTP ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def open_app() -> Flask:
    return create_app(settings_for_tests())


@pytest.fixture(scope="module")
def sealed_app() -> Flask:
    return create_app(sealed_settings_for_tests())


def deal(app: Flask, body: dict[str, Any], game_id: str = "penguin") -> Any:
    return app.test_client().post(f"/v1/games/{game_id}/deals", json=body)


@pytest.mark.parametrize("mode", ["open", "sealed"])
def test_a_deal_of_each_grade_over_http(open_app: Flask, sealed_app: Flask, mode: str) -> None:
    app = open_app if mode == "open" else sealed_app
    game = get_game("penguin")
    seeds = deal_seeds(settings_of(app).state, game)
    for grade in GRADES:
        r = deal(app, {"deal": 100, "difficulty": grade.value})
        assert r.status_code == 200, r.json
        assert r.json["difficulty"] == grade.value
        number = int(r.json["deal"])
        assert number >= 100
        # the deal the player gets (keyed in sealed mode) is of that grade
        seed = number if seeds is None else seeds(number)
        assert grades.grade_state(game, game.initial_state(seed)) is grade
        again = deal(app, {"deal": number, "grade": True})
        assert again.status_code == 200 and again.json["difficulty"] == grade.value
        assert again.json["state"] == r.json["state"]
    assert (seeds is None) == (mode == "open")


def test_a_random_graded_deal(open_app: Flask) -> None:
    r = deal(open_app, {"difficulty": "hard"})
    assert r.status_code == 200 and r.json["difficulty"] == "hard"
    assert grades.grade_of("penguin", int(r.json["deal"])) is Grade.HARD


def test_grade_true_states_null_for_a_deal_not_won(open_app: Flask) -> None:
    opus = get_game("opus")
    lost = next(d for d in range(1, 50) if grades.score_of(opus, opus.deal_state(d)) is None)
    r = deal(open_app, {"deal": lost, "grade": True}, "opus")
    assert r.status_code == 200 and r.json["difficulty"] is None and r.json["deal"] == str(lost)


def test_answers_carry_difficulty_only_when_asked(open_app: Flask) -> None:
    for body in ({"deal": 7}, {"deal": 7, "grade": False}, {"deal": 7, "winnable": True}):
        r = deal(open_app, body)
        assert r.status_code == 200 and "difficulty" not in r.json, body


@pytest.mark.parametrize("body", [{"difficulty": "trivial"}, {"difficulty": 1}, {"difficulty": None},
                                  {"grade": "yes"}, {"difficulty": "EASY"}])
def test_a_bad_grade_is_a_400_problem(open_app: Flask, body: dict[str, Any]) -> None:
    r = deal(open_app, body)
    assert r.status_code == 400 and r.mimetype == PROBLEM_JSON
    assert r.json["code"] == ProblemCode.INVALID_BODY


@pytest.mark.parametrize("body", [{"difficulty": "easy"}, {"deal": 1, "grade": True}])
def test_forty_thieves_and_other_options_are_not_graded(open_app: Flask, body: dict[str, Any]) -> None:
    r = deal(open_app, body, "forty-thieves")
    assert r.status_code == 422 and r.mimetype == PROBLEM_JSON
    assert r.json["code"] == ProblemCode.NOT_GRADED and "undecided" in r.json["detail"]
    r = deal(open_app, {**body, "options": {"cells": 3}})
    assert r.status_code == 422 and r.json["code"] == ProblemCode.NOT_GRADED


def test_no_deal_of_the_grade_within_the_budget_is_a_422_problem() -> None:
    app = create_app(settings_for_tests(SOLVER_MAX_SECONDS="0.000004"))  # a position of Penguin's pace
    r = deal(app, {"deal": 2, "difficulty": "expert"})
    assert r.status_code == 422 and r.mimetype == PROBLEM_JSON
    assert r.json["code"] == ProblemCode.NO_GRADED_DEAL and "deal 2 " in r.json["detail"]


@pytest.mark.parametrize("body", [{"deal": 3, "difficulty": "easy"}, {"deal": 3, "grade": True}])
def test_a_full_solver_pool_refuses_graded_deals_at_once(body: dict[str, Any]) -> None:
    with held_place(queue="0") as (app, _):
        started = time.perf_counter()
        r = deal(app, body)
        assert r.status_code == 503 and r.json["code"] == ProblemCode.SOLVER_BUSY
        assert "Retry-After" in r.headers and time.perf_counter() - started < 0.1
