"""The leaderboard example (issue 28, item 5: docs/examples/leaderboard.py,
docs/leaderboard.md) against a live test app: it accepts a result of its day checked with
only the JWKS, and refuses a forged, altered, other-day, duplicate or HMAC-only result and
a retired key's result after its date; it keeps the JWKS as its Cache-Control says.

Most cases sign a replay's result with a ``daily`` field with the server's own signer
(service/http/result_signing.py), to name any day and key; one case plays real daily
challenges through ``POST .../daily/replays``, of the board's day and of the day before.
"""

from __future__ import annotations

import base64
import json
import subprocess
import urllib.request
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.http import create_app, keys_api
from service.http import daily as daily_api
from service.http.result_signing import public_key_bytes, sign_result, sign_with
from service.settings import ResultKey
from tests.app_settings import result_key_for_tests, sealed_settings_for_tests
from tests.contract.live_results import EXAMPLES, FIRST_MOVE, JWKS_PATH, REPO, load_example, replay_answer
from tests.live_server import serve

DAY = date(2026, 12, 6)
RETIRED = ResultKey("r0", base64.b64decode(result_key_for_tests("r0").split(":", 1)[1]))
RETIRED_X = base64.urlsafe_b64encode(public_key_bytes(RETIRED.private)).rstrip(b"=").decode()
SETTINGS = sealed_settings_for_tests(RESULT_KEYS_RETIRED=f"r0:{RETIRED_X}:{DAY}")
FORGER = ResultKey("r2", b"a leaderboard's forged key 32 by")  # the server's kid, not its key
LEADERBOARD_DOC = REPO / "docs" / "leaderboard.md"


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def client() -> FlaskClient:
    return create_app(SETTINGS).test_client()


@pytest.fixture(scope="module")
def jwks_url() -> Iterator[str]:
    with serve(create_app(SETTINGS)) as url:
        yield url + JWKS_PATH


@pytest.fixture(autouse=True)
def server_day(monkeypatch: pytest.MonkeyPatch) -> Callable[[date], None]:
    """The server's UTC day (the JWKS lists a retired key up to its date): DAY unless moved."""
    def move(day: date) -> None:
        monkeypatch.setattr(keys_api, "utc_today", lambda: day)

    move(DAY)
    return move


@pytest.fixture(scope="module")
def board_module() -> ModuleType:
    return load_example("leaderboard")


@pytest.fixture(scope="module")
def results(client: FlaskClient) -> dict[str, dict[str, Any]]:
    """Two replay results of Penguin deal 1 (other moves), as the server answered them."""
    return {
        "first move": replay_answer(client, [FIRST_MOVE])["result"],
        "no move": replay_answer(client, [])["result"],
    }


def daily(result: dict[str, Any], day: date = DAY, key: ResultKey | None = None) -> str:
    """``result`` of the ``day`` challenge, signed by the server's signer (its first key, or ``key``)."""
    dated = {**result, "daily": day.isoformat()}
    return sign_with(key, dated) if key else sign_result(SETTINGS.results, dated)


def new_board(board_module: ModuleType, jwks_url: str, today: date = DAY, clock: Clock | None = None) -> Any:
    keys = board_module.KeySet(jwks_url, clock=clock or Clock())
    return board_module.Leaderboard(keys, DAY, today=lambda: today)


def refused(board: Any, token: str, why: str, board_module: ModuleType) -> None:
    with pytest.raises(board_module.Refused, match=why):
        board.submit("mallory", token)


def test_a_result_of_the_day_is_accepted_and_ranked(board_module: ModuleType, jwks_url: str, results: dict[str, Any]) -> None:
    board = new_board(board_module, jwks_url)
    assert board.submit("alice", daily(results["first move"]))["moves"] == 1
    assert board.submit("bob", daily(results["no move"]))["moves"] == 0
    assert board.standings() == [("bob", "playing", 0), ("alice", "playing", 1)]


