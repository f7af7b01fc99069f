"""Daily challenges: ``GET /v1/games/{game_id}/daily`` answers the deal every caller gets
on one UTC day, for a site whose players all play the same deal that day.

The day's deal is a deal number in ``1..10**9`` (:func:`daily_deal`), dealt by the path
``POST /v1/games/{game_id}/deals`` takes (:func:`.state_protection.dealt_position`), so in
sealed mode its layout is the keyed deal of that number and its state is sealed. The
number comes from the game, its options (every option, defaults included) and the day:

- sealed mode: HMAC-SHA256 under a key derived (HKDF-SHA256, ``cryptography``) from the
  first deal key (``DEAL_KEYS``), its info naming the purpose, the game and the options:
  nobody without the deal key can tell a day's deal before the service answers it, and
  rotating the state keys changes no daily (rotating the deal keys changes every one);
- open and signed modes: a public SHA-256 of the game, the options and the day. Anyone
  can compute any day's deal, past or future: fine for casual play, not for a contest
  (run sealed mode for that).

Only a bounded window is answered: today (UTC) and ``DAILY_PAST_DAYS`` days before it;
a later or older day answers 422 ``daily-out-of-window``. The answer is the deal answer
plus ``date``, with headers a CDN can serve it by: ``Cache-Control: public`` with a
``max-age`` that ends at the next UTC midnight for today (when another deal becomes
today's), and for a past day when it leaves the window (at most a year); a weak ``ETag``
(the same day, game, options, deal and keys: the same deal, however its state is
sealed), and ``If-None-Match`` answered 304.

``?difficulty=<grade>`` (issue 28 item 3) answers the day's deal of that difficulty grade:
the first deal of the grade from the day's number on (:func:`graded_daily`, which is
``POST /deals``' ``difficulty`` search: :func:`.games_api.graded_deal`, in the solver pool,
with its admission control and work bound), so it is the same for every caller that day
and, in sealed mode, as unpredictable before the day as the day's number. The answer then
carries ``difficulty`` (only then: v1's answer stays as it was), and the ETag covers the
grade. A process remembers the last :data:`GRADED_DAILIES_KEPT` deals it found, so the
day's later callers, and replays of the graded daily, cost no search.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import threading
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Final

from flask import Response
from marshmallow import ValidationError, fields

from service.atlas.grades import Grade
from service.engine.core import Game
from service.settings import StateProtectionSettings

from . import contract_examples as examples
from .app_settings import current_settings
from .body import Blueprint, parse_json
from .games_api import (
    ANSWER_HEADERS,
    POSITION_LINKS,
    RANDOM_DEAL_LIMIT,
    game_or_404,
    graded_deal,
    json_answer,
    refuse_ungraded,
)
from .problems import ApiError, ProblemCode, flatten_messages
from .request_context import current_request
from .schemas import DealResponseSchema, Strict, component, difficulty_request_field, options_field
from .state_protection import Position, dealt_position, is_sealed, position_answer
from .state_sealing import derived_key
from .state_signing import canonical_json, protects
from .wire import format_deal

DAILY_INFO: Final = b"patience-engine daily v1\n"  # HKDF info, followed by the game and its options
PUBLIC_DAILY_DOMAIN: Final = b"patience-engine public daily v1\n"  # open and signed modes: no key
MAX_CACHE_SECONDS: Final = 365 * 24 * 3600  # the longest max-age given (a past day of a long window)
DATE_TEXT: Final = "A UTC day, `YYYY-MM-DD`."
GRADED_DAILIES_KEPT: Final = 256  # graded dailies a process remembers (a game, options, day and grade each)


def utc_now() -> datetime:
    """Now, in UTC: the one clock of this module (tests replace it)."""
    return datetime.now(UTC)


def daily_deal(protection: StateProtectionSettings, game: Game, day: date) -> int:
    """The deal number of ``game`` (with its options) on ``day``: keyed by the first deal
    key in sealed mode, a public hash in the others; in ``1..10**9``."""
    message = canonical_json([game.id, game.options, day.isoformat()])
    if is_sealed(protection):
        key = derived_key(protection.deal_keys[0].secret, DAILY_INFO + canonical_json([game.id, game.options]))
        digest = hmac.digest(key, message, "sha256")
    else:
        digest = hashlib.sha256(PUBLIC_DAILY_DOMAIN + message).digest()
    return 1 + int.from_bytes(digest[:16], "big") % RANDOM_DEAL_LIMIT


def check_window(day: date, today: date, past_days: int, where: str) -> None:
    """422 ``daily-out-of-window`` unless ``day`` is today or at most ``past_days`` before."""
    if day > today or day.toordinal() < today.toordinal() - past_days:
        raise ApiError(
            ProblemCode.DAILY_OUT_OF_WINDOW,
            f"{day.isoformat()} is not a day this server answers: today ({today.isoformat()}, UTC) or up to "
            f"{past_days} days before it, never a later day",
            [(where, "out of the daily window")],
        )


def daily_position(
    protection: StateProtectionSettings, game: Game, day: date, where: str, grade: Grade | None = None,
) -> Position:
    """The deal of ``game`` on ``day``, dealt as ``/deals`` deals its number (422 if the
    day is out of the server's window); with ``grade``, the day's deal of that grade
    (:func:`graded_daily`)."""
    check_window(day, utc_now().date(), current_settings().daily_past_days, where)
    start = daily_deal(protection, game, day)
    return dealt_position(protection, game, start) if grade is None else graded_daily(protection, game, start, grade)


_graded_dailies: dict[tuple[str, ...], int] = {}  # graded_daily's memory: its key -> the deal found
_graded_dailies_lock = threading.Lock()  # a worker's threads share the memory


def graded_daily(protection: StateProtectionSettings, game: Game, start: int, grade: Grade) -> Position:
    """The first deal of difficulty ``grade`` from the day's deal number ``start`` on, as
    ``POST /deals`` with that ``difficulty`` finds it (422 ``not-graded``, 422
    ``no-graded-deal``, 503 ``solver-busy`` as there). The search is deterministic (each
    deal solved at the atlas budget, counted in positions), so the deal found is remembered
    per mode, deal key, game, options, start and grade: the start is keyed by the deal key
    in sealed mode, so another key (or secret) is another start, never a stale answer."""
    deal_kid = protection.deal_keys[0].kid if is_sealed(protection) else ""
    key = (protection.mode.value, deal_kid, game.id, canonical_json(game.options).decode(), str(start), grade.value)
    with _graded_dailies_lock:
        found = _graded_dailies.get(key)
    if found is not None:
        return dealt_position(protection, game, found)
    position, _ = graded_deal(game, grade, start)  # outside the lock: the pool bounds the work
    with _graded_dailies_lock:
        if len(_graded_dailies) >= GRADED_DAILIES_KEPT:
            _graded_dailies.pop(next(iter(_graded_dailies)))  # the oldest first
        _graded_dailies[key] = position.deal
    return position


def cache_seconds(day: date, now: datetime, past_days: int) -> int:
    """How long a cache may keep the answer of ``day``: until the next UTC midnight for
    today, until the day leaves the window for a past day (at most a year)."""
    today = now.date()
    ends = today + timedelta(days=1) if day == today else day + timedelta(days=past_days + 1)
    left = datetime.combine(ends, time(), UTC) - now
    return max(1, min(MAX_CACHE_SECONDS, int(left.total_seconds())))


def daily_etag(protection: StateProtectionSettings, game: Game, day: date, deal: int, grade: Grade | None = None) -> str:
    """The answer's weak ETag: the mode, the day, the game, its options, the deal and the
    ids of the keys that sign and deal (a sealed answer is sealed afresh every time, so the
    bytes differ, but the deal and the state's meaning are the same), and the grade asked
    (only when asked: an answer without one keeps the ETag it had)."""
    kids = [protection.keys[0].kid if protects(protection) else "", protection.deal_keys[0].kid if is_sealed(protection) else ""]
    tagged: list[Any] = [protection.mode.value, day.isoformat(), game.id, game.options, deal, kids]
    if grade is not None:
        tagged.append(grade.value)
    tag = hashlib.sha256(canonical_json(tagged))
    return f'W/"{tag.hexdigest()[:32]}"'


JSON_PARAMETER: Final = "json_parameter"  # field metadata key: a query parameter carried as JSON text


def json_query_parameter(self: Any, field: fields.Field, ret: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """apispec parameter attribute function: a query parameter whose field names a schema
    under :data:`JSON_PARAMETER` is documented as ``content: application/json`` of that
    schema (OpenAPI's form for a parameter holding JSON text), not as a bare string, so
    that generated clients and Schemathesis send the JSON of a value of that schema."""
    schema = field.metadata.get(JSON_PARAMETER)
    if schema is None:
        return {}
    ret.pop("schema", None)
    return {"content": {"application/json": {"schema": schema}}}


class Day(fields.Date):
    """A UTC day written ``YYYY-MM-DD`` and nothing else (RFC 3339's full-date, OpenAPI's
    ``format: date``): Python's ``date.fromisoformat``, which marshmallow reads with, also
    takes ``20260301``."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> date:
        if not isinstance(value, str) or not DAY_RE.fullmatch(value):
            raise self.make_error("invalid", input=value, obj_type=self.OBJ_TYPE)
        day: date = super()._deserialize(value, attr, data, **kwargs)
        return day


DAY_RE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class DailyQuerySchema(Strict):
    date = Day(
        format="iso",
        metadata={"description": f"{DATE_TEXT} Omitted: today. At most `DAILY_PAST_DAYS` days before today; never a later day."},
    )
    options = fields.String(
        metadata={
            "description": (
                "The rule options, as the JSON text of an object (the `options` a deal request takes), e.g. "
                '`{"redeals":1}`. Omitted: the game\'s defaults.'
            ),
            JSON_PARAMETER: {"$ref": "#/components/schemas/Options"},
        },
    )
    difficulty = difficulty_request_field(
        "The day's deal of this difficulty grade: the first deal of the grade from the day's deal on, found as "
        "`POST /deals` finds a deal of a `difficulty` (the same for every caller that day); the answer then carries "
        "`difficulty`. 422 `not-graded` for a game (or options other than the defaults) without a calibration, 422 "
        "`no-graded-deal` when none is found within the search's budget. Omitted: the day's deal, ungraded."
    )


class DailyResponseSchema(DealResponseSchema):
    difficulty = fields.String(
        metadata=component("Difficulty", description=(
            "Only when the request asked for a `difficulty`: the grade asked, which the day's deal answered is."
        )),
    )
    date = fields.String(required=True, metadata={"description": f"The challenge's day. {DATE_TEXT}", "format": "date", "example": "2026-01-01"})


OPTIONS_FIELD: Final = options_field()


def read_options(text: str | None) -> dict[str, Any] | None:
    """The options of the query's JSON text (400 ``invalid-query`` if it is not an object
    of option values)."""
    if text is None:
        return None
    try:
        loaded = parse_json(text.encode("utf-8"))
        if not isinstance(loaded, dict):
            raise ValidationError("not a JSON object")
        options: dict[str, Any] = OPTIONS_FIELD.deserialize(loaded)
    except (ApiError, ValidationError) as e:
        why = e.detail.replace("the request body", "the text") if isinstance(e, ApiError) else "; ".join(m for _, m in flatten_messages(e.messages))
        raise ApiError(
            ProblemCode.INVALID_QUERY, f"`options` is not the JSON text of an object of rule options: {why}",
            [("/options", why)],
        ) from None
    return options


blp = Blueprint(
    "daily",
    __name__,
    url_prefix="/v1/games",
    description="Daily challenges: one deal a day for every caller, cacheable (docs in the operation).",
)

DAILY_EXAMPLE = examples.daily_example(daily_deal)

DAILY_HEADERS: dict[str, Any] = {
    **ANSWER_HEADERS,
    "Cache-Control": {
        "description": "`public, max-age=N`: today's answer until the next UTC midnight, a past day's until it leaves the window.",
        "schema": {"type": "string"},
    },
    "ETag": {"description": "A weak validator of the day's deal; send it back in `If-None-Match` for a 304.", "schema": {"type": "string"}},
}


@blp.route("/<game:game_id>/daily", methods=["GET"])
@blp.doc(operationId="get_daily", responses={200: {"links": POSITION_LINKS}})
@blp.arguments(DailyQuerySchema(), location="query", error_status_code=400)
@blp.response(200, DailyResponseSchema, example=DAILY_EXAMPLE, headers=DAILY_HEADERS)
@blp.alt_response(304, description="The `If-None-Match` validator matches: the cached answer is still the day's.")
@blp.alt_response(404, response="NOT_FOUND")
@blp.alt_response(422, response="UNPROCESSABLE_ENTITY")
@blp.alt_response(503, response="SERVICE_UNAVAILABLE")
def get_daily(query: dict[str, Any], game_id: str) -> Response:
    """The daily challenge: the deal every caller gets on a UTC day (today by default),
    as a deal answers it, plus its `date`.

    In sealed mode the day's deal is keyed by the server's deal key, so nobody can tell it
    before the day; in open and signed modes it is a public hash of the game, its options
    and the day, which anyone can compute ahead. Today and `DAILY_PAST_DAYS` days before it
    are answered; a later or older day answers 422 `daily-out-of-window`, a `date` that is
    not `YYYY-MM-DD` 400 `invalid-query`. Cacheable: `Cache-Control: public` until the
    answer may change, a weak `ETag`, 304 for a matching `If-None-Match`.

    With `difficulty`, the day's deal of that grade, with its `difficulty` (422
    `not-graded`, 422 `no-graded-deal` and 503 `solver-busy` as `POST /deals` answers them);
    its ETag differs from the ungraded answer's."""
    game = game_or_404(game_id, read_options(query.get("options")))
    settings = current_settings()
    protection = settings.state
    now = utc_now()
    day: date = query.get("date") or now.date()
    check_window(day, now.date(), settings.daily_past_days, "/date")
    asked: str | None = query.get("difficulty")
    grade = None if asked is None else Grade(asked)
    if grade is not None:
        refuse_ungraded(game)  # before a 304: an ungraded game has no graded daily to cache
    deal = daily_deal(protection, game, day)
    etag = daily_etag(protection, game, day, deal, grade)
    headers = {"ETag": etag, "Cache-Control": f"public, max-age={cache_seconds(day, now, settings.daily_past_days)}"}
    if current_request().if_none_match.contains_weak(etag.removeprefix("W/").strip('"')):
        return Response(status=304, headers=headers)
    dealt = dealt_position(protection, game, deal) if grade is None else graded_daily(protection, game, deal, grade)
    answer = json_answer({
        "deal": format_deal(dealt.deal),
        **position_answer(protection, dealt),
        **({} if grade is None else {"difficulty": grade.value}),  # only when asked: v1's answer is unchanged
        "date": day.isoformat(),
    })
    answer.headers.update(headers)
    return answer


__all__ = ["Day", "blp", "check_window", "daily_deal", "daily_position", "graded_daily"]
