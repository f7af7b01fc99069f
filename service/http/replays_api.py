"""Verified replays: ``POST /v1/games/{game}/replays`` plays a deal's moves again and says,
signed, what they reached.

The service keeps nothing, so a player may resend an earlier state (undo) and, in sealed
mode, peek at a dealt card and take it back. A leaderboard therefore trusts no state a
client holds: it takes the moves played from the deal, and this endpoint replays them from
the deal as the server deals it (:func:`.state_protection.dealt_position`: in sealed mode
the keyed deal the service handed out), each move checked as the moves endpoint checks
it, with the same ``autoplay``. The first move the rules refuse answers 409
``illegal-move`` (an unreadable one 422 ``invalid-move``) with its ``move_index``.

The answer carries the final position (signed, and sealed, per mode), its legal moves,
status and the number of moves, and a ``result``: game, options (every option, defaults
included), deal (its decimal string), ``state_protection`` (the server's mode: a sealed
mode deal number names a keyed deal), ``autoplay``, ``moves`` (the count),
``moves_sha256`` and ``status``. In signed and sealed modes it ends with
``"signature": {"kid", "mac"}``; in open mode it has none and proves nothing.

What is signed: the bytes ``b"patience-engine replay v1\\n" + canonical_json(result
without "signature")`` (:func:`.state_signing.canonical_json`: ``json.dumps`` with sorted
keys, separators ``(",", ":")``, ASCII only), MAC'd with HMAC-SHA256 under the secret of
the state key ``kid`` names (the first key of ``STATE_KEYS``), base64url without padding.
The domain string is not the states' (``patience-engine state v1``, ``sealed state v1``),
so a result's MAC never passes as a state's, nor the reverse. ``moves_sha256`` is the
lower-case hex SHA-256 of the canonical JSON of the move list as ``legal_moves`` writes
moves (a card move ``{"action", "from", "to", "count"}`` with its count, ``{"action":
"deal"}``...), so a leaderboard that kept the moves can tie them to the result.

A leaderboard's server holding ``secret`` (the key ``result["signature"]["kid"]``) and
the ``moves`` it was sent checks a result offline so:

>>> import base64, hashlib, hmac, json
>>> from service.engine.registry import get_game
>>> from service.settings import StateKey, StateProtection, StateProtectionSettings
>>> secret = b"1" * 32
>>> ring = StateProtectionSettings(StateProtection.SIGNED, (StateKey("k1", secret),))
>>> moves = [{"action": "move", "from": "tableau:0", "to": "cell:0", "count": 1}]
>>> result = replay_result(ring, dealt_position(ring, get_game("penguin"), 1), moves, "none", "playing")
>>> body = {k: v for k, v in result.items() if k != "signature"}
>>> data = b"patience-engine replay v1\\n" + json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
>>> mac = base64.urlsafe_b64encode(hmac.digest(secret, data, "sha256")).rstrip(b"=").decode()
>>> hmac.compare_digest(mac, result["signature"]["mac"])
True
>>> listed = json.dumps(moves, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
>>> hmac.compare_digest(hashlib.sha256(listed).hexdigest(), result["moves_sha256"])
True
>>> result["game"], result["deal"], result["moves"], result["status"], result["signature"]["kid"]
('penguin', '1', 1, 'playing', 'k1')
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from datetime import date
from typing import Any, Final

from flask import Response

from service.atlas.grades import Grade
from service.engine.core import Game, Move
from service.settings import StateProtectionSettings
from service.solver.autoplay import run_autoplay

from . import contract_examples as examples
from .app_settings import current_settings
from .body import Blueprint
from .daily import daily_position
from .games_api import ANSWER_HEADERS, POSITION_LINKS, game_or_404, json_answer, read_move
from .problems import ApiError, ProblemCode
from .replay_schemas import DailyReplayRequestSchema, ReplayRequestSchema, ReplayResponseSchema
from .result_signing import RESULT_JWS_FIELD, sign_result, signs_results
from .schemas import Autoplay
from .state_protection import Position, dealt_position, position_answer
from .state_signing import SIGNATURE_FIELD, canonical_json, keyed_mac, protects
from .wire import format_deal, move_to_json

REPLAY_DOMAIN: Final = b"patience-engine replay v1\n"

blp = Blueprint(
    "replays",
    __name__,
    url_prefix="/v1/games",
    description=(
        "Replay a deal's moves and get a result a leaderboard can check offline (signed in the signed and sealed "
        "modes; docs/replays.md)."
    ),
)


def replay(start: Position, moves: list[Mapping[str, Any]], safe_autoplay: bool) -> tuple[Position, list[Move]]:
    """Play ``moves`` from ``start`` as the moves endpoint would, one request each: the
    final position and the moves read (409/422 problems, with the move's index, for the
    first move refused)."""
    game, state, deal = start
    played: list[Move] = []
    for index, data in enumerate(moves):
        move = read_replay_move(game, data, index)
        rejection = game.check_move(state, move)
        if rejection:
            raise ApiError(
                ProblemCode.ILLEGAL_MOVE, f"move {index}: {rejection.detail}", [(f"/moves/{index}", rejection.detail)],
                rule=rejection.rule, move_index=index,
            )
        state, events = game.play(state, move)
        if safe_autoplay:
            state, _ = run_autoplay(game, state, events)
        played.append(move)
    return Position(game, state, deal), played


def read_replay_move(game: Game, data: Mapping[str, Any], index: int) -> Move:
    """Move ``index`` of a replay, read as the moves endpoint reads its ``move``; its
    problems point into ``/moves/<index>`` and carry the index."""
    where = f"/moves/{index}"
    try:
        return read_move(game, data, where)
    except ApiError as e:
        raise ApiError(e.code, f"move {index}: {e.detail}", e.errors or [(where, e.detail)], e.rule, move_index=index) from None


def replay_result(
    protection: StateProtectionSettings, final: Position, moves: list[dict[str, Any]], autoplay: str, status: str,
    daily: date | None = None, difficulty: Grade | None = None,
) -> dict[str, Any]:
    """What a replay proves: the deal, the moves (counted and hashed) and the status they
    reach, and for a daily challenge its day and, for a graded one, its ``difficulty``
    (only then: v1's results stay as they were); signed by the first state key in the
    signed and sealed modes."""
    game, _, deal = final
    result: dict[str, Any] = {
        "game": game.id,
        "options": dict(game.options),
        "deal": format_deal(deal),
        "state_protection": protection.mode.value,
        "autoplay": autoplay,
        "moves": len(moves),
        "moves_sha256": hashlib.sha256(canonical_json(moves)).hexdigest(),
        "status": status,
    }
    if daily is not None:
        result["daily"] = daily.isoformat()
    if difficulty is not None:
        result["difficulty"] = difficulty.value
    if protects(protection):
        key = protection.keys[0]
        result[SIGNATURE_FIELD] = {"kid": key.kid, "mac": keyed_mac(key, REPLAY_DOMAIN + canonical_json(result))}
    return result


# After replay_result, which the example's result is made by.
REPLAY_EXAMPLE = examples.replay_example(replay_result)
# A daily's replay names its day; with no move yet it answers the day's deal as dealt.
DAILY_REPLAY_REQUEST: Final = {"daily": "2026-12-06", "moves": [], "autoplay": "none"}


REPLAY_ERRORS: Final = (404, "NOT_FOUND"), (409, "CONFLICT"), (413, "REQUEST_ENTITY_TOO_LARGE"), \
    (415, "UNSUPPORTED_MEDIA_TYPE"), (422, "UNPROCESSABLE_ENTITY")


def replay_operation(view: Callable[..., Response]) -> Callable[..., Response]:
    """The answer and errors every replay operation documents (its request is its own)."""
    view = blp.response(200, ReplayResponseSchema, example=REPLAY_EXAMPLE.answer, headers=ANSWER_HEADERS)(view)
    for status, response in REPLAY_ERRORS:
        view = blp.alt_response(status, response=response)(view)
    return view


@blp.route("/<game:game_id>/replays", methods=["POST"])
@blp.doc(operationId="replay_moves", responses={200: {"links": POSITION_LINKS}})  # the answer holds a position, as a deal's
@blp.arguments(ReplayRequestSchema(), error_status_code=400, example=REPLAY_EXAMPLE.request)
@replay_operation
def replay_moves(body: dict[str, Any], game_id: str) -> Response:
    """Replay `moves` from deal `deal` (with `options`), each as the moves endpoint plays it,
    and answer the final position with a `result` that, in the signed and sealed modes, is
    signed for a leaderboard's server to check offline (docs/replays.md).

    The first illegal move answers 409 `illegal-move`, an unreadable one 422
    `invalid-move`, each with its `move_index`. In sealed mode the replay starts from the
    keyed deal the service deals under that number. With `"result_jws": true` the answer
    also carries the result as an Ed25519 JWS that anyone can check with the public keys
    at `/.well-known/jwks.json` (422 `result-jws-unavailable` in open mode)."""
    protection = jws_checked(body)
    game = game_or_404(game_id, body.get("options"))
    return replayed(body, dealt_position(protection, game, body["deal"]))


@blp.route("/<game:game_id>/daily/replays", methods=["POST"])
@blp.doc(operationId="replay_daily", responses={200: {"links": POSITION_LINKS}})
@blp.arguments(DailyReplayRequestSchema(), error_status_code=400, example=DAILY_REPLAY_REQUEST)
@replay_operation
def replay_daily(body: dict[str, Any], game_id: str) -> Response:
    """Replay `moves` from the daily challenge of day `daily` (of grade `difficulty` if
    given; with `options`), as `POST /v1/games/{game_id}/replays` replays a deal's: the
    signed result (and its JWS, asked with `"result_jws": true`) carries `daily`, and
    `difficulty` when given, so a leaderboard can tell which day's challenge was played.

    A day out of the server's window answers 422 `daily-out-of-window`."""
    protection = jws_checked(body)
    game = game_or_404(game_id, body.get("options"))
    day: date = body["daily"]
    asked: str | None = body.get("difficulty")
    grade = None if asked is None else Grade(asked)
    return replayed(body, daily_position(protection, game, day, "/daily", grade), day, grade)


def jws_checked(body: Mapping[str, Any]) -> StateProtectionSettings:
    """The server's state protection, once a request for `result_jws` is one it can sign
    (422 `result-jws-unavailable` in open mode)."""
    settings = current_settings()
    if body.get(RESULT_JWS_FIELD, False) and not (protects(settings.state) and signs_results(settings.results)):
        raise ApiError(
            ProblemCode.RESULT_JWS_UNAVAILABLE,
            "this server runs in open mode and signs no result: `result_jws` needs the signed or sealed mode",
            [(f"/{RESULT_JWS_FIELD}", "only signed and sealed servers sign results")],
        )
    return settings.state


def replayed(body: Mapping[str, Any], start: Position, day: date | None = None, grade: Grade | None = None) -> Response:
    """The answer of a replay of ``body``'s moves from ``start``: the final position, the
    count, the result (dated and graded for a daily) and, asked, its JWS."""
    settings = current_settings()
    protection = settings.state
    game = start.game
    final, played = replay(start, body["moves"], body["autoplay"] == Autoplay.SAFE)
    answer = position_answer(protection, final)
    moves = [move_to_json(game, m) for m in played]
    result = replay_result(protection, final, moves, body["autoplay"], answer["status"], day, grade)
    replay_answer = {**answer, "moves": len(moves), "result": result}
    if body.get(RESULT_JWS_FIELD, False):  # only when asked: an answer gains a field only on request (v1)
        replay_answer[RESULT_JWS_FIELD] = sign_result(settings.results, result)
    return json_answer(replay_answer)


__all__ = ["REPLAY_DOMAIN", "blp", "replay", "replay_result"]
