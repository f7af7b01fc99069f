"""The solver through its HTTP endpoints: solutions replay to "won" through the moves
endpoint, proofs of loss, budgets, hints, errors and winnable deals."""

from __future__ import annotations

import time
from typing import Any

import pytest

from service.engine.core import Action
from service.engine.registry import game_ids, get_game
from service.http import solver_api
from service.http.app_settings import EXTENSION_KEY, settings_of
from service.http.wire import move_from_json, state_to_json
from service.solver import Limits, first_winnable_deal, solve_position
from service.solver.plugins import pace_of, strategy_for
from service.solver.pool import SearchOverran, SolverPool
from service.solver.search import Outcome, SolveResult, StopReason, depth_first_pass, solve, verify
from tests.helpers import position

# Deals each game's solver wins well within a second on this machine (found with the
# solver itself); every game is covered.
QUICK_DEALS: dict[str, tuple[int, ...]] = {
    "penguin": (1, 2, 3),
    "penguin-ii": (2, 3),
    "opus": (2, 3),
    "pelican": (1, 2),
    "penguin-freecell-moves": (1, 2),
    "small-billee": (1, 2),
    "boomerang": (5, 7),
    "amazons": (1, 2),
    "abandon-hope": (1, 2),
    "binary-star": (1, 2),
    "forty-thieves": (2, 14),
}


def deal(client: Any, game_id: str, number: int) -> dict[str, Any]:
    r = client.post(f"/v1/games/{game_id}/deals", json={"deal": number})
    assert r.status_code == 200, r.json
    return r.json["state"]


def replay(client: Any, game_id: str, state: dict[str, Any], moves: list[dict[str, Any]]) -> str:
    """Send each move to the moves endpoint in turn; the final status."""
    status = "playing"
    for i, move in enumerate(moves):
        r = client.post(f"/v1/games/{game_id}/moves", json={"state": state, "move": move})
        assert r.status_code == 200, (i, move, r.json)
        state, status = r.json["state"], r.json["status"]
    return status


@pytest.mark.parametrize(
    ("game_id", "number"), [(g, d) for g, deals in QUICK_DEALS.items() for d in deals]
)
def test_solution_replays_to_won_through_moves_endpoint(client: Any, game_id: str, number: int) -> None:
    state = deal(client, game_id, number)
    r = client.post(f"/v1/games/{game_id}/solve", json={"state": state, "limits": {"max_seconds": 5}})
    assert r.status_code == 200, r.json
    body = r.json
    assert body["result"] == "solved", body["stats"]
    assert body["moves"]
    assert replay(client, game_id, state, body["moves"]) == "won"
    if game_id in ("penguin-ii", "opus"):
        assert all(m.get("count", 1) == 1 for m in body["moves"])


def test_every_game_has_replayed_solutions() -> None:
    assert set(QUICK_DEALS) == set(game_ids())
    assert all(len(deals) >= 2 for deals in QUICK_DEALS.values())


def test_boomerang_near_end_position_replays(client: Any) -> None:
    """A position near the end exercises refills and dead-card autoplay through the
    endpoints."""
    game = get_game("boomerang")
    seq = ["7", "8", "9", "T", "J", "Q", "K", "A", "K", "Q", "J", "T", "9", "8", "7", "A"]
    found = [" ".join(r + s for r in seq[:13]) for s in "CDHS"]  # 7 up to A and down to 9
    rest = [r + s for s in "CDHS" for r in seq[13:]]  # 8 7 A of every suit
    tableau = rest[:12]
    state = position(game, foundation=found, tableau=tableau)
    assert not game.validate(state), game.validate(state)
    sj = state_to_json(game, state)
    r = client.post("/v1/games/boomerang/solve", json={"state": sj, "limits": {"max_seconds": 5}})
    assert r.status_code == 200 and r.json["result"] == "solved", r.json
    assert replay(client, "boomerang", sj, r.json["moves"]) == "won"


def test_penguin_freecell_moves_solutions_respect_the_run_limit() -> None:
    game = get_game("penguin-freecell-moves")
    for number in (1, 2, 3, 4):
        state = game.initial_state(number)
        result = solve_position(game, state, Limits(5, 10**6))
        assert result.result is Outcome.SOLVED
        assert verify(game, state, result.moves)  # each move is in legal_moves: limit held


LOST_PENGUIN: dict[str, Any] = {
    "foundation": ["AC 2C 3C 4C 5C 6C", "AD 2D 3D 4D 5D 6D", "AH 2H 3H 4H 5H 6H", "AS 2S 3S 4S 5S 6S"],
    "tableau": ["KD 8H QS QC", "7S 7H 8C TH", "TS 7C 9S 8S", "JD TC KC TD", "7D 9C 9D KH",
                "QD QH KS 9H", "JC 8D JH JS"],
}


