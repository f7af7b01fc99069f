"""Sealed states (``STATE_PROTECTION=sealed``): what the player cannot see travels encrypted.

A sealed state is a signed state (:mod:`.state_signing`, with the sealed mode's own
domain string) whose readable part shows only what a player at the table sees:

- each face-down pile group (``face_down`` in the game's ``pile_groups``: the stocks of
  Forty Thieves, Boomerang, Amazons and Abandon Hope) is left out of ``piles`` and
  appears in ``face_down`` as the number of cards of each of its piles;
- ``deal`` is the deal number the player asked for, but the shuffle was seeded from a
  keyed hash of it (:class:`KeyedDeals`), so the number cannot be used to rebuild the
  layout with PySolFC, and neither can later reshuffles (Small Billee, Abandon Hope),
  which the engine derives from that seed;
- ``sealed`` carries the face-down cards and the seed, encrypted with AES-GCM
  (``cryptography``), a random 96-bit nonce per answer, under a key derived (HKDF-SHA256)
  from the state key that signs the state. Its associated data is the readable part's
  canonical form, so a sealed part spliced into another state, deal or game does not
  open; the signature over the whole state (``sealed`` included) refuses it first.

``sealed`` is base64url (no padding) of ``nonce (12 bytes) || AES-GCM(payload)``, where the
payload is ``version (1) || seed (9 bytes, big-endian) || for each face-down pile in
layout order: its card count (1 byte), then its cards (1 byte each, the engine's
``suit << 4 | rank``, bottom first)``. Clients never read it: it is opaque.

A state sealed with a listed key that no longer signs still opens (rotation). Keyed deals
use the first key of the deal key ring (``DEAL_KEYS``), not a state key: rotating the
state keys renumbers no deal; rotating the deal keys renumbers deals (and daily
challenges), never games already dealt (their seed travels in ``sealed``).

>>> from service.engine.registry import get_game
>>> from service.settings import StateKey, StateProtection, StateProtectionSettings
>>> ring = StateProtectionSettings(StateProtection.SEALED, (StateKey("k1", b"1" * 32),), (StateKey("d1", b"d" * 32),))
>>> game = get_game("forty-thieves")
>>> seed = KeyedDeals.of(ring, game)(7)
>>> state = game.initial_state(seed)
>>> sealed, signed = seal(ring.keys[0], game, state, 7)
>>> sealed["deal"], sealed["face_down"], "stock" in sealed["piles"]
('7', {'stock': [64]}, False)
>>> signed == canonical_state(sealed, SEALED_DOMAIN)
True
>>> hidden, opened_seed = unseal(ring.keys[0], game, sealed, readable_part(sealed))
>>> opened_seed == seed and hidden["stock"] == [state.piles[p] for p in game.group_range("stock")]
True
"""

from __future__ import annotations

import binascii
import hmac
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from service.engine.cards import ALL_CARDS
from service.engine.core import MAX_DEAL, Event, Game, Pile, State
from service.engine.registry import get_game
from service.settings import StateKey, StateProtection, StateProtectionSettings

from .problems import ApiError, ProblemCode
from .state_signing import (
    DOMAINS,
    SIGNATURE_FIELD,
    b64url,
    canonical_json,
    canonical_state,
    from_b64url,
    position_canonical,
)
from .wire import FACE_DOWN_FIELD, MAX_SEALED_CHARS, SEALED_FIELD, format_deal, state_to_json

PAYLOAD_VERSION: Final = 1
NONCE_BYTES: Final = 12
SEED_BYTES: Final = 9  # 10**20 - 1 < 2**72
CARD_BYTES: Final = bytes(sorted(ALL_CARDS))  # the payload bytes that are cards
SEAL_INFO: Final = b"patience-engine seal v1"
DEAL_INFO: Final = b"patience-engine deal v1"
SEALED_DOMAIN: Final = DOMAINS[StateProtection.SEALED]


