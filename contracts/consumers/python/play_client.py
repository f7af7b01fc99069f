"""The code under test of the Python example consumer: the few calls a bot or a backend
makes to play a game against the engine, with the standard library's HTTP client. A
problem+json answer becomes an :class:`EngineProblem` carrying its ``code``."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


class EngineProblem(Exception):
    """An answer of the engine that is not 200: its status and problem+json body."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(f"{status} {body.get('code')}: {body.get('detail')}")
        self.status = status
        self.code = str(body.get("code"))
        self.body = body


class PlayClient:
    """The play loop's calls, each a POST of JSON to ``base_url``'s ``/v1/games/{game}/...``."""

    def __init__(self, base_url: str, game: str) -> None:
        self.base = f"{base_url.rstrip('/')}/v1/games/{game}"

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            self.base + path, data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                data: dict[str, Any] = json.load(answer)
                return data
        except urllib.error.HTTPError as error:
            raise EngineProblem(error.code, json.load(error)) from None

    def deal(self, deal: str) -> dict[str, Any]:
        return self._post("/deals", {"deal": deal})

    def move(self, state: dict[str, Any], move: dict[str, Any]) -> dict[str, Any]:
        return self._post("/moves", {"state": state, "move": move})

    def legal_moves(self, state: dict[str, Any]) -> dict[str, Any]:
        return self._post("/legal-moves", {"state": state})

    def hint(self, state: dict[str, Any]) -> dict[str, Any]:
        return self._post("/hint", {"state": state})

    def solve(self, state: dict[str, Any], max_seconds: float) -> dict[str, Any]:
        return self._post("/solve", {"state": state, "limits": {"max_seconds": max_seconds}})

    def replay(self, deal: str, moves: list[dict[str, Any]]) -> dict[str, Any]:
        return self._post("/replays", {"deal": deal, "moves": moves})
