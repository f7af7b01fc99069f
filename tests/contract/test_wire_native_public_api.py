"""The wire codec compiled with CPython's public calls only (``-DCHECKED_CPYTHON=0``, what
any CPython but the checked one gets: service/http/_wire_native.c) answers as the Python
it stands for: tests/contract/test_wire_native.py and test_wire.py run again, in a process
whose ``service.http._wire_native`` is that build."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "service" / "http" / "_wire_native.c"
RUN_WITH_BUILD = """
import importlib.util, sys
path = sys.argv[1]
spec = importlib.util.spec_from_file_location("service.http._wire_native", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
sys.modules["service.http._wire_native"] = module
import service.http.wire as wire
assert wire._wire_native is module and wire.CODEC is not None, "the public build is not the one in use"
import pytest
sys.exit(pytest.main(sys.argv[2:]))
"""


def build_public(out_dir: Path) -> Path:
    """``_wire_native.c`` compiled with the public calls only, beside nothing else."""
    target = out_dir / f"_wire_native{sysconfig.get_config_var('EXT_SUFFIX')}"
    compiler = str(sysconfig.get_config_var("CC") or "cc").split()
    command = [*compiler, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", f"-I{sysconfig.get_paths()['include']}",
               "-DCHECKED_CPYTHON=0", str(SOURCE), "-o", str(target)]
    built = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    return target


def test_the_public_api_build_answers_as_the_reference(tmp_path: Path) -> None:
    build = build_public(tmp_path)
    run = subprocess.run(
        [sys.executable, "-c", RUN_WITH_BUILD, str(build), "-q", "-p", "no:cacheprovider",
         "tests/contract/test_wire_native.py", "tests/contract/test_wire.py"],
        capture_output=True, text=True, timeout=600, cwd=REPO,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout.splitlines()[-1]


def test_the_build_is_the_public_one(tmp_path: Path) -> None:
    """The private call is left out of the public build (a check that the switch works)."""
    build = build_public(tmp_path)
    symbols = subprocess.run(["nm", "-D", "--undefined-only", str(build)], capture_output=True, text=True, timeout=60)
    if symbols.returncode != 0:
        pytest.skip("nm is not available")
    assert "_PyDict_NewPresized" not in symbols.stdout
    assert "PyDict_New" in symbols.stdout
