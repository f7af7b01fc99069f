"""Every environment variable the service and its gunicorn config read, declared once.

Each :class:`Variable` names the variable, the text it stands for when unset, and the
parser that turns its text into a typed value; :data:`VARIABLES` lists them all, and the
README's "Configuration" table is checked against that list (tests/ops/test_settings.py).
Two readers build typed, frozen values from an environment mapping:

- :func:`read_settings`: the app's :class:`Settings`, which the app factory receives
  (``create_app(settings)``) and stores on the app; nothing in the HTTP layer reads the
  environment itself, and the solver only receives its :class:`SolverSettings`.
- :func:`read_gunicorn_settings`: gunicorn's own, for deploy/gunicorn.conf.py.

A value that cannot be read stops the start with a ``RuntimeError`` naming the variable:
a typo in a deployment fails loudly instead of serving with a default. A blank value
counts as unset, except where the empty text means something (``CORS_ALLOW_ORIGINS=``
turns CORS off).
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import Any, Generic, TypeVar

from service.solver.settings import SolverSettings, parse_cpu_list

T = TypeVar("T")

Parser = Callable[[str, str], T]
"""Reads the text of one variable; called with the variable's name (for the error) and its text."""

# The solver never runs longer than this, whatever SOLVER_MAX_SECONDS asks, so that a
# request always ends well inside gunicorn's worker timeout (deploy/gunicorn.conf.py checks).
SOLVER_HARD_CAP_SECONDS = 30.0


# --- parsers --------------------------------------------------------------------------------

def bad_value(name: str, raw: str, expected: str) -> RuntimeError:
    """The error of a variable whose text cannot be used; it names the variable."""
    return RuntimeError(f"environment variable {name} must be {expected}, not {raw!r}")


def whole_number(minimum: int) -> Parser[int]:
    """A parser of whole numbers of at least ``minimum`` (``_`` separators allowed).

    >>> whole_number(1)("TRIES", "5_000")
    5000
    >>> whole_number(1)("TRIES", "0")
    Traceback (most recent call last):
    RuntimeError: environment variable TRIES must be at least 1, not '0'
    """
    def parse(name: str, raw: str) -> int:
        try:
            value = int(raw.strip())
        except ValueError:
            raise bad_value(name, raw, "a whole number") from None
        if value < minimum:
            raise bad_value(name, raw, f"at least {minimum}")
        return value

    return parse