def test_forged_and_altered_results_are_refused(board_module: ModuleType, jwks_url: str, results: dict[str, Any]) -> None:
    board = new_board(board_module, jwks_url)
    refused(board, daily(results["first move"], key=FORGER), "signature", board_module)
    refused(board, daily(results["first move"], key=ResultKey("mine", FORGER.private)), "not among", board_module)
    header, _, signature = daily(results["first move"]).split(".")
    better = {**results["first move"], "daily": DAY.isoformat(), "status": "won"}
    payload = base64.urlsafe_b64encode(json.dumps(better, sort_keys=True, separators=(",", ":")).encode()).rstrip(b"=").decode()
    refused(board, f"{header}.{payload}.{signature}", "signature", board_module)
    refused(board, "not a jws", "not a compact JWS", board_module)
    assert board.standings() == []


def test_results_of_another_day_or_of_no_day_are_refused(board_module: ModuleType, jwks_url: str, client: FlaskClient, results: dict[str, Any]) -> None:
    board = new_board(board_module, jwks_url)
    refused(board, daily(results["first move"], DAY - timedelta(days=1)), "not a result of the 2026-12-06 challenge", board_module)
    refused(board, replay_answer(client, [FIRST_MOVE])["result_jws"], "daily: None", board_module)  # a plain replay's


