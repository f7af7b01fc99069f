"""Compiled candidates side by side (issue 14): the Penguin family's search interpreted,
compiled by mypyc, compiled by Cython, and the hand-written C extension
(``service/solver/plugins/_penguin_native.c``), on the same deals in one run.

    .venv/bin/python -m bench.compiled_candidates
    .venv/bin/python -m bench.compiled_candidates --games pelican --deals 1-300 --skip cython

mypyc and Cython compile the unchanged sources of the search core and the plug-in
(``COMPILED``), and setup.py the C extension, each in its own copy of ``service/`` in a
temporary directory, made without the repository's built modules: where the C module is
not built, the plug-in searches in Python, as on a checkout nobody built. Each candidate
gets a worker process, and every deal is solved by each worker in turn (the first of each
turn rotating), so a change of the machine's load falls on all of them alike. Per
candidate it prints what compiling took, the mean and median search time per deal and
their ratios to the interpreted search, and the deals where its verdict differs from the
interpreted one (a time limit under load can do that; anything else is a bug).

When a tool cannot compile both modules unchanged, its errors are printed and each module
is tried alone; what builds is measured. Cython (``CYTHON``, pinned) is installed into
the temporary directory with pip; mypyc ships with mypy (requirements.lock). ``make
bench`` runs it with its defaults.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The search core and the Penguin plug-in: what the candidates compile, unchanged.
COMPILED = ("service/solver/search.py", "service/solver/plugins/penguin.py")
CYTHON = "Cython==3.3.1"
NATIVE_SOURCE = "service/solver/plugins/_penguin_native.c"  # setup.py's extension
# Builds the modules named on the command line in place with Cython, at the optimisation
# level in the environment (run with Cython on PYTHONPATH, in the copy's root).
CYTHON_BUILD = """
import os, sys
from Cython.Build import cythonize
from setuptools import setup
extensions = cythonize(sys.argv[1:], compiler_directives={"language_level": 3}, quiet=True)
for extension in extensions:
    extension.extra_compile_args = ["-O" + os.environ["OPT_LEVEL"]]
setup(ext_modules=extensions, script_args=["build_ext", "--inplace", "-q"])
"""


@dataclass
class Candidate:
    """One way to run the search: a source tree to import ``service`` from, and how to
    compile it there (None: nothing to compile)."""

    name: str
    tree: Path
    compile: Callable[[Path, Sequence[str]], subprocess.CompletedProcess[str]] | None = None
    sources: tuple[str, ...] = ()  # what to compile
    compile_seconds: float = 0.0
    loaded: str = ""  # what the worker imported: "<compiled Python modules> | <C search used>"
    seconds: dict[str, list[float]] = field(default_factory=dict)  # per game, per deal
    verdicts: dict[str, list[str]] = field(default_factory=dict)


def copy_tree(root: Path, name: str) -> Path:
    """A copy of service/ without built modules, with pyproject.toml (mypy's settings)
    and setup.py."""
    tree = root / name
    shutil.copytree(REPO / "service", tree / "service", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    for path in ("pyproject.toml", "setup.py"):
        shutil.copy2(REPO / path, tree / path)
    return tree


def run_setup(tree: Path, sources: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """setup.py's build of the C extension (its one source), as `make native` runs it."""
    return subprocess.run([sys.executable, "-W", "ignore", "setup.py", "-q", "build_ext", "--inplace"], cwd=tree,
                          capture_output=True, text=True)


def run_mypyc(opt_level: str) -> Callable[[Path, Sequence[str]], subprocess.CompletedProcess[str]]:
    def build(tree: Path, modules: Sequence[str]) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "MYPYC_OPT_LEVEL": opt_level}
        return subprocess.run([sys.executable, "-m", "mypyc", *modules], cwd=tree, env=env,
                              capture_output=True, text=True)

    return build