def seconds(*, zero_allowed: bool) -> Parser[float]:
    """A parser of a number of seconds: positive, or at least 0 if ``zero_allowed``.

    >>> seconds(zero_allowed=False)("BUDGET", "0.5")
    0.5
    >>> seconds(zero_allowed=False)("BUDGET", "soon")
    Traceback (most recent call last):
    RuntimeError: environment variable BUDGET must be a number of seconds, not 'soon'
    """
    def parse(name: str, raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            raise bad_value(name, raw, "a number of seconds") from None
        if not (value >= 0 if zero_allowed else value > 0):  # also refuses NaN
            raise bad_value(name, raw, "at least 0" if zero_allowed else "positive")
        return value

    return parse


def text(name: str, raw: str) -> str:
    """The text as it is (surrounding blanks removed)."""
    return raw.strip()


def lower_text(name: str, raw: str) -> str:
    """The text in lower case (log levels)."""
    return raw.strip().lower()


def path(name: str, raw: str) -> Path:
    """A file system path."""
    return Path(raw.strip())


def optional(parse: Parser[T]) -> Parser[T | None]:
    """``parse``, or None for an empty text (a variable whose default is "none")."""
    def parse_optional(name: str, raw: str) -> T | None:
        return None if raw.strip() == "" else parse(name, raw)

    return parse_optional


def origins(name: str, raw: str) -> frozenset[str] | None:
    """CORS origins: ``*`` (any), a comma-separated list, or empty (None: CORS off).

    >>> sorted(origins("CORS_ALLOW_ORIGINS", "https://a.example, https://b.example/"))
    ['https://a.example', 'https://b.example']
    >>> origins("CORS_ALLOW_ORIGINS", "*")
    frozenset({'*'})
    >>> origins("CORS_ALLOW_ORIGINS", " ") is None
    True
    """
    allowed = frozenset(o.strip().rstrip("/") for o in raw.split(",") if o.strip())
    return allowed or None


class StateProtection(StrEnum):
    """How the service protects the states clients hold (``STATE_PROTECTION``)."""

    OPEN = "open"  # states are trusted as sent (no signature)
    SIGNED = "signed"  # every answered state is signed; every state sent back is verified first
    SEALED = "sealed"  # signed, and face-down cards and future reshuffles travel encrypted; keyed deals


def protection(name: str, raw: str) -> StateProtection:
    """A state protection mode: ``open``, ``signed`` or ``sealed``.

    >>> protection("STATE_PROTECTION", " Signed ")
    <StateProtection.SIGNED: 'signed'>
    >>> protection("STATE_PROTECTION", "secret")
    Traceback (most recent call last):
    RuntimeError: environment variable STATE_PROTECTION must be open or signed or sealed, not 'secret'
    """
    try:
        return StateProtection(raw.strip().lower())
    except ValueError:
        raise bad_value(name, raw, " or ".join(StateProtection)) from None


@dataclass(frozen=True)
class StateKey:
    """One key of the state key ring: its id (sent with every signature) and its secret."""

    kid: str
    secret: bytes = field(repr=False)  # never shown: a settings object may end up in a log


KEY_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,32}")
MIN_SECRET_BYTES = 32
KEY_RING_FORMAT = "k2:<base64 secret>,k1:<base64 secret>"


def key_ring(name: str, raw: str) -> tuple[StateKey, ...]:
    """A key ring: ``id:secret`` pairs separated by commas (or line breaks), the first the
    signing key. Ids are 1-32 of ``A-Za-z0-9_-`` and unique; each secret is base64 (the
    URL-safe alphabet and missing padding are read too) of at least 32 bytes. An error
    names the variable and the key's place and id, never any of the text of a secret.

    >>> [k.kid for k in key_ring("STATE_KEYS", "k2:" + "A" * 44 + ", k1:" + "B" * 43)]
    ['k2', 'k1']
    >>> key_ring("STATE_KEYS", "k1:c2hvcnQ=")
    Traceback (most recent call last):
    RuntimeError: environment variable STATE_KEYS: key 1 ('k1') has a secret of 5 bytes; at least 32 random bytes are required
    """
    entries = [e.strip() for e in re.split(r"[,\n]", raw) if e.strip()]
    if not entries:
        raise RuntimeError(f"environment variable {name} holds no key; the format is {KEY_RING_FORMAT}")
    keys: list[StateKey] = []
    for place, entry in enumerate(entries, 1):
        kid, colon, encoded = (part.strip() for part in entry.partition(":"))
        if not colon or not KEY_ID_RE.fullmatch(kid):
            raise RuntimeError(
                f"environment variable {name}: key {place} is not <id>:<base64 secret> with an id of 1-32 "
                f"characters A-Z a-z 0-9 _ - (the format is {KEY_RING_FORMAT})"
            )
        if any(k.kid == kid for k in keys):
            raise RuntimeError(f"environment variable {name}: key id {kid!r} is listed twice")
        try:
            secret = base64.b64decode(
                encoded.translate(str.maketrans("-_", "+/")) + "=" * (-len(encoded) % 4), validate=True
            )
        except (binascii.Error, ValueError):
            raise RuntimeError(f"environment variable {name}: key {place} ({kid!r}) has a secret that is not base64") from None
        if len(secret) < MIN_SECRET_BYTES:
            raise RuntimeError(
                f"environment variable {name}: key {place} ({kid!r}) has a secret of {len(secret)} bytes; "
                f"at least {MIN_SECRET_BYTES} random bytes are required"
            )
        keys.append(StateKey(kid, secret))
    return tuple(keys)


