"""marshmallow loads without marshmallow's per-load bookkeeping, for bodies that are valid.

``Schema.load`` does the same generic work on every call: it builds an error store, looks
for hooks, builds a closure per field, checks ``partial`` per field, builds a validator
chain (``And``) per field and value, and for a nested schema goes through the field, then
the schema again. A request body is loaded once per request, and a move request nests
five schemas, so that bookkeeping costs more than the checks themselves.

:class:`FastLoadSchema` loads the way marshmallow does, field by field with the fields'
own ``_deserialize`` and validators, through a reader written once per schema instance as
one Python function (:func:`compile_reader`): a plain ``String`` or ``Integer`` field's
checks written out for a value of exactly its type (:func:`exact_check`), a nested
schema's fields and a ``Dict``'s entries read in place, an absent optional field passed
over in one test. It answers only for what it reads exactly as marshmallow would: a
single object, no hooks, ``unknown`` RAISE or EXCLUDE, ``partial`` naming top-level fields
of a schema of flat fields only (:data:`FLAT_FIELDS`). Anything else, and every value the
reader does not accept (a field or validator raises, a required field is missing, an
unknown key...), is loaded again by marshmallow's own ``Schema.load`` from the start, so
every error, and every message and pointer in it, is marshmallow's. The reader only ever
answers for data marshmallow accepts, with the dict marshmallow would build
(``tests/contract/test_fast_load.py`` and ``test_moves_fast_state.py`` compare the two on
valid and broken bodies). The schema stays the one declaration: the reader is written
from its fields, and the contract from the schema.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from functools import lru_cache
from typing import Any, Final, NamedTuple

from marshmallow import EXCLUDE, RAISE, Schema, fields, missing, types, validate
from marshmallow.validate import Validator

from service.private_parts import unchecked_libraries

from .wire import is_mapping

FAST_READER_LIBRARIES: Final = frozenset({"marshmallow"})
"""The libraries whose private parts the reader relies on (service/private_parts.py)."""

FAST_READER: Final = not unchecked_libraries().keys() & FAST_READER_LIBRARIES
"""The version gate, decided once, at import: :class:`FastLoadSchema` reads with its reader
only where each of :data:`FAST_READER_LIBRARIES` is at a version the reader's equivalence
tests ran on (``CHECKED_VERSIONS``); elsewhere every load is marshmallow's ``Schema.load``,
correct and slower (tests/contract/test_gates.py runs requests both ways)."""

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


class ReaderSource:
    """The source of one schema's reader as :func:`compile_reader` writes it: its lines,
    and the objects they name (fields' ``_deserialize``, validators, choices, defaults),
    each bound once as a name of the namespace the reader runs in."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.namespace: dict[str, Any] = {
            "missing": missing, "NotFast": NotFast, "Mapping": Mapping, "RAISE": RAISE, "EXCLUDE": EXCLUDE,
        }
        self._names = 0

    def name(self, value: Any, hint: str) -> str:
        """A new name in the reader's namespace, bound to ``value``."""
        self._names += 1
        name = f"{hint}_{self._names}"
        self.namespace[name] = value
        return name

    def local(self, hint: str) -> str:
        """A new local variable of the reader."""
        self._names += 1
        return f"{hint}{self._names}"

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)


def compile_reader(schema: Schema) -> SchemaReader | None:
    """The fast reader of ``schema`` (None when it has hooks or dotted attributes, which
    the reader does not do): one Python function written for the schema, with its fields
    in order, a ``String``'s or ``Integer``'s checks (:func:`exact_check`) written out
    inline, and a nested schema's fields and a ``Dict``'s entries read in place
    (:func:`_emit_fields`), so that a load makes no call per field but the fields' own
    ``_deserialize`` and validators. What it reads, and where it gives up (``NotFast``),
    is what reading field by field as marshmallow does would do."""
    if schema.many or any(schema._hooks.values()):
        return None
    src = ReaderSource()
    src.emit(0, "def read(data, partial, unknown):")
    src.emit(1, "if type(data) is not dict and not isinstance(data, Mapping):")
    src.emit(2, "raise NotFast")
    known = src.name(frozenset(_data_key(name, f) for name, f in schema.load_fields.items()), "known")
    src.emit(1, "if unknown == RAISE:")
    src.emit(2, f"if not {known}.issuperset(data):")
    src.emit(3, "raise NotFast")
    src.emit(1, "elif unknown != EXCLUDE:")
    src.emit(2, "raise NotFast")
    flat = all(isinstance(f, FLAT_FIELDS) for f in schema.load_fields.values())
    if not flat:
        src.emit(1, "if partial:")
        src.emit(2, "raise NotFast  # marshmallow hands partial on to the fields")
    if not _emit_fields(src, schema, "data", "out", 1, flat, (schema,)):
        return None
    src.emit(1, "return out")
    exec(compile("\n".join(src.lines), f"<fast reader of {type(schema).__name__}>", "exec"), src.namespace)
    reader: SchemaReader = src.namespace["read"]
    return reader


