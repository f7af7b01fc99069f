"""Verifies pact files against a live verification server (``make pact-verify``).

Starts gunicorn as `make run` starts it (``deploy/gunicorn.conf.py``), with the Pact
verification app (``contracts.provider.wsgi:app``, service/pact_provider.py's app; or the
app ``--app`` names: the broken providers of tests/pact) on a free loopback port, one
worker, the committed test key ring; then runs pact-python's ``Verifier`` over every pact given, provider states
included (``POST /_pact/provider-states``, teardown too); then stops the server. Exits 0
when every interaction verifies, 1 otherwise, with the verifier's report on stdout.

Runs in contracts/.venv (pact-python); the server runs on ``--server-python`` (the
service's venv). Pact's usage tracking stays off: nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

os.environ["PACT_DO_NOT_TRACK"] = "true"  # before pact is imported

from pact import Verifier

REPO = Path(__file__).resolve().parents[2]
PROVIDER = "patience-engine"
APP = "contracts.provider.wsgi:app"
TEST_KEYS = REPO / "contracts" / "provider" / "test-only-state-keys.txt"
STATE_CHANGE_PATH = "/_pact/provider-states"  # service.pact_provider.STATE_CHANGE_PATH (tests/pact checks)
READY_SECONDS = 60.0
STOP_SECONDS = 15.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
            return bool(answer.status == 200)
    except (OSError, urllib.error.URLError):
        return False


@contextmanager
def verification_server(server_python: str, app: str, workdir: Path) -> Iterator[int]:
    """gunicorn serving ``app`` on a free loopback port (yielded) until the block ends."""
    port = free_port()
    env = {
        **os.environ,
        "HOST": "127.0.0.1", "PORT": str(port), "WEB_CONCURRENCY": "1",
        "GUNICORN_DRAIN_SECONDS": "0", "TMPDIR": str(workdir),
        "PACT_TEST_STATE_KEYS_FILE": str(TEST_KEYS),
    }
    log = open(workdir / "server.log", "wb")  # noqa: SIM115 (closed below, after the server)
    server = subprocess.Popen(
        [server_python, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", app],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + READY_SECONDS
        while not ready(port):
            if server.poll() is not None or time.monotonic() > deadline:
                log.flush()
                sys.stdout.write((workdir / "server.log").read_text(errors="replace")[-4000:])
                raise SystemExit(f"the verification server ({app}) did not start")
            time.sleep(0.1)
        yield port
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
        log.close()


def verify(port: int, pacts: Sequence[Path]) -> tuple[bool, str]:
    """Verifies ``pacts`` against the server on ``port``: whether all passed, and the
    report (which the verifier also prints)."""
    verifier = Verifier(PROVIDER, host="127.0.0.1").add_transport(url=f"http://127.0.0.1:{port}")
    for pact in pacts:
        verifier.add_source(pact)
    verifier.state_handler(f"http://127.0.0.1:{port}{STATE_CHANGE_PATH}", teardown=True, body=True)
    verifier.set_error_on_empty_pact(enabled=True).set_coloured_output(enabled=False)
    try:
        verifier.verify()
    except RuntimeError:
        return False, verifier.output(strip_ansi=True)
    return True, verifier.output(strip_ansi=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pacts", nargs="*", type=Path, help="pact files or folders (default: contracts/pacts)")
    parser.add_argument("--server-python", default=str(REPO / ".venv" / "bin" / "python"))
    parser.add_argument("--app", default=APP, help="the WSGI app gunicorn serves (default: %(default)s)")
    args = parser.parse_args(argv)
    pacts = args.pacts or [REPO / "contracts" / "pacts"]
    with tempfile.TemporaryDirectory(prefix="pact-verify-") as tmp, \
            verification_server(args.server_python, args.app, Path(tmp)) as port:
        passed, _ = verify(port, pacts)  # the verifier prints its report itself
    print("pact verification:", "passed" if passed else "FAILED")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