def key_file_text(name: str, raw: str) -> str:
    """The text of the key file ``raw`` names (a mounted Kubernetes Secret); errors name
    the variable and the file, never any of its content."""
    file = Path(raw.strip())
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise RuntimeError(f"environment variable {name}: cannot read the key file {str(file)!r} ({type(e).__name__})") from None


def key_ring_file(name: str, raw: str) -> tuple[StateKey, ...]:
    """A key ring read from the file ``raw`` names: the format of :func:`key_ring`."""
    return key_ring(name, key_file_text(name, raw))


@dataclass(frozen=True)
class ResultKey:
    """One key of the result key ring: its id (the ``kid`` of every JWS it signs) and its
    32-byte Ed25519 private key (RFC 8032 seed)."""

    kid: str
    private: bytes = field(repr=False)  # never shown: a settings object may end up in a log


@dataclass(frozen=True)
class RetiredResultKey:
    """A retired result key: only its 32-byte Ed25519 public key, published in the JWKS
    until the end (UTC) of ``until`` so that results it signed still verify meanwhile."""

    kid: str
    public: bytes
    until: date


ED25519_KEY_BYTES = 32
RESULT_KEY_RING_FORMAT = "r2:<base64 of a 32-byte Ed25519 private key>,r1:<...>"
RETIRED_RESULT_KEYS_FORMAT = "r0:<base64url of the 32-byte public key>:<YYYY-MM-DD>"


def result_key_ring(name: str, raw: str) -> tuple[ResultKey, ...]:
    """A result key ring: the format of :func:`key_ring` (first key signs), each secret
    exactly a 32-byte Ed25519 private key. Errors never show any of a key's text.

    >>> [k.kid for k in result_key_ring("RESULT_KEYS", "r2:" + "A" * 43 + ",r1:" + "B" * 43)]
    ['r2', 'r1']
    >>> result_key_ring("RESULT_KEYS", "r1:" + "A" * 64)
    Traceback (most recent call last):
    RuntimeError: environment variable RESULT_KEYS: key 1 ('r1') is 48 bytes; an Ed25519 private key is exactly 32 bytes
    """
    keys = key_ring(name, raw)
    for place, key in enumerate(keys, 1):
        if len(key.secret) != ED25519_KEY_BYTES:
            raise RuntimeError(
                f"environment variable {name}: key {place} ({key.kid!r}) is {len(key.secret)} bytes; "
                f"an Ed25519 private key is exactly {ED25519_KEY_BYTES} bytes"
            )
    return tuple(ResultKey(k.kid, k.secret) for k in keys)


def result_key_ring_file(name: str, raw: str) -> tuple[ResultKey, ...]:
    """A result key ring read from the file ``raw`` names: the format of :func:`result_key_ring`."""
    return result_key_ring(name, key_file_text(name, raw))