def test_proved_unsolvable_penguin_position(client: Any) -> None:
    """A one-cell Penguin position with moves left but no win (Freecell Solver agrees, and
    so does the generic search without any of the Penguin pruning)."""
    from service.solver.search import Strategy, solve

    game = get_game("penguin", {"cells": 1})
    state = position(game, **LOST_PENGUIN)
    assert not game.validate(state) and game.legal_moves(state)
    assert solve(Strategy(game, state), Limits(10, 10**6)).result is Outcome.UNSOLVABLE
    sj = state_to_json(game, state)
    r = client.post("/v1/games/penguin/solve", json={"state": sj})
    assert r.status_code == 200
    assert r.json["result"] == "unsolvable" and r.json["moves"] == []
    h = client.post("/v1/games/penguin/hint", json={"state": sj}).json
    assert h["winnable"] is False and h["move"] is not None and "can no longer be won" in h["reason"]


def test_opus_deal_proved_unsolvable_agrees_with_freecell_solver() -> None:
    """Opus deal 1: Freecell Solver also reports it unsolvable (bench/fcs_baseline.py)."""
    game = get_game("opus")
    result = solve_position(game, game.initial_state(1), Limits(10, 10**6))
    assert result.result is Outcome.UNSOLVABLE


def test_time_budget_holds(client: Any) -> None:
    """A 0.5 s limit is counted in positions (0.5 s at the game's reference pace) and
    answers within about 0.5 s on an idle core; asked again, the same answer. Forty Thieves
    deals are the hardest there are (most stay unknown for minutes): the first that the
    limit stops is the check, and every answer on the way must keep to the limit too."""
    budget = 0.5 * pace_of(get_game("forty-thieves"))
    for number in range(1, 11):
        state = deal(client, "forty-thieves", number)
        started = time.monotonic()
        r = client.post("/v1/games/forty-thieves/solve", json={"state": state, "limits": {"max_seconds": 0.5}})
        elapsed = time.monotonic() - started
        assert r.status_code == 200
        assert elapsed < 1.5, (number, elapsed)
        if r.json["result"] == "unknown":
            assert r.json["stats"]["stopped_by"] == "time"
            assert budget * 0.95 <= r.json["stats"]["states"] <= budget + 100  # a beam level's last expansion may go past
            again = client.post("/v1/games/forty-thieves/solve", json={"state": state, "limits": {"max_seconds": 0.5}})
            assert {**again.json, "stats": None} == {**r.json, "stats": None}
            assert again.json["stats"]["states"] == r.json["stats"]["states"]
            return
    raise AssertionError("no Forty Thieves deal of 1-10 needed more than 0.5 s: pick a harder position")


def test_state_budget_and_server_caps(client: Any, app: Any) -> None:
    state = deal(client, "opus", 4)
    r = client.post("/v1/games/opus/solve", json={"state": state, "limits": {"max_states": 5, "max_seconds": 3600}})
    assert r.status_code == 200
    body = r.json
    assert body["result"] == "unknown" and body["stats"]["stopped_by"] == "states"
    settings = settings_of(app).solver
    assert body["stats"]["max_seconds"] == settings.max_seconds <= 30


def test_hint_is_first_move_of_a_solution(client: Any) -> None:
    state = deal(client, "penguin", 2)
    h = client.post("/v1/games/penguin/hint", json={"state": state})
    assert h.status_code == 200
    body = h.json
    assert body["winnable"] is True and body["move"]["action"] == "move"
    assert "solution" in body["reason"]
    r = client.post("/v1/games/penguin/moves", json={"state": state, "move": body["move"]})
    assert r.status_code == 200


def test_hint_on_won_position(client: Any) -> None:
    game = get_game("amazons")
    state = game.initial_state(1)
    result = solve_position(game, state, Limits(5, 10**6))
    for m in result.moves:
        state = game.apply(state, m)
    assert game.is_won(state)
    h = client.post("/v1/games/amazons/hint", json={"state": state_to_json(game, state)}).json
    assert h["move"] is None and h["winnable"] is True


