"""Signed states (``STATE_PROTECTION=signed``): HMAC-SHA256 over a state's canonical form.

In signed mode every state the service answers carries, as its last field,
``"signature": {"kid": "<key id>", "mac": "<base64url, no padding>"}``, and every state a
request sends back is checked here before anything else is done with it (before its cards
are even read). The state stays a plain JSON object that the client sends back as it
came; nothing else about it changes.

What is signed: the bytes ``domain + canonical_json(state without "signature")``, where
``domain`` is ``b"patience-engine state v1\n"`` in signed mode and
``b"patience-engine sealed state v1\n"`` in sealed mode (so a state of one mode never
passes in the other, even under the same keys), and where
the state is the one the wire format writes (:func:`.wire.state_to_json`: format, game,
options, deal as a decimal string, piles, counters) and ``canonical_json`` is
``json.dumps(..., sort_keys=True, separators=(",", ":"), ensure_ascii=True)``. The MAC is
HMAC-SHA256 (standard library ``hmac``) with the secret of the key ``kid`` names. Every
field is covered, so changing any card, counter, option, the deal or the game breaks it.

How the bytes are made, not what they are: a state sent back is written by one JSON
encoder built once (:data:`CANONICAL_ENCODER`, the same text as the ``json.dumps`` call
above); an answer's state is written from the engine's position directly
(:func:`position_canonical`: a template per game and the texts of its piles, remembered),
without its JSON being built and encoded again; each MAC starts from a copy of an HMAC
keyed once per key. tests/contract/test_protection_canonical.py checks each against the
reference on many states of every game.

Refusals, in the order they are checked (each its own code, all 403 problem+json):
no ``signature`` (``state-unsigned``); a signature whose ``kid`` is not a key id or whose
``mac`` is not 43 base64url characters (``state-signature-malformed``); a key id the
server does not list, e.g. a retired key (``state-key-unknown``); a MAC that does not
match the state (``state-signature-invalid``; compared with ``hmac.compare_digest``).
A state signed with any listed key is accepted; answers are always signed with the
first key of the ring.

In open mode nothing is signed or checked: a ``signature`` a client sends is ignored
(neither verified nor answered back), so a client of a signed server keeps working
against an open one.

To check a state offline with the same secret (a leaderboard's server, say)::

    body = {k: v for k, v in state.items() if k != "signature"}
    data = b"patience-engine state v1\n" + json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    mac = base64.urlsafe_b64encode(hmac.digest(secret, data, "sha256")).rstrip(b"=").decode()
    assert hmac.compare_digest(mac, state["signature"]["mac"])

>>> from service.settings import StateKey, StateProtection, StateProtectionSettings
>>> ring = StateProtectionSettings(StateProtection.SIGNED, (StateKey("k2", b"2" * 32), StateKey("k1", b"1" * 32)))
>>> state = {"format": 1, "game": "penguin", "options": {}, "deal": "1", "piles": {}, "counters": {}}
>>> signed = sign_state(ring, state)
>>> signed["signature"]["kid"], len(signed["signature"]["mac"])
('k2', 43)
>>> verify_state(ring, signed)  # accepted: answers the key that signed it
StateKey(kid='k2')
>>> verify_state(ring, {**signed, "deal": "2"})
Traceback (most recent call last):
service.http.problems.ApiError: the state's signature does not match it: the state was changed after the service signed it
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any, Final, NamedTuple

from service.engine.core import Game, Pile, State
from service.settings import KEY_ID_RE, StateKey, StateProtection, StateProtectionSettings

from .problems import ApiError, ProblemCode
from .wire import CARD_TEXTS, FACE_DOWN_FIELD, format_deal, state_to_json

# What each protected mode's MACs cover starts with its own domain string.
DOMAINS: Final[dict[StateProtection, bytes]] = {
    StateProtection.SIGNED: b"patience-engine state v1\n",
    StateProtection.SEALED: b"patience-engine sealed state v1\n",
}
SIGNATURE_FIELD: Final = "signature"
OPEN: Final = StateProtection.OPEN  # looked up once: protects() runs on every answer, and an enum member is reached through a descriptor
MAC_DIGEST: Final = "sha256"
MAC_BYTES: Final = hashlib.new(MAC_DIGEST).digest_size
MAC_CHARS: Final = 43  # base64url of 32 bytes, without its "=" padding
MAC_RE: Final = re.compile(r"[A-Za-z0-9_-]{43}")


# The encoder of every canonical form, built once (``json.dumps`` builds one per call). It
# writes exactly what ``json.dumps(value, sort_keys=True, separators=(",", ":"),
# ensure_ascii=True)`` writes; it skips the check for cycles, which a JSON tree (a decoded
# request, or what the wire format builds) cannot have.
CANONICAL_ENCODER: Final = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True, check_circular=False)


def canonical_json(value: Any) -> bytes:
    """``value`` (a JSON value) as the one JSON text every MAC of this service covers:
    keys sorted, no spaces, ASCII only."""
    return CANONICAL_ENCODER.encode(value).encode("ascii")


def canonical_state(state: Mapping[str, Any], domain: bytes, leave_out: Collection[str] = (SIGNATURE_FIELD,)) -> bytes:
    """The bytes a state's MAC covers: ``domain``, then the state's canonical JSON
    without its signature (without the fields of ``leave_out``). The deal is its decimal
    string, as the wire format writes it (the request schema reads it into an integer; a
    client may send either form)."""
    body = {k: v for k, v in state.items() if k not in leave_out}
    deal = body.get("deal")
    if isinstance(deal, int) and not isinstance(deal, bool):
        body["deal"] = format_deal(deal)
    return domain + canonical_json(body)


@lru_cache(maxsize=32)
def _prepared_mac(secret: bytes) -> hmac.HMAC:
    """HMAC-SHA256 keyed with ``secret`` and fed nothing yet: each MAC starts from a copy,
    so that the key is set up once per key, not once per MAC."""
    return hmac.new(secret, digestmod=MAC_DIGEST)


def keyed_mac(key: StateKey, data: bytes) -> str:
    """HMAC-SHA256 of ``data`` under ``key``, base64url without padding (43 characters)."""
    mac = _prepared_mac(key.secret).copy()
    mac.update(data)
    return b64url(mac.digest())


# base64url (RFC 4648 section 5) through binascii, as base64.urlsafe_b64encode and
# urlsafe_b64decode do it, without their layers of calls.
B64URL_ENCODE: Final = bytes.maketrans(b"+/", b"-_")
B64URL_DECODE: Final = bytes.maketrans(b"-_", b"+/")


def b64url(data: bytes) -> str:
    """``base64.urlsafe_b64encode(data)`` without its ``=`` padding, as text."""
    return binascii.b2a_base64(data, newline=False).translate(B64URL_ENCODE).rstrip(b"=").decode("ascii")


def from_b64url(text: str) -> bytes:
    """``base64.urlsafe_b64decode`` of ``text`` with its padding put back (characters out
    of the alphabet skipped, as there); ValueError (``binascii.Error`` is one) if it is
    not base64url."""
    return binascii.a2b_base64(text.encode("ascii").translate(B64URL_DECODE) + b"=" * (-len(text) % 4))


def state_mac(key: StateKey, state: Mapping[str, Any], domain: bytes) -> str:
    """The MAC of ``state`` under ``key``."""
    return keyed_mac(key, canonical_state(state, domain))


# --- the canonical form of a position the server answers, from the engine's position ----
# Answers are signed from the engine's position directly: a %-template of the canonical JSON
# per game (made once, by writing a state of the game with a marker in each place a value
# goes, so that it has the exact shape the wire format gives) and the texts of the piles,
# remembered by pile (a move changes one or two piles of a state, and a state sent back is
# usually the one answered just before). ``canonical_state(state_to_json(...))`` is the
# reference (tests/contract/test_protection_canonical.py compares the two).
REMEMBERED_LAYOUTS: Final = 512  # games (each option set its own) times face-down groups
REMEMBERED_PILES: Final = 8192  # past that, the memory of pile texts starts afresh
CARD_JSON: Final[dict[int, str]] = {card: CANONICAL_ENCODER.encode(text) for card, text in CARD_TEXTS.items()}


class CanonicalLayout(NamedTuple):
    """How the positions of one game are written canonically: ``template`` holds a
    %-slot for each counter, the deal, each face-down pile's count and each shown pile's
    text, in the order the canonical JSON puts them; ``order`` takes them to that order
    from the engine's order (counters, deal, counts, shown piles in layout order)."""

    game: Game  # kept, so that the id the layout is remembered by is not another game's
    template: str
    shown: Callable[[tuple[Pile, ...]], tuple[Pile, ...]] | None  # None: every pile is shown
    down: Callable[[tuple[Pile, ...]], tuple[Pile, ...]]
    order: Callable[[tuple[Any, ...]], tuple[Any, ...]]


