"""Instructions per request, in-process, for Penguin `/moves`, the hooks-only app and the trivial app.

The gunicorn bench (bench/http_load_bench.py) measures what the issue asks, server CPU per
request, but on a shared machine the same server's figure moves by 25-45% between rounds.
This one counts CPU instructions under valgrind's callgrind, which other jobs do not
change, so it can tell a 2% step from noise. Each app (`moves`: the service; `hooks`: the
service's app with a route that answers without a view, ``hooks_app`` of
bench/http_bench.py; `trivial`: the bare Flask baseline, ``trivial_app``) is called through
its WSGI entry on the same recorded Penguin move requests (bench/http_bench.py's
``bodies``), first twice over as warm-up, then once counted: the counted pass is bracketed
by two system calls (``os.getppid`` before, ``os.getpgrp`` after) that callgrind's
``--zero-before`` and ``--dump-before`` key on. ``PYTHONHASHSEED=0`` keeps dict and set
orders the same run to run; a garbage collection landing in the counted pass can still
move a figure by a few thousand instructions.

    .venv/bin/python -m bench.request_instructions [--requests 200] [--apps moves,hooks,trivial]

Needs valgrind (Debian: ``apt-get install valgrind``); about 40 s per app.

To compare two versions of the code, run it in a copy of each tree (``git archive`` of the
older commit, with the compiled modules copied in) with the same venv: the trivial app's
figure, the same code in both, shows that the two runs count alike.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
APPS = ("moves", "hooks", "trivial")
GAME = "penguin"


def count_requests(app_name: str, requests: int) -> None:
    """The child's work under callgrind: build the app, record the requests, warm up, and
    make the counted pass between the two bracketing system calls."""
    sys.path.insert(0, str(REPO))
    from werkzeug.test import EnvironBuilder

    from bench.http_bench import HOOKS_PATH, bodies, hooks_app, trivial_app
    from service.http import create_app

    app = create_app()
    recorded = [json.dumps(b).encode() for b in bodies(app.test_client(), GAME, requests)]
    target, path = {
        "moves": (app, f"/v1/games/{GAME}/moves"),
        "hooks": (hooks_app(), HOOKS_PATH),
        "trivial": (trivial_app(), "/echo"),
    }[app_name]
    environs = [
        EnvironBuilder(path=path, method="POST", data=body, content_type="application/json").get_environ()
        for body in recorded
    ]

    def start_response(status: str, headers: Iterable[Any], exc_info: Any = None) -> Callable[[bytes], None]:
        if not status.startswith("200"):
            raise SystemExit(f"{app_name}: answered {status}")
        return lambda data: None

    def one_pass() -> None:
        for environ, body in zip(environs, recorded, strict=True):
            env = dict(environ)
            env["wsgi.input"] = io.BytesIO(body)
            out = target.wsgi_app(env, start_response)
            for _ in out:
                pass
            close = getattr(out, "close", None)
            if close is not None:
                close()

    one_pass()
    one_pass()
    os.getppid()  # callgrind zeroes its counters here
    one_pass()
    os.getpgrp()  # ... and dumps them here


def measure(app_name: str, requests: int) -> float:
    """Instructions per request of ``app_name``, counted by callgrind in a child process."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(
            [
                "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}.%p",
                "--zero-before=getppid", "--dump-before=getpgrp",
                sys.executable, "-m", "bench.request_instructions", "--child", app_name, "--requests", str(requests),
            ],
            cwd=REPO, env={**os.environ, "PYTHONHASHSEED": "0"}, check=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        dumps = sorted(Path(tmp).glob("callgrind.out.*.1"))  # part 1: the dump taken at getpgrp
        if len(dumps) != 1:
            raise SystemExit(f"{app_name}: expected one counted dump, found {[d.name for d in dumps]}")
        summary = re.search(r"^summary: (\d+)", dumps[0].read_text(), flags=re.M)
        if summary is None:
            raise SystemExit(f"{app_name}: no summary in {dumps[0].name}")
        return int(summary.group(1)) / requests


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--apps", default=",".join(APPS), help="comma-separated, of: " + ", ".join(APPS))
    ap.add_argument("--child", choices=APPS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        count_requests(args.child, args.requests)
        return
    figures = {name: measure(name, args.requests) for name in args.apps.split(",")}
    print(f"instructions per request, in-process, {args.requests} Penguin move requests (callgrind, PYTHONHASHSEED=0)")
    for name, per_request in figures.items():
        ratio = f"  {figures['trivial'] / per_request:.2f} of trivial's requests per instruction" if "trivial" in figures else ""
        print(f"  {name:8} {per_request / 1e6:8.4f}M{ratio}")


if __name__ == "__main__":
    main()
