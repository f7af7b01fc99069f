"""What a sealed server's answer may show: only what a player at the table sees.

:func:`face_down_leaks` reads one answer (any endpoint's, problems included) against the
state it answers about, from the outside, as a player's browser would see it, and lists
every way it shows more than the player may know:

- a state whose ``piles`` list a face-down group (a stock) instead of its ``face_down``
  counts, or that lacks its sealed part, in a game that keeps secrets
  (:func:`.state_sealing.keeps_secrets`); in one that keeps none (the Penguin family,
  Binary Star), a state that has a ``face_down`` or a ``sealed`` part all the same (it
  has nothing to put there: its states are plain signed states);
- a card name that no face-up card accounts for. Cards are counted as a multiset (the
  two-deck games hold two of each card, so naming a card twice when one copy lies face
  up and the other face down tells where the other is), part by part: the answer
  state's piles, each event, and the rest of the body (reasons, details, problems);
- the deal's keyed seed, which would let the player rebuild the stock and every later
  reshuffle.

Card names are read from every string of the body except ``sealed`` and ``signature``
(opaque base64url, where two letters can look like a card by chance), as whole words,
in the canonical form answers write (``TH``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from service.engine.registry import get_game
from service.http.state_sealing import keeps_secrets
from service.http.state_signing import SIGNATURE_FIELD
from service.http.wire import FACE_DOWN_FIELD, SEALED_FIELD

CARD_NAME = re.compile(r"(?<![0-9A-Za-z])[A2-9TJQK][CDHS](?![0-9A-Za-z])")
OPAQUE_FIELDS = frozenset({SEALED_FIELD, SIGNATURE_FIELD})


def face_down_groups(game_id: str) -> set[str]:
    """The pile groups of a game that lie face down (``face_down`` in its layout)."""
    return {g.name for g in get_game(game_id).groups if g.face_down}


def face_up_cards(state: dict[str, Any]) -> Counter[str]:
    """Every card a (sealed) state shows, counted."""
    return Counter(c for piles in state["piles"].values() for pile in piles for c in pile)


def card_names(value: Any) -> Iterator[str]:
    """The card names written anywhere in a JSON value, opaque fields left out."""
    if isinstance(value, str):
        yield from CARD_NAME.findall(value)
    elif isinstance(value, list):
        for item in value:
            yield from card_names(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in OPAQUE_FIELDS:
                yield from card_names(item)


def state_leaks(game_id: str, state: dict[str, Any]) -> list[str]:
    """How a state an answer carries shows a face-down pile, or is not sealed as its game
    needs (a sealed part and ``face_down`` counts exactly where the game keeps secrets)."""
    hidden = face_down_groups(game_id)
    leaks = [f"piles list the face-down group {g!r}" for g in hidden & set(state["piles"])]
    if not keeps_secrets(game_id):
        leaks += [f"a game that keeps no secret has a {f!r} part" for f in (FACE_DOWN_FIELD, SEALED_FIELD) if f in state]
        return leaks
    counts = state.get(FACE_DOWN_FIELD)
    if not isinstance(counts, dict) or set(counts) != hidden:
        leaks.append(f"face_down counts {counts!r} are not one per face-down group {sorted(hidden)}")
    if not state.get(SEALED_FIELD):
        leaks.append("the state has no sealed part")
    return leaks


def names_beyond(part: str, names: Counter[str], face_up: Counter[str]) -> list[str]:
    """The card names of one part of an answer that its face-up cards do not account for."""
    extra = names - face_up
    return [f"{part} names {sorted(extra.elements())}, more than lie face up"] if extra else []


def face_down_leaks(game_id: str, answer: Any, asked_about: dict[str, Any], seed: int) -> list[str]:
    """Every way ``answer`` (a JSON body) shows what a player may not see. ``asked_about``
    is the sealed state the request sent (or the one a deal answers); ``seed`` is the
    deal's keyed seed. An answer that carries a state is read against that state's face-up
    cards, any other against ``asked_about``'s. Empty when nothing leaks."""
    leaks = []
    if str(seed) in json.dumps(answer):
        leaks.append(f"the deal's seed {seed} appears")
    if not isinstance(answer, dict):
        return leaks
    state = answer.get("state")
    if isinstance(state, dict):
        leaks += state_leaks(game_id, state)
    face_up = face_up_cards(state if isinstance(state, dict) else asked_about)
    events = answer.get("events") or []
    for i, event in enumerate(events):
        leaks += names_beyond(f"event {i}", Counter(event.get("cards", [])), face_up)
    rest = {k: v for k, v in answer.items() if k != "events"}
    if isinstance(state, dict):
        rest["state"] = {k: v for k, v in state.items() if k != "piles"}
    leaks += names_beyond("the rest of the answer", Counter(card_names(rest)), face_up)
    return leaks


__all__ = ["card_names", "face_down_groups", "face_down_leaks", "face_up_cards", "state_leaks"]
