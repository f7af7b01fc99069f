"""What tests/contract/test_result_jws.py and test_leaderboard.py share: a live test app on
a loopback port (the examples fetch the JWKS over HTTP, as a leaderboard would), replays
asked with ``"result_jws": true``, and the examples of docs/examples loaded as modules."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from flask.testing import FlaskClient

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "docs" / "examples"
JWKS_PATH = "/.well-known/jwks.json"
# Penguin deal 1's first move (a legal one), so that results differ by their moves.
FIRST_MOVE = {"action": "move", "from": "tableau:0", "to": "cell:0", "count": 1}



def replay_answer(client: FlaskClient, moves: list[dict[str, Any]] | None = None, **body: Any) -> dict[str, Any]:
    """The answer of a Penguin deal 1 replay asked with ``result_jws`` (200 expected)."""
    answer = client.post(
        "/v1/games/penguin/replays", json={"deal": "1", "moves": moves or [], "result_jws": True, **body}
    )
    assert answer.status_code == 200, answer.get_json()
    data: dict[str, Any] = answer.get_json()
    return data


def load_example(name: str) -> ModuleType:
    """``docs/examples/<name>.py`` as a module (its folder on the path: the leaderboard
    imports verify_result as its neighbour)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
