"""The atlas batch (service/atlas): resumable after a kill, merged identically however it
ran, one block per Indexed Job index, and the table's intervals."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from service.atlas import batch, players, table
from service.atlas.__main__ import main
from service.atlas.players import HintStop, Player
from service.engine.registry import game_ids, get_game
from service.settings import read_settings
from service.solver import Knowledge, Outcome, hint, player_hint, solve_position
from service.solver.autoplay import run_autoplay

GAME = "boomerang"  # tens of ms a deal: a kill lands in the middle of a run
DEALS = range(1, 41)


def atlas(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "service.atlas", *args], start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finished(process: subprocess.Popen[bytes]) -> str:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err.decode()
    return out.decode()


def lines_written(out: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in (out / GAME).glob("*.jsonl")) if (out / GAME).is_dir() else 0


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The merge of an uninterrupted run on one process."""
    out = tmp_path_factory.mktemp("reference")
    assert batch.run(out, GAME, DEALS, workers=1, progress=None) == len(DEALS)
    batch.merge(out, GAME)
    return batch.merged_path(out, GAME).read_bytes()


def test_a_deals_line_is_the_solvers_answer_within_the_atlas_budget() -> None:
    game = get_game(GAME)
    found = solve_position(game, game.deal_state(7), players.SOLVER_LIMITS)
    line = batch.play_deal(Player.SOLVER, GAME, 7)
    assert (line.deal, line.result, line.positions) == (7, found.result.value, found.states)
    assert line.moves == (len(found.moves) if found.result is Outcome.SOLVED else 0)
    assert batch.DealLine.loads(line.dumps()) == line


def test_the_merge_has_one_line_per_deal_in_order(reference: bytes) -> None:
    deals = [batch.DealLine.loads(x).deal for x in reference.decode().splitlines()]
    assert deals == list(DEALS)


def test_a_run_killed_midway_resumes_where_it_stopped_and_merges_identically(tmp_path: Path, reference: bytes) -> None:
    run = atlas("run", "--games", GAME, "--deals", f"{DEALS.start}-{DEALS.stop - 1}", "--out", str(tmp_path),
                "--workers", "2")
    deadline = time.monotonic() + 120
    while lines_written(tmp_path) < 5 and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.02)
    os.killpg(run.pid, signal.SIGKILL)
    _, err = run.communicate()
    before = lines_written(tmp_path)
    assert 5 <= before < len(DEALS), f"the kill came after {before} deals: {err.decode()[-2000:]}"
    # A kill between a line's bytes and its newline: the resume cuts the half line off.
    first = sorted((tmp_path / GAME).glob("*.jsonl"))[0]
    with first.open("ab") as f:
        f.write(b'{"deal":')
    done_then = batch.done_deals(tmp_path, GAME, DEALS)
    assert first.read_bytes().endswith(b"\n")
    solved_now = batch.run(tmp_path, GAME, DEALS, workers=2, progress=None)
    assert solved_now == len(DEALS) - len(done_then)
    assert lines_written(tmp_path) == len(DEALS)  # nothing solved twice
    batch.merge(tmp_path, GAME)
    assert batch.merged_path(tmp_path, GAME).read_bytes() == reference
    assert batch.run(tmp_path, GAME, DEALS, workers=2, progress=None) == 0


def test_the_job_entrypoint_runs_its_index_block_and_the_indexes_merge_to_the_whole(tmp_path: Path, reference: bytes) -> None:
    deals = f"{DEALS.start}-{DEALS.stop - 1}"
    for index in (0, 1, 2):
        job = atlas("job", "--games", GAME, "--deals", deals, "--blocks", "3", "--out", str(tmp_path),
                    "--workers", "1", "--index", str(index))
        finished(job)
        block = batch.job_block(DEALS, 3, index)
        assert batch.done_deals(tmp_path, GAME, DEALS) == set(DEALS[: block.stop - DEALS.start])
    finished(atlas("merge", "--games", GAME, "--out", str(tmp_path)))
    assert batch.merged_path(tmp_path, GAME).read_bytes() == reference