def run_cython(packages: Path, opt_level: str) -> Callable[[Path, Sequence[str]], subprocess.CompletedProcess[str]]:
    def build(tree: Path, modules: Sequence[str]) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(packages), "OPT_LEVEL": opt_level}
        return subprocess.run([sys.executable, "-c", CYTHON_BUILD, *modules], cwd=tree, env=env,
                              capture_output=True, text=True)

    return build


def build(candidate: Candidate, probe: str) -> bool:
    """Compiles its sources together, else each alone, until a build also runs the
    ``probe`` (worker input lines); False when none does."""
    assert candidate.compile is not None
    alone = [(s,) for s in candidate.sources] if len(candidate.sources) > 1 else []
    for modules in (candidate.sources, *alone):
        for built in candidate.tree.rglob("*.so"):
            built.unlink()
        started = time.perf_counter()
        run = candidate.compile(candidate.tree, modules)
        seconds = time.perf_counter() - started
        if run.returncode == 0:
            run = subprocess.run([sys.executable, __file__, "--worker"], cwd=candidate.tree, input=probe,
                                 env={**os.environ, "PYTHONPATH": str(candidate.tree)}, capture_output=True, text=True)
            if run.returncode == 0:
                candidate.sources, candidate.compile_seconds = modules, seconds
                return True
            failed = "compiles but cannot run"
        else:
            failed = "cannot compile"
        errors = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
        print(f"{candidate.name} {failed} {' '.join(modules)} (exit {run.returncode}, {seconds:.1f} s to compile); "
              "the last lines:")
        print("\n".join("    " + line for line in errors[-12:]))
    return False


def install_cython(root: Path) -> Path | None:
    packages = root / "cython-packages"
    run = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          "--target", str(packages), CYTHON], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"pip could not install {CYTHON}:\n{run.stdout}{run.stderr}")
        return None
    return packages


class Worker:
    """A process solving deals with the ``service`` of one candidate's tree."""

    def __init__(self, candidate: Candidate) -> None:
        env = {**os.environ, "PYTHONPATH": str(candidate.tree)}
        self.process = subprocess.Popen([sys.executable, __file__, "--worker"], cwd=candidate.tree, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        candidate.loaded = str(self.read()["loaded"])

    def read(self) -> dict[str, str | float]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("a worker died (its error is above)")
        answer: dict[str, str | float] = json.loads(line)
        return answer

    def solve(self, game: str, deal: int, seconds: float, max_states: int) -> tuple[str, float]:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{game} {deal} {seconds} {max_states}\n")
        self.process.stdin.flush()
        answer = self.read()
        return str(answer["result"]), float(answer["seconds"])

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def worker() -> None:
    """The worker's loop: a line ``game deal seconds max_states`` in, a JSON answer out.
    Imports ``service`` from PYTHONPATH (its candidate's tree)."""
    import importlib.machinery

    from service.engine.penguin import PenguinFamily
    from service.engine.registry import get_game
    from service.solver import Limits, search, solve_position
    from service.solver.plugins import penguin

    compiled = [Path(m.__file__ or "").stem.split(".")[0] + ".py" for m in (search, penguin)
                if (m.__file__ or "").endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))]
    loaded = f"{', '.join(compiled) or 'none'} | {'yes' if penguin._penguin_native else 'no'}"
    print(json.dumps({"loaded": loaded}), flush=True)
    for line in sys.stdin:
        gid, deal, seconds, max_states = line.split()
        game = get_game(gid)
        assert isinstance(game, PenguinFamily), "the candidates compile the Penguin family's search"
        r = solve_position(game, game.initial_state(int(deal)), Limits(float(seconds), int(max_states)))
        print(json.dumps({"result": str(r.result), "seconds": r.seconds}), flush=True)


def ms(values: list[float]) -> str:
    return f"{1000 * statistics.mean(values):.2f} / {1000 * statistics.median(values):.2f}"


def ratio(values: list[float], baseline: list[float]) -> str:
    mean = statistics.mean(values) / statistics.mean(baseline)
    median = statistics.median(values) / statistics.median(baseline)
    return f"{mean:.2f}x / {median:.2f}x"


