"""Marshmallow schemas of the v1 API: the single source of ``openapi.yaml``.

They check shape and size only (types, patterns, lengths), so that nothing a client
sends can make a request big; what a state *means* is read by :mod:`.wire` and checked
by the engine (``Game.validate``). Every enumeration they show is built from the one
that declares it: actions from :data:`.wire.ACTION_NAMES`, statuses, event kinds, pile
groups and fans from the engine's enums (:mod:`service.engine.core`); the problem
codes' schema lives with them in :mod:`.problems`.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate

from service.engine.core import GROUP_NAMES, MAX_DEAL, EventKind, Fan, GroupName, Status
from service.settings import StateProtection

from .wire import (
    ACTION_NAMES,
    MAX_DEAL_DIGITS,
    MAX_PILE_CARDS,
    MAX_SEALED_CHARS,
    NotationError,
    format_deal,
    parse_deal,
)

CARD_PATTERN = r"^(10|[2-9TJQKAtjqka])[CDHScdhs]$"
PILE_REF_PATTERN = r"^[a-z]{1,16}:[0-9]{1,4}$"
MAX_PILES_PER_GROUP = 24
MAX_OPTIONS = 16


class Strict(Schema):
    """Unknown fields are an error (marshmallow's default, stated for readers)."""

    class Meta:
        ordered = True


class StrictBoolean(fields.Boolean):
    """Only JSON true and false (marshmallow's Boolean also takes 0, 1, "yes"...)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class StrictNumber(fields.Float):
    """Only JSON numbers (marshmallow's Float also takes numeric strings and booleans)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)


class DealNumber(fields.Field):
    """A deal number: a JSON integer, or a decimal string for numbers past 2^53
    (read by :func:`.wire.parse_deal`, the one reader of deal numbers)."""

    default_error_messages = {"invalid": f"a deal number is an integer or a string of 1-{MAX_DEAL_DIGITS} decimal digits"}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        try:
            return parse_deal(value)
        except NotationError:
            raise self.make_error("invalid") from None

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> str | None:
        return None if value is None else format_deal(value)


DEAL_NUMBER_TEXT = (
    "Deal number, 0 to 10^20-1, as PySolFC numbers deals. Accepted as a JSON integer "
    "or a decimal string; always answered as a decimal string, because numbers past "
    "2^53 lose digits in JavaScript and other double-based JSON parsers."
)
DEAL_NUMBER_DOC: dict[str, Any] = {
    "description": DEAL_NUMBER_TEXT,
    "oneOf": [
        {"type": "integer", "minimum": 0, "maximum": MAX_DEAL},
        {"type": "string", "pattern": f"^[0-9]{{1,{MAX_DEAL_DIGITS}}}$"},
    ],
    "example": "1",
}


def card_field(**kwargs: Any) -> fields.String:
    return fields.String(
        validate=validate.Regexp(CARD_PATTERN),
        metadata={"description": "A card: rank A23456789TJQK (or 10), suit CDHS; answers use the two-character form", "example": "TH"},
        **kwargs,
    )


class OptionValue(fields.Field):
    """An option value: a short string or an integer (the game lists what it allows)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValidationError("an option value is a string or an integer")
        if isinstance(value, str) and len(value) > 32:
            raise ValidationError("an option value is at most 32 characters")
        if isinstance(value, int) and abs(value) > 1000:
            raise ValidationError("an integer option value is between -1000 and 1000")
        return value

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value


OPTION_VALUE_DOC = {
    "oneOf": [
        {"type": "string", "maxLength": 32},
        {"type": "integer", "minimum": -1000, "maximum": 1000},
    ]
}


def options_field(**kwargs: Any) -> fields.Dict:
    return fields.Dict(
        keys=fields.String(),
        values=OptionValue(metadata=OPTION_VALUE_DOC),
        validate=validate.Length(max=MAX_OPTIONS),
        metadata={
            "description": "Rule options by name; see the game's `options`. Missing ones take the game's defaults.",
            "maxProperties": MAX_OPTIONS,
            "example": {},
        },
        **kwargs,
    )


CARD_RE = re.compile(CARD_PATTERN)


class PileGroupField(fields.Field):
    """A pile group: a list of piles, each a list of card strings.

    One field for the whole group rather than nested List(List(String)) fields: a state
    holds up to 208 cards and this is the hot path of every request, so the shape and
    pattern checks run in one loop; the errors still point at the exact card.
    """

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> list[list[str]]:
        if not isinstance(value, list):
            raise ValidationError("a pile group is a list of piles")
        if len(value) > MAX_PILES_PER_GROUP:
            raise ValidationError(f"a pile group holds at most {MAX_PILES_PER_GROUP} piles")
        errors: dict[int, Any] = {}
        for i, pile in enumerate(value):
            if not isinstance(pile, list):
                errors[i] = ["a pile is a list of cards"]
            elif len(pile) > MAX_PILE_CARDS:
                errors[i] = [f"a pile holds at most {MAX_PILE_CARDS} cards"]
            else:
                bad = {j: ["not a card (e.g. 'TH')"] for j, c in enumerate(pile) if not (isinstance(c, str) and CARD_RE.match(c))}
                if bad:
                    errors[i] = bad
        if errors:
            raise ValidationError(errors)
        return value

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value


def pile_group_field(description: str) -> PileGroupField:
    return PileGroupField(
        metadata={
            "description": description,
            "type": "array",
            "maxItems": MAX_PILES_PER_GROUP,
            "items": {
                "type": "array",
                "maxItems": MAX_PILE_CARDS,
                "items": {"type": "string", "pattern": CARD_PATTERN, "description": "A card, e.g. 'TH'."},
            },
        }
    )


GROUP_DOCS: dict[GroupName, str] = {
    GroupName.FOUNDATION: "Foundations.",
    GroupName.TABLEAU: "Tableau piles.",
    GroupName.CELL: "Cells (one card each).",
    GroupName.RESERVE: "Reserves.",
    GroupName.FAN: "Fans.",
    GroupName.STAR: "Stars (Binary Star).",
    GroupName.STOCK: "The stock (face down); its last card is dealt next.",
    GroupName.WASTE: "The waste; its last card is the available one.",
}

# The pile groups of docs/rules.md, one field per GroupName (a game uses some of them;
# see its ``pile_groups``). Indexing GROUP_DOCS by every name fails at import when a
# new name has no description.
PilesSchema = Strict.from_dict(
    {name.value: pile_group_field(GROUP_DOCS[name]) for name in GroupName}, name="PilesSchema"
)


class FaceDownField(fields.Field):
    """A sealed state's ``face_down``: ``{group: [card count of each pile]}``. One field
    rather than a nested schema, as :class:`PileGroupField`: it is read on every request
    of a sealed server. Its OpenAPI form (:data:`FACE_DOWN_DOC`) is the same object."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> dict[str, list[int]]:
        if not isinstance(value, dict):
            raise ValidationError("face_down is an object of pile groups")
        errors: dict[str, list[str]] = {}
        for name, counts in value.items():
            if name not in GROUP_NAMES:
                errors[name] = ["Unknown field."]
            elif not (
                isinstance(counts, list)
                and len(counts) <= MAX_PILES_PER_GROUP
                and all(type(n) is int and 0 <= n <= MAX_PILE_CARDS for n in counts)
            ):
                errors[name] = [f"a list of at most {MAX_PILES_PER_GROUP} card counts from 0 to {MAX_PILE_CARDS}"]
        if errors:
            raise ValidationError(errors)
        return value

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value


FACE_DOWN_DOC: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        name.value: {
            "type": "array",
            "maxItems": MAX_PILES_PER_GROUP,
            "items": {"type": "integer", "minimum": 0, "maximum": MAX_PILE_CARDS},
            "description": f"Cards in each pile of the {name.value} group, if it is face down.",
        }
        for name in GroupName
    },
}