def test_the_job_entrypoint_refuses_to_run_without_its_index(tmp_path: Path) -> None:
    job = subprocess.run([sys.executable, "-m", "service.atlas", "job", "--games", GAME, "--deals", "1-10",
                          "--blocks", "2", "--out", str(tmp_path)], capture_output=True, timeout=60)
    assert job.returncode == 2 and b"--index" in job.stderr
    assert not (tmp_path / GAME).exists()


def test_job_blocks_cover_the_range_once() -> None:
    for deals, count in ((range(1, 1_000_001), 100), (range(5, 12), 3), (range(1, 3), 5)):
        parts = [batch.job_block(deals, count, i) for i in range(count)]
        assert [d for part in parts for d in part] == list(deals)
    with pytest.raises(ValueError):
        batch.job_block(range(1, 10), 3, 3)


def test_two_lines_of_one_deal_that_differ_stop_the_merge(tmp_path: Path) -> None:
    folder = tmp_path / GAME
    folder.mkdir()
    (folder / "deals-1-5.jsonl").write_text(batch.DealLine(3, "solved", 10, 5, None).dumps())
    (folder / "deals-3-3.jsonl").write_text(batch.DealLine(3, "unknown", 10, 0, "time").dumps())
    with pytest.raises(batch.ConflictingResults, match="deal 3"):
        batch.merge(tmp_path, GAME)


@pytest.mark.parametrize("args", [
    ["run", "--games", GAME, "--deals", "10-1", "--out", "x"],
    ["run", "--games", GAME, "--deals", f"1-{10**20}", "--out", "x"],
    ["run", "--games", "klondike", "--deals", "1-10", "--out", "x"],
    ["run", "--games", GAME, "--deals", "1-10", "--out", "x", "--workers", "-1"],
    ["job", "--games", GAME, "--deals", "1-10", "--out", "x", "--blocks", "0"],
], ids=["backwards", "beyond-max-deal", "unknown-game", "negative-workers", "no-blocks"])
def test_the_command_line_refuses_bad_arguments_with_status_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_a_job_index_outside_its_blocks_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["job", "--games", GAME, "--deals", "1-10", "--out", str(tmp_path), "--blocks", "3", "--index", "3"]) == 2
    assert "0 to 2" in capsys.readouterr().err


def test_an_output_directory_it_cannot_write_is_a_message_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert main(["run", "--games", GAME, "--deals", "1-2", "--out", str(blocked / "out"), "--workers", "1"]) == 1
    assert str(blocked) in capsys.readouterr().err


def test_a_block_another_run_is_writing_is_refused(tmp_path: Path) -> None:
    batch.run(tmp_path, GAME, range(1, 3), workers=1, progress=None)
    path = batch.block_files(tmp_path, GAME)[0]
    with path.open("ab") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(batch.BadResults, match="being written by another run"):
            batch.run(tmp_path, GAME, range(1, 5), workers=1, progress=None)


def test_a_line_that_is_not_a_deals_names_its_file_and_line(tmp_path: Path) -> None:
    folder = tmp_path / GAME
    folder.mkdir()
    (folder / "deals-1-2.jsonl").write_text(batch.DealLine(1, "solved", 10, 5, None).dumps() + '{"deal": 2}\n')
    with pytest.raises(batch.BadResults, match=r"deals-1-2\.jsonl:2"):
        batch.merge(tmp_path, GAME)


def test_a_range_with_deals_missing_is_not_tabulated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / GAME
    folder.mkdir()
    (folder / "deals-1-3.jsonl").write_text("".join(batch.DealLine(d, "solved", 10, 5, None).dumps() for d in (1, 3)))
    assert main(["table", "--games", GAME, "--out", str(tmp_path)]) == 1
    assert "1 missing" in capsys.readouterr().err


