"""The provider-verification app of the consumer-driven contracts (Pact; issue 29). Test only.

:func:`create_verification_app` builds a WSGI app that gunicorn serves as `make run` serves
``service.wsgi:app`` (``make pact-verify``: ``gunicorn -c deploy/gunicorn.conf.py
contracts.provider.wsgi:app``, an entry point outside ``service/``, so not in the image). It holds the service's own app
(:func:`service.http.create_app`, unchanged) once per protection mode, and adds one path,
``POST /_pact/provider-states`` (:data:`STATE_CHANGE_PATH`), Pact's state-change endpoint:
each provider state names the mode its interaction is played in and sets up a position
in that mode, and the endpoint answers the values Pact injects into the interaction's
request (``fromProviderState`` / the ``ProviderState`` generator: ``${state}``,
``${legal_move}``...), so that no signature or sealed part is ever frozen in a pact.

Why it cannot leak into production:

- it is its own module, imported by no other module of the service, and its entry point
  (``contracts/provider/wsgi.py``) is not even copied into the image, whose command is
  ``service.wsgi:app`` (``tests/pact/test_provider_app.py`` reads ``deploy/Dockerfile``);
- it refuses to start unless given a test key ring (``PACT_TEST_STATE_KEYS_FILE``) whose
  every key id starts with ``pact-test-``, and refuses to start when ``STATE_KEYS``,
  ``STATE_KEYS_FILE``, ``STATE_PROTECTION``, ``DEAL_KEYS`` or ``DEAL_KEYS_FILE`` is set (or
  ``RESULT_KEYS`` or ``RESULT_KEYS_FILE``: its apps sign no result): it never reads production
  keys (sealed mode keys its deals with the test ring's first key);
- the mode is one value per process, switched by each state change, so it needs
  ``WEB_CONCURRENCY=1`` (the verifier plays one interaction at a time) and refuses other
  counts.

The states (:data:`PROVIDER_STATES` lists their forms; the README's contract-testing
section explains them):

- ``the engine in <mode> mode``: only the mode (``open``, ``signed``, ``sealed``);
- ``a [signed |sealed ]<Game name> deal <N>``: deal N of the game dealt in that mode
  (open when no mode is named);
- ``a [signed |sealed ]<Game name> game after <N> moves``: deal 1, then N moves, each the
  first move :func:`first_card_move` picks (no autoplay);
- ``a [signed |sealed ]won game``: Penguin deal 1 played to ``won`` along the solver's line;
- ``a state signed with a retired key``: signed mode, Penguin deal 1 signed by the ring's
  second key (a retired key: it still verifies, it no longer signs);
- ``a state signed with a removed key``: signed mode, Penguin deal 1 signed by a key the
  ring no longer lists (answered 403 ``state-key-unknown``).

Each answers the values of :class:`StateValues` it has (``mode``, ``game``, ``deal``,
``state``, ``status``, ``legal_move``, ``illegal_move``, ``moves``, and for a won game
``state_before_last_move`` and ``last_move``). A teardown puts the mode back to open, so
an interaction without a state is played in open mode.
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
import threading
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from typing import Any, Final, TypedDict

from flask import Flask
from werkzeug.wrappers import Request, Response

from service.engine.registry import GAME_CLASSES
from service.http import create_app
from service.settings import (
    DEAL_KEYS,
    DEAL_KEYS_FILE,
    RESULT_KEYS,
    RESULT_KEYS_FILE,
    STATE_KEYS,
    STATE_KEYS_FILE,
    STATE_PROTECTION,
    WEB_CONCURRENCY,
    StateKey,
    StateProtection,
    StateProtectionSettings,
    Variable,
    key_ring_file,
    optional,
    read_settings,
)

# The test key ring's file: `id:base64 secret` lines, the first key signs (the format of
# STATE_KEYS). make pact-verify names contracts/provider/test-only-state-keys.txt.
PACT_TEST_STATE_KEYS_FILE: Final = Variable(
    "PACT_TEST_STATE_KEYS_FILE", "", optional(key_ring_file), shown_default="none (required)"
)
TEST_KEY_PREFIX: Final = "pact-test-"  # every key id of a test ring starts so
REMOVED_KEY_ID: Final = TEST_KEY_PREFIX + "removed"  # made up at each start, never listed
STATE_CHANGE_PATH: Final = "/_pact/provider-states"
PRODUCTION_KEY_VARIABLES: Final = (
    STATE_KEYS, STATE_KEYS_FILE, STATE_PROTECTION, DEAL_KEYS, DEAL_KEYS_FILE, RESULT_KEYS, RESULT_KEYS_FILE,
)

DEFAULT_GAME: Final = "penguin"
DEFAULT_DEAL: Final = 1
MAX_SETUP_MOVES: Final = 200  # "a ... game after N moves": N at most this

MODES: Final = {m.value: m for m in StateProtection}
GAME_BY_NAME: Final = {cls.name: game_id for game_id, cls in GAME_CLASSES.items()}
_MODE = r"(?:(?P<mode>signed|sealed) )?"
POSITION_STATE: Final = re.compile(
    rf"a {_MODE}(?P<game>[A-Z][A-Za-z ]*?) (?:deal (?P<deal>[0-9]{{1,20}})|game after (?P<moves>[0-9]{{1,3}}) moves?)"
)
WON_STATE: Final = re.compile(rf"a {_MODE}won game")
MODE_STATE: Final = re.compile(r"the engine in (?P<mode>open|signed|sealed) mode")
RETIRED_KEY_STATE: Final = "a state signed with a retired key"
REMOVED_KEY_STATE: Final = "a state signed with a removed key"

PROVIDER_STATES: Final = (
    "the engine in <open|signed|sealed> mode",
    "a [signed |sealed ]<Game name> deal <N>",
    "a [signed |sealed ]<Game name> game after <N> moves",
    "a [signed |sealed ]won game",
    RETIRED_KEY_STATE,
    REMOVED_KEY_STATE,
)
"""The forms of the provider states, as the README lists them."""


class StateValues(TypedDict, total=False):
    """What a state change answers: the values a pact's ``${...}`` expressions read."""

    mode: str  # the protection mode the interaction is played in
    game: str  # the game's id (the path's {game_id})
    deal: str  # the deal number, a decimal string
    state: dict[str, Any]  # the state to send, as the mode's answers carry it
    status: str
    legal_move: dict[str, Any]  # a listed legal move (first_card_move)
    illegal_move: dict[str, Any]  # a card move the rules refuse (409 illegal-move)
    moves: list[dict[str, Any]]  # the moves played from the deal to this state
    state_before_last_move: dict[str, Any]  # a won game: the state one move before
    last_move: dict[str, Any]  # a won game: the winning move


