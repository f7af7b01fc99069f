"""The v1 wire format: states, moves, events and game descriptions to and from JSON.

The engine works on tuples of small ints (a card is ``suit << 4 | rank``, a pile a flat
index); clients see ``"TH"``, ``"tableau:3"`` and named pile groups. This module is the
one translation between the two, on the HTTP side, so the engine holds no JSON shape
and a second wire version would be a second module here. No Flask: the views call it,
and tests and tools use it without an app.

The passes over every card of a request (a pile group's spellings read, a state's card
texts written, the deck check of :meth:`Game.validate`) and the legal moves' answers run
compiled (``_wire_native.c``, built by ``make``) when that module is built: the
``python_*`` functions here are the reference, used when it is not, and
tests/contract/test_wire_native.py compares the two. The end of this module chooses, once.

Reading is strict and says where a problem is (a JSON pointer into the request's
``state`` or ``move``), so a client learns exactly what it sent wrong. It checks shape
and notation only; :meth:`Game.validate` checks that the cards make a reachable state.

>>> from service.engine.registry import get_game
>>> game = get_game("penguin")
>>> state = game.initial_state(1)
>>> data = state_to_json(game, state)
>>> state_from_json(data)[1] == state
True
>>> move_to_json(game, move_from_json(game, {"action": "move", "from": "tableau:3", "to": "cell:0"}))
{'action': 'move', 'from': 'tableau:3', 'to': 'cell:0', 'count': 1}
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import lru_cache
from itertools import chain
from operator import itemgetter
from typing import Any, Final

from service.atlas import table as atlas_table
from service.engine.cards import CARD_CODES, CardError, format_card, parse_card
from service.engine.core import (
    MAX_DEAL,
    Action,
    Event,
    Game,
    Move,
    Pile,
    Problem,
    Rejection,
    RulesError,
    State,
    holds_the_deck,
    holds_the_deck_within,
    use_deck_check,
    use_shape_check,
)
from service.engine.registry import UnknownGame, get_game

try:  # the compiled codec (_wire_native.c), built by `make`; the python_* functions below otherwise
    from . import _wire_native
except ImportError:  # pragma: no cover - a checkout nobody built (tests/solver/test_native_build.py fails then)
    _wire_native = None  # type: ignore[assignment]

FORMAT_VERSION: Final = 1
MAX_PILE_CARDS: Final = 208  # more than any game's whole deck: anything longer is refused unread
MAX_DEAL_DIGITS: Final = len(str(MAX_DEAL))
# Sealed states (service/http/state_sealing.py): the readable counts of the face-down piles,
# and the opaque encrypted part (bounded: a sealed part of the largest deck fits with room).
FACE_DOWN_FIELD: Final = "face_down"
SEALED_FIELD: Final = "sealed"
MAX_SEALED_CHARS: Final = 512

# The wire name of each action: its enum name in lower case, stated here once.
ACTION_NAMES: Final[dict[int, str]] = {a: a.name.lower() for a in Action}
ACTIONS_BY_NAME: Final[dict[str, Action]] = {name: Action(a) for a, name in ACTION_NAMES.items()}
CARD_MOVE: Final = ACTION_NAMES[Action.MOVE]  # looked up once: an enum member hashes in Python
_MOVE: Final = int(Action.MOVE)  # the card move's action, a plain int looked up once


def is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, answered at once for a dict (what JSON decodes
    to): the check against the abstract class goes through its ``__instancecheck__``."""
    return type(value) is dict or isinstance(value, Mapping)