def retired_result_keys(name: str, raw: str) -> tuple[RetiredResultKey, ...]:
    """Retired result keys: ``kid:<base64url public key>:<YYYY-MM-DD>`` entries separated by
    commas; empty: none.

    >>> [(k.kid, str(k.until)) for k in retired_result_keys("RESULT_KEYS_RETIRED", "r0:" + "A" * 43 + ":2026-12-31")]
    [('r0', '2026-12-31')]
    >>> retired_result_keys("RESULT_KEYS_RETIRED", "r0:" + "A" * 43 + ":31/12/2026")
    Traceback (most recent call last):
    RuntimeError: environment variable RESULT_KEYS_RETIRED: key 1 is not r0:<base64url of the 32-byte public key>:<YYYY-MM-DD>
    """
    keys: list[RetiredResultKey] = []
    for place, entry in enumerate((e.strip() for e in re.split(r"[,\n]", raw) if e.strip()), 1):
        parts = [p.strip() for p in entry.split(":")]
        wrong = RuntimeError(f"environment variable {name}: key {place} is not {RETIRED_RESULT_KEYS_FORMAT}")
        if len(parts) != 3 or not KEY_ID_RE.fullmatch(parts[0]) or not re.fullmatch(r"[A-Za-z0-9_-]{43}", parts[1]):
            raise wrong
        try:
            until = date.fromisoformat(parts[2]) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", parts[2]) else None
        except ValueError:
            until = None
        if until is None:
            raise wrong
        if any(k.kid == parts[0] for k in keys):
            raise RuntimeError(f"environment variable {name}: key id {parts[0]!r} is listed twice")
        public = base64.urlsafe_b64decode(parts[1] + "=")
        keys.append(RetiredResultKey(parts[0], public, until))
    return tuple(keys)


# --- the declaration ------------------------------------------------------------------------

@dataclass(frozen=True)
class Variable(Generic[T]):
    """One environment variable: its name, its default text and how its text is read."""

    name: str
    default: str  # the text that stands for the variable when it is unset (or blank)
    parse: Parser[T]
    # The README's words for a default that is not a value of its own ("available CPUs").
    shown_default: str | None = None
    # True where an empty text is a value (CORS off), not "unset".
    blank_is_a_value: bool = False

    def read(self, environ: Mapping[str, str]) -> T:
        """The variable's value in ``environ``, or its default's."""
        raw = environ.get(self.name)
        if raw is None or (raw.strip() == "" and not self.blank_is_a_value):
            raw = self.default
        return self.parse(self.name, raw)

    @property
    def documented_default(self) -> str:
        """The default as the README's table states it."""
        return self.shown_default if self.shown_default is not None else self.default


# The app: request size, proxies, CORS, static files, the ops endpoints.
MAX_BODY_BYTES = Variable("MAX_BODY_BYTES", str(64 * 1024), whole_number(1))
TRUSTED_PROXY_HOPS = Variable("TRUSTED_PROXY_HOPS", "0", whole_number(0))
CORS_ALLOW_ORIGINS = Variable("CORS_ALLOW_ORIGINS", "*", origins, blank_is_a_value=True)
CORS_MAX_AGE = Variable("CORS_MAX_AGE", "600", whole_number(0))
WEB_ASSET_MAX_AGE = Variable("WEB_ASSET_MAX_AGE", "60", whole_number(0))
# Both set by deploy/gunicorn.conf.py, for its workers, when the environment names none.
DRAIN_FILE = Variable(
    "DRAIN_FILE", "", optional(path), shown_default="none; $TMPDIR/patience-engine-<pid>/draining under gunicorn"
)
PROMETHEUS_MULTIPROC_DIR = Variable(
    "PROMETHEUS_MULTIPROC_DIR", "", optional(path),
    shown_default="none; $TMPDIR/patience-engine-<pid>/metrics under gunicorn",
)

# The solver's budgets (all capped by SOLVER_HARD_CAP_SECONDS through SOLVER_MAX_SECONDS).
SOLVER_MAX_SECONDS = Variable("SOLVER_MAX_SECONDS", "10", seconds(zero_allowed=False))
SOLVER_MAX_STATES = Variable("SOLVER_MAX_STATES", "1000000", whole_number(1))
HINT_SECONDS = Variable("HINT_SECONDS", "1", seconds(zero_allowed=False))
WINNABLE_DEAL_SECONDS = Variable("WINNABLE_DEAL_SECONDS", "2", seconds(zero_allowed=False))
WINNABLE_DEAL_TRIES = Variable("WINNABLE_DEAL_TRIES", "10", whole_number(1))
# Player-knowledge hints and solves (service/solver/sampling.py); the default is SolverSettings'.
PLAYER_KNOWLEDGE_SAMPLES = Variable("PLAYER_KNOWLEDGE_SAMPLES", str(SolverSettings.samples), whole_number(1))
# The pool of solver processes of each worker (service/solver/pool.py); 0 processes: searches
# run in the request thread (tests). Processes + queue stay below GUNICORN_THREADS.
SOLVER_PROCESSES = Variable("SOLVER_PROCESSES", "1", whole_number(0))
SOLVER_QUEUE = Variable("SOLVER_QUEUE", "1", whole_number(0))