class StateSetupError(Exception):
    """A provider state this app does not know or cannot set up (answered 400)."""


def verification_key_ring(env: Mapping[str, str]) -> tuple[StateKey, ...]:
    """The test key ring from ``PACT_TEST_STATE_KEYS_FILE``: at least two keys (one that
    signs, one retired), every id starting with :data:`TEST_KEY_PREFIX`. RuntimeError,
    before anything is read, when a production key variable is set."""
    for variable in PRODUCTION_KEY_VARIABLES:  # only whether each is set: never parsed, never kept
        if env.get(variable.name, "").strip():
            raise RuntimeError(
                f"the Pact verification app never reads production keys: unset {variable.name} "
                f"(each provider state chooses the mode; the keys come from {PACT_TEST_STATE_KEYS_FILE.name})"
            )
    keys = PACT_TEST_STATE_KEYS_FILE.read(env)
    if keys is None:
        raise RuntimeError(
            f"the Pact verification app needs a test key ring: set {PACT_TEST_STATE_KEYS_FILE.name} "
            "(make pact-verify names contracts/provider/test-only-state-keys.txt)"
        )
    if len(keys) < 2:
        raise RuntimeError(f"{PACT_TEST_STATE_KEYS_FILE.name}: the test ring needs two keys (one signs, one is retired)")
    not_test = [k.kid for k in keys if not k.kid.startswith(TEST_KEY_PREFIX)]
    if not_test:
        raise RuntimeError(
            f"{PACT_TEST_STATE_KEYS_FILE.name}: key ids {not_test} do not start with {TEST_KEY_PREFIX!r}; "
            "only a test ring may be given to the verification app"
        )
    return keys


