"""Marshmallow schemas of the v1 API: the single source of ``openapi.yaml``.

They check shape and size only (types, patterns, lengths), so that nothing a client
sends can make a request big; what a state *means* is read by :mod:`.wire` and checked
by the engine (``Game.validate``). Every enumeration they show is built from the one
that declares it: game ids from the registry, actions from :data:`.wire.ACTION_NAMES`,
statuses, event kinds, pile groups and fans from the engine's enums
(:mod:`service.engine.core`); the problem codes' schema lives with them in :mod:`.problems`.

Shapes a client names are shared components (:data:`SCHEMA_COMPONENTS`: ``GameId``,
``Status``, ``Action``, ``EventKind``, ``Move``), so that generated clients get one type
for each: a field documents itself as one by naming it in its metadata
(:func:`component`), and :func:`reference_component` writes the reference. A move is a
union discriminated by ``action`` (``CardMove``, ``DealMove``, ``RedealMove``, read by
:class:`MoveField`); a state is ``StateInput`` in requests and ``State`` in answers, which
differ only in ``deal`` (answered as a string, which a request's state also takes), so an
answer's state is sent back as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Any, ClassVar, Final, cast

from marshmallow import EXCLUDE, ValidationError, fields, validate

from service.atlas.grades import GRADED_DEAL_TRIES, Grade
from service.engine.cards import CARD_CODES
from service.engine.core import GROUP_NAMES, Action, EventKind, Fan, GroupName, Status
from service.engine.registry import GAME_CLASSES
from service.settings import StateProtection

from .fast_load import FastLoadSchema
from .wire import (
    ACTION_NAMES,
    CARD_MOVE,
    MAX_DEAL_DIGITS,
    MAX_PILE_CARDS,
    MAX_SEALED_CHARS,
    PILE_REF_PATTERN,
    NotationError,
    format_deal,
    parse_deal,
    read_pile_group,
)

CARD_PATTERN = r"^(10|[2-9TJQKAtjqka])[CDHScdhs]$"
MAX_PILES_PER_GROUP = 24
MAX_OPTIONS = 16
MAX_COUNTERS = 8


# --- shared components -----------------------------------------------------------------
COMPONENT: Final = "component"  # field metadata key: the shared component a field is documented as


def component(name: str, **doc: Any) -> dict[str, Any]:
    """Field metadata documenting the field as the shared schema component ``name`` (with
    ``doc``: a description or an example of its own)."""
    return {COMPONENT: name, **doc}


# Components a field always names by a bare reference, its own description dropped: the
# discriminated unions. A generator reads ``allOf: [$ref]`` beside a description as a
# schema inheriting from the union (openapi-typescript made a move ``Omit<Move, "action">``,
# which is ``{}``, so any value type-checked as a move); the union's own description says it.
BARE_REFERENCES: Final = frozenset({"Move", "Event"})


def component_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def null_only(json_type: str) -> dict[str, Any]:
    """The OpenAPI 3.0.3 schema that only null matches (``nullable`` needs a ``type``)."""
    return {"type": json_type, "nullable": True, "enum": [None]}


def reference_component(self: Any, field: fields.Field, ret: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """apispec attribute function, run after the built-in ones: a field whose metadata
    names a component (:func:`component`) is documented as a reference to it instead of
    the type, enum and bounds apispec read from the field. A description or example of the
    field's own stays, beside the reference in an ``allOf`` (OpenAPI 3.0 ignores the
    siblings of a ``$ref``).

    A field that allows None is ``oneOf`` the reference and null: the form that validates
    a null (a ``nullable`` beside an ``allOf`` still runs the referenced schema on it) and
    that generators type as the component or null (openapi-python-client drops the null
    of ``nullable`` + ``allOf``, and openapi-typescript then loses a union's tag)."""
    name = field.metadata.get(COMPONENT)
    if name is None:
        return {}
    kept: dict[str, Any] = {key: ret[key] for key in ("description", "example") if key in ret}
    if field.allow_none:
        null_type = ret.get("type", "object")
        ret.clear()
        return {**kept, "oneOf": [component_ref(name), null_only(null_type)]}
    ret.clear()
    if name in BARE_REFERENCES:
        return component_ref(name)
    return {**kept, "allOf": [component_ref(name)]} if kept else component_ref(name)


def enum_component(values: Iterable[str], description: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values), "description": description}


def server_default(value: Any) -> Callable[[], Any]:
    """A ``load_default`` the server applies without documenting it as a ``default``
    (apispec leaves callables out): generators make a field with a ``default`` required in
    their types, so the field's description says the default instead."""
    return lambda: value