def _data_key(attr_name: str, field: fields.Field) -> str:
    return field.data_key if field.data_key is not None else attr_name


class Cases:
    """An ``if``/``elif``/``else`` chain of the reader's source, written case by case."""

    def __init__(self, src: ReaderSource, depth: int) -> None:
        self.src, self.depth, self.opened = src, depth, False

    def case(self, condition: str) -> int:
        """Open the next case; the depth its body is written at."""
        self.src.emit(self.depth, f"{'elif' if self.opened else 'if'} {condition}:")
        self.opened = True
        return self.depth + 1

    def rest(self) -> int:
        """Open the case of everything else (no line at all when no case came before)."""
        if not self.opened:
            return self.depth
        self.src.emit(self.depth, "else:")
        return self.depth + 1


def _emit_fields(
    src: ReaderSource, schema: Schema, data: str, out: str, depth: int, with_partial: bool,
    within: tuple[Schema, ...],
) -> bool:
    """Write the reading of ``schema``'s fields from the mapping named ``data`` into a new
    dict named ``out``; False (nothing usable written) for a dotted attribute.
    ``with_partial``: a field ``partial`` names may be absent (a flat schema's top level).
    ``within``: the schemas being written, whose classes a nested field does not write again."""
    src.emit(depth, f"{out} = {{}}")
    for attr_name, field in schema.load_fields.items():
        target = field.attribute or attr_name
        if "." in target:
            return False
        key = _data_key(attr_name, field)
        raw, value, store = src.local("raw"), src.local("value"), f"{out}[{target!r}]"
        may_be_absent = not field.required and field.load_default is missing  # then nothing to load
        if may_be_absent:  # read only when there (one test for an absent field)
            src.emit(depth, f"if {key!r} in {data}:")
            src.emit(depth + 1, f"{raw} = {data}[{key!r}]")
            cases = Cases(src, depth + 1)
        else:
            src.emit(depth, f"{raw} = {data}.get({key!r}, missing)")
            cases = Cases(src, depth)
        _emit_exact(src, cases, field, raw, store)
        if with_partial and not may_be_absent:
            at = cases.case(f"{raw} is missing and partial and {attr_name!r} in partial")
            src.emit(at, "pass")
        nested = _inlined_schema(field, within)
        if nested is not None:
            inner = src.local("out")
            at = cases.case(f"type({raw}) is dict")
            if nested.unknown == RAISE:
                known = src.name(frozenset(_data_key(n, f) for n, f in nested.load_fields.items()), "known")
                src.emit(at, f"if not {known}.issuperset({raw}):")
                src.emit(at + 1, "raise NotFast")
            if not _emit_fields(src, nested, raw, inner, at, False, (*within, nested)):
                return False
            src.emit(at, f"{store} = {inner}")
        elif _inlined_dict(field):
            assert isinstance(field, fields.Dict) and field.value_field is not None
            entries = src.local("entries")
            at = cases.case(f"type({raw}) is dict")
            src.emit(at, f"{entries} = {{}}")
            src.emit(at, f"for name, item in {raw}.items():")
            src.emit(at + 1, "if type(name) is not str:")
            src.emit(at + 2, "raise NotFast")
            _emit_entry(src, field.value_field, "item", f"{entries}[name]", at + 1)
            _emit_validators(src, field, entries, at)
            src.emit(at, f"{store} = {entries}")
        if not _plain(field):
            at = cases.rest()
            src.emit(at, f"{value} = {src.name(field.deserialize, 'deserialize')}({raw}, {key!r}, {data})")
        else:
            _emit_missing_or_none(src, cases, field, raw, store, "pass" if may_be_absent else None)
            at = cases.rest()
            schema_of = _nested_schema(field)
            if schema_of is not None:
                src.emit(at, f"{value} = {src.name(schema_of, 'schema')}.load({raw})")
            else:
                deserialize = src.name(_dict_reader(field) or field._deserialize, "deserialize")
                src.emit(at, f"{value} = {deserialize}({raw}, {key!r}, {data})")
                _emit_validators(src, field, value, at)
        src.emit(at, f"if {value} is not missing:")
        src.emit(at + 1, f"{store} = {value}")
    return True


# The class attribute by which a field states its common case for the reader: a Python
# expression in ``{value}`` (constants written in), true only for a value the field's
# ``_deserialize`` returns as it is and its validators (it has none) accept.
INLINE_ACCEPT: Final = "inline_accept"