def _picker(indices: Sequence[int]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """The items of a sequence at ``indices``, as a tuple (``itemgetter`` answers a lone
    item for one index)."""
    if len(indices) == 1:
        only = indices[0]
        return lambda items: (items[only],)
    if not indices:
        return lambda items: ()
    return itemgetter(*indices)


def _make_layout(game: Game, face_down: tuple[str, ...] | None) -> CanonicalLayout:
    """The layout of ``game``: a state of it as the wire format writes it (sealed: its
    readable part), each value replaced by a marker, encoded canonically, each marker then
    replaced by its %-slot; the slots' order is the markers' order in that text."""
    blank = State(tuple(() for _ in game.group_of), tuple(0 for _ in game.counter_specs), 0)
    data = state_to_json(game, blank, leave_out=face_down or ())
    formats: list[str] = []

    def slot(fmt: str) -> str:
        formats.append(fmt)
        return f"\x00{len(formats) - 1}"  # written "\u0000<n>": no text of a state can be that

    data["counters"] = {name: slot("%d") for name in data["counters"]}
    data["deal"] = slot('"%s"')
    if face_down is not None:
        data[FACE_DOWN_FIELD] = {name: [slot("%d") for _ in game.group_range(name)] for name in face_down}
    data["piles"] = {name: [slot("%s") for _ in group] for name, group in data["piles"].items()}
    text = CANONICAL_ENCODER.encode(data)
    markers = [CANONICAL_ENCODER.encode(f"\x00{i}") for i in range(len(formats))]
    if any(text.count(m) != 1 for m in markers):
        raise RuntimeError(f"{game.id}: a state's canonical text holds a slot marker of its own")
    template = text.replace("%", "%%")
    for marker, fmt in zip(markers, formats, strict=True):
        template = template.replace(marker, fmt)
    down = [p for name in face_down or () for p in game.group_range(name)]
    return CanonicalLayout(
        game,
        template,
        None if face_down is None else _picker([p for p in range(len(game.group_of)) if p not in down]),
        _picker(down),
        _picker(sorted(range(len(formats)), key=lambda i: text.index(markers[i]))),
    )


_layouts: dict[tuple[int, tuple[str, ...] | None], CanonicalLayout] = {}
_pile_texts: dict[Pile, str] = {}


def canonical_layout(game: Game, face_down: tuple[str, ...] | None = None) -> CanonicalLayout:
    """The :class:`CanonicalLayout` of ``game``'s states (a sealed state's readable part:
    ``face_down`` groups left out of ``piles``, their counts under ``face_down``),
    remembered by the game's identity (games are made once per option set)."""
    key = (id(game), face_down)
    layout = _layouts.get(key)
    if layout is None or layout.game is not game:
        if len(_layouts) >= REMEMBERED_LAYOUTS:
            _layouts.clear()
        layout = _layouts[key] = _make_layout(game, face_down)
    return layout


def pile_text(pile: Pile) -> str:
    """The canonical JSON of a pile's cards (its wire texts), remembered."""
    text = _pile_texts.get(pile)
    if text is None:
        if len(_pile_texts) >= REMEMBERED_PILES:
            _pile_texts.clear()
        text = _pile_texts[pile] = "[" + ",".join(map(CARD_JSON.__getitem__, pile)) + "]"
    return text


def position_canonical(
    game: Game, state: State, deal: int, domain: bytes, face_down: tuple[str, ...] | None = None
) -> bytes:
    """``canonical_state`` of the state an answer carries for ``state`` with ``deal`` as
    its deal number (:func:`.wire.state_to_json`), built from the engine's position; with
    ``face_down``, of a sealed state's readable part (those groups' counts in
    ``face_down``, their cards left out)."""
    layout = canonical_layout(game, face_down)
    piles = state.piles
    shown = piles if layout.shown is None else layout.shown(piles)
    texts = list(map(_pile_texts.get, shown))
    if None in texts:
        texts = list(map(pile_text, shown))
    values = (*state.counters, format_deal(deal), *map(len, layout.down(piles)), *texts)
    return domain + (layout.template % layout.order(values)).encode("ascii")


def protects(protection: StateProtectionSettings) -> bool:
    """Whether states are signed and checked (every mode but open)."""
    return protection.mode is not OPEN


def sign_state(protection: StateProtectionSettings, state: dict[str, Any], signed: bytes | None = None) -> dict[str, Any]:
    """``state`` (as :func:`.wire.state_to_json` wrote it) with its signature by the first
    key of the ring; in open mode, ``state`` itself, unchanged. ``signed``, when given, is
    the state's :func:`canonical_state` already built by the caller."""
    if not protects(protection):
        return state
    key = protection.keys[0]
    if signed is None:
        signed = canonical_state(state, DOMAINS[protection.mode])
    state[SIGNATURE_FIELD] = {"kid": key.kid, "mac": keyed_mac(key, signed)}
    return state


def verify_state(
    protection: StateProtectionSettings,
    state: Mapping[str, Any],
    where: str = "/state",
    signed: bytes | None = None,
) -> StateKey | None:
    """Refuse (403 :class:`ApiError`) a state whose signature is missing, malformed, made
    with a key the ring does not list, or does not match it; ``where`` is the state's JSON
    pointer in the request; ``signed``, when given, the state's :func:`canonical_state`
    already built by the caller. Answers the key that signed it (None in open mode, which
    checks nothing)."""
    if not protects(protection):
        return None
    signature = state.get(SIGNATURE_FIELD)
    if signature is None:
        raise ApiError(
            ProblemCode.STATE_UNSIGNED,
            "this server signs its states (STATE_PROTECTION=signed): send back a state exactly as an answer gave it, "
            "with its `signature`",
            [(f"{where}/signature", "missing")],
        )
    kid, mac = signature.get("kid"), signature.get("mac")
    if not (isinstance(kid, str) and KEY_ID_RE.fullmatch(kid) and isinstance(mac, str) and MAC_RE.fullmatch(mac)):
        raise ApiError(
            ProblemCode.STATE_SIGNATURE_MALFORMED,
            f"a state signature is a key id (1-32 of A-Z a-z 0-9 _ -) and a MAC of {MAC_CHARS} base64url characters",
            [(f"{where}/signature", "not a signature this service makes")],
        )
    for key in protection.keys:
        if key.kid == kid:
            break
    else:
        raise ApiError(
            ProblemCode.STATE_KEY_UNKNOWN,
            f"the state was signed with key {kid!r}, which this server no longer lists: deal again",
            [(f"{where}/signature/kid", "not a key of this server")],
        )
    if signed is None:
        signed = canonical_state(state, DOMAINS[protection.mode])
    if not hmac.compare_digest(keyed_mac(key, signed), mac):  # both ASCII: MAC_RE matched
        raise ApiError(
            ProblemCode.STATE_SIGNATURE_INVALID,
            "the state's signature does not match it: the state was changed after the service signed it",
            [(f"{where}/signature/mac", "does not match the state")],
        )
    return key


__all__ = [
    "DOMAINS",
    "MAC_BYTES",
    "canonical_json",
    "canonical_state",
    "keyed_mac",
    "protects",
    "sign_state",
    "state_mac",
    "verify_state",
]