class MaxEntries(validate.Validator):
    """At most ``most`` entries in an object. Not marshmallow's ``Length``, which apispec
    documents as ``maxLength``, a string keyword (objects say ``maxProperties``, which
    the fields using this state in their metadata)."""

    def __init__(self, most: int) -> None:
        self.most = most

    def __call__(self, value: Any) -> Any:
        if len(value) > self.most:
            raise ValidationError(f"at most {self.most} entries")
        return value

    def inline_refusal(self) -> str:
        """When it refuses, for the fast reader to write inline (fast_load.INLINE_REFUSAL)."""
        return f"len({{value}}) > {int(self.most)}"


class Strict(FastLoadSchema):
    """Unknown fields are an error (marshmallow's default, stated for readers); loaded
    through :class:`.fast_load.FastLoadSchema` (marshmallow's checks, less bookkeeping)."""

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


MAX_JSON_INTEGER: Final = 2**53 - 1  # the largest integer every JSON parser (JavaScript's too) holds exactly
DEAL_PATTERN: Final = f"^[0-9]{{1,{MAX_DEAL_DIGITS}}}$"


class DealNumber(fields.Field):
    """A deal number in a request: a decimal string of up to 20 digits, or a JSON integer
    up to 2^53-1, the most every JSON parser holds exactly (read by
    :func:`.wire.parse_deal`, the one reader of deal numbers). A larger JSON integer is
    refused (400), as the contract says: a JavaScript client could not have meant it
    exactly, and the string says the same number for every client."""

    default_error_messages = {
        "invalid": (
            f"a deal number is an integer from 0 to 2^53-1 ({MAX_JSON_INTEGER}) or a string of 1-{MAX_DEAL_DIGITS} "
            "decimal digits (larger numbers are sent as strings)"
        )
    }

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and value > MAX_JSON_INTEGER:
            raise self.make_error("invalid")
        try:
            return parse_deal(value)
        except NotationError:
            raise self.make_error("invalid") from None

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> str | None:
        return None if value is None else format_deal(value)


DEAL_NUMBER_TEXT = (
    "Deal number, 0 to 10^20-1, as PySolFC numbers deals: a decimal string (as answers "
    "write it), or a JSON integer up to 2^53-1 (9007199254740991); larger numbers only as "
    "strings, because they lose digits in JavaScript and other double-based JSON parsers."
)


def deal_number_field(description: str = "", **kwargs: Any) -> DealNumber:
    """A deal number in a request: the shared ``DealNumber`` component, with what this
    field adds to its description."""
    return DealNumber(metadata=component("DealNumber", description=description) if description else component("DealNumber"), **kwargs)


def answered_deal_field(description: str) -> fields.String:
    """A deal number in an answer: always its decimal string."""
    return fields.String(
        required=True, validate=validate.Regexp(DEAL_PATTERN),
        metadata={"description": description, "example": "1"},
    )


def card_field(**kwargs: Any) -> fields.String:
    return fields.String(
        validate=validate.Regexp(CARD_PATTERN),
        metadata={"description": "A card: rank A23456789TJQK (or 10), suit CDHS; answers use the two-character form", "example": "TH"},
        **kwargs,
    )


MAX_OPTION_CHARS: Final = 32  # the longest string option value
MAX_OPTION_INTEGER: Final = 1000  # the largest integer option value, in magnitude


class OptionValue(fields.Field):
    """An option value: a short string or an integer (the game lists what it allows)."""

    # The common case, a value read as it is (the fast reader writes it inline, see
    # fast_load.INLINE_ACCEPT; _deserialize judges by it first).
    inline_accept: ClassVar[str] = (
        f"(type({{value}}) is str and len({{value}}) <= {MAX_OPTION_CHARS})"
        f" or (type({{value}}) is int and -{MAX_OPTION_INTEGER} <= {{value}} <= {MAX_OPTION_INTEGER})"
    )

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if _option_accepted(value):
            return value  # the common case, judged at once (the checks below say what is wrong)
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValidationError("an option value is a string or an integer")
        if isinstance(value, str) and len(value) > MAX_OPTION_CHARS:
            raise ValidationError(f"an option value is at most {MAX_OPTION_CHARS} characters")
        if isinstance(value, int) and abs(value) > MAX_OPTION_INTEGER:
            raise ValidationError(
                f"an integer option value is between -{MAX_OPTION_INTEGER} and {MAX_OPTION_INTEGER}"
            )
        return value

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value