MAX_KEY_ID_CHARS = 64  # the schema's bound; a key id is 1-32 characters (state-signature-malformed past that)
MAX_MAC_CHARS = 128  # the schema's bound; a MAC is 43 characters


SIGNATURE_FIELDS = {
    "kid": (MAX_KEY_ID_CHARS, "Id of the key that signed the state (1-32 of A-Z a-z 0-9 _ -).", "k2"),
    "mac": (
        MAX_MAC_CHARS,
        "HMAC-SHA256 of the state's canonical form, base64url without padding (43 characters).",
        "x3JqYl0cKZbN0o9cI3xJt5wUxrQmR6cM1qPAm0m4_6E",
    ),
}


class SignatureField(fields.Field):
    """A state's signature (signed mode): ``{"kid", "mac"}``, both strings. One field
    rather than a nested schema, as :class:`PileGroupField`: it is read on every request.
    The schema bounds its size only: a signature that fits the schema but is not one the
    service makes answers 403 `state-signature-malformed`, so that every signature
    problem has its own code."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            raise ValidationError("a signature is an object with `kid` and `mac`")
        errors: dict[str, list[str]] = {
            name: ["Unknown field."] for name in value if name not in SIGNATURE_FIELDS
        }
        for name, (longest, _, _) in SIGNATURE_FIELDS.items():
            text = value.get(name)
            if text is None:
                errors[name] = ["Missing data for required field."]
            elif not isinstance(text, str):
                errors[name] = ["Not a valid string."]
            elif len(text) > longest:
                errors[name] = [f"Longer than maximum length {longest}."]
        if errors:
            raise ValidationError(errors)
        return value

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value


class StateSchema(Strict):
    """A complete game position. Send it back exactly as received."""

    format = fields.Integer(
        required=True, strict=True, validate=validate.OneOf([1]),
        metadata={"description": "State format version (1)."},
    )
    game = fields.String(
        required=True, validate=validate.Length(min=1, max=64),
        metadata={"description": "Game id.", "example": "penguin"},
    )
    options = options_field(load_default=dict)
    deal = DealNumber(required=True, metadata=DEAL_NUMBER_DOC)
    piles = fields.Nested(
        PilesSchema,
        required=True,
        metadata={
            "description": "Pile groups by name (those the game has); each a list of piles indexed from 0, each pile bottom card first (its last card is the top).",
            "example": {"foundation": [["5H"], ["5C"], ["5D"], []], "cell": [[], [], [], [], [], [], []], "tableau": [["5S", "9C"], ["4S"]]},
        },
    )
    counters = fields.Dict(
        keys=fields.String(),
        values=fields.Integer(strict=True, validate=validate.Range(min=-1000, max=1000)),
        load_default=dict,
        validate=validate.Length(max=8),
        metadata={
            "description": "Whatever the rules track beyond the piles (redeals used, idle passes...); see the game's `counters`.",
            "maxProperties": 8,
            "example": {},
        },
    )
    face_down = FaceDownField(
        metadata={
            **FACE_DOWN_DOC,
            "description": (
                "Sealed mode only (`state_protection` of `GET /v1/games`), in games with face-down piles: for "
                "each face-down pile group (those with `face_down` in the game's `pile_groups`), the number of "
                "cards of each of its piles. Those groups are then absent from `piles`: their cards travel "
                "encrypted in `sealed`."
            ),
            "example": {"stock": [64]},
        },
    )
    sealed = fields.String(
        validate=validate.Length(min=1, max=MAX_SEALED_CHARS),
        metadata={
            "description": (
                "Sealed mode only, in games that hide something (face-down piles, or redeals that reshuffle): "
                "the face-down cards and the deal's keyed seed, encrypted (AES-GCM) and bound to the rest of the "
                "state. Opaque: send it back unchanged."
            ),
        },
    )
    signature = SignatureField(
        metadata={
            "type": "object",
            "required": list(SIGNATURE_FIELDS),
            "additionalProperties": False,
            "properties": {
                name: {"type": "string", "maxLength": longest, "description": text, "example": example}
                for name, (longest, text, example) in SIGNATURE_FIELDS.items()
            },
            "description": (
                "Signed mode only (`state_protection` of `GET /v1/games`): the service's signature over every other "
                "field of the state. Answers carry it; requests must send it back unchanged, with the state, or "
                "are refused with 403. Never answered in open mode, where one sent is ignored."
            ),
        },
    )


MOVE_DOC = {
    "description": (
        "A move. `move` takes `from`, `to` and `count` (the number of cards, from the top "
        "of `from`; default 1). `deal` turns the stock; `redeal` redeals. Any move listed "
        "in `legal_moves` may be sent back verbatim."
    ),
    "example": {"action": "move", "from": "tableau:3", "to": "cell:0", "count": 1},
}


class MoveSchema(Strict):
    action = fields.String(
        required=True, validate=validate.OneOf(list(ACTION_NAMES.values())),
        metadata={"description": "`move` a card or run, `deal` from the stock, or `redeal`."},
    )
    from_ = fields.String(
        data_key="from", attribute="from", validate=validate.Regexp(PILE_REF_PATTERN),
        metadata={"description": "Source pile, `<group>:<index>` (action `move` only).", "example": "tableau:3"},
    )
    to = fields.String(
        validate=validate.Regexp(PILE_REF_PATTERN),
        metadata={"description": "Destination pile, `<group>:<index>` (action `move` only).", "example": "cell:0"},
    )
    count = fields.Integer(
        strict=True, validate=validate.Range(min=1, max=MAX_PILE_CARDS),
        metadata={"description": "How many cards move, from the top of `from` (default 1)."},
    )


class EventSchema(Strict):
    type = fields.String(
        required=True,
        validate=validate.OneOf([k.value for k in EventKind]),
        metadata={"description": "`move`: the move asked for; `auto`: a move the rules made by themselves (a refill); `autoplay`: a safe foundation move made because `autoplay` was `safe`; `deal`, `redeal`."},
    )
    from_ = fields.String(data_key="from", attribute="from", metadata={"example": "tableau:3"})
    to = fields.String(metadata={"example": "foundation:0"})
    cards = fields.List(card_field(), required=True, metadata={"description": "The cards that moved, bottom first."})
    note = fields.String(metadata={"description": "What happened, in words, where the cards alone do not say."})


STATUS_DOC = {
    "description": "`playing`, `won`, or `lost` (not won and no legal move left; Binary Star: no fan card can ever reach a star again).",
}


def status_field() -> fields.String:
    return fields.String(required=True, validate=validate.OneOf([s.value for s in Status]), metadata=STATUS_DOC)


def legal_moves_field() -> fields.List:
    return fields.List(
        fields.Nested(MoveSchema), required=True,
        metadata={"description": "Every legal move, each target listed separately."},
    )


class DealRequestSchema(Strict):
    deal = DealNumber(
        metadata={**DEAL_NUMBER_DOC, "description": DEAL_NUMBER_TEXT + " Omitted: the service picks one and says which."}
    )
    options = options_field()
    winnable = StrictBoolean(
        load_default=False,
        metadata={
            "description": (
                "true: answer the first deal at or after `deal` (or the number the service picks) "
                "that the solver proves winnable, trying WINNABLE_DEAL_TRIES deals with "
                "WINNABLE_DEAL_SECONDS each; `deal` in the answer says which. 422 "
                "`no-winnable-deal` when none is proved within that budget."
            )
        },
    )


class DealResponseSchema(Strict):
    deal = fields.String(required=True, metadata={"description": "The deal number, as a decimal string.", "example": "1"})
    state = fields.Nested(StateSchema, required=True)
    legal_moves = legal_moves_field()
    status = status_field()


class Autoplay(StrEnum):
    """What a move request may ask to be played after the move."""

    NONE = "none"
    SAFE = "safe"  # every foundation move that can never hurt (each game's ``autoplay_rule``)


class MoveRequestSchema(Strict):
    state = fields.Nested(StateSchema, required=True)
    move = fields.Nested(MoveSchema, required=True, metadata=MOVE_DOC)
    autoplay = fields.String(
        load_default=Autoplay.NONE.value, validate=validate.OneOf([a.value for a in Autoplay]),
        metadata={"description": "`safe`: after the move, make every foundation move that can never hurt (each game's `autoplay` says which)."},
    )


class MoveResponseSchema(Strict):
    state = fields.Nested(StateSchema, required=True)
    legal_moves = legal_moves_field()
    status = status_field()
    events = fields.List(fields.Nested(EventSchema), required=True, metadata={"description": "What happened, in order, automatic moves included."})


class StateRequestSchema(Strict):
    state = fields.Nested(StateSchema, required=True)


class LegalMovesResponseSchema(Strict):
    legal_moves = legal_moves_field()
    status = status_field()


class ProblemDetailSchema(Strict):
    where = fields.String(required=True, metadata={"description": "JSON pointer into the request body.", "example": "/state/piles/tableau/2/0"})
    message = fields.String(required=True)


class ValidateResponseSchema(Strict):
    valid = fields.Boolean(required=True)
    problems = fields.List(fields.Nested(ProblemDetailSchema), required=True, metadata={"description": "Each problem found; empty when valid."})


class PileGroupSchema(Strict):
    name = fields.String(required=True, metadata={"example": "tableau"})
    count = fields.Integer(required=True, metadata={"description": "Number of piles in the group."})
    row = fields.Integer(required=True, metadata={"description": "Grid row (in card slots) of the group's first pile."})
    column = fields.Integer(required=True, metadata={"description": "Grid column of the group's first pile."})
    per_row = fields.Integer(required=True, metadata={"description": "Piles laid left to right before wrapping to the next row."})
    fan = fields.String(required=True, validate=validate.OneOf([f.value for f in Fan]), metadata={"description": "How a pile's cards spread: `none` (stacked, top card shows), `down` or `right`."})
    face_down = fields.Boolean(required=True, metadata={"description": "Cards lie face down (the stock)."})
    capacity = fields.Integer(required=True, allow_none=True, metadata={"description": "Most cards a pile holds, or null."})
    description = fields.String(required=True)


class CounterSpecSchema(Strict):
    name = fields.String(required=True)
    minimum = fields.Integer(required=True)
    maximum = fields.Integer(required=True)
    description = fields.String(required=True)


class OptionSpecSchema(Strict):
    name = fields.String(required=True)
    description = fields.String(required=True)
    default = OptionValue(required=True, metadata=OPTION_VALUE_DOC)
    choices = fields.List(OptionValue(metadata=OPTION_VALUE_DOC), required=True, allow_none=True)
    minimum = fields.Integer(required=True, allow_none=True)
    maximum = fields.Integer(required=True, allow_none=True)


class GameSchema(Strict):
    id = fields.String(required=True, metadata={"example": "penguin"})
    name = fields.String(required=True)
    decks = fields.Integer(required=True)
    cards = fields.Integer(required=True, metadata={"description": "Cards in the game's deck."})
    description = fields.String(required=True)
    pile_groups = fields.List(fields.Nested(PileGroupSchema), required=True)
    counters = fields.List(fields.Nested(CounterSpecSchema), required=True)
    options = fields.List(fields.Nested(OptionSpecSchema), required=True)
    actions = fields.List(fields.String(validate=validate.OneOf(list(ACTION_NAMES.values()))), required=True, metadata={"description": "Actions the game has at all."})


def state_protection_field() -> fields.String:
    return fields.String(
        required=True, validate=validate.OneOf([p.value for p in StateProtection]),
        metadata={
            "description": (
                "How this server protects the states clients hold (STATE_PROTECTION): `open`, states are trusted as "
                "sent; `signed`, every answered state carries a `signature` and every state sent back must carry it "
                "unchanged (403 otherwise)."
            ),
            "example": StateProtection.OPEN.value,
        },
    )


class GameDetailSchema(GameSchema):
    rules = fields.String(required=True, metadata={"description": "The rules in words, every decision included."})
    autoplay = fields.String(required=True, metadata={"description": "Which foundation moves `autoplay: safe` makes, and why they never hurt."})
    state_protection = state_protection_field()


class GameListSchema(Strict):
    games = fields.List(fields.Nested(GameSchema), required=True)
    state_protection = state_protection_field()