def cpu_list(name: str, raw: str) -> frozenset[int]:
    """A Linux CPU list (``1``, ``2-3,6``: the format of ``taskset -c``); empty: none.

    >>> cpu_list("SOLVER_CPUS", "one")
    Traceback (most recent call last):
    RuntimeError: environment variable SOLVER_CPUS must be a CPU list such as 1 or 2-3,6, not 'one'
    """
    try:
        return parse_cpu_list(raw)
    except ValueError:
        raise bad_value(name, raw, "a CPU list such as 1 or 2-3,6") from None


# The CPUs of the solver processes; gunicorn's workers keep the others (deploy/gunicorn.conf.py).
SOLVER_CPUS = Variable("SOLVER_CPUS", "", cpu_list, shown_default="none")

# gunicorn (deploy/gunicorn.conf.py).
HOST = Variable("HOST", "127.0.0.1", text)
PORT = Variable("PORT", "8000", whole_number(0))
WEB_CONCURRENCY = Variable("WEB_CONCURRENCY", "", optional(whole_number(1)), shown_default="available CPUs")
GUNICORN_THREADS = Variable("GUNICORN_THREADS", "4", whole_number(1))
GUNICORN_TIMEOUT = Variable("GUNICORN_TIMEOUT", "60", whole_number(1))
# An in-flight solve may finish during a graceful stop.
GUNICORN_GRACEFUL_TIMEOUT = Variable("GUNICORN_GRACEFUL_TIMEOUT", str(int(SOLVER_HARD_CAP_SECONDS) + 5), whole_number(0))
GUNICORN_KEEPALIVE = Variable("GUNICORN_KEEPALIVE", "5", whole_number(0))
GUNICORN_MAX_REQUESTS = Variable("GUNICORN_MAX_REQUESTS", "10000", whole_number(0))
GUNICORN_MAX_REQUESTS_JITTER = Variable("GUNICORN_MAX_REQUESTS_JITTER", "1000", whole_number(0))
GUNICORN_DRAIN_SECONDS = Variable("GUNICORN_DRAIN_SECONDS", "5", seconds(zero_allowed=True))
LOG_LEVEL = Variable("LOG_LEVEL", "info", lower_text)
# The worker reads every request whole before a thread takes it (service/gunicorn_worker.py).
REQUEST_READ_SECONDS = Variable("REQUEST_READ_SECONDS", "5", seconds(zero_allowed=False))
GUNICORN_WORKER_CONNECTIONS = Variable("GUNICORN_WORKER_CONNECTIONS", "1000", whole_number(1))

# Signed states (service/http/state_signing.py): the mode, and the key ring from one of two places.
STATE_PROTECTION = Variable("STATE_PROTECTION", "open", protection)
STATE_KEYS = Variable("STATE_KEYS", "", optional(key_ring), shown_default="none")
STATE_KEYS_FILE = Variable("STATE_KEYS_FILE", "", optional(key_ring_file), shown_default="none")
# Keyed deals and daily challenges (service/http/state_sealing.py, service/http/daily.py): a ring
# of their own, so that rotating the state keys never renumbers a deal; required in sealed mode.
DEAL_KEYS = Variable("DEAL_KEYS", "", optional(key_ring), shown_default="none")
DEAL_KEYS_FILE = Variable("DEAL_KEYS_FILE", "", optional(key_ring_file), shown_default="none")
# How many past days GET /v1/games/{game}/daily answers (today always; no future day).
DAILY_PAST_DAYS = Variable("DAILY_PAST_DAYS", "366", whole_number(0))
# Result signing (service/http/result_signing.py): Ed25519 keys of the results' JWS, and
# the retired public keys the JWKS still lists.
RESULT_KEYS = Variable("RESULT_KEYS", "", optional(result_key_ring), shown_default="none")
RESULT_KEYS_FILE = Variable("RESULT_KEYS_FILE", "", optional(result_key_ring_file), shown_default="none")
RESULT_KEYS_RETIRED = Variable("RESULT_KEYS_RETIRED", "", retired_result_keys, shown_default="none")

