"""Results anyone can verify (issue 28, item 1): a replay's ``result_jws`` (Ed25519 JWS,
service/http/result_signing.py), the JWKS at ``/.well-known/jwks.json``
(service/http/keys_api.py), their settings, and the offline checks of docs/replays.md in
Python (PyJWT) and TypeScript (jose), each run against a live test app: a valid result
verifies; a flipped byte, a result under another key and an HMAC-only result all fail.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import jwt
import pytest
from flask.testing import FlaskClient

from service.http import create_app, keys_api
from service.http.result_signing import public_key_bytes
from service.settings import read_settings
from tests.app_settings import (
    TEST_RESULT_KEYS,
    result_key_for_tests,
    sealed_settings_for_tests,
    settings_for_tests,
    signed_settings_for_tests,
)
from tests.contract.live_results import EXAMPLES, FIRST_MOVE, JWKS_PATH, REPO, load_example, replay_answer
from tests.live_server import serve

CLIENTS = REPO / "clients"
TS_EXAMPLE = CLIENTS / "verify-result.ts"
TS_BUILT = CLIENTS / "generated" / "verify-result" / "verify-result.js"
PY_EXAMPLE = EXAMPLES / "verify_result.py"
REPLAYS_DOC = REPO / "docs" / "replays.md"
# A ring whose r2 is another private key than the server's: its results must not verify.
OTHER_RESULT_KEYS = "r2:" + base64.b64encode(b"another-server-s-own-32-byte-key").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def flip_byte(token: str, part: int, index: int) -> str:
    """``token`` with one bit of byte ``index`` of its part ``part`` (0 header, 1 payload,
    2 signature) flipped, the part encoded again."""
    parts = token.split(".")
    data = bytearray(b64url_decode(parts[part]))
    data[index % len(data)] ^= 0x01
    parts[part] = b64url(bytes(data))
    return ".".join(parts)


@pytest.fixture(scope="module")
def sealed() -> FlaskClient:
    return create_app(sealed_settings_for_tests()).test_client()


@pytest.fixture(scope="module")
def live_url() -> Iterator[str]:
    """A live sealed-mode test app (the tests' result keys), for the examples to fetch its JWKS."""
    with serve(create_app(sealed_settings_for_tests())) as url:
        yield url


@pytest.fixture(scope="module")
def answers(sealed: FlaskClient) -> dict[str, Any]:
    """The replay answers the examples must accept or refuse, by case."""
    good = replay_answer(sealed, [FIRST_MOVE])
    other = replay_answer(create_app(sealed_settings_for_tests(RESULT_KEYS=OTHER_RESULT_KEYS)).test_client(), [FIRST_MOVE])
    token = good["result_jws"]
    hmac_only = {k: v for k, v in good.items() if k != "result_jws"}
    return {
        "valid": (good, True),
        "bare JWS": (token, True),
        "flipped header byte": ({**good, "result_jws": flip_byte(token, 0, 10)}, False),
        "flipped payload byte": ({**good, "result_jws": flip_byte(token, 1, 40)}, False),
        "flipped signature byte": ({**good, "result_jws": flip_byte(token, 2, 7)}, False),
        "result changed beside its JWS": ({**good, "result": {**good["result"], "moves": 0}}, False),
        "under another key": (other, False),
        "HMAC-only result": (hmac_only, False),
    }


# --- the answer -----------------------------------------------------------------------------

def test_the_jws_is_asked_for_and_carries_the_result_under_the_first_key(sealed: FlaskClient) -> None:
    answer = replay_answer(sealed, [FIRST_MOVE])
    header, payload, signature = answer["result_jws"].split(".")
    assert b64url_decode(header) == b'{"alg":"EdDSA","kid":"r2","typ":"patience-result+jws"}'
    assert json.loads(b64url_decode(payload)) == answer["result"]  # the HMAC signature included
    assert b64url_decode(payload) == json.dumps(answer["result"], sort_keys=True, separators=(",", ":")).encode()
    assert len(b64url_decode(signature)) == 64
    key = jwt.PyJWK({"kty": "OKP", "crv": "Ed25519", "x": b64url(public_key_bytes(result_private("r2")))}, "EdDSA")
    assert json.loads(jwt.PyJWS().decode(answer["result_jws"], key, algorithms=["EdDSA"])) == answer["result"]


def result_private(kid: str) -> bytes:
    return base64.b64decode(result_key_for_tests(kid).split(":", 1)[1])


@pytest.mark.parametrize("settings", [signed_settings_for_tests, sealed_settings_for_tests])
def test_an_answer_gains_result_jws_only_when_asked_and_keeps_its_hmac(settings: Any) -> None:
    """The v1 growth rule: without the flag (or with false) the answer is as before."""
    client = create_app(settings()).test_client()
    body = {"deal": "1", "moves": [FIRST_MOVE]}
    plain = client.post("/v1/games/penguin/replays", json=body).get_json()
    unasked = client.post("/v1/games/penguin/replays", json={**body, "result_jws": False}).get_json()
    asked = client.post("/v1/games/penguin/replays", json={**body, "result_jws": True}).get_json()
    assert "result_jws" not in plain and "result_jws" not in unasked
    assert asked["result"] == plain["result"] == unasked["result"]
    assert set(asked) == {*plain, "result_jws"}
    assert asked["result"]["signature"]["kid"] == "k2"


def test_open_mode_refuses_a_jws_and_lists_no_key() -> None:
    client = create_app(settings_for_tests(RESULT_KEYS=TEST_RESULT_KEYS)).test_client()  # keys set, still open
    answer = client.post("/v1/games/penguin/replays", json={"deal": "1", "moves": [], "result_jws": True})
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    assert answer.get_json()["code"] == "result-jws-unavailable"
    assert client.get(JWKS_PATH).get_json() == {"keys": []}
    assert client.post("/v1/games/penguin/replays", json={"deal": "1", "moves": []}).status_code == 200


@pytest.mark.parametrize("flag", [1, "true", None, {}])
def test_a_flag_that_is_not_a_boolean_is_refused(sealed: FlaskClient, flag: Any) -> None:
    answer = sealed.post("/v1/games/penguin/replays", json={"deal": "1", "moves": [], "result_jws": flag})
    assert answer.status_code == 400 and answer.get_json()["code"] == "invalid-body"


# --- the JWKS -------------------------------------------------------------------------------

def test_the_jwks_lists_the_ring_first_key_first_as_okp_keys(sealed: FlaskClient) -> None:
    answer = sealed.get(JWKS_PATH)
    assert answer.status_code == 200 and answer.mimetype == "application/json"
    assert answer.get_json() == {"keys": [
        {"kty": "OKP", "crv": "Ed25519", "x": b64url(public_key_bytes(result_private(kid))), "kid": kid, "alg": "EdDSA", "use": "sig"}
        for kid in ("r2", "r1")
    ]}
    assert not any("d" in k for k in answer.get_json()["keys"])  # no private part


def test_the_jwks_is_cacheable_with_a_strong_etag_and_304(sealed: FlaskClient) -> None:
    first = sealed.get(JWKS_PATH)
    etag = first.headers["ETag"]
    assert re.fullmatch(r'"[0-9a-f]{32}"', etag)  # strong: no W/
    assert first.headers["Cache-Control"] == "public, max-age=600"
    assert sealed.get(JWKS_PATH).headers["ETag"] == etag  # the same set, the same tag
    for held in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        again = sealed.get(JWKS_PATH, headers={"If-None-Match": held})
        assert again.status_code == 304 and again.data == b"", held
        assert again.headers["ETag"] == etag and again.headers["Cache-Control"] == "public, max-age=600"
    assert sealed.get(JWKS_PATH, headers={"If-None-Match": '"other"'}).status_code == 200
    other = create_app(sealed_settings_for_tests(RESULT_KEYS=OTHER_RESULT_KEYS)).test_client()
    assert other.get(JWKS_PATH).headers["ETag"] != etag  # another key set, another tag


def test_a_retired_key_is_listed_until_the_end_of_its_day(monkeypatch: pytest.MonkeyPatch) -> None:
    retired_x = b64url(public_key_bytes(result_private("r0")))
    client = create_app(sealed_settings_for_tests(RESULT_KEYS_RETIRED=f"r0:{retired_x}:2026-12-06")).test_client()
    monkeypatch.setattr(keys_api, "utc_today", lambda: date(2026, 12, 6))
    keys = client.get(JWKS_PATH).get_json()["keys"]
    assert [k["kid"] for k in keys] == ["r2", "r1", "r0"]
    assert keys[2] == {
        "kty": "OKP", "crv": "Ed25519", "x": retired_x, "kid": "r0", "alg": "EdDSA", "use": "sig",
        "retired_until": "2026-12-06",
    }
    monkeypatch.setattr(keys_api, "utc_today", lambda: date(2026, 12, 7))
    assert [k["kid"] for k in client.get(JWKS_PATH).get_json()["keys"]] == ["r2", "r1"]


def test_a_result_signed_before_a_rotation_verifies_with_the_new_jwks() -> None:
    before = create_app(sealed_settings_for_tests(RESULT_KEYS=result_key_for_tests("r1"))).test_client()
    token = replay_answer(before)["result_jws"]
    after = create_app(sealed_settings_for_tests()).test_client()  # r2 signs now, r1 still listed
    verify = load_example("verify_result")
    assert verify.verify_token(token, after.get(JWKS_PATH).get_json())["deal"] == "1"


# --- the settings ---------------------------------------------------------------------------

SEALED = {"STATE_PROTECTION": "sealed", "STATE_KEYS": "k1:" + "A" * 43, "DEAL_KEYS": "d1:" + "B" * 43}


@pytest.mark.parametrize(("environ", "message"), [
    ({}, "STATE_PROTECTION=sealed needs a result key ring: set RESULT_KEYS or RESULT_KEYS_FILE"),
    ({"RESULT_KEYS": "r1:" + "A" * 64}, r"key 1 \('r1'\) is 48 bytes; an Ed25519 private key is exactly 32 bytes"),
    ({"RESULT_KEYS": "r1:" + "A" * 43, "RESULT_KEYS_FILE": "/nonexistent"}, "cannot read the key file"),
    ({"RESULT_KEYS": "r1:" + "A" * 43, "RESULT_KEYS_RETIRED": "r0:" + "A" * 43 + ":tomorrow"}, "RESULT_KEYS_RETIRED: key 1 is not"),
    ({"RESULT_KEYS": "r1:" + "A" * 43, "RESULT_KEYS_RETIRED": "r1:" + "A" * 43 + ":2026-12-31"}, "lists key ids of the current ring"),
])
def test_result_key_settings_stop_a_bad_start(environ: dict[str, str], message: str) -> None:
    with pytest.raises(RuntimeError, match=message) as refused:
        read_settings({**SEALED, **environ})
    assert "A" * 20 not in str(refused.value)  # no key text in the error


def test_the_result_keys_may_come_from_a_file(tmp_path: Path) -> None:
    ring = tmp_path / "result-keys"
    ring.write_text(TEST_RESULT_KEYS.replace(",", "\n"))
    results = read_settings({**SEALED, "RESULT_KEYS_FILE": str(ring)}).results
    assert [k.kid for k in results.keys] == ["r2", "r1"]
    assert repr(results.keys[0]) == "ResultKey(kid='r2')"  # a settings object in a log shows no key
    with pytest.raises(RuntimeError, match="RESULT_KEYS or RESULT_KEYS_FILE, not both"):
        read_settings({**SEALED, "RESULT_KEYS": result_key_for_tests("r9"), "RESULT_KEYS_FILE": str(ring)})


# --- the offline checks of docs/replays.md ----------------------------------------------------

CASES = ["valid", "bare JWS", "flipped header byte", "flipped payload byte", "flipped signature byte",
         "result changed beside its JWS", "under another key", "HMAC-only result"]


@pytest.mark.parametrize("case", CASES)
def test_the_python_check_accepts_only_the_service_s_results(case: str, answers: dict[str, Any], live_url: str, tmp_path: Path) -> None:
    """docs/examples/verify_result.py, run as the docs say, against the live app's JWKS."""
    answer, valid = answers[case]
    (tmp_path / "answer.json").write_text(json.dumps(answer))
    run = subprocess.run(
        [str(REPO / ".venv" / "bin" / "python"), str(PY_EXAMPLE), live_url + JWKS_PATH, str(tmp_path / "answer.json")],
        capture_output=True, text=True, timeout=60,
    )
    if valid:
        assert run.returncode == 0, run.stderr
        expected = answer["result"] if isinstance(answer, dict) else answers["valid"][0]["result"]
        assert json.loads(run.stdout) == expected
    else:
        assert run.returncode == 1 and run.stderr.startswith("refused: "), (run.returncode, run.stdout, run.stderr)


def test_every_flipped_byte_fails_the_python_check(answers: dict[str, Any], sealed: FlaskClient) -> None:
    verify = load_example("verify_result")
    jwks = sealed.get(JWKS_PATH).get_json()
    token = answers["bare JWS"][0]
    assert verify.verify_token(token, jwks)
    for part, length in enumerate(len(b64url_decode(p)) for p in token.split(".")):
        for index in range(0, length, 3):
            with pytest.raises(verify.Refused):
                verify.verify_token(flip_byte(token, part, index), jwks)


@pytest.fixture(scope="module")
def ts_example() -> Path:
    """clients/verify-result.ts compiled (tsc, the clients' strict tsconfig) with the
    clients' pinned npm packages (jose among them)."""
    installed = subprocess.run(["make", "-s", "clients/node_modules/.installed"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    built = subprocess.run(
        [str(CLIENTS / "node_modules" / ".bin" / "tsc"), "-p", str(CLIENTS / "tsconfig.verify-result.json")],
        capture_output=True, text=True, timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return TS_BUILT


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_the_typescript_check_accepts_only_the_service_s_results(
    case: str, answers: dict[str, Any], live_url: str, ts_example: Path, tmp_path: Path,
) -> None:
    """clients/verify-result.ts (jose), compiled and run by node against the live app's JWKS."""
    answer, valid = answers[case]
    (tmp_path / "answer.json").write_text(json.dumps(answer))
    run = subprocess.run(
        ["node", str(ts_example), live_url + JWKS_PATH, str(tmp_path / "answer.json")], capture_output=True, text=True, timeout=60,
    )
    if valid:
        assert run.returncode == 0, run.stderr
        expected = answer["result"] if isinstance(answer, dict) else answers["valid"][0]["result"]
        assert json.loads(run.stdout) == expected
    else:
        assert run.returncode == 1 and run.stderr.startswith("refused: "), (run.returncode, run.stdout, run.stderr)


@pytest.mark.parametrize("example", [PY_EXAMPLE, TS_EXAMPLE], ids=lambda p: p.name)
def test_docs_replays_include_each_check_byte_for_byte(example: Path) -> None:
    doc = REPLAYS_DOC.read_text(encoding="utf-8")
    language = "python" if example.suffix == ".py" else "typescript"
    assert f"```{language}\n{example.read_text(encoding='utf-8')}```\n" in doc