def inline_accept(field: fields.Field) -> str | None:
    """The expression of a plain field without validators whose class states
    :data:`INLINE_ACCEPT`; None for any other field."""
    expression = getattr(type(field), INLINE_ACCEPT, None)
    if not isinstance(expression, str) or field.validators or not _plain(field) or _nested_schema(field) is not None:
        return None
    return expression


# The method by which a ``Validator`` states when it refuses: it answers a Python
# expression in ``{value}`` (constants written in), true exactly when calling the
# validator would raise, and otherwise calling it has no effect.
INLINE_REFUSAL: Final = "inline_refusal"

# The class attribute by which a field hands the reader a function for its common case:
# ``(function, extra)``, ``function(value, *extra)`` answering what the field's
# ``_deserialize`` answers (it has no validators), or None where it does not answer (then
# ``_deserialize`` reads the value).
INLINE_READ: Final = "inline_read"


def inline_read(field: fields.Field) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
    """The ``(function, extra)`` of a plain field without validators whose class states
    :data:`INLINE_READ`; None for any other field."""
    given = getattr(type(field), INLINE_READ, None)
    if (
        type(given) is not tuple or len(given) != 2 or not callable(given[0]) or type(given[1]) is not tuple
        or field.validators or not _plain(field) or _nested_schema(field) is not None
    ):
        return None
    return given


def _emit_exact(src: ReaderSource, cases: Cases, field: fields.Field, raw: str, store: str) -> None:
    """The case of ``raw`` of exactly the kind of :func:`exact_check`'s ``field``, checked
    inline and stored as it is; or the case of ``raw`` accepted by the field's
    :func:`inline_accept` expression, stored as it is; or the case of ``raw`` its
    :func:`inline_read` function answers, stored as answered (no case for any other field)."""
    read = inline_read(field)
    if read is not None:
        function, extra = read
        value = src.local("read")
        arguments = "".join(f", {src.name(argument, 'extra')}" for argument in extra)
        at = cases.case(f"({value} := {src.name(function, 'inline')}({raw}{arguments})) is not None")
        src.emit(at, f"{store} = {value}")
        return
    accepts = inline_accept(field)
    if accepts is not None:
        at = cases.case(f"({accepts.format(value=raw)})")
        src.emit(at, f"{store} = {raw}")
        return
    exact = exact_check(field)
    if exact is None:
        return
    at = cases.case(f"type({raw}) is {exact.kind.__name__}")
    refusals: list[str] = []
    if exact.choices is not None:
        refusals.append(f"{raw} not in {src.name(exact.choices, 'choices')}")
    if exact.match is not None:
        matched, matches = _remembered(exact.match)
        refusals.append(f"({raw} not in {src.name(matched, 'matched')} and not {src.name(matches, 'matches')}({raw}))")
    if exact.low is not None:
        refusals.append(f"{raw} < {src.name(exact.low, 'low')}")
    if exact.high is not None:
        refusals.append(f"{raw} > {src.name(exact.high, 'high')}")
    if refusals:
        src.emit(at, f"if {' or '.join(refusals)}:")
        src.emit(at + 1, "raise NotFast")
    src.emit(at, f"{store} = {raw}")


MAX_REMEMBERED: Final = 1024  # strings a pattern matched, remembered (then all forgotten: clients choose them)


def _remembered(match: Callable[[Any], Any]) -> tuple[set[str], Callable[[str], bool]]:
    """The strings ``match`` matched (at most :data:`MAX_REMEMBERED`), and whether a string
    matches, remembering it when it does: the reader tests an exact ``str`` against the
    set inline (no call) and calls the function only for one not there yet. The same few
    pile references come back request after request."""
    matched: set[str] = set()

    def matches(text: str) -> bool:
        if match(text) is None:
            return False
        if len(matched) >= MAX_REMEMBERED:
            matched.clear()
        matched.add(text)
        return True

    return matched, matches


def _emit_missing_or_none(
    src: ReaderSource, cases: Cases, field: fields.Field, raw: str, store: str, when_absent: str | None
) -> None:
    """A plain field's cases of an absent value (``when_absent`` when given, else its
    default, or NotFast when it is required) and of None (None when it allows it, else
    NotFast), as ``Field.deserialize`` reads them."""
    default = field.load_default
    if when_absent is None and (field.required or default is missing):
        when_absent = "raise NotFast"
    if when_absent == "raise NotFast" and not field.allow_none:  # both refused: one case
        at = cases.case(f"{raw} is missing or {raw} is None")
        src.emit(at, "raise NotFast")
        return
    at = cases.case(f"{raw} is missing")
    if when_absent is not None:
        src.emit(at, when_absent)
    else:
        src.emit(at, f"{store} = {src.name(default, 'default')}{'()' if callable(default) else ''}")
    at = cases.case(f"{raw} is None")
    src.emit(at, f"{store} = None" if field.allow_none else "raise NotFast")


