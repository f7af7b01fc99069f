"""The settings the tests build their apps with: the defaults, with small solver budgets
so that no generated request can run a long search, and searches in the request thread
(``SOLVER_PROCESSES=0``): an answer then never depends on a solver process's start-up
or on the machine's load (502/503 from the pool would make the stateful contract tests'
data differ between runs). The pool has tests of its own (tests/solver/test_pool.py,
tests/contract/test_solver_busy.py, and the real gunicorn in tests/ops)."""

from __future__ import annotations

import base64

from service.settings import Settings, read_settings

SMALL_SOLVER_BUDGETS = {
    "SOLVER_MAX_SECONDS": "2",
    "SOLVER_MAX_STATES": "200000",
    "HINT_SECONDS": "0.5",
    "WINNABLE_DEAL_SECONDS": "1",
    "WINNABLE_DEAL_TRIES": "3",
    "SOLVER_PROCESSES": "0",
}


def settings_for_tests(**environ: str) -> Settings:
    """The test settings, with ``environ`` (variable name -> text, as in the environment)
    on top; the process's own environment plays no part. A signed or sealed mode that
    names no result key ring gets the tests' (:data:`TEST_RESULT_KEYS`), which those
    modes require."""
    protected = environ.get("STATE_PROTECTION", "open").strip().lower() not in ("", "open")
    if protected and "RESULT_KEYS" not in environ and "RESULT_KEYS_FILE" not in environ:
        environ = {**environ, "RESULT_KEYS": TEST_RESULT_KEYS}
    return read_settings({**SMALL_SOLVER_BUDGETS, **environ})


def key_for_tests(kid: str) -> str:
    """``kid:<base64 secret>`` of a fixed 32-byte test secret per key id (never a real one)."""
    secret = (kid.encode() * 32)[:32]
    return f"{kid}:{base64.b64encode(secret).decode()}"


# The signed-mode test ring: k2 signs, k1 (older) still verifies.
TEST_STATE_KEYS = f"{key_for_tests('k2')},{key_for_tests('k1')}"


def result_key_for_tests(kid: str) -> str:
    """``kid:<base64 Ed25519 private key>`` of a fixed 32-byte test-only key per key id
    (derived from the id, so never a real one)."""
    private = (b"result-" + kid.encode() + b"-") * 32
    return f"{kid}:{base64.b64encode(private[:32]).decode()}"


# The result key ring of the signed and sealed test apps: r2 signs results' JWS, r1 is
# listed in the JWKS as an older key.
TEST_RESULT_KEYS = f"{result_key_for_tests('r2')},{result_key_for_tests('r1')}"


def signed_settings_for_tests(keys: str = TEST_STATE_KEYS, **environ: str) -> Settings:
    """The test settings in signed mode, with the key ring ``keys``."""
    return settings_for_tests(STATE_PROTECTION="signed", STATE_KEYS=keys, **environ)


def sealed_settings_for_tests(keys: str = TEST_STATE_KEYS, deal_keys: str | None = None, **environ: str) -> Settings:
    """The test settings in sealed mode, with the key ring ``keys`` and the deal key ring
    ``deal_keys`` (default: the first entry of ``keys``, as the documented migration sets
    DEAL_KEYS, so that every keyed deal is the one the first state key used to key)."""
    first = keys.replace("\n", ",").split(",")[0].strip()
    return settings_for_tests(STATE_PROTECTION="sealed", STATE_KEYS=keys, DEAL_KEYS=deal_keys or first, **environ)
