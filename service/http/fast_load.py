"""marshmallow loads without marshmallow's per-load bookkeeping, for bodies that are valid.

``Schema.load`` does the same generic work on every call: it builds an error store, looks
for hooks, builds a closure per field, checks ``partial`` per field, builds a validator
chain (``And``) per field and value, and for a nested schema goes through the field, then
the schema again. A request body is loaded once per request, and a move request nests
five schemas, so that bookkeeping costs more than the checks themselves.

:class:`FastLoadSchema` loads the way marshmallow does, field by field with the fields'
own ``_deserialize`` and validators (a plain ``String`` or ``Integer`` field's checked
inline for a value of exactly its type: :func:`exact_check`), through a reader built
once per schema instance (:func:`compile_reader`), and only for what it reads exactly as marshmallow would: a
single object, no hooks, ``unknown`` RAISE or EXCLUDE, ``partial`` naming top-level fields
of a schema of flat fields only (:data:`FLAT_FIELDS`). Anything else, and every value the reader does not
accept (a field or validator raises, a required field is missing, an unknown key...), is
loaded again by marshmallow's own ``Schema.load`` from the start, so every error, and
every message and pointer in it, is marshmallow's. The reader only ever answers for data
marshmallow accepts, with the dict marshmallow would build
(``tests/contract/test_fast_load.py`` compares the two on valid and broken bodies).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import lru_cache
from typing import Any, Final, NamedTuple

from marshmallow import EXCLUDE, RAISE, Schema, fields, missing, types, validate
from marshmallow.validate import Validator

from .wire import is_mapping

Reader = Callable[[Any, Any], Any]  # (raw value or ``missing``, the data it came from) -> value
SchemaReader = Callable[[Any, "Collection[str] | None", str], dict[str, Any]]


class NotFast(Exception):
    """The reader does not answer for this value: marshmallow's own load decides."""


def _field_reader(field: fields.Field, key: str | None) -> Reader:
    """How one field reads its raw value (``missing`` when absent), as
    ``Field.deserialize`` does when it succeeds, raising where that would raise."""
    nested = _nested_schema(field)
    if not _plain(field):
        return lambda raw, data: field.deserialize(raw, key, data)
    required, allow_none, default = field.required, field.allow_none, field.load_default
    validators = tuple(field.validators)
    deserialize = _dict_reader(field) or field._deserialize

    def read(raw: Any, data: Any) -> Any:
        if raw is missing:
            if required:
                raise NotFast
            return default() if callable(default) else default
        if raw is None:
            if allow_none:
                return None
            raise NotFast
        if nested is not None:
            return nested.load(raw)
        value = deserialize(raw, key, data)
        for validator in validators:
            if validator(value) is False and not isinstance(validator, Validator):
                raise NotFast
        return value

    return read


def _dict_reader(field: fields.Field) -> Callable[[Any, Any, Any], dict[str, Any]] | None:
    """``Dict._deserialize`` for a ``Dict`` of plain ``String`` keys (no validators) whose
    values a field reader reads: the keys and values in one loop, each value read as
    ``Dict`` reads it (with no attribute name or data)."""
    if type(field) is not fields.Dict:
        return None
    keys, values = field.key_field, field.value_field
    if type(keys) is not fields.String or keys.validators or not _plain(keys) or values is None or not _plain(values):
        return None
    read_value = _field_reader(values, None)

    def read(raw: Any, attr: Any, data: Any) -> dict[str, Any]:
        if not is_mapping(raw):
            raise NotFast
        out: dict[str, Any] = {}
        for k, v in raw.items():
            if type(k) is not str:
                raise NotFast
            out[k] = read_value(v, None)
        return out

    return read


def _plain(field: fields.Field) -> bool:
    """Whether ``field`` deserializes as ``Field.deserialize`` says, with no processors
    and, if it is a ``Nested``, one the reader loads directly (:func:`_nested_schema`)."""
    kind = type(field)
    return (
        kind.deserialize is fields.Field.deserialize
        and kind._validate is fields.Field._validate
        and not field.pre_load
        and not field.post_load
        and (not isinstance(field, fields.Nested) or _nested_schema(field) is not None)
    )


def _nested_schema(field: fields.Field) -> FastLoadSchema | None:
    """The schema a plain ``Nested`` field loads one object with, when the reader can load
    it directly (no validators or ``unknown`` of the field's own)."""
    if type(field) is not fields.Nested or field.many or field.validators or field.unknown is not None:
        return None
    schema = field.schema
    if not isinstance(schema, FastLoadSchema) or schema.many:
        return None
    return schema


# Fields whose ``_deserialize`` takes nothing from ``partial``: a schema made of these
# alone is read fast under a ``partial`` too.
FLAT_FIELDS: Final = (fields.String, fields.Number, fields.Boolean)


class ExactCheck(NamedTuple):
    """How a ``String`` or ``Integer`` field reads a value of exactly its type (``str``,
    ``int``): the value itself, when it is one of ``choices`` (``OneOf``), ``match``es
    (``Regexp``) and lies within ``low``-``high`` (an inclusive ``Range``), each None when
    the field has no such validator. Checked inline by the schema's reader: no call per
    field, per validator or per ``_deserialize``."""

    kind: type
    choices: frozenset[Any] | None
    match: Callable[[Any], Any] | None
    low: Any
    high: Any