@pytest.mark.parametrize("game_id", ["penguin", "amazons", "binary-star", "forty-thieves", "boomerang"])
def test_hint_unknown_uses_heuristic(client: Any, app: Any, monkeypatch: Any, game_id: str) -> None:
    """With no budget to find a solution, the hint is the first move the game's
    strategy orders first, and the reason says what that strategy prefers."""
    from dataclasses import replace

    settings = settings_of(app)
    small = replace(settings, solver=replace(settings.solver, hint_seconds=0.05, max_states=1))
    monkeypatch.setitem(app.extensions, EXTENSION_KEY, small)
    game = get_game(game_id)
    state = game.initial_state(1)
    body = client.post(f"/v1/games/{game_id}/hint", json={"state": state_to_json(game, state)}).json
    assert body["winnable"] == "unknown"
    strategy = strategy_for(game, state)
    assert strategy.heuristic in body["reason"]
    legal = game.legal_moves(state)
    first = next(m for m in strategy.ordered_moves(state) if m in legal)
    r = client.post(f"/v1/games/{game_id}/moves", json={"state": state_to_json(game, state), "move": body["move"]})
    assert r.status_code == 200
    assert move_from_json(game, body["move"]) == first


def test_errors(client: Any) -> None:
    state = deal(client, "penguin", 1)
    assert client.post("/v1/games/nope/solve", json={"state": state}).status_code == 404
    r = client.post("/v1/games/penguin/solve", json={"state": state, "limits": {"max_seconds": "x"}})
    assert r.status_code == 400 and r.content_type.startswith("application/problem+json")
    assert client.post("/v1/games/penguin/hint", json={}).status_code == 400
    bad = {**state, "piles": {**state["piles"], "cell": [["AH"], *state["piles"]["cell"][1:]]}}
    r = client.post("/v1/games/penguin/solve", json={"state": bad})
    assert r.status_code == 422 and r.json["code"] == "invalid-state"
    r = client.post("/v1/games/pelican/hint", json={"state": state})
    assert r.status_code == 422


def test_first_winnable_deal() -> None:
    game = get_game("opus")
    search = first_winnable_deal(game, 1, 2.0, 5)
    assert search.found is not None
    number, state = search.found
    assert number == 2 and state == game.initial_state(2)  # deal 1 is proved lost
    assert search.tried == range(1, 3)
    alone = first_winnable_deal(game, 1, 2.0, 1)
    assert alone.found is None and alone.tried == range(1, 2)


def test_winnable_deal_search_keeps_to_its_total_budget(monkeypatch: Any) -> None:
    """However many tries are configured, the search stops at its total budget, counted in
    positions. Each try here spends the positions of its whole limit and finds nothing (a
    stand-in solver), so the budget alone decides how many deals are tried: 0.3 + 0.3 +
    0.3 + 0.1 s, and the last try gets only what is left; the clock plays no part."""
    import service.solver.answers as answers

    game = get_game("opus")
    given: list[float] = []

    def slow_unknown(game: Any, state: Any, limits: Limits) -> SolveResult:
        given.append(round(limits.max_seconds, 6))
        return SolveResult(Outcome.UNKNOWN, [], round(limits.max_seconds * pace_of(game)), 0.0, StopReason.TIME)

    monkeypatch.setattr(answers, "solve_position", slow_unknown)
    search = first_winnable_deal(game, 3, 0.3, 100, total_seconds=1.0)
    assert search.found is None and search.tried == range(3, 7)
    assert given == [0.3, 0.3, 0.3, 0.1]


def test_passes_of_one_solve_share_its_position_limit() -> None:
    """A solve of several passes (Opus: depth-first, then best-first; Boomerang: flares,
    then depth-first) visits at most ``max_states`` positions in all: a later pass gets
    what the earlier ones left."""
    for game_id, number in (("opus", 279), ("boomerang", 124)):  # proofs take 9,586 positions; 124 stays unknown
        game = get_game(game_id)
        for limits in (Limits(0.2, 5000), Limits(0.5, 1500), Limits(5, 3000)):
            r = solve_position(game, game.initial_state(number), limits)
            assert r.result is Outcome.UNKNOWN, (game_id, r.result)
            assert r.states <= limits.max_states + 2, (game_id, limits, r.states)


def test_solver_settings_from_the_environment(monkeypatch: Any) -> None:
    from service.settings import SOLVER_HARD_CAP_SECONDS, read_settings

    monkeypatch.setenv("SOLVER_MAX_SECONDS", "600")
    monkeypatch.setenv("SOLVER_MAX_STATES", "5_000")
    monkeypatch.setenv("WINNABLE_DEAL_TRIES", "3")
    s = read_settings().solver
    assert s.max_seconds == SOLVER_HARD_CAP_SECONDS and s.max_states == 5000 and s.winnable_deal_tries == 3
    for name, raw in (("SOLVER_MAX_STATES", "0.5"), ("SOLVER_MAX_STATES", "0"), ("WINNABLE_DEAL_TRIES", "many"),
                      ("SOLVER_MAX_SECONDS", "-1"), ("HINT_SECONDS", "soon")):
        monkeypatch.setenv(name, raw)
        with pytest.raises(RuntimeError, match=name):
            read_settings()
        monkeypatch.delenv(name)