def report(candidates: list[Candidate], games: list[str], deals: range) -> None:
    base = candidates[0]
    print()
    print("| candidate | Python compiled | C search | compile s | game | mean / median ms "
          "| ratio to interpreted mean / median | verdicts differing |")
    print("|---|---|---|---|---|---|---|---|")
    for c in candidates:
        for gid in games:
            differing = [d for d, a, b in zip(deals, c.verdicts[gid], base.verdicts[gid], strict=True) if a != b]
            print(f"| {c.name} | {c.loaded} | {c.compile_seconds:.1f} | {gid} | {ms(c.seconds[gid])} | "
                  f"{ratio(c.seconds[gid], base.seconds[gid])} | {len(differing)}{f' {differing[:5]}' if differing else ''} |")


def main(argv: list[str] | None = None) -> int:
    from bench.solver_bench import parse_range
    from service.settings import read_settings

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--games", default="pelican,opus", help="comma-separated Penguin-family game ids")
    ap.add_argument("--deals", default="1-100", type=parse_range, help="deal range, e.g. 1-100")
    ap.add_argument("--seconds", default=10.0, type=float, help="per-deal time limit")
    ap.add_argument("--max-states", default=read_settings().solver.max_states, type=int,
                    help="per-deal position limit (default: the service's)")
    ap.add_argument("--opt-level", default="2", help="the C compiler's -O level for mypyc and Cython (setup.py's is -O2)")
    ap.add_argument("--skip", default="", help="comma-separated candidates to leave out: mypyc, cython, c")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (its path is printed)")
    args = ap.parse_args(argv)
    games = args.games.split(",")
    skip = set(filter(None, args.skip.split(",")))

    root = Path(tempfile.mkdtemp(prefix="compiled-candidates-"))
    try:
        candidates = [Candidate("interpreted", copy_tree(root, "interpreted"))]
        if "mypyc" not in skip:
            candidates.append(Candidate("mypyc", copy_tree(root, "mypyc"), run_mypyc(args.opt_level), COMPILED))
        if "cython" not in skip and (packages := install_cython(root)) is not None:
            candidates.append(Candidate(f"Cython {CYTHON.split('==')[1]}", copy_tree(root, "cython"),
                                        run_cython(packages, args.opt_level), COMPILED))
        if "c" not in skip:
            candidates.append(Candidate("C extension", copy_tree(root, "c"), run_setup, (NATIVE_SOURCE,)))
        # One quick deal of each game, as a check that a build runs.
        probe = "".join(f"{gid} {args.deals.start} 1 1000\n" for gid in games)
        candidates = [c for c in candidates if c.compile is None or build(c, probe)]
        workers = [Worker(c) for c in candidates]
        for c in candidates:
            modules, native = c.loaded.split(" | ")
            print(f"{c.name}: Python modules compiled: {modules}; C search used: {native}"
                  + (f"; compiled in {c.compile_seconds:.1f} s" if c.compile else ""))
        for gid in games:
            for c in candidates:
                c.seconds[gid], c.verdicts[gid] = [], []
            for i, deal in enumerate(args.deals):
                # Who goes first rotates: whichever candidate went first measured slower
                # on some means (docs/benchmarks.md).
                for j in range(i, i + len(candidates)):
                    c, w = candidates[j % len(candidates)], workers[j % len(workers)]
                    verdict, seconds = w.solve(gid, deal, args.seconds, args.max_states)
                    c.verdicts[gid].append(verdict)
                    c.seconds[gid].append(seconds)
        for w in workers:
            w.close()
        print(f"\ndeals {args.deals.start}-{args.deals.stop - 1}, {args.seconds:g} s and {args.max_states} positions "
              f"per deal; mypyc and Cython at -O{args.opt_level}, the C extension at setup.py's level")
        report(candidates, games, args.deals)
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        worker()
    else:
        sys.exit(main())