_option_accepted: Final[Callable[[Any], bool]] = eval(  # the class's own constant expression, as a function
    f"lambda value: {OptionValue.inline_accept.format(value='value')}"
)


OPTION_VALUE_TEXT: Final = f"An option value: a string of at most {MAX_OPTION_CHARS} characters or an integer from -{MAX_OPTION_INTEGER} to {MAX_OPTION_INTEGER} (the game's `options` say which)."


OPTIONS_TEXT: Final = "Rule options by name; see the game's `options`. Missing ones take the game's defaults."


def options_field(description: str = "", **kwargs: Any) -> fields.Dict:
    """A game's options: the shared ``Options`` component, so that the options of a state
    an answer carries are the type a deal or replay request takes (with what this field
    adds to the component's description)."""
    return fields.Dict(
        keys=fields.String(),
        values=OptionValue(),
        validate=MaxEntries(MAX_OPTIONS),
        metadata=component("Options", description=f"{OPTIONS_TEXT} {description}") if description else component("Options"),
        **kwargs,
    )


CARD_RE = re.compile(CARD_PATTERN)
# Every spelling the engine reads (each matches CARD_PATTERN): a pile of these alone needs
# no pattern match per card.
CARD_SPELLINGS: Final = frozenset(CARD_CODES)


def all_card_spellings(pile: list[Any]) -> bool:
    """Whether every item of ``pile`` is one of :data:`CARD_SPELLINGS` (one set operation;
    False for anything else, which the pattern then judges card by card)."""
    try:
        return CARD_SPELLINGS.issuperset(pile)
    except TypeError:  # an unhashable item: not a card
        return False


class PileGroupField(fields.Field):
    """A pile group: a list of piles, each a list of card strings.

    One field for the whole group rather than nested List(List(String)) fields: a state
    holds up to 208 cards and this is the hot path of every request, so the shape and
    pattern checks run in one loop; the errors still point at the exact card. A group
    whose every card is a spelling the engine reads loads as a
    :class:`.wire.ReadPileGroup` (the same piles, with their cards read), so that the
    wire format does not read its cards a second time.
    """

    # The common case, read by a function (fast_load.INLINE_READ: the fast reader calls it
    # directly, and _deserialize first): wire.read_pile_group with the schema's bound.
    inline_read: ClassVar[tuple[Callable[..., Any], tuple[Any, ...]]] = (read_pile_group, (MAX_PILES_PER_GROUP,))

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> list[list[str]]:
        function, extra = self.inline_read
        read = function(value, *extra)
        if read is not None:  # every card one the engine reads: the group, its cards read for the wire format
            return read
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
            elif not all_card_spellings(pile):
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


def counters_field(**kwargs: Any) -> fields.Dict:
    return fields.Dict(
        keys=fields.String(),
        values=fields.Integer(strict=True, validate=validate.Range(min=-1000, max=1000)),
        validate=MaxEntries(MAX_COUNTERS),
        metadata={
            "description": (
                "Whatever the rules track beyond the piles (redeals used, idle passes...); see the game's "
                "`counters`. Always in answers; a state a client writes may leave it out (none used)."
            ),
            "maxProperties": MAX_COUNTERS,
            "example": {},
        },
        **kwargs,
    )


class StateSchema(Strict):
    """A complete game position: the one ``State`` of requests and answers, so that an
    answer's state is sent back exactly as received, with no conversion, in every
    generated client. Answers always write ``deal`` as a decimal string and always carry
    ``options`` and ``counters``; a state a client writes may give ``deal`` as a JSON
    integer and leave those two out (the game's defaults, no counter used)."""

    format = fields.Integer(
        required=True, strict=True, validate=validate.OneOf([1]),
        metadata={"description": "State format version (1)."},
    )
    game = fields.String(
        required=True, validate=validate.OneOf(list(GAME_CLASSES)),
        metadata=component("GameId", description="The game the state is a position of."),
    )
    options = options_field("Always in answers.", load_default=dict)
    deal = deal_number_field("Answers write it as a decimal string.", required=True)
    piles = fields.Nested(
        PilesSchema,
        required=True,
        metadata={
            "description": "Pile groups by name (those the game has); each a list of piles indexed from 0, each pile bottom card first (its last card is the top).",
        },
    )
    counters = counters_field(load_default=dict)
    face_down = FaceDownField(
        metadata={
            **FACE_DOWN_DOC,
            "description": (
                "Sealed mode only (`state_protection` of `GET /v1/games`), in games with face-down piles: for "
                "each face-down pile group (those with `face_down` in the game's `pile_groups`), the number of "
                "cards of each of its piles. Those groups are then absent from `piles`: their cards travel "
                "encrypted in `sealed`."
            ),
        },
    )
    sealed = fields.String(
        validate=validate.Length(min=1, max=MAX_SEALED_CHARS),
        metadata={
            "description": (
                "Sealed mode only, in games that hide something (face-down piles, or redeals that reshuffle): "
                "the face-down cards and the deal's keyed seed, encrypted (AES-GCM) and bound to the rest of the "
                "state. Opaque: send it back unchanged. It differs in every answer (a random nonce): never "
                "compare it with a value."
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
                "are refused with 403. Never answered in open mode, where one sent is ignored. Opaque: match "
                "it by pattern, never by value."
            ),
        },
    )


