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

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Collection, Mapping
from typing import Any, Final

from service.settings import KEY_ID_RE, StateKey, StateProtection, StateProtectionSettings

from .problems import ApiError, ProblemCode
from .wire import format_deal

# What each protected mode's MACs cover starts with its own domain string.
DOMAINS: Final[dict[StateProtection, bytes]] = {
    StateProtection.SIGNED: b"patience-engine state v1\n",
    StateProtection.SEALED: b"patience-engine sealed state v1\n",
}
SIGNATURE_FIELD: Final = "signature"
MAC_BYTES: Final = hashlib.sha256().digest_size
MAC_CHARS: Final = 43  # base64url of 32 bytes, without its "=" padding
MAC_RE: Final = re.compile(r"[A-Za-z0-9_-]{43}")


def canonical_json(value: Mapping[str, Any] | list[Any]) -> bytes:
    """``value`` as the one JSON text every MAC of this service covers: keys sorted, no
    spaces, ASCII only."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


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


def keyed_mac(key: StateKey, data: bytes) -> str:
    """HMAC-SHA256 of ``data`` under ``key``, base64url without padding (43 characters)."""
    digest = hmac.digest(key.secret, data, "sha256")
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def state_mac(key: StateKey, state: Mapping[str, Any], domain: bytes) -> str:
    """The MAC of ``state`` under ``key``."""
    return keyed_mac(key, canonical_state(state, domain))


def protects(protection: StateProtectionSettings) -> bool:
    """Whether states are signed and checked (every mode but open)."""
    return protection.mode is not StateProtection.OPEN


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
    key = next((k for k in protection.keys if k.kid == kid), None)
    if key is None:
        raise ApiError(
            ProblemCode.STATE_KEY_UNKNOWN,
            f"the state was signed with key {kid!r}, which this server no longer lists: deal again",
            [(f"{where}/signature/kid", "not a key of this server")],
        )
    if signed is None:
        signed = canonical_state(state, DOMAINS[protection.mode])
    if not hmac.compare_digest(keyed_mac(key, signed).encode("ascii"), mac.encode("ascii")):
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