def test_a_table_of_some_deals_leaves_the_merged_file_whole(tmp_path: Path) -> None:
    batch.run(tmp_path, GAME, range(1, 7), workers=1, progress=None)
    assert main(["merge", "--games", GAME, "--out", str(tmp_path)]) == 0
    whole = batch.merged_path(tmp_path, GAME).read_bytes()
    assert main(["table", "--games", GAME, "--out", str(tmp_path), "--deals", "2-3"]) == 0
    assert batch.merged_path(tmp_path, GAME).read_bytes() == whole and whole.count(b"\n") == 6


# --- the table ------------------------------------------------------------------------------


def test_wilson_interval_matches_its_closed_form_and_contains_the_share() -> None:
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", table I:
    # 81 of 263, the score method (Wilson), 0.2553 to 0.3662.
    low, high = table.wilson(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)
    for won, n in ((0, 10), (10, 10), (1, 1), (5_000, 100_000), (99_990, 100_000)):
        low, high = table.wilson(won, n)
        assert 0 <= low <= won / n <= high <= 1
    # Near a half, 100,000 deals are not quite enough for a half-width of 0.3 points.
    assert table.wilson(50_000, 100_000)[1] - table.wilson(50_000, 100_000)[0] > 0.006
    assert table.wilson(90_000, 100_000)[1] - table.wilson(90_000, 100_000)[0] < 0.004


def test_unknown_deals_widen_the_interval_to_honest_bounds() -> None:
    lines = [batch.DealLine(d, r, 1, 0, None) for d, r in enumerate(["solved"] * 60 + ["unsolvable"] * 30 + ["unknown"] * 10)]
    row = table.tally(GAME, lines)
    assert (row.won, row.lost, row.unknown, row.deals) == (60, 30, 10, 100)
    assert (row.low, row.high) == table.outwards(table.wilson(60, 100)[0], table.wilson(70, 100)[1])
    assert row.low <= table.wilson(60, 100)[0] and row.high >= table.wilson(70, 100)[1]


def test_the_shipped_rows_add_up_with_the_atlas_budget() -> None:
    for gid, row in table.read_asset().items():
        assert row.won + row.lost + row.unknown == row.deals > 0
        assert row.budget_positions == table.budget_positions(gid)
        assert row.low <= row.won / row.deals and (row.won + row.unknown) / row.deals <= row.high


# --- served ----------------------------------------------------------------------------------


def test_the_shipped_table_covers_every_game() -> None:
    assert set(table.read_asset()) == set(game_ids())


@pytest.mark.parametrize("gid", game_ids())
def test_the_winnability_answer_is_the_shipped_row(client: Any, gid: str) -> None:
    row = table.read_asset()[gid]
    answer = client.get(f"/v1/games/{gid}/winnability")
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json() == {
        "game": gid, "first_deal": row.first_deal, "last_deal": row.last_deal, "deals": row.deals,
        "won": row.won, "lost": row.lost, "unknown": row.unknown,
        "interval": {"low": row.low, "high": row.high, "confidence": 0.95},
        "budget": {"positions": row.budget_positions},
    }


def test_the_winnability_of_an_unknown_game_is_a_404_problem(client: Any) -> None:
    answer = client.get("/v1/games/klondike/winnability")
    assert answer.status_code == 404 and answer.mimetype == "application/problem+json"
    assert answer.get_json()["code"] == "unknown-game"


# --- the hint player ---------------------------------------------------------------------------


def test_the_atlas_budgets_are_a_default_servers() -> None:
    solver = read_settings({}).solver
    assert players.SOLVER_LIMITS.max_seconds == solver.max_seconds
    assert players.SOLVER_LIMITS.max_states == players.HINT_LIMITS.max_states == solver.max_states
    assert players.HINT_LIMITS.max_seconds == solver.hint_seconds and solver.samples == players.HINT_SAMPLES


