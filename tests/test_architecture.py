"""The layering of ``service``, checked on the source: engine <- solver <- http.

The import graph is read with :mod:`ast` from every module under ``service/`` (imports
inside functions included: a lazy import is how a cycle hides), never by importing
anything, so a test run cannot mask an edge that only some entry point takes. It must
have no cycle; the engine (pure rules) must not reach the solver, the HTTP layer, Flask
or JSON; the solver must not reach the HTTP layer or Flask; the wire format
(``service/http/wire.py``) stays plain Python, usable without an app.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "service"

# What each layer may not import: module names or their prefixes (``a`` covers ``a.b``).
FORBIDDEN = {
    "service.engine": ("service.solver", "service.http", "flask", "flask_smorest", "werkzeug", "marshmallow", "json"),
    "service.solver": ("service.http", "flask", "flask_smorest", "werkzeug", "marshmallow"),
    "service.http.wire": ("flask", "flask_smorest", "werkzeug", "marshmallow"),
    "service.atlas": ("service.http", "flask", "flask_smorest", "werkzeug", "marshmallow"),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_files() -> dict[str, Path]:
    """Every module of the package by dotted name; a compiled module (a C extension) by
    its type stub, the ``.pyi`` file that stands for it."""
    found = {module_name(p): p for p in sorted((ROOT / PACKAGE).rglob("*.pyi"))}
    found.update({module_name(p): p for p in sorted((ROOT / PACKAGE).rglob("*.py"))})
    return found


def imported_names(name: str, path: Path, modules: set[str]) -> set[str]:
    """Dotted names ``name`` imports; ``from pkg import mod`` counts as importing
    ``pkg.mod`` when that is a module, else as importing ``pkg``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            submodules = {f"{target}.{alias.name}" for alias in node.names} & modules
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> every name it imports (inside ``service`` or not)."""
    files = source_files()
    modules = set(files)
    return {name: imported_names(name, path, modules) for name, path in files.items()}


def internal_edges(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    return {name: {t for t in targets if t in graph and t != name} for name, targets in graph.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of modules (first repeated at the end), or None."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(node: str) -> list[str] | None:
        path.append(node)
        on_path.add(node)
        for nxt in sorted(edges[node]):
            if nxt in on_path:
                return [*path[path.index(nxt):], nxt]
            if nxt not in done:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        on_path.discard(node)
        done.add(node)
        return None

    for start in sorted(edges):
        if start not in done:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


def violations(graph: dict[str, set[str]]) -> Iterator[str]:
    for name, targets in sorted(graph.items()):
        for layer, banned in FORBIDDEN.items():
            if name != layer and not name.startswith(layer + "."):
                continue
            for target in sorted(targets):
                if any(target == b or target.startswith(b + ".") for b in banned):
                    yield f"{name} imports {target}"


def test_the_graph_sees_every_layer() -> None:
    graph = import_graph()
    assert {"service.engine.core", "service.solver.search", "service.http.app"} <= set(graph)
    assert "service.engine.core" in graph["service.solver.search"], "the reader missed an import"


def test_no_import_cycle() -> None:
    cycle = find_cycle(internal_edges(import_graph()))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layers_import_only_what_they_may(layer: str) -> None:
    bad = [v for v in violations(import_graph()) if v.startswith(layer)]
    assert not bad, "\n".join(bad)


def test_the_cycle_finder_finds_a_lazy_cycle() -> None:
    """The checks above would pass vacuously if the finder never fired."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