class NotationError(ValueError):
    """A request part that cannot be read; ``problems`` say what and where."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p.where}: {p.message}" for p in problems))
        self.problems = problems


class IllegalMoveError(Exception):
    """A well-formed move the rules forbid (or that names a pile the game lacks)."""

    def __init__(self, rejection: Rejection) -> None:
        super().__init__(rejection.detail)
        self.rejection = rejection


def spoken_list(words: list[str]) -> str:
    """``'a', 'b' or 'c'``: choices for a message."""
    quoted = [repr(w) for w in words]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


# --- deal numbers ----------------------------------------------------------------------
def parse_deal(value: Any, where: str = "/deal") -> int:
    """A deal number from a JSON integer or a decimal string (for clients whose numbers
    lose digits past 2^53): the one reader of deal numbers, the schemas' included.

    >>> parse_deal("00012"), parse_deal(7)
    (12, 7)
    """
    kind = type(value)  # the common cases judged at once: the schema hands on an int, requests send a str
    if kind is int and 0 <= value <= MAX_DEAL:
        return value
    if kind is str and len(value) <= MAX_DEAL_DIGITS and value.isdigit() and value.isascii():
        return int(value)
    if isinstance(value, bool):
        raise NotationError([Problem(where, "a deal number is an integer or a decimal string")])
    if isinstance(value, str):
        if not value.isdigit() or not value.isascii() or len(value) > MAX_DEAL_DIGITS:
            raise NotationError(
                [Problem(where, f"a deal number string holds 1 to {MAX_DEAL_DIGITS} decimal digits, e.g. \"123\"")]
            )
        value = int(value)
    if not isinstance(value, int):
        raise NotationError([Problem(where, "a deal number is an integer or a decimal string")])
    if not 0 <= value <= MAX_DEAL:
        raise NotationError([Problem(where, f"deal numbers run from 0 to {MAX_DEAL}")])
    return value


def format_deal(deal: int) -> str:
    """Deal numbers are answered as decimal strings: exact in any JSON parser."""
    return str(deal)


# --- states ----------------------------------------------------------------------------
# Each card's text as answers write it (format_card's), looked up rather than built.
CARD_TEXTS: Final[dict[int, str]] = {card: format_card(card) for card in CARD_CODES.values()}


def state_to_json(game: Game, state: State, leave_out: Collection[str] = ()) -> dict[str, Any]:
    """A state as answers carry it (and clients send it back): piles by group name, but
    for the groups named in ``leave_out`` (a sealed state's face-down groups)."""
    all_piles = state.piles
    if len(all_piles) != len(game.pile_refs):
        raise ValueError(f"{len(all_piles)} piles for a game of {len(game.pile_refs)}")  # as zip(strict=True) would
    return {
        "format": FORMAT_VERSION,
        "game": game.id,
        "options": dict(game.options),
        "deal": format_deal(state.deal),
        "piles": pile_texts(all_piles, game.group_slices, leave_out),
        "counters": (
            {s.name: v for s, v in zip(game.counter_specs, state.counters, strict=True)}
            if game.counter_specs or state.counters
            else {}  # a game without counters (most): no comprehension to make and run
        ),
    }


def python_pile_texts(
    piles: Sequence[Pile], group_slices: Sequence[tuple[str, slice]], leave_out: Collection[str]
) -> dict[str, list[list[str]]]:
    """``piles`` (a whole state's, in layout order) as card texts by group name
    (``group_slices``: :attr:`Game.group_slices`), but for the groups in ``leave_out``;
    KeyError for a card without a text, wherever it lies.

    Every card's text is looked up at once, by one ``itemgetter`` over all the piles'
    cards (the lookups in C), and each pile's list cut from those: a lookup pass per pile
    costs more than the lookups themselves."""
    cards = list(chain.from_iterable(piles))
    texts = list(itemgetter(*cards)(CARD_TEXTS)) if len(cards) > 1 else [CARD_TEXTS[c] for c in cards]
    out: dict[str, list[list[str]]] = {}
    end = 0
    for name, group in group_slices:
        start = end
        lists = []
        for pile in piles[group]:
            end += len(pile)
            lists.append(texts[start:end])
            start = end
        if name not in leave_out:
            out[name] = lists
    return out


def state_from_json(data: Mapping[str, Any], expect_game: str | None = None) -> tuple[Game, State]:
    """Read a state (shape and notation only: :meth:`Game.validate` checks the cards).

    The header (format, game, options) comes first, since the rest is read against the
    game it names; then every problem of the deal, piles and counters is collected, so
    that one answer lists them all. Raises :class:`NotationError`, or
    :class:`UnknownGame` for a game id nobody has.
    """
    if not is_mapping(data):
        raise NotationError([Problem("", "a state is a JSON object")])
    problems: list[Problem] = []
    game = read_header(data, expect_game, problems)
    return game, read_body(game, data, problems)


def read_body(
    game: Game,
    data: Mapping[str, Any],
    problems: list[Problem] | None = None,
    given: Mapping[str, list[Pile]] | None = None,
) -> State:
    """The deal, piles and counters of a state of ``game`` (whose header was read), with
    the piles of the groups in ``given`` taken from it (a sealed state's face-down groups,
    which it carries encrypted); raises :class:`NotationError` with ``problems`` and every
    problem found here."""
    problems = [] if problems is None else problems
    deal = 0
    try:
        deal = parse_deal(data.get("deal"), "/deal")
    except NotationError as e:
        problems.extend(e.problems)
    piles = read_piles(game, data.get("piles"), problems, given)
    counters_data = data.get("counters", {})
    counters = (
        []  # a game without counters (most), sent none: nothing to read (no call)
        if type(counters_data) is dict and not counters_data and not game.counter_specs
        else read_counters(game, counters_data, problems)
    )
    if problems:
        raise NotationError(problems)
    return State(tuple(piles), tuple(counters), deal)


def read_header(data: Mapping[str, Any], expect_game: str | None, problems: list[Problem]) -> Game:
    """The game a state names, with its options. A problem here ends the reading
    (raised with those already in ``problems``); a wrong format is only noted."""
    if data.get("format") != FORMAT_VERSION:
        problems.append(Problem("/format", f"this service reads state format {FORMAT_VERSION}"))
    game_id = data.get("game")
    if not isinstance(game_id, str):
        raise NotationError([*problems, Problem("/game", "the state must name its game")])
    if expect_game is not None and game_id != expect_game:
        raise NotationError(
            [*problems, Problem("/game", f"this state is a {game_id!r} state, sent to {expect_game!r}")]
        )
    options = data.get("options", {})
    if type(options) is not dict and not is_mapping(options):
        raise NotationError([*problems, Problem("/options", "options is a JSON object")])
    try:
        return configured_game(game_id, options)
    except RulesError as e:
        raise NotationError([*problems, Problem("/" + e.where, str(e))]) from e


def configured_game(game_id: str, options: Mapping[str, Any]) -> Game:
    """``get_game(game_id, options)``, remembered for the option sets states carry (their
    options are checked once per set, not once per request)."""
    values = tuple(options.values())
    try:  # each value's type in the key too: True and 1 are equal keys, not equal options
        return _configured_game(game_id, tuple(options), values, tuple(map(type, values)))
    except TypeError:  # an option value that cannot be a key (the schemas refuse those)
        return get_game(game_id, options)


@lru_cache(maxsize=256)
def _configured_game(game_id: str, names: tuple[str, ...], values: tuple[Any, ...], types: tuple[type, ...]) -> Game:
    """The game of ``configured_game``'s key: the option names, their values and the
    values' types, each a tuple made in one call (no generator per request)."""
    return get_game(game_id, dict(zip(names, values, strict=True)))


class ReadPileGroup(list[Any]):
    """A pile group as a request sent it (equal to that list of piles), with ``codes``: its
    piles as the engine's cards, read when the request's schema checked the group
    (:func:`read_pile_group`), so that :func:`read_piles` takes them as they are instead
    of reading every card again."""

    __slots__ = ("codes",)  # no instance dict to make for each group
    codes: tuple[Pile, ...]


def python_read_pile_group(value: Any, max_piles: int) -> ReadPileGroup | None:
    """``value`` with its piles read (:class:`ReadPileGroup`) when it is a list of at most
    ``max_piles`` piles, each a list of at most :data:`MAX_PILE_CARDS` card spellings the
    engine reads (:data:`CARD_CODES`); None for anything else (list subclasses too: the
    schema's own checks judge those). A pile of two cards or more is read by one
    ``itemgetter`` call (the lookups in C, not a call per card)."""
    if type(value) is not list or len(value) > max_piles:
        return None
    codes: list[Pile] = []
    card_codes, most, read = CARD_CODES, MAX_PILE_CARDS, itemgetter  # looked up once, not per pile
    try:
        for pile in value:
            if type(pile) is not list:
                return None
            n = len(pile)
            if n > 1:
                if n > most:
                    return None
                codes.append(read(*pile)(card_codes))
            else:
                codes.append((card_codes[pile[0]],) if n else ())
    except (KeyError, TypeError):  # not a card spelling, or not even hashable
        return None
    group = ReadPileGroup(value)
    group.codes = tuple(codes)
    return group


def python_join_groups(piles_data: Any, layout: Sequence[tuple[str, int]]) -> tuple[Pile, ...] | None:
    """Every pile of a state, in layout order, when ``piles_data`` (a dict) holds exactly
    the groups of ``layout`` (:attr:`Game.group_counts`: each name and pile count), each a
    :class:`ReadPileGroup` (read by the schema) of its count; None otherwise, for
    :func:`read_piles` to read and judge as usual. The common case of a request's state:
    the schema read every card, and nothing is left to check but the names and counts."""
    if type(piles_data) is not dict or len(piles_data) != len(layout):
        return None
    piles: list[Pile] = []
    for name, count in layout:
        group = piles_data.get(name)
        if type(group) is not ReadPileGroup:
            return None
        codes = getattr(group, "codes", None)
        if type(codes) is not tuple or len(group) != count or len(codes) != count:
            return None
        piles.extend(codes)
    return tuple(piles)


def read_piles(
    game: Game, piles_data: Any, problems: list[Problem], given: Mapping[str, list[Pile]] | None = None
) -> Sequence[Pile]:
    """Every pile of ``game`` in layout order, from ``{group: [[card, ...], ...]}`` and
    the groups ``given`` already read; groups the game lacks, wrong pile counts and
    unreadable cards go to ``problems``."""
    if not given:
        joined = join_groups(piles_data, game.group_counts)
        if joined is not None:
            return joined  # every group the game has, each read by the schema: nothing more to judge
    given = given or {}
    if not is_mapping(piles_data):
        problems.append(Problem("/piles", "piles is an object of pile groups"))
        return []
    group_start = game.group_start  # has_group's table, looked up once
    for name in piles_data:
        if name not in group_start:
            groups = ", ".join(g.name for g in game.groups)
            problems.append(Problem(f"/piles/{name}", f"{game.name} has no pile group {name!r} (groups: {groups})"))
    piles: list[Pile] = []
    card_code = CARD_CODES.__getitem__
    for g in game.groups:
        if g.name in given:
            piles.extend(given[g.name])
            continue
        group = piles_data.get(g.name)
        if type(group) is ReadPileGroup and len(group) == g.count:
            piles.extend(group.codes)  # read by the schema (read_pile_group)
            continue
        if not isinstance(group, list) or len(group) != g.count:
            problems.append(Problem(f"/piles/{g.name}", f"{g.name} is a list of {g.count} piles"))
            continue
        for i, pile in enumerate(group):
            if isinstance(pile, list) and len(pile) <= MAX_PILE_CARDS:  # read_pile's common case, inlined
                try:
                    piles.append(tuple(map(card_code, pile)))
                    continue
                except (KeyError, TypeError):
                    pass
            cards = read_pile(pile, g.name, i, problems)
            if cards is not None:
                piles.append(cards)
    return piles


def read_pile(pile: Any, group: str, index: int, problems: list[Problem]) -> Pile | None:
    """Pile ``index`` of ``group``'s cards (None, with its problems noted, if it cannot be
    read). The common case is one table lookup per card; only a bad pile is read card by
    card, to say which card is wrong (its pointer is built only then)."""
    shaped = isinstance(pile, list) and len(pile) <= MAX_PILE_CARDS
    if shaped:
        try:
            return tuple(map(CARD_CODES.__getitem__, pile))
        except (KeyError, TypeError):
            pass
    where = f"/piles/{group}/{index}"
    if not shaped:
        problems.append(Problem(where, f"a pile is a list of at most {MAX_PILE_CARDS} cards"))
        return None
    for j, text in enumerate(pile):
        try:
            parse_card(text)
        except CardError as e:
            problems.append(Problem(f"{where}/{j}", str(e)))
    return None


def read_counters(game: Game, counters_data: Any, problems: list[Problem]) -> list[int]:
    """The game's counters in its order, from ``{name: integer}``."""
    if not is_mapping(counters_data):
        problems.append(Problem("/counters", "counters is an object"))
        return []
    if not counters_data and not game.counter_specs:
        return []  # a game without counters (most), sent none: nothing to read
    names = {s.name for s in game.counter_specs}
    for name in counters_data:
        if name not in names:
            problems.append(Problem(f"/counters/{name}", f"{game.name} has no counter {name!r}"))
    counters: list[int] = []
    for spec in game.counter_specs:
        value = counters_data.get(spec.name)
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(Problem(f"/counters/{spec.name}", "an integer is required"))
        else:
            counters.append(value)
    return counters


# --- moves and events ------------------------------------------------------------------
# A pile reference as :meth:`Game.ref` writes it, and the only spelling read: a lower-case
# group name, a colon and the index in ASCII decimal without a sign or a leading zero, so
# that each pile has exactly one name ("tableau:03", "tableau:+3", " tableau:3",
# "Tableau:3" and "tableau:\u0663" name none). The contract's pattern (an ECMA-262 regex:
# ``$`` there is the end of the text; read here with ``fullmatch``, as Python's ``$`` also
# matches before a final newline).
PILE_REF_PATTERN: Final = r"^[a-z]{1,16}:(0|[1-9][0-9]{0,3})$"
_PILE_REF: Final = re.compile(PILE_REF_PATTERN)
PILE_REF_TEXT: Final = (
    "a pile reference is '<group>:<index>' as the service writes it, e.g. 'tableau:3' "
    "(a lower-case group name, the index in decimal digits with no sign, space or leading zero)"
)


def pile_from_ref(game: Game, ref: Any, field: str) -> int:
    """Flat pile index of ``"tableau:3"``, a reference spelt as :meth:`Game.ref` writes it.

    Any other spelling is NotationError (``"tableau:03"`` is not read as ``"tableau:3"``:
    a pile has one name); a reference of that spelling to a pile the game lacks
    (``"tableau:99"``, ``"nowhere:0"``) is IllegalMoveError ``no-such-pile``."""
    if type(ref) is not str:
        if not isinstance(ref, str):
            raise NotationError([Problem(f"/{field}", PILE_REF_TEXT)])
        ref = str.__str__(ref)  # a str subclass's text as a plain str (no method of its own runs)
    pile = game.pile_of_ref.get(ref)
    if pile is not None:
        return pile
    if _PILE_REF.fullmatch(ref):
        raise IllegalMoveError(Rejection("no-such-pile", f"{game.name} has no pile {ref!r}"))
    raise NotationError([Problem(f"/{field}", PILE_REF_TEXT)])


def move_from_json(game: Game, data: Mapping[str, Any]) -> Move:
    """Read a move; NotationError if unreadable, IllegalMoveError if it names a pile the
    game lacks (whether the rules allow it is :meth:`Game.check_move`'s question)."""
    if not is_mapping(data):
        raise NotationError([Problem("", "a move is a JSON object")])
    name = data.get("action")
    action = ACTIONS_BY_NAME.get(name) if isinstance(name, str) else None
    if action is None:
        raise NotationError([Problem("/action", f"action is {spoken_list(list(ACTIONS_BY_NAME))}")])
    if action is not Action.MOVE:
        return Move(action)
    count = data.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_PILE_CARDS:
        raise NotationError([Problem("/count", f"count is an integer from 1 to {MAX_PILE_CARDS}")])
    src = pile_from_ref(game, data.get("from"), "from")
    dst = pile_from_ref(game, data.get("to"), "to")
    return Move(Action.MOVE, src, dst, count)


def python_move_to_json(game: Game, move: Move) -> dict[str, Any]:
    """A move as ``legal_moves`` lists it: sent back verbatim, it reads as the same move.

    The compiled one (:data:`CODEC`) answers a game's card moves with the same dict each
    time it meets them (a table per game, of at most a bounded number of moves): answers
    are encoded as they are built and never changed, so callers must not change one."""
    action, src, dst, count = move
    if action != _MOVE:
        return {"action": ACTION_NAMES[action]}
    refs = game.ref_texts
    return {"action": CARD_MOVE, "from": refs[src], "to": refs[dst], "count": count}


def event_to_json(game: Game, event: Event) -> dict[str, Any]:
    """An event of a move's answer: its kind, piles, cards and note where it has them."""
    out: dict[str, Any] = {"type": event.kind.value}
    if event.src >= 0:
        out["from"] = game.ref(event.src)
    if event.dst >= 0:
        out["to"] = game.ref(event.dst)
    out["cards"] = list(map(CARD_TEXTS.__getitem__, event.cards))
    if event.note:
        out["note"] = event.note
    return out


# --- the compiled codec, or the Python functions ---------------------------------------
# The one place that chooses: the compiled passes when _wire_native is built (the engine's
# deck check included), this module's Python otherwise.
CODEC: Final = (
    None
    if _wire_native is None
    else _wire_native.Codec(
        card_codes=CARD_CODES,
        card_texts=CARD_TEXTS,
        group_type=ReadPileGroup,
        read_fallback=python_read_pile_group,
        texts_fallback=python_pile_texts,
        deck_fallback=holds_the_deck,
        move_fallback=python_move_to_json,
        move_action=_MOVE,
        card_move=CARD_MOVE,
        max_pile_cards=MAX_PILE_CARDS,
        join_fallback=python_join_groups,
        shape_fallback=holds_the_deck_within,
    )
)
read_pile_group: Callable[[Any, int], ReadPileGroup | None] = python_read_pile_group
join_groups: Callable[[Any, Sequence[tuple[str, int]]], tuple[Pile, ...] | None] = python_join_groups
pile_texts: Callable[[Sequence[Pile], Sequence[tuple[str, slice]], Collection[str]], dict[str, list[list[str]]]] = (
    python_pile_texts
)
move_to_json: Callable[[Game, Move], dict[str, Any]] = python_move_to_json
if CODEC is not None:
    read_pile_group = CODEC.read_pile_group
    join_groups = CODEC.join_groups
    pile_texts = CODEC.pile_texts
    move_to_json = CODEC.move_to_json
    use_deck_check(CODEC.holds_the_deck)
    use_shape_check(CODEC.holds_the_deck_within)


# --- game descriptions -----------------------------------------------------------------
def describe_game(game: Game, with_rules: bool = False) -> dict[str, Any]:
    """A game as ``GET /v1/games`` lists it: layout, counters, options and actions, so a
    generic frontend can draw and play it; ``with_rules`` adds the rules in words."""
    out: dict[str, Any] = {
        "id": game.id,
        "name": game.name,
        "decks": game.decks,
        "cards": len(game.deck()),
        "description": game.summary,
        "pile_groups": [
            {
                "name": g.name,
                "count": g.count,
                "row": g.row,
                "column": g.column,
                "per_row": g.per_row or g.count,
                "fan": g.fan,
                "face_down": g.face_down,
                "capacity": g.capacity or None,
                "description": g.description,
            }
            for g in game.groups
        ],
        "counters": [
            {"name": s.name, "minimum": s.minimum, "maximum": s.maximum, "description": s.description}
            for s in game.counter_specs
        ],
        "options": [
            {
                "name": o.name,
                "description": o.description,
                "default": game.options.get(o.name, o.default),
                "choices": list(o.choices) or None,
                "minimum": o.minimum,
                "maximum": o.maximum,
            }
            for o in game.option_specs()
        ],
        "actions": game_actions(game),
    }
    if with_rules:
        out["rules"] = game.rules_description()
        out["autoplay"] = game.autoplay_rule
    return out


def winnability(game_id: str) -> dict[str, Any]:
    """The game's row of the atlas's table (:mod:`service.atlas.table`), which covers every
    game (KeyError otherwise: tests/atlas checks the shipped table)."""
    row = atlas_table.served()[game_id]
    return {
        "game": game_id, "first_deal": row.first_deal, "last_deal": row.last_deal, "deals": row.deals,
        "won": row.won, "lost": row.lost, "unknown": row.unknown,
        "interval": {"low": row.low, "high": row.high, "confidence": atlas_table.CONFIDENCE},
        "budget": {"positions": row.budget_positions},
    }


def game_actions(game: Game) -> list[str]:
    """Which move actions the game has at all (so a frontend shows deal/redeal buttons)."""
    has = {Action.MOVE: True, Action.DEAL: game.has_deal, Action.REDEAL: game.has_redeal}
    return [ACTION_NAMES[a] for a in Action if has[a]]


__all__ = [
    "ACTION_NAMES",
    "CARD_MOVE",
    "CODEC",
    "FACE_DOWN_FIELD",
    "FORMAT_VERSION",
    "MAX_PILE_CARDS",
    "MAX_SEALED_CHARS",
    "PILE_REF_PATTERN",
    "SEALED_FIELD",
    "IllegalMoveError",
    "NotationError",
    "ReadPileGroup",
    "UnknownGame",
    "describe_game",
    "event_to_json",
    "format_deal",
    "game_actions",
    "is_mapping",
    "join_groups",
    "move_from_json",
    "move_to_json",
    "parse_deal",
    "pile_texts",
    "python_join_groups",
    "python_move_to_json",
    "python_pile_texts",
    "python_read_pile_group",
    "read_body",
    "read_header",
    "read_pile_group",
    "state_from_json",
    "state_to_json",
]