@pytest.mark.parametrize(
    ("gid", "deal", "knowledge"),
    [("abandon-hope", 1, Knowledge.PLAYER), ("small-billee", 1, Knowledge.PLAYER), ("penguin", 2, Knowledge.PLAYER),
     ("small-billee", 1, Knowledge.FULL), ("amazons", 3, Knowledge.FULL),
     ("forty-thieves", 11, Knowledge.PLAYER)],  # ends in `loop`: a lost position with moves back and forth only
)
def test_the_hint_player_plays_each_hint_and_says_how_the_game_ended(gid: str, deal: int, knowledge: Knowledge) -> None:
    game = get_game(gid)
    played = players.play_by_hints(gid, deal, knowledge)
    follow = players.PLAYS[Player.HINTS if knowledge is Knowledge.PLAYER else Player.FULL_HINTS]
    assert follow(gid, deal) == (played.stop.value, played.positions, len(played.played), None)
    state, seen, pairs = run_autoplay(game, game.deal_state(deal))[0], {}, set()
    for at, avoid, move in played.played:
        assert at == state
        seen[state] = True
        given = (
            player_hint(game, state, players.HINT_LIMITS, players.HINT_SAMPLES, autoplay=True, avoid=avoid)
            if knowledge is Knowledge.PLAYER
            else hint(game, state, players.HINT_LIMITS, autoplay=True, avoid=avoid)
        )
        assert given.move == move and move not in avoid
        # it avoids only moves that lead back to a position it has played, and goes back
        # itself only when every legal move does; never twice the same move from one position
        assert all(run_autoplay(game, game.apply(state, m))[0] in seen for m in avoid)
        after = run_autoplay(game, game.apply(state, move))[0]
        if after in seen:
            assert all(run_autoplay(game, game.apply(state, m))[0] in seen for m in game.legal_moves(state))
        assert (state, move) not in pairs
        pairs.add((state, move))
        state = after
    assert state == played.final
    if played.stop is HintStop.WON:
        assert game.is_won(state)
    elif played.stop is HintStop.LOOP:
        assert all((state, m) in pairs for m in game.legal_moves(state))
    else:
        assert played.stop is HintStop.STUCK and not game.legal_moves(state)


def test_following_the_hints_alone_goes_round_where_the_hint_player_avoids() -> None:
    """Penguin deal 2: a player who follows each hint as given comes back to a position;
    the hint player, asking again with ``avoid``, wins it."""
    game = get_game("penguin")
    state = run_autoplay(game, game.deal_state(2))[0]
    seen = set()
    while state not in seen and not game.is_won(state):
        seen.add(state)
        move = player_hint(game, state, players.HINT_LIMITS, players.HINT_SAMPLES, autoplay=True).move
        assert move is not None
        state = run_autoplay(game, game.apply(state, move))[0]
    assert state in seen
    played = players.play_by_hints("penguin", 2)
    assert played.stop is HintStop.WON and any(avoid for _, avoid, _ in played.played)


def test_the_hint_players_lines_go_to_their_own_folder_and_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deals = range(1, 5)
    batch.run(tmp_path, "abandon-hope", deals, workers=1, player=Player.HINTS, progress=None)
    batch.run(tmp_path, "abandon-hope", deals, workers=1, progress=None)
    assert len(batch.block_files(tmp_path, "abandon-hope", player=Player.HINTS)) > 0
    assert main(["table", "--player", "hints", "--games", "abandon-hope", "--out", str(tmp_path)]) == 0
    lines = batch.read_lines(batch.merged_path(tmp_path, "abandon-hope", Player.HINTS))
    assert [line.deal for line in lines] == list(deals)
    row = table.tally_hints("abandon-hope", lines, batch.merge(tmp_path, "abandon-hope", write=False))
    assert sum(row.ends.values()) == 4 and row.thoughtful is not None and row.thoughtful.deals == 4
    assert "| abandon-hope | 1-4 (4) |" in capsys.readouterr().out
    assert main(["table", "--player", "hints", "--games", "abandon-hope", "--out", str(tmp_path), "--write"]) == 2