VARIABLES: tuple[Variable[Any], ...] = (
    HOST, PORT, MAX_BODY_BYTES,
    SOLVER_MAX_SECONDS, SOLVER_MAX_STATES, HINT_SECONDS, WINNABLE_DEAL_SECONDS, WINNABLE_DEAL_TRIES,
    PLAYER_KNOWLEDGE_SAMPLES,
    SOLVER_PROCESSES, SOLVER_QUEUE, SOLVER_CPUS,
    WEB_CONCURRENCY, GUNICORN_THREADS, GUNICORN_TIMEOUT, GUNICORN_GRACEFUL_TIMEOUT, GUNICORN_KEEPALIVE,
    REQUEST_READ_SECONDS, GUNICORN_WORKER_CONNECTIONS,
    GUNICORN_MAX_REQUESTS, GUNICORN_MAX_REQUESTS_JITTER, GUNICORN_DRAIN_SECONDS, LOG_LEVEL,
    PROMETHEUS_MULTIPROC_DIR, DRAIN_FILE,
    CORS_ALLOW_ORIGINS, CORS_MAX_AGE, TRUSTED_PROXY_HOPS, WEB_ASSET_MAX_AGE,
    STATE_PROTECTION, STATE_KEYS, STATE_KEYS_FILE,
    DEAL_KEYS, DEAL_KEYS_FILE, DAILY_PAST_DAYS,
    RESULT_KEYS, RESULT_KEYS_FILE, RESULT_KEYS_RETIRED,
)
"""Every variable, in the order of the README's table."""


# --- the typed values -----------------------------------------------------------------------

@dataclass(frozen=True)
class HttpSettings:
    max_body_bytes: int  # larger request bodies are refused (413)
    trusted_proxy_hops: int  # proxies whose X-Forwarded-For/-Proto are believed (0: none)


@dataclass(frozen=True)
class CorsSettings:
    allow_origins: frozenset[str] | None  # None: no CORS headers at all
    max_age: int  # seconds a browser may cache a preflight answer


@dataclass(frozen=True)
class WebSettings:
    asset_max_age: int  # seconds browsers may cache the static files of /play and /docs


@dataclass(frozen=True)
class OpsSettings:
    drain_file: Path | None  # /readyz answers 503 while this file exists
    metrics_dir: Path | None  # prometheus_client's multiprocess directory (under gunicorn)


@dataclass(frozen=True)
class StateProtectionSettings:
    """The protection mode and its key ring: ``keys[0]`` signs, every listed key verifies.

    ``deal_keys``: the deal key ring (sealed mode): ``deal_keys[0]`` keys the deals and the
    daily challenges, apart from the state keys, so that rotating the state keys never
    renumbers a deal. Required in sealed mode; unused in the others."""

    mode: StateProtection = StateProtection.OPEN
    keys: tuple[StateKey, ...] = ()
    deal_keys: tuple[StateKey, ...] = ()

    def __post_init__(self) -> None:
        if self.mode is not StateProtection.OPEN and not self.keys:
            raise RuntimeError(
                f"{STATE_PROTECTION.name}={self.mode} needs a key ring: set {STATE_KEYS.name} or "
                f"{STATE_KEYS_FILE.name} ({KEY_RING_FORMAT}, secrets of at least {MIN_SECRET_BYTES} random bytes)"
            )
        if self.mode is StateProtection.SEALED and not self.deal_keys:
            raise RuntimeError(
                f"{STATE_PROTECTION.name}={self.mode} needs a deal key ring: set {DEAL_KEYS.name} or "
                f"{DEAL_KEYS_FILE.name} ({KEY_RING_FORMAT}); to keep every deal dealt so far, set it to the "
                f"first entry of {STATE_KEYS.name} as it was"
            )