def test_real_daily_replays_count_on_their_day_only(
    board_module: ModuleType, jwks_url: str, client: FlaskClient, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Replays of the daily challenge itself (POST .../daily/replays, the day in the signed
    result): the board's day counts; the day before, a signed result all the same, is refused."""
    monkeypatch.setattr(daily_api, "utc_now", lambda: datetime(2026, 12, 6, 12, tzinfo=UTC))

    def played(day: date) -> dict[str, Any]:
        challenge = client.get(f"/v1/games/penguin/daily?date={day}")
        assert challenge.status_code == 200, challenge.get_json()
        first = challenge.get_json()["legal_moves"][0]
        answer = client.post("/v1/games/penguin/daily/replays", json={"daily": str(day), "moves": [first], "result_jws": True})
        assert answer.status_code == 200, answer.get_json()
        data: dict[str, Any] = answer.get_json()
        assert data["result"]["daily"] == str(day)
        return data

    board = new_board(board_module, jwks_url)
    assert board.submit("alice", played(DAY)["result_jws"])["moves"] == 1
    refused(board, played(DAY - timedelta(days=1))["result_jws"], "not a result of the 2026-12-06 challenge", board_module)


def test_a_result_submitted_twice_is_refused_whoever_sends_it(board_module: ModuleType, jwks_url: str, results: dict[str, Any]) -> None:
    board = new_board(board_module, jwks_url)
    board.submit("alice", daily(results["first move"]))
    refused(board, daily(results["first move"]), "submitted already", board_module)
    older = ResultKey("r1", base64.b64decode(result_key_for_tests("r1").split(":", 1)[1]))
    refused(board, daily(results["first move"], key=older), "submitted already", board_module)  # another listed key
    assert [entry[0] for entry in board.entries] == ["alice"]


def test_a_retired_key_counts_until_its_date_only(
    board_module: ModuleType, jwks_url: str, results: dict[str, Any], server_day: Callable[[date], None],
) -> None:
    token = daily(results["first move"], key=RETIRED)
    assert new_board(board_module, jwks_url).submit("alice", token)["deal"] == "1"
    # The day after: a board that still holds the key set of its date refuses it ...
    clock = Clock()
    late = new_board(board_module, jwks_url, today=DAY + timedelta(days=1), clock=clock)
    late.keys.key_set("r2")  # fetched on DAY, r0 listed with retired_until
    refused(late, token, "retired on 2026-12-06", board_module)
    # ... and so does one that fetches the server's set of that day, which dropped the key.
    server_day(DAY + timedelta(days=1))
    refused(new_board(board_module, jwks_url, today=DAY + timedelta(days=1)), token, "not among", board_module)


def test_the_key_set_is_kept_by_max_age_and_revalidated_by_etag(
    board_module: ModuleType, jwks_url: str, results: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str | None] = []
    urlopen = urllib.request.urlopen

    def spy(request: urllib.request.Request, **kwargs: Any) -> Any:
        asked.append(request.get_header("If-none-match"))
        return urlopen(request, **kwargs)

    monkeypatch.setattr(urllib.request, "urlopen", spy)
    clock = Clock()
    board = new_board(board_module, jwks_url, clock=clock)
    board.submit("alice", daily(results["first move"]))
    clock.now = 599.0
    board.submit("bob", daily(results["no move"]))
    assert asked == [None]  # one fetch within max-age=600
    clock.now = 600.0
    refused(board, daily(results["no move"], DAY - timedelta(days=1)), "challenge", board_module)
    assert asked == [None, board.keys.etag]  # asked again with its ETag: 304, the set kept
    assert [k["kid"] for k in board.keys.jwks["keys"]] == ["r2", "r1", "r0"]
    refused(board, daily(results["no move"], key=ResultKey("new", FORGER.private)), "not among", board_module)
    assert len(asked) == 2  # an unknown key asks again only a minute after the last fetch
    clock.now = 660.0
    refused(board, daily(results["no move"], key=ResultKey("new", FORGER.private)), "not among", board_module)
    assert len(asked) == 3


def test_the_script_runs_as_the_doc_says(jwks_url: str, results: dict[str, Any], tmp_path: Path) -> None:
    submissions = tmp_path / "submissions.jsonl"
    submissions.write_text("".join(json.dumps(s) + "\n" for s in [
        {"player": "alice", "result_jws": daily(results["first move"])},
        {"player": "bob", "result_jws": daily(results["no move"])},
        {"player": "mallory", "result_jws": daily(results["no move"])},
        {"player": "eve", "result_jws": daily(results["first move"], key=FORGER)},
    ]))
    run = subprocess.run(
        [str(REPO / ".venv" / "bin" / "python"), str(EXAMPLES / "leaderboard.py"), jwks_url, DAY.isoformat(), str(submissions)],
        capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[:2] == ["accepted alice", "accepted bob"]
    assert lines[2] == "refused mallory: this result was submitted already"
    assert lines[3].startswith("refused eve: the signature does not check")
    assert lines[4:] == ["1. bob playing in 0 moves", "2. alice playing in 1 moves"]


def test_the_doc_includes_the_script_byte_for_byte() -> None:
    script = (EXAMPLES / "leaderboard.py").read_text(encoding="utf-8")
    assert f"```python\n{script}```\n" in LEADERBOARD_DOC.read_text(encoding="utf-8")


def test_a_board_of_a_graded_daily_takes_results_of_its_grade_only(board_module: ModuleType, jwks_url: str, results: dict[str, Any]) -> None:
    """Issue 28 item 3: a graded daily's result carries `difficulty`; a board is of one grade
    (none by default), so an easy day's result never ranks among an expert day's."""
    def graded(result: dict[str, Any], grade: str) -> str:
        return sign_result(SETTINGS.results, {**result, "daily": DAY.isoformat(), "difficulty": grade})

    plain = new_board(board_module, jwks_url)
    refused(plain, graded(results["first move"], "hard"), "difficulty 'hard', not None", board_module)
    hard = board_module.Leaderboard(board_module.KeySet(jwks_url, clock=Clock()), DAY, difficulty="hard", today=lambda: DAY)
    refused(hard, daily(results["first move"]), "difficulty None, not 'hard'", board_module)
    refused(hard, graded(results["first move"], "easy"), "difficulty 'easy', not 'hard'", board_module)
    assert hard.submit("alice", graded(results["first move"], "hard"))["difficulty"] == "hard"