def test_garbage_collector_is_restored_after_overlapping_solves() -> None:
    """Searches pause the process-wide cyclic collector; with several at once (gunicorn
    threads), the last one to end restores it, whatever order they end in."""
    import gc

    from service.solver.search import gc_paused

    assert gc.isenabled()
    gc_paused.__enter__()
    gc_paused.__enter__()  # a second solve starts meanwhile
    assert not gc.isenabled()
    gc_paused.__exit__(None, None, None)  # the first ends
    assert not gc.isenabled()
    gc_paused.__exit__(None, None, None)  # the last ends
    assert gc.isenabled()
    gc.disable()  # a process that had it off keeps it off
    with gc_paused:
        pass
    assert not gc.isenabled()
    gc.enable()


def test_solutions_use_only_engine_moves() -> None:
    """Macro moves (runs through cells, auto foundation moves) come out as engine moves."""
    game = get_game("penguin-ii")
    state = game.initial_state(3)
    result = solve_position(game, state, Limits(5, 10**6))
    assert result.result is Outcome.SOLVED
    for m in result.moves:
        assert m in game.legal_moves(state)
        assert m.action == Action.MOVE and m.count == 1
        state = game.apply(state, m)
    assert game.is_won(state)


@pytest.mark.slow
def test_wandering_solutions_are_shortened() -> None:
    """Unbounded depth-first search finds a 9,084-move line for this deal; the answer is
    the shortened line (a few hundred moves), still a verified win."""
    game = get_game("penguin-freecell-moves")
    state = game.initial_state(278)
    strategy = strategy_for(game, state)
    strategy.max_depth = None  # the depth bound alone would avoid the wandering line
    strategy.long_path = 10**9
    assert len(solve(strategy, Limits(10, 10**6)).moves) > 5000  # the premise: it wanders
    strategy = strategy_for(game, state)
    strategy.max_depth = None
    result = solve(strategy, Limits(10, 10**6))
    assert result.result is Outcome.SOLVED
    assert len(result.moves) <= 300
    assert verify(game, state, result.moves)


def test_depth_bound_pass_falls_back_to_a_full_search() -> None:
    """A depth-first pass bounded to lines of 3 positions cannot win, or prove a loss, on
    a real deal: the full search that follows must still find the solution."""
    game = get_game("pelican")
    state = game.initial_state(1)
    strategy = strategy_for(game, state)
    strategy.max_depth = 3
    first, root = strategy.auto(strategy.start())
    bounded = depth_first_pass(strategy, Limits(10, 10**6), first, root, time.monotonic(), 3)
    assert bounded.result is Outcome.UNKNOWN and bounded.stopped_by is StopReason.DEPTH
    result = solve(strategy, Limits(10, 10**6))
    assert result.result is Outcome.SOLVED and verify(game, state, result.moves)
    assert result.states > bounded.states


@pytest.mark.parametrize("endpoint", ["solve", "hint"])
def test_a_full_pool_refuses_before_the_state_is_parsed(client: Any, monkeypatch: pytest.MonkeyPatch, endpoint: str) -> None:
    """Room first (issue 25, item 2): with no room in the pool, a search is refused 503
    solver-busy with Retry-After before its body is validated or its state parsed, so a
    flood of searches costs little per refusal; with room, the same body is validated (and
    refused 400)."""
    path = f"/v1/games/penguin/{endpoint}"
    bad = {"state": "not a state", "limits": {"max_seconds": "x"}}

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the state was read")

    with monkeypatch.context() as patched:
        patched.setattr(SolverPool, "has_room", lambda self: 7)
        patched.setattr(solver_api, "read_state", never)
        r = client.post(path, json=bad)
        assert (r.status_code, r.json["code"], r.headers["Retry-After"]) == (503, "solver-busy", "7")
    assert client.post(path, json=bad).status_code == 400


def test_a_search_that_overran_for_lack_of_cpu_is_busy_not_failed(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A search past its budget and grace (it did not get its share of the CPU) answers 503
    solver-busy with Retry-After, never solver-failed, and never an answer cut by the clock."""

    def overran(self: SolverPool, search: Any, client_gone: Any = None) -> Any:
        raise SearchOverran.after(2.5, "its process did not answer within 7.5 s and was replaced")

    monkeypatch.setattr(SolverPool, "run", overran)
    r = client.post("/v1/games/penguin/solve", json={"state": deal(client, "penguin", 1)})
    assert (r.status_code, r.json["code"], r.headers["Retry-After"]) == (503, "solver-busy", "3")
    assert "did not get enough of the CPU" in r.json["detail"]