@dataclass(frozen=True)
class ResultSigningSettings:
    """The result key ring (``keys[0]`` signs each result's JWS) and the retired public
    keys the JWKS still lists; both empty in open mode."""

    keys: tuple[ResultKey, ...] = ()
    retired: tuple[RetiredResultKey, ...] = ()


@dataclass(frozen=True)
class Settings:
    """Everything the app is configured with; one value, passed to ``create_app``."""

    http: HttpSettings
    cors: CorsSettings
    web: WebSettings
    ops: OpsSettings
    solver: SolverSettings
    state: StateProtectionSettings = StateProtectionSettings()
    daily_past_days: int = int(DAILY_PAST_DAYS.default)  # past days GET .../daily answers
    results: ResultSigningSettings = ResultSigningSettings()


@dataclass(frozen=True)
class GunicornSettings:
    host: str
    port: int
    workers: int | None  # None: one per available CPU
    threads: int
    timeout: int
    graceful_timeout: int
    keepalive: int
    max_requests: int
    max_requests_jitter: int
    drain_seconds: float
    log_level: str
    # The worker (service/gunicorn_worker.py): a request not whole this long after its start
    # is refused (408); most connections one worker holds.
    request_read_seconds: float = float(REQUEST_READ_SECONDS.default)
    worker_connections: int = int(GUNICORN_WORKER_CONNECTIONS.default)


def check_searches_leave_threads(solver: SolverSettings, threads: int) -> None:
    """Refuse a pool whose searches (running and queued, each holding a request thread)
    could take every one of a worker's ``threads``: play must always find one free."""
    held = max(solver.processes, 1) + solver.queue
    if held >= threads:
        raise RuntimeError(
            f"{SOLVER_PROCESSES.name}={solver.processes} + {SOLVER_QUEUE.name}={solver.queue} must stay below "
            f"{GUNICORN_THREADS.name}={threads}, so that play always has a thread"
        )


def read_solver_settings(environ: Mapping[str, str]) -> SolverSettings:
    """The solver's budgets; every time budget is capped by the largest one."""
    max_seconds = min(SOLVER_MAX_SECONDS.read(environ), SOLVER_HARD_CAP_SECONDS)
    return SolverSettings(
        max_seconds=max_seconds,
        max_states=SOLVER_MAX_STATES.read(environ),
        hint_seconds=min(HINT_SECONDS.read(environ), max_seconds),
        winnable_deal_seconds=min(WINNABLE_DEAL_SECONDS.read(environ), max_seconds),
        winnable_deal_tries=WINNABLE_DEAL_TRIES.read(environ),
        processes=SOLVER_PROCESSES.read(environ),
        queue=SOLVER_QUEUE.read(environ),
        cpus=SOLVER_CPUS.read(environ),
        samples=PLAYER_KNOWLEDGE_SAMPLES.read(environ),
    )