# --- moves -----------------------------------------------------------------------------
# What a card move may leave out on the way in although the contract requires it: a
# missing `from` or `to` is left to the view, which answers 422 `invalid-move` saying which.
CARD_MOVE_LENIENT: Final = ("from_", "to")
# A card move's pile, as the service writes it: no other spelling of it is read.
PILE_REF_DOC: Final = (
    "{what}, `<group>:<index>`, spelt as the service writes it: the group in lower case, the index in "
    "decimal with no sign, space or leading zero (`tableau:03` answers 400)."
)


def action_field(action: Action, description: str) -> fields.String:
    """The ``action`` of one branch of the move union: its single value."""
    name = ACTION_NAMES[action]
    return fields.String(
        required=True, validate=validate.OneOf([name]), metadata={"description": description, "example": name}
    )


class CardMoveSchema(Strict):
    """A card move: ``count`` cards from the top of pile ``from`` onto pile ``to``."""

    action = action_field(Action.MOVE, "`move`: move a card or a run of cards.")
    from_ = fields.String(
        required=True, data_key="from", attribute="from", validate=validate.Regexp(PILE_REF_PATTERN),
        metadata={"description": PILE_REF_DOC.format(what="Source pile"), "example": "tableau:3"},
    )
    to = fields.String(
        required=True, validate=validate.Regexp(PILE_REF_PATTERN),
        metadata={"description": PILE_REF_DOC.format(what="Destination pile"), "example": "cell:0"},
    )
    count = fields.Integer(
        required=True, strict=True, validate=validate.Range(min=1, max=MAX_PILE_CARDS),
        metadata={"description": (
            "How many cards move, from the top of `from` (1 for a single card). Required: a card move without it "
            "answers 400 (before the contract said so it was taken as 1)."
        )},
    )


class DealMoveSchema(Strict):
    """Turn the stock (a game whose `actions` list `deal`)."""

    action = action_field(Action.DEAL, "`deal`: deal from the stock.")


class RedealMoveSchema(Strict):
    """Gather and deal again (a game whose `actions` list `redeal`)."""

    action = action_field(Action.REDEAL, "`redeal`: redeal.")


# The branches of the Move union, by action: each is a component of its own.
MOVE_BRANCHES: Final[dict[str, type[Strict]]] = {
    ACTION_NAMES[Action.MOVE]: CardMoveSchema,
    ACTION_NAMES[Action.DEAL]: DealMoveSchema,
    ACTION_NAMES[Action.REDEAL]: RedealMoveSchema,
}
MOVE_READERS: Final[dict[str, Strict]] = {name: schema() for name, schema in MOVE_BRANCHES.items()}
# Each branch's load as MoveField makes it, a card move's with CARD_MOVE_LENIENT (judged once).
MOVE_LOADERS: Final[dict[str, Callable[[Any], Any]]] = {
    name: reader.loader(CARD_MOVE_LENIENT if name == CARD_MOVE else ())
    for name, reader in MOVE_READERS.items()
}


def branch_name(schema: type[Strict]) -> str:
    """The component name of a schema class, as flask-smorest names them."""
    return schema.__name__.removesuffix("Schema")


MOVE_TEXT = (
    "A move, told apart by `action`: a card move (`move`, with `from`, `to` and `count`), `deal` (turn the "
    "stock) or `redeal`. Any move listed in `legal_moves` may be sent back verbatim."
)


ACTION_TEXT = "What a move does: `move` a card or run, `deal` from the stock, or `redeal`."


class MoveSchema(FastLoadSchema):
    """What every move has: its ``action``, which says how the rest reads."""

    class Meta:
        unknown = EXCLUDE  # the rest is its branch's to read

    action = fields.String(
        required=True, validate=validate.OneOf(list(ACTION_NAMES.values())), metadata={"description": ACTION_TEXT}
    )