def first_card_move(legal_moves: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first listed card move (``action`` ``move``), else the first listed move: the move
    a state hands a pact, and the one each of a game's set-up moves plays."""
    return next((m for m in legal_moves if m.get("action") == "move"), legal_moves[0] if legal_moves else None)


def pile_names(state: Mapping[str, Any]) -> list[str]:
    """``group:index`` of every readable pile of ``state``, in its order."""
    return [f"{group}:{i}" for group, piles in state.get("piles", {}).items() for i in range(len(piles))]


class ModeApp:
    """The service's app in one protection mode, and the requests a state change makes to it
    to set up a position (through the public API, so the position is signed and sealed as
    the mode signs and seals every answer)."""

    def __init__(self, app: Flask) -> None:
        self.app = app

    def post(self, path: str, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        """POST ``body`` as JSON to the app; its status and JSON answer."""
        answer = self.app.test_client().post(path, json=body)
        data: dict[str, Any] = answer.get_json(silent=True) or {}
        return answer.status_code, data

    def expect(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """The 200 answer of ``path``; StateSetupError otherwise."""
        status, data = self.post(path, body)
        if status != 200:
            raise StateSetupError(f"POST {path} answered {status} {data.get('code')}: {data.get('detail')}")
        return data

    def position(self, game: str, deal: int, moves: int) -> StateValues:
        """Deal ``deal`` of ``game``, then ``moves`` moves (:func:`first_card_move` each)."""
        answer = self.expect(f"/v1/games/{game}/deals", {"deal": str(deal)})
        played: list[dict[str, Any]] = []
        for _ in range(moves):
            move = first_card_move(answer["legal_moves"])
            if move is None:
                raise StateSetupError(f"{game} deal {deal} has no legal move after {len(played)} moves")
            answer = self.expect(f"/v1/games/{game}/moves", {"state": answer["state"], "move": move})
            played.append(move)
        values = StateValues(game=game, deal=str(deal), state=answer["state"], status=answer["status"], moves=played)
        legal = first_card_move(answer["legal_moves"])
        if legal is not None:
            values["legal_move"] = legal
        illegal = self.illegal_move(game, answer["state"], answer["legal_moves"])
        if illegal is not None:
            values["illegal_move"] = illegal
        return values

    def illegal_move(self, game: str, state: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The first one-card move between two readable piles (tableau piles first, then in
        the state's order) that is not listed and that the app refuses as illegal (409);
        None if there is none."""
        names = sorted(pile_names(state), key=lambda name: not name.startswith("tableau:"))  # stable: tableau first
        for source in names:
            for target in names:
                move = {"action": "move", "from": source, "to": target, "count": 1}
                if source == target or move in legal:
                    continue
                if self.post(f"/v1/games/{game}/moves", {"state": state, "move": move})[0] == 409:
                    return move
        return None

    def won(self) -> StateValues:
        """Penguin deal 1 played to won along the solver's line."""
        dealt = self.position(DEFAULT_GAME, DEFAULT_DEAL, 0)
        line = self.expect(f"/v1/games/{DEFAULT_GAME}/solve", {"state": dealt["state"]})
        if line.get("result") != "solved" or not line.get("moves"):
            raise StateSetupError(f"the solver did not solve {DEFAULT_GAME} deal {DEFAULT_DEAL}: {line.get('result')}")
        moves: list[dict[str, Any]] = line["moves"]
        before = self.expect(f"/v1/games/{DEFAULT_GAME}/replays", {"deal": str(DEFAULT_DEAL), "moves": moves[:-1]})
        after = self.expect(f"/v1/games/{DEFAULT_GAME}/moves", {"state": before["state"], "move": moves[-1]})
        if after["status"] != "won":
            raise StateSetupError(f"the solver's line of {DEFAULT_GAME} deal {DEFAULT_DEAL} ended {after['status']}")
        return StateValues(
            game=DEFAULT_GAME, deal=str(DEFAULT_DEAL), state=after["state"], status=after["status"], moves=moves,
            state_before_last_move=before["state"], last_move=moves[-1],
        )


class VerificationApp:
    """The WSGI app: the state-change endpoint, and every other request passed to the
    service's app in the mode of the last provider state set up (open after a teardown)."""

    def __init__(self, keys: tuple[StateKey, ...], build: Callable[[StateProtectionSettings], Flask]) -> None:
        self.keys = keys
        self._build = build
        self.apps = {mode: ModeApp(build(self.protection(mode, keys))) for mode in StateProtection}
        self.mode = StateProtection.OPEN
        self._lock = threading.Lock()  # one state change at a time

    @staticmethod
    def protection(mode: StateProtection, keys: tuple[StateKey, ...]) -> StateProtectionSettings:
        """The settings of ``mode`` under the test ring; sealed mode's deals keyed by the
        ring's first key (DEAL_KEYS set as the documented migration sets it)."""
        if mode is StateProtection.OPEN:
            return StateProtectionSettings(mode)
        return StateProtectionSettings(mode, keys, keys[:1] if mode is StateProtection.SEALED else ())

    @cached_property
    def retired_signer(self) -> ModeApp:
        """Signed mode whose signing key is the test ring's second (retired) key."""
        return ModeApp(self._build(self.protection(StateProtection.SIGNED, self.keys[1:])))

    @cached_property
    def removed_signer(self) -> ModeApp:
        """Signed mode under a key made up now, which the ring does not list."""
        removed = StateKey(REMOVED_KEY_ID, secrets.token_bytes(32))
        return ModeApp(self._build(self.protection(StateProtection.SIGNED, (removed,))))

    def __call__(self, request_env: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        """WSGI: ``request_env`` is the request's WSGI environ."""
        if request_env.get("PATH_INFO") == STATE_CHANGE_PATH:
            return self.state_change(Request(request_env))(request_env, start_response)
        app: Flask = self.apps[self.mode].app
        return app(request_env, start_response)

    def state_change(self, request: Request) -> Response:
        """Pact's state change: ``{"state", "params", "action"}`` in a JSON body (or the query)."""
        if request.method != "POST":
            return problem(405, "method-not-allowed", f"{STATE_CHANGE_PATH} takes POST")
        data = request.get_json(silent=True) if request.data else dict(request.args)
        if not isinstance(data, dict) or not isinstance(data.get("state"), str):
            return problem(400, "invalid-body", 'a state change is {"state": "<name>", "action": "setup"|"teardown"}')
        with self._lock:
            if data.get("action") == "teardown":
                self.mode = StateProtection.OPEN
                return json_response(200, {})
            try:
                mode, values = self.set_up(data["state"])
            except StateSetupError as error:
                return problem(400, "unknown-provider-state", str(error))
            self.mode = mode
        return json_response(200, {"mode": mode.value, **values})

    def set_up(self, name: str) -> tuple[StateProtection, StateValues]:
        """The mode and values of the provider state ``name``; the verifier names none (an
        empty name) for an interaction given no state: open mode."""
        if not name:
            return StateProtection.OPEN, StateValues()
        if found := MODE_STATE.fullmatch(name):
            return MODES[found["mode"]], StateValues()
        if found := POSITION_STATE.fullmatch(name):
            mode = MODES[found["mode"] or "open"]
            game = GAME_BY_NAME.get(found["game"])
            if game is None:
                raise StateSetupError(f"no game named {found['game']!r}; games: {', '.join(GAME_BY_NAME)}")
            moves = int(found["moves"] or 0)
            if moves > MAX_SETUP_MOVES:
                raise StateSetupError(f"at most {MAX_SETUP_MOVES} set-up moves")
            deal = int(found["deal"]) if found["deal"] is not None else DEFAULT_DEAL
            return mode, self.apps[mode].position(game, deal, moves)
        if found := WON_STATE.fullmatch(name):
            mode = MODES[found["mode"] or "open"]
            return mode, self.apps[mode].won()
        if name == RETIRED_KEY_STATE:
            return StateProtection.SIGNED, self.retired_signer.position(DEFAULT_GAME, DEFAULT_DEAL, 0)
        if name == REMOVED_KEY_STATE:
            return StateProtection.SIGNED, self.removed_signer.position(DEFAULT_GAME, DEFAULT_DEAL, 0)
        raise StateSetupError(f"unknown provider state {name!r}; the states: {'; '.join(PROVIDER_STATES)}")


def json_response(status: int, body: Mapping[str, Any], mimetype: str = "application/json") -> Response:
    return Response(json.dumps(body), status=status, mimetype=mimetype)


def problem(status: int, code: str, detail: str) -> Response:
    """A problem+json answer of the state-change endpoint (the verifier shows its detail)."""
    body = {"type": "about:blank", "title": "Provider state refused", "status": status, "detail": detail, "code": code}
    return json_response(status, body, "application/problem+json")


def create_verification_app(env: Mapping[str, str]) -> VerificationApp:
    """The verification app, configured by the environment ``env`` as the service is, less
    the protection mode and keys (see the module's docstring). The environment is passed
    in (by ``contracts/provider/wsgi.py``): only ``service.settings`` reads the process's."""
    keys = verification_key_ring(env)
    if WEB_CONCURRENCY.read(env) != 1:
        raise RuntimeError(
            f"the Pact verification app switches its mode per provider state in one process: set {WEB_CONCURRENCY.name}=1"
        )
    base = read_settings(env)

    def build(protection: StateProtectionSettings) -> Flask:
        return create_app(dataclasses.replace(base, state=protection))

    return VerificationApp(keys, build)