def read_state_protection(environ: Mapping[str, str]) -> StateProtectionSettings:
    """The protection mode and its key rings, from ``STATE_KEYS`` or ``STATE_KEYS_FILE`` and
    ``DEAL_KEYS`` or ``DEAL_KEYS_FILE`` (never both of a pair); signed mode without a key,
    or sealed mode without a deal key, stops the start."""
    mode = STATE_PROTECTION.read(environ)
    inline, from_file = STATE_KEYS.read(environ), STATE_KEYS_FILE.read(environ)
    if inline is not None and from_file is not None:
        raise RuntimeError(f"set {STATE_KEYS.name} or {STATE_KEYS_FILE.name}, not both")
    deal_inline, deal_file = DEAL_KEYS.read(environ), DEAL_KEYS_FILE.read(environ)
    if deal_inline is not None and deal_file is not None:
        raise RuntimeError(f"set {DEAL_KEYS.name} or {DEAL_KEYS_FILE.name}, not both")
    return StateProtectionSettings(mode=mode, keys=inline or from_file or (), deal_keys=deal_inline or deal_file or ())


def read_result_signing(environ: Mapping[str, str], mode: StateProtection) -> ResultSigningSettings:
    """The result key ring from ``RESULT_KEYS`` or ``RESULT_KEYS_FILE`` (never both), required
    in the signed and sealed modes, and the retired keys; key ids unique over both."""
    inline, from_file = RESULT_KEYS.read(environ), RESULT_KEYS_FILE.read(environ)
    if inline is not None and from_file is not None:
        raise RuntimeError(f"set {RESULT_KEYS.name} or {RESULT_KEYS_FILE.name}, not both")
    keys = inline or from_file or ()
    if mode is not StateProtection.OPEN and not keys:
        raise RuntimeError(
            f"{STATE_PROTECTION.name}={mode} needs a result key ring: set {RESULT_KEYS.name} or "
            f"{RESULT_KEYS_FILE.name} ({RESULT_KEY_RING_FORMAT})"
        )
    retired = RESULT_KEYS_RETIRED.read(environ)
    clash = {k.kid for k in keys} & {k.kid for k in retired}
    if clash:
        raise RuntimeError(f"{RESULT_KEYS_RETIRED.name} lists key ids of the current ring: {sorted(clash)}")
    return ResultSigningSettings(keys=keys, retired=retired)


def read_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """The app's settings from ``environ`` (default: this process's environment)."""
    env = os.environ if environ is None else environ
    state = read_state_protection(env)
    return Settings(
        http=HttpSettings(max_body_bytes=MAX_BODY_BYTES.read(env), trusted_proxy_hops=TRUSTED_PROXY_HOPS.read(env)),
        cors=CorsSettings(allow_origins=CORS_ALLOW_ORIGINS.read(env), max_age=CORS_MAX_AGE.read(env)),
        web=WebSettings(asset_max_age=WEB_ASSET_MAX_AGE.read(env)),
        ops=OpsSettings(drain_file=DRAIN_FILE.read(env), metrics_dir=PROMETHEUS_MULTIPROC_DIR.read(env)),
        solver=read_solver_settings(env),
        daily_past_days=DAILY_PAST_DAYS.read(env),
        state=state,
        results=read_result_signing(env, state.mode),
    )


def read_gunicorn_settings(environ: Mapping[str, str] | None = None) -> GunicornSettings:
    """gunicorn's settings from ``environ`` (default: this process's environment)."""
    env = os.environ if environ is None else environ
    return GunicornSettings(
        host=HOST.read(env),
        port=PORT.read(env),
        workers=WEB_CONCURRENCY.read(env),
        threads=GUNICORN_THREADS.read(env),
        timeout=GUNICORN_TIMEOUT.read(env),
        graceful_timeout=GUNICORN_GRACEFUL_TIMEOUT.read(env),
        keepalive=GUNICORN_KEEPALIVE.read(env),
        max_requests=GUNICORN_MAX_REQUESTS.read(env),
        max_requests_jitter=GUNICORN_MAX_REQUESTS_JITTER.read(env),
        drain_seconds=GUNICORN_DRAIN_SECONDS.read(env),
        log_level=LOG_LEVEL.read(env),
        request_read_seconds=REQUEST_READ_SECONDS.read(env),
        worker_connections=GUNICORN_WORKER_CONNECTIONS.read(env),
    )