def _emit_entry(src: ReaderSource, field: fields.Field, raw: str, store: str, depth: int) -> None:
    """A ``Dict``'s value ``raw`` read by its value field (as ``Dict`` reads it, with no
    attribute name or data) into ``store``; an absent one (never in JSON) is NotFast."""
    cases = Cases(src, depth)
    _emit_exact(src, cases, field, raw, store)
    if _nested_schema(field) is not None:  # read by its field reader
        at = cases.rest()
        src.emit(at, f"{store} = {src.name(_field_reader(field, None), 'read')}({raw}, None)")
        return
    _emit_missing_or_none(src, cases, field, raw, store, "raise NotFast")
    at = cases.rest()
    deserialize = src.name(_dict_reader(field) or field._deserialize, "deserialize")
    if not field.validators:
        src.emit(at, f"{store} = {deserialize}({raw}, None, None)")
        return
    value = src.local("value")
    src.emit(at, f"{value} = {deserialize}({raw}, None, None)")
    _emit_validators(src, field, value, at)
    src.emit(at, f"{store} = {value}")


def _emit_validators(src: ReaderSource, field: fields.Field, value: str, depth: int) -> None:
    """``field``'s validators on ``value``: a ``Validator`` raises when it refuses, any
    other callable may also answer False (NotFast: marshmallow says why); one whose
    :data:`INLINE_REFUSAL` method states when it refuses is written inline."""
    for validator in field.validators:
        refusal = getattr(validator, INLINE_REFUSAL, None)
        if callable(refusal) and isinstance(validator, Validator):
            src.emit(depth, f"if {refusal().format(value=value)}:")
            src.emit(depth + 1, "raise NotFast")
            continue
        call = f"{src.name(validator, 'validator')}({value})"
        if isinstance(validator, Validator):
            src.emit(depth, call)
        else:
            src.emit(depth, f"if {call} is False:")
            src.emit(depth + 1, "raise NotFast")


def _inlined_schema(field: fields.Field, within: tuple[Schema, ...]) -> Schema | None:
    """The schema of a plain ``Nested`` field whose fields the reader reads in place: a
    :class:`FastLoadSchema` loading as it does by default (no hooks, ``partial`` or
    ``load`` of its own, ``unknown`` RAISE or EXCLUDE), not one of a class being written
    already (a schema nested in itself would be written without end)."""
    nested = _nested_schema(field) if _plain(field) else None
    if (
        nested is None
        or any(type(nested) is type(outer) for outer in within)  # a schema nesting itself: read when met
        or type(nested).load is not FastLoadSchema.load
        or any(nested._hooks.values())
        or nested.partial
        or nested.unknown not in (RAISE, EXCLUDE)
    ):
        return None
    return nested


def _inlined_dict(field: fields.Field) -> bool:
    """Whether a ``Dict`` field's entries are read in place: as :func:`_dict_reader` reads them."""
    return _plain(field) and _dict_reader(field) is not None


class FastLoadSchema(Schema):
    """A marshmallow Schema whose ``load`` takes :func:`compile_reader`'s reader first, and
    marshmallow's own load for everything the reader does not answer for (for everything,
    where the version gate :data:`FAST_READER` is closed)."""

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
                reader = self._fast_reader = _reader_of(self)
            if reader is not None:
                try:
                    return reader(data, partial or None, self.unknown if unknown is None else unknown)
                except Exception:  # whatever it is, marshmallow's own load says it again
                    pass
        return super().load(data, many=many, partial=partial, unknown=unknown)

    def loader(self, partial: tuple[str, ...] = ()) -> Callable[[Any], Any]:
        """``lambda data: self.load(data, partial=partial)``, with what ``load`` judges
        the same on every call (``partial``, the reader, the schema's ``unknown``) judged
        once: for a schema loaded again and again with the same arguments (a move's
        branch). Marshmallow's own load for whatever the reader does not answer for."""
        reader = self.__dict__.get("_fast_reader", _UNBUILT)
        if reader is _UNBUILT:
            reader = self._fast_reader = _reader_of(self)
        if reader is None or self.many or (partial and not _top_level_names(partial)):
            return lambda data: self.load(data, partial=partial)
        fast: SchemaReader = reader
        given, unknown = partial or None, self.unknown

        def load(data: Any) -> Any:
            try:
                return fast(data, given, unknown)
            except Exception:  # whatever it is, marshmallow's own load says it again
                return Schema.load(self, data, partial=partial)

        return load


_UNBUILT: Final[Any] = object()


def _reader_of(schema: Schema) -> SchemaReader | None:
    """The reader a :class:`FastLoadSchema` loads with: :func:`compile_reader`'s, or None
    (marshmallow's own load) where the version gate :data:`FAST_READER` is closed."""
    return compile_reader(schema) if FAST_READER else None


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
