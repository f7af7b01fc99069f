"""A daily-challenge leaderboard that trusts only the service's public keys (its JWKS).

    python leaderboard.py https://engine.example/.well-known/jwks.json 2026-12-06 submissions.jsonl

Each line of `submissions.jsonl` is `{"player": ..., "result_jws": ...}`: the `result_jws`
of the player's replay (asked with `"result_jws": true`). A submission is accepted only
if its JWS checks with a key of the JWKS (fetched, kept as its Cache-Control says, asked
again with its ETag), that key is not retired past its `retired_until` date, its result
is of this board's day (`daily`) and grade (`difficulty`: none, unless the board is of a
graded daily) and was not submitted before. It holds no secret, so
whoever runs it cannot forge a result. docs/leaderboard.md says what it proves.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

import jwt  # PyJWT, for reading the header before the key is chosen
from verify_result import Refused, verify_token

UNKNOWN_KID_REFETCH_SECONDS = 60.0  # a key the set lacks is asked for at most this often


class KeySet:
    """The service's JWKS, fetched on demand and kept while its `max-age` lasts; fetched
    again when stale (with `If-None-Match`) or when a submission names a key it lacks."""

    def __init__(self, url: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.url, self.clock = url, clock
        self.jwks: dict[str, Any] = {"keys": []}
        self.etag: str | None = None
        self.fresh_until = self.fetched_at = float("-inf")

    def fetch(self) -> None:
        request = urllib.request.Request(self.url, headers={"If-None-Match": self.etag} if self.etag else {})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                self.jwks, self.etag = json.load(answer), answer.headers.get("ETag")
                cache_control = answer.headers.get("Cache-Control", "")
        except urllib.error.HTTPError as e:
            if e.code != 304:  # 304: the set held is still the set
                raise
            cache_control = e.headers.get("Cache-Control", "")
        max_age = re.search(r"max-age=(\d+)", cache_control)
        self.fetched_at = self.clock()
        self.fresh_until = self.fetched_at + (int(max_age.group(1)) if max_age else 0)

    def key_set(self, kid: str) -> dict[str, Any]:
        """The JWKS to check a JWS of key `kid` with."""
        now = self.clock()
        known = any(k.get("kid") == kid for k in self.jwks["keys"])
        if now >= self.fresh_until or (not known and now - self.fetched_at >= UNKNOWN_KID_REFETCH_SECONDS):
            self.fetch()
        return self.jwks


@dataclass
class Leaderboard:
    """The board of one day's challenge (`day`), optionally of one game, and of the day's
    deal of one `difficulty` grade (None: the day's ungraded deal)."""

    keys: KeySet
    day: date
    game: str | None = None
    difficulty: str | None = None
    today: Callable[[], date] = field(default=lambda: datetime.now(UTC).date())
    entries: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)

    def submit(self, player: str, token: str) -> dict[str, Any]:
        """Accept `player`'s result JWS, or raise Refused saying why."""
        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except jwt.PyJWTError as e:
            raise Refused(f"not a compact JWS: {e}") from None
        jwks = self.keys.key_set(str(kid))
        for key in jwks["keys"]:
            until = key.get("retired_until")
            if key.get("kid") == kid and until is not None and self.today() > date.fromisoformat(until):
                raise Refused(f"signed with key {kid!r}, retired on {until}")
        result = verify_token(token, jwks)
        if result.get("daily") != self.day.isoformat():
            raise Refused(f"not a result of the {self.day} challenge (daily: {result.get('daily')!r})")
        if self.game is not None and result.get("game") != self.game:
            raise Refused(f"a result of {result.get('game')!r}, not {self.game!r}")
        if result.get("difficulty") != self.difficulty:
            raise Refused(f"a result of difficulty {result.get('difficulty')!r}, not {self.difficulty!r}")
        # The same moves from the same deal are one result, whoever sends them, and whichever
        # key signed them.
        same = {k: result.get(k) for k in ("daily", "difficulty", "game", "options", "deal", "autoplay", "moves_sha256")}
        digest = hashlib.sha256(json.dumps(same, sort_keys=True).encode()).hexdigest()
        if digest in self.seen:
            raise Refused("this result was submitted already")
        self.seen.add(digest)
        self.entries.append((player, result))
        return result

    def standings(self) -> list[tuple[str, str, int]]:
        """(player, status, moves): wins first, fewest moves first, then in order of submission."""
        ranked = sorted(self.entries, key=lambda e: (e[1].get("status") != "won", e[1].get("moves", 0)))
        return [(player, str(result.get("status")), int(result.get("moves", 0))) for player, result in ranked]


def main(argv: list[str]) -> int:
    jwks_url, day, path = argv
    board = Leaderboard(KeySet(jwks_url), date.fromisoformat(day))
    with open(path, encoding="utf-8") as f:
        for line in filter(str.strip, f):
            submission = json.loads(line)
            try:
                board.submit(submission["player"], submission["result_jws"])
                print(f"accepted {submission['player']}")
            except Refused as e:
                print(f"refused {submission['player']}: {e}")
    for place, (player, status, moves) in enumerate(board.standings(), 1):
        print(f"{place}. {player} {status} in {moves} moves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