@lru_cache(maxsize=32)
def derived_key(secret: bytes, info: bytes) -> bytes:
    """A 256-bit key for one purpose (``info``) from a state key's secret (HKDF-SHA256),
    so that the MAC, the seal and the keyed deals never share a key."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(secret)


@lru_cache(maxsize=32)
def sealing_cipher(secret: bytes) -> AESGCM:
    """The AES-GCM cipher of a state key (built once per key: it holds no per-message
    state, so threads share it)."""
    return AESGCM(derived_key(secret, SEAL_INFO))


@dataclass(frozen=True)
class KeyedDeals:
    """Deal number -> shuffle seed under a secret key, for one game: the same number is
    the same deal for every player of a server, and nobody without the key can tell
    which layout it is. A plain value, so that it travels to the solver processes."""

    key: bytes = field(repr=False)
    game: bytes  # the game id and its options, canonical: another option, another layout

    @classmethod
    def of(cls, protection: StateProtectionSettings, game: Game) -> KeyedDeals:
        """The keyed deals of ``game`` under the first deal key (``DEAL_KEYS``): the same
        derivation as when the first state key keyed the deals, so a deal key equal to
        that old state key keeps every deal."""
        return cls(derived_key(protection.deal_keys[0].secret, DEAL_INFO), canonical_json([game.id, game.options]))

    def __call__(self, deal: int) -> int:
        digest = hmac.digest(self.key, self.game + b"\n" + str(deal).encode("ascii"), "sha256")
        return int.from_bytes(digest[:16], "big") % (MAX_DEAL + 1)


@lru_cache(maxsize=64)  # game ids only: a path names a known game before this is asked
def face_down_groups(game_id: str) -> tuple[str, ...]:
    """The face-down pile groups of a game, in layout order (the same whatever its options)."""
    return tuple(g.name for g in get_game(game_id).groups if g.face_down)


@lru_cache(maxsize=64)  # game ids only: a path names a known game before this is asked
def keeps_secrets(game_id: str) -> bool:
    """Whether a state of this game hides something from the player: face-down piles, or
    a deal seed that later reshuffles derive from. A game with nothing to hide (the Penguin
    family, Binary Star) has no sealed part: its keyed layout is already dealt, face up,
    and its seed plays no further part, so its sealed-mode states are signed states."""
    game = get_game(game_id)
    return bool(game.face_down_piles) or game.redeals_reshuffle


def seal(key: StateKey, game: Game, state: State, deal: int) -> tuple[dict[str, Any], bytes]:
    """The sealed form of ``state`` (whose ``deal`` is the seed its shuffle was dealt
    from), showing ``deal`` as its deal number, not signed yet; and the bytes its
    signature covers (:func:`signed_part`)."""
    hidden = face_down_groups(game.id)
    data = state_to_json(game, state, leave_out=hidden)
    data["deal"] = format_deal(deal)
    payload = bytearray((PAYLOAD_VERSION,))
    payload += state.deal.to_bytes(SEED_BYTES, "big")
    counts: dict[str, list[int]] = {name: [] for name in hidden}
    for p in game.face_down_piles:  # the piles of the hidden groups, in layout order
        pile = state.piles[p]
        counts[game.group_of[p]].append(len(pile))
        payload.append(len(pile))
        payload += bytes(pile)
    data[FACE_DOWN_FIELD] = counts
    nonce = os.urandom(NONCE_BYTES)
    readable = position_canonical(game, state, deal, SEALED_DOMAIN, hidden)  # readable_part(data), from the position
    box = sealing_cipher(key.secret).encrypt(nonce, bytes(payload), readable)
    sealed = data[SEALED_FIELD] = b64url(nonce + box)
    # signed_part(readable, sealed): base64url text is its own JSON string, quoted
    return data, readable[:-1] + SEALED_KEY + b'"' + sealed.encode("ascii") + b'"}'


def readable_part(data: Mapping[str, Any]) -> bytes:
    """The associated data of a seal: the state's canonical form (sealed mode's domain)
    without its sealed part and its signature."""
    return canonical_state(data, SEALED_DOMAIN, leave_out=UNSIGNED_BY_SEAL)


UNSIGNED_BY_SEAL: Final = frozenset((SEALED_FIELD, SIGNATURE_FIELD))
SEALED_KEY: Final = b',"' + SEALED_FIELD.encode("ascii") + b'":'


def signed_part(readable: bytes, sealed: Any) -> bytes:
    """The state's :func:`.state_signing.canonical_state` (what its signature covers), from
    its :func:`readable_part` and its sealed part, without building the JSON again: in
    sorted order ``sealed`` is the last key of a state without its signature (every other
    key of the state schema sorts before it)."""
    return readable[:-1] + SEALED_KEY + canonical_json(sealed) + b"}"


def unseal(
    key: StateKey, game: Game, data: Mapping[str, Any], readable: bytes, where: str = "/state"
) -> tuple[dict[str, list[Pile]], int]:
    """The face-down piles (by group) and the shuffle seed of a sealed state whose
    signature was verified with ``key`` (``readable``: its :func:`readable_part`). 403
    ``state-seal-invalid`` when the sealed part does not open or does not match the
    readable part."""
    sealed = data.get(SEALED_FIELD)
    counts = data.get(FACE_DOWN_FIELD)
    try:
        if not isinstance(sealed, str) or len(sealed) > MAX_SEALED_CHARS or not isinstance(counts, Mapping):
            raise ValueError("no sealed part")
        raw = from_b64url(sealed)
        payload = sealing_cipher(key.secret).decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], readable)
        return read_payload(game, payload, counts)
    except (ValueError, IndexError, binascii.Error, InvalidTag):
        raise ApiError(
            ProblemCode.STATE_SEAL_INVALID,
            "the state's sealed part does not open or does not match the state: send back a state exactly as "
            "an answer gave it",
            [(f"{where}/{SEALED_FIELD}", "not the sealed part of this state")],
        ) from None


def read_payload(game: Game, payload: bytes, counts: Mapping[str, Any]) -> tuple[dict[str, list[Pile]], int]:
    """The face-down piles (by group) and the seed of an opened payload; ValueError if it
    is not one this service writes or does not match the readable ``face_down`` counts."""
    if not payload or payload[0] != PAYLOAD_VERSION:
        raise ValueError("unknown payload version")
    seed = int.from_bytes(payload[1 : 1 + SEED_BYTES], "big")
    if seed > MAX_DEAL:
        raise ValueError("seed out of range")
    at = 1 + SEED_BYTES
    hidden: dict[str, list[Pile]] = {name: [] for name in face_down_groups(game.id)}
    for p in game.face_down_piles:  # the piles of the hidden groups, in layout order
        n = payload[at]
        cards = payload[at + 1 : at + 1 + n]
        if len(cards) != n or cards.translate(None, CARD_BYTES):  # short, or a byte that is no card
            raise ValueError("not cards")
        hidden[game.group_of[p]].append(tuple(cards))
        at += 1 + n
    if at != len(payload) or set(counts) != set(hidden):
        raise ValueError("payload length")
    for name, piles in hidden.items():
        if [len(p) for p in piles] != counts[name]:
            raise ValueError("face-down counts differ")
    return hidden, seed


def redact_event(game: Game, after: State, event: Event) -> Event:
    """``event`` without the names of cards that lie face down after it: a move into a
    face-down pile shows no card, and a reshuffle (no destination) shows only the cards
    that ended face up."""
    face_down = game.face_down_piles
    if not face_down or not event.cards:
        return event
    if event.dst in face_down:
        return event._replace(cards=())
    if event.dst >= 0:
        return event
    hidden = Counter(c for p in face_down for c in after.piles[p])
    shown = []
    for c in event.cards:
        if hidden[c]:
            hidden[c] -= 1
        else:
            shown.append(c)
    return event._replace(cards=tuple(shown))


__all__ = [
    "KeyedDeals",
    "keeps_secrets",
    "readable_part",
    "redact_event",
    "seal",
    "signed_part",
    "unseal",
]