MOVE_ACTION_READER: Final = MoveSchema()


class MoveField(fields.Field):
    """A move: its action read first (:class:`MoveSchema`), the rest by its branch's schema
    (:data:`MOVE_BRANCHES`); documented as the ``Move`` union. A card move may leave out
    what :data:`CARD_MOVE_LENIENT` names."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise ValidationError("a move is an object with an `action`")
        action = value.get("action")
        if type(action) is not str or action not in MOVE_READERS:  # else MoveSchema reads it as it is
            action = MOVE_ACTION_READER.load(value)["action"]
        loaded: dict[str, Any] = MOVE_LOADERS[action](value)  # a card move's with CARD_MOVE_LENIENT
        return loaded

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value


def move_field(description: str = MOVE_TEXT, **kwargs: Any) -> MoveField:
    return MoveField(metadata=component("Move", description=description), **kwargs)


def pile_ref_field(description: str, example: str, **kwargs: Any) -> fields.String:
    return fields.String(validate=validate.Regexp(PILE_REF_PATTERN), metadata={"description": description, "example": example}, **kwargs)


# What an event may carry besides its `type`, each field made fresh for a branch (required or not).
EVENT_FIELDS: Final[dict[str, Callable[[bool], fields.Field]]] = {
    "from": lambda required: pile_ref_field("The pile the cards left, `<group>:<index>`.", "tableau:3", required=required),
    "to": lambda required: pile_ref_field("The pile the cards went to, `<group>:<index>`.", "foundation:0", required=required),
    "cards": lambda required: fields.List(card_field(), required=required, metadata={"description": "The cards that moved, bottom first."}),
    "note": lambda required: fields.String(required=required, metadata={"description": "What happened, in words, where the cards alone do not say."}),
}


def event_branch(kind: EventKind, description: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> type[Strict]:
    """The ``Event`` union's branch for ``kind``: its single `type`, what it always carries
    (``required``) and what it may (``optional``)."""
    declared: dict[str, fields.Field] = {
        "type": fields.String(
            required=True, validate=validate.OneOf([kind.value]), metadata={"description": description, "example": kind.value}
        )
    }
    for name, make in EVENT_FIELDS.items():
        if name in required or name in optional:
            declared[name] = make(name in required)
    return cast(type[Strict], Strict.from_dict(declared, name=f"{kind.value.capitalize()}EventSchema"))


# The branches of the Event union, by kind: each a component of its own (``MoveEvent``...),
# requiring what the engine always writes for that kind (service.engine.core.Event).
EVENT_BRANCHES: Final[dict[str, type[Strict]]] = {
    EventKind.MOVE.value: event_branch(EventKind.MOVE, "`move`: the move asked for.", ("from", "to", "cards")),
    EventKind.AUTO.value: event_branch(
        EventKind.AUTO, "`auto`: a move the rules made by themselves (a refill).", ("from", "to", "cards", "note")
    ),
    EventKind.AUTOPLAY.value: event_branch(
        EventKind.AUTOPLAY, "`autoplay`: a safe foundation move made because `autoplay` was `safe`.", ("from", "to", "cards")
    ),
    EventKind.DEAL.value: event_branch(EventKind.DEAL, "`deal`: a card dealt from the stock.", ("from", "to", "cards")),
    EventKind.REDEAL.value: event_branch(
        EventKind.REDEAL, "`redeal`: cards gathered and dealt again (`to`: the pile they were gathered into, if one).",
        ("cards", "note"), ("to",),
    ),
}
assert set(EVENT_BRANCHES) == {k.value for k in EventKind}, "an event kind has no branch"

EVENT_TEXT: Final = "Something that happened, told apart by `type`: " + " ".join(
    f"`{kind}`" + ("," if i < len(EVENT_BRANCHES) - 1 else ".") for i, kind in enumerate(EVENT_BRANCHES)
)


STATUS_TEXT = (
    "`playing`, `won`, or `lost` (not won and no legal move left; Binary Star: no fan card can ever reach a star "
    "again)."
)


def status_field() -> fields.String:
    return fields.String(
        required=True, validate=validate.OneOf([s.value for s in Status]),
        metadata=component("Status", description=STATUS_TEXT),
    )


def legal_moves_field() -> fields.List:
    return fields.List(
        MoveField(metadata=component("Move")), required=True,
        metadata={"description": (
            "Every legal move, each target listed separately; send any of them back verbatim. The list and its "
            "order depend on the state alone: the same state always gets the same moves in the same order (on "
            "every server, and in every mode that shows the same layout), so a client may rely on the order."
        )},
    )


def difficulty_request_field(description: str) -> fields.String:
    """A request's optional difficulty grade (the ``Difficulty`` component): ``/deals``'
    ``difficulty``, the daily's query parameter and a replay's of a graded daily."""
    return fields.String(
        validate=validate.OneOf([g.value for g in Grade]), metadata=component("Difficulty", description=description),
    )


class DealRequestSchema(Strict):
    deal = deal_number_field("Omitted: the service picks one and says which.")
    options = options_field()
    winnable = StrictBoolean(
        load_default=server_default(False),
        metadata={
            "description": (
                "true: answer the first deal at or after `deal` (or the number the service picks) "
                "that the solver proves winnable, trying WINNABLE_DEAL_TRIES deals with "
                "WINNABLE_DEAL_SECONDS each; `deal` in the answer says which. 422 "
                "`no-winnable-deal` when none is proved within that budget. Default: false."
            )
        },
    )
    difficulty = difficulty_request_field(
        (
            "Answer the first deal at or after `deal` (or the number the service picks) that is winnable and of "
            "this difficulty grade (the answer's `difficulty` says it), trying at most "
            f"{GRADED_DEAL_TRIES} deals within the solver's budget: 422 `no-graded-deal` when none is found, 422 `not-graded` for a game "
            "(or options other than the defaults) without a calibration. Implies `winnable`."
        ),
    )
    grade = StrictBoolean(
        load_default=server_default(False),
        metadata={
            "description": (
                "true: the answer carries the dealt deal's `difficulty` (null when the solver does not win it "
                "at the atlas budget); 422 `not-graded` for a game without a calibration. Default: false."
            )
        },
    )


class DealResponseSchema(Strict):
    deal = answered_deal_field("The deal number, as a decimal string.")
    state = fields.Nested(StateSchema, required=True)
    legal_moves = legal_moves_field()
    status = status_field()
    difficulty = fields.String(
        allow_none=True,
        metadata=component("Difficulty", description=(
            "Only when the request asked for it (`difficulty`, or `\"grade\": true`): the deal's grade, or null "
            "when the solver does not win it at the atlas budget."
        )),
    )


class Autoplay(StrEnum):
    """What a move request may ask to be played after the move."""

    NONE = "none"
    SAFE = "safe"  # every foundation move that can never hurt (each game's ``autoplay_rule``)


DIFFICULTY_TEXT: Final = (
    "A winnable deal's difficulty grade, from the positions the solver visits to solve it at the atlas budget "
    "(docs/atlas.md, \"Difficulty grades\"): per game, the easiest 40% of the winnable deals of the calibration "
    "range are `easy`, the next 30% `medium`, 20% `hard`, the last 10% `expert`."
)
AUTOPLAY_TEXT: Final = (
    "What is played after each move: `none`, nothing; `safe`, every foundation move that can never hurt "
    "(each game's `autoplay` says which)."
)


def autoplay_field(description: str, **kwargs: Any) -> fields.String:
    return fields.String(
        validate=validate.OneOf([a.value for a in Autoplay]), metadata=component("Autoplay", description=description), **kwargs
    )


def autoplay_request_field(description: str) -> fields.String:
    return autoplay_field(description + " Default: `none`.", load_default=server_default(Autoplay.NONE.value))


def request_state_field() -> fields.Nested:
    """A request's state: a bare reference to the one ``State`` (an answer's state is
    sent back as it came)."""
    return fields.Nested(StateSchema, required=True)


class MoveRequestSchema(Strict):
    state = request_state_field()
    move = move_field(required=True)
    autoplay = autoplay_request_field(
        "`safe`: after the move, make every foundation move that can never hurt (each game's `autoplay` says which)."
    )


class MoveResponseSchema(Strict):
    state = fields.Nested(StateSchema, required=True)
    legal_moves = legal_moves_field()
    status = status_field()
    events = fields.List(
        fields.Raw(metadata=component("Event")), required=True,
        metadata={"description": (
            "What happened, in order: first the move asked for (its `type` is the move's `action`; a card "
            "move's names its `from` and `to` and lists `count` cards), then what it caused (`autoplay`, "
            "`auto`, further `deal` events) in the order it happened; never a second `move`."
        )},
    )


class StateRequestSchema(Strict):
    state = request_state_field()


class LegalMovesResponseSchema(Strict):
    legal_moves = legal_moves_field()
    status = status_field()


class ProblemDetailSchema(Strict):
    where = fields.String(required=True, metadata={"description": "JSON pointer into the request body.", "example": "/state/piles/tableau/2/0"})
    message = fields.String(required=True, metadata={"description": "What is wrong there, in words."})


class ValidateResponseSchema(Strict):
    valid = fields.Boolean(required=True, metadata={"description": "Whether the state is one the rules can reach in shape."})
    problems = fields.List(fields.Nested(ProblemDetailSchema), required=True, metadata={"description": "Each problem found; empty when valid."})


class PileGroupSchema(Strict):
    name = fields.String(required=True, validate=validate.OneOf([g.value for g in GroupName]), metadata={"description": "The group's name, as `piles` and pile references (`tableau:3`) write it.", "example": "tableau"})
    count = fields.Integer(required=True, metadata={"description": "Number of piles in the group."})
    row = fields.Integer(required=True, metadata={"description": "Grid row (in card slots) of the group's first pile."})
    column = fields.Integer(required=True, metadata={"description": "Grid column of the group's first pile."})
    per_row = fields.Integer(required=True, metadata={"description": "Piles laid left to right before wrapping to the next row."})
    fan = fields.String(required=True, validate=validate.OneOf([f.value for f in Fan]), metadata={"description": "How a pile's cards spread: `none` (stacked, top card shows), `down` or `right`."})
    face_down = fields.Boolean(required=True, metadata={"description": "Cards lie face down (the stock)."})
    capacity = fields.Integer(required=True, allow_none=True, metadata={"description": "Most cards a pile holds, or null."})
    description = fields.String(required=True, metadata={"description": "What the group is for, in words."})


class CounterSpecSchema(Strict):
    name = fields.String(required=True, metadata={"description": "The counter's key in a state's `counters`."})
    minimum = fields.Integer(required=True, metadata={"description": "Its least value."})
    maximum = fields.Integer(required=True, metadata={"description": "Its greatest value."})
    description = fields.String(required=True, metadata={"description": "What it counts, in words."})


class OptionSpecSchema(Strict):
    name = fields.String(required=True, metadata={"description": "The option's key in `options`."})
    description = fields.String(required=True, metadata={"description": "What it changes, in words."})
    default = OptionValue(required=True, metadata=component("OptionValue"))
    choices = fields.List(OptionValue(metadata=component("OptionValue")), required=True, allow_none=True, metadata={"description": "The values it takes, or null for an integer between `minimum` and `maximum`."})
    minimum = fields.Integer(required=True, allow_none=True, metadata={"description": "An integer option's least value, or null."})
    maximum = fields.Integer(required=True, allow_none=True, metadata={"description": "An integer option's greatest value, or null."})


class GameSchema(Strict):
    id = fields.String(required=True, metadata=component("GameId"))
    name = fields.String(required=True, metadata={"description": "The game's name, for people."})
    decks = fields.Integer(required=True, metadata={"description": "Full 52-card decks in the game's deck."})
    cards = fields.Integer(required=True, metadata={"description": "Cards in the game's deck."})
    description = fields.String(required=True, metadata={"description": "The game in a sentence or two."})
    pile_groups = fields.List(fields.Nested(PileGroupSchema), required=True, metadata={"description": "The game's pile groups, in the order `piles` lists them, with where each lies."})
    counters = fields.List(fields.Nested(CounterSpecSchema), required=True, metadata={"description": "What a state's `counters` hold in this game."})
    options = fields.List(fields.Nested(OptionSpecSchema), required=True, metadata={"description": "The rule options a deal may set."})
    actions = fields.List(
        fields.String(validate=validate.OneOf(list(ACTION_NAMES.values())), metadata=component("Action")),
        required=True, metadata={"description": "Actions the game has at all."},
    )


STATE_PROTECTION_TEXT: Final = (
    "How this server protects the states clients hold (STATE_PROTECTION): `open`, states are trusted as sent; "
    "`signed`, every answered state carries a `signature` and every state sent back must carry it unchanged "
    "(403 otherwise); `sealed`, signed too, and the face-down cards and the deal's keyed seed travel only "
    "encrypted, in the state's `sealed` (no answer names a hidden card), deal numbers name keyed deals, and "
    "searches read only what the player sees."
)


def state_protection_field(description: str = "") -> fields.String:
    return fields.String(
        required=True, validate=validate.OneOf([p.value for p in StateProtection]),
        metadata=component("StateProtection", description=description) if description else component("StateProtection"),
    )


class GameDetailSchema(GameSchema):
    rules = fields.String(required=True, metadata={"description": "The rules in words, every decision included."})
    autoplay = fields.String(required=True, metadata={"description": "Which foundation moves `autoplay: safe` makes, and why they never hurt."})
    state_protection = state_protection_field()


class IntervalSchema(Strict):
    """A share of the deals as a 95% interval (Wilson's score interval, widened by the
    undecided deals, which may go either way)."""

    low = fields.Float(required=True, validate=validate.Range(0, 1), metadata={"description": "The low end, a share of the deals from 0 to 1: Wilson's interval's low end of `won` / `deals`."})
    high = fields.Float(required=True, validate=validate.Range(0, 1), metadata={"description": "The high end, a share of the deals from 0 to 1: Wilson's interval's high end of (`won` + `unknown`) / `deals`."})
    confidence = fields.Float(required=True, validate=validate.Range(0, 1), metadata={"description": "The interval's confidence level (0.95)."})


class SolverBudgetSchema(Strict):
    """What each deal's search could spend: positions, not seconds, so the verdicts do not
    depend on the machine."""

    positions = fields.Integer(required=True, metadata={"description": "The most positions each deal's search could visit."})


class WinnabilitySchema(Strict):
    """How often a deal of a game can be won, from the winnability atlas."""

    game = fields.String(required=True, metadata=component("GameId"))
    first_deal = fields.Integer(required=True, metadata={"description": "The first deal number solved."})
    last_deal = fields.Integer(required=True, metadata={"description": "The last deal number solved; every deal between was solved."})
    deals = fields.Integer(required=True, metadata={"description": "How many deals were solved."})
    won = fields.Integer(required=True, metadata={"description": "Deals the solver won (a verified solution)."})
    lost = fields.Integer(required=True, metadata={"description": "Deals proved unwinnable (every reachable position searched)."})
    # ``unknown`` on the wire; not the attribute's name, which would shadow (for type checkers)
    # the Schema's own ``unknown`` setting, its unknown-field policy.
    undecided = fields.Integer(required=True, attribute="unknown", data_key="unknown", metadata={"description": "Deals the budget did not decide: they may go either way."})
    interval = fields.Nested(IntervalSchema, required=True)
    budget = fields.Nested(SolverBudgetSchema, required=True)


class GameListSchema(Strict):
    games = fields.List(fields.Nested(GameSchema), required=True, metadata={"description": "Every game, in a fixed order."})
    state_protection = state_protection_field()


# The shared components (besides the marshmallow schemas, which are components by
# themselves), each built from the enumeration that declares it.
SCHEMA_COMPONENTS: Final[dict[str, dict[str, Any]]] = {
    "GameId": enum_component(GAME_CLASSES, "A game id, as `GET /v1/games` lists the games."),
    "Options": {
        "type": "object",
        "additionalProperties": component_ref("OptionValue"),
        "maxProperties": MAX_OPTIONS,
        "description": OPTIONS_TEXT,
    },
    "Status": enum_component([s.value for s in Status], STATUS_TEXT),
    "Action": enum_component(ACTION_NAMES.values(), ACTION_TEXT),
    "DealNumber": {
        "description": DEAL_NUMBER_TEXT,
        "oneOf": [
            {"type": "integer", "minimum": 0, "maximum": MAX_JSON_INTEGER},
            {"type": "string", "pattern": DEAL_PATTERN},
        ],
        "example": "1",
    },
    "OptionValue": {
        "description": OPTION_VALUE_TEXT,
        "oneOf": [
            {"type": "string", "maxLength": MAX_OPTION_CHARS},
            {"type": "integer", "minimum": -MAX_OPTION_INTEGER, "maximum": MAX_OPTION_INTEGER},
        ],
    },
    "Autoplay": enum_component([a.value for a in Autoplay], AUTOPLAY_TEXT),
    "Difficulty": enum_component([g.value for g in Grade], DIFFICULTY_TEXT),
    "StateProtection": enum_component([p.value for p in StateProtection], STATE_PROTECTION_TEXT),
    "Event": {
        "description": EVENT_TEXT,
        "oneOf": [component_ref(branch_name(schema)) for schema in EVENT_BRANCHES.values()],
        "discriminator": {
            "propertyName": "type",
            "mapping": {kind: component_ref(branch_name(schema))["$ref"] for kind, schema in EVENT_BRANCHES.items()},
        },
    },
    "Move": {
        "description": MOVE_TEXT,
        "oneOf": [component_ref(branch_name(schema)) for schema in MOVE_BRANCHES.values()],
        "discriminator": {
            "propertyName": "action",
            "mapping": {action: component_ref(branch_name(schema))["$ref"] for action, schema in MOVE_BRANCHES.items()},
        },
    },
}