# The fields whose ``_deserialize`` answers a value of exactly this type with the value
# itself (``String``: ``str(value)``; ``Integer``: ``int(value)``, strict or not).
EXACT_KINDS: Final[dict[type[fields.Field], type]] = {fields.String: str, fields.Integer: int}


def exact_check(field: fields.Field) -> ExactCheck | None:
    """The inline check of a plain ``String`` or ``Integer`` field whose validators are
    all ``OneOf`` (of hashable choices), ``Regexp`` or inclusive ``Range``; None for any
    other field, which its reader reads."""
    kind = EXACT_KINDS.get(type(field))
    if kind is None or not _plain(field):
        return None
    choices: frozenset[Any] | None = None
    match: Callable[[Any], Any] | None = None
    low = high = None
    for validator in field.validators:
        if type(validator) is validate.OneOf and choices is None:
            try:
                choices = frozenset(validator.choices)
            except TypeError:  # an unhashable choice: compared by the validator itself
                return None
        elif type(validator) is validate.Regexp and match is None and kind is str:
            match = validator.regex.match
        elif (
            type(validator) is validate.Range and low is None and high is None
            and validator.min_inclusive and validator.max_inclusive
        ):
            low, high = validator.min, validator.max
        else:
            return None
    return ExactCheck(kind, choices, match, low, high)


def compile_reader(schema: Schema) -> SchemaReader | None:
    """The fast reader of ``schema`` (None when it has hooks or dotted attributes, which
    the reader does not do)."""
    if schema.many or any(schema._hooks.values()):
        return None
    # (data key, field name, key in the loaded dict, whether the field may simply be
    # absent (optional, no default: nothing to load), exact check or None, reader)
    plan: list[tuple[str, str, str, bool, ExactCheck | None, Reader]] = []
    for attr_name, field in schema.load_fields.items():
        key = field.data_key if field.data_key is not None else attr_name
        target = field.attribute or attr_name
        if "." in target:
            return None
        may_be_absent = not field.required and field.load_default is missing
        plan.append((key, attr_name, target, may_be_absent, exact_check(field), _field_reader(field, key)))
    known = frozenset(key for key, _, _, _, _, _ in plan)
    flat = all(isinstance(f, FLAT_FIELDS) for f in schema.load_fields.values())

    def read(data: Any, partial: Collection[str] | None, unknown: str) -> dict[str, Any]:
        if not is_mapping(data):
            raise NotFast
        if unknown == RAISE:
            if not known.issuperset(data):
                raise NotFast
        elif unknown != EXCLUDE:
            raise NotFast
        if partial and not flat:
            raise NotFast  # marshmallow hands partial on to the fields
        out: dict[str, Any] = {}
        for key, attr_name, target, may_be_absent, exact, reader in plan:
            raw = data.get(key, missing)
            if exact is not None and type(raw) is exact.kind:
                choices, match, low, high = exact.choices, exact.match, exact.low, exact.high
                if (
                    (choices is not None and raw not in choices)
                    or (match is not None and match(raw) is None)
                    or (low is not None and raw < low)
                    or (high is not None and raw > high)
                ):
                    raise NotFast
                out[target] = raw
                continue
            if raw is missing and (may_be_absent or (partial and attr_name in partial)):
                continue
            value = reader(raw, data)
            if value is not missing:
                out[target] = value
        return out

    return read


class FastLoadSchema(Schema):
    """A marshmallow Schema whose ``load`` takes :func:`compile_reader`'s reader first, and
    marshmallow's own load for everything the reader does not answer for."""

    _fast_reader: SchemaReader | None

    def load(
        self,
        data: Any,
        *,
        many: bool | None = None,
        partial: bool | types.StrSequenceOrSet | None = None,
        unknown: types.UnknownOption | None = None,
    ) -> Any:
        partial = self.partial if partial is None else partial
        if not many and (not partial or _top_level_names(partial)):
            reader = self.__dict__.get("_fast_reader", _UNBUILT)
            if reader is _UNBUILT:
                reader = self._fast_reader = compile_reader(self)
            if reader is not None:
                try:
                    return reader(data, partial or None, self.unknown if unknown is None else unknown)
                except Exception:  # whatever it is, marshmallow's own load says it again
                    pass
        return super().load(data, many=many, partial=partial, unknown=unknown)


_UNBUILT: Final[Any] = object()


def _top_level_names(partial: Any) -> bool:
    """Whether ``partial`` is a collection of field names the reader honours (no dotted
    paths into nested schemas). A tuple (what the code passes, the same on every load)
    is judged once."""
    if type(partial) is tuple:
        try:
            return _top_level_tuple(partial)
        except TypeError:  # an unhashable item: judged below (it is not a name)
            pass
    return isinstance(partial, (tuple, list, set, frozenset)) and all(
        isinstance(name, str) and "." not in name for name in partial
    )


@lru_cache(maxsize=64)  # the partials the code passes: a handful of constants
def _top_level_tuple(partial: tuple[Any, ...]) -> bool:
    return all(isinstance(name, str) and "." not in name for name in partial)
