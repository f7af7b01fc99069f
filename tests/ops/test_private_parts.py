"""The inventory of the libraries' private parts (service/private_parts.py) against the code.

A detector finds every private or undocumented name of a third-party library that the
code under service/ touches, and each must be an entry of the inventory (its identifier,
in that file); each entry must still be touched in every file it names; each installed
library must be at a version the inventory was checked on.

What the detector finds (as exactly as a reading of the source and the classes allows):

- ``x._name`` (one leading underscore) where ``_name`` is not the service's own: not a
  function or class it defines, not a name it assigns, not an attribute its classes define
  or set on ``self`` unless a library class they derive from has it too (then it is the
  library's). The same for the names ``getattr``/``setattr``/``hasattr``/``delattr`` take
  as a constant string. The stdlib's documented underscore names (``namedtuple``'s
  ``_replace``, ``Enum``'s ``_value_``...) are not a library's private parts.
- What the service's classes define, set or read on ``self`` that a library base class
  has (found by importing the class and reading its bases, their ``__dict__`` and what
  their source sets on ``self``): when the name is private, or the library is gunicorn,
  which documents its settings, hooks and ``worker_class`` only, never a worker's insides.
- Imports of a library module with a private part in its path, of a private name, and of
  any name from gunicorn; an attribute read on a gunicorn module (``util.close``).
- In the C files: ``_Py*`` and ``PyUnstable_*`` identifiers, and reads of a CPython
  object's fields (``->ob_*``, ``->d_*``).
- In deploy/gunicorn.conf.py: what its server hooks read of the arbiter or a worker.

- In a module that imports gunicorn: any attribute of a gunicorn worker, connection,
  parser, request or unreader (:data:`GUNICORN_OBJECT_MODULES`), read through any
  variable (``conn.parser.unreader.take_buffered``); its settings (``cfg.keepalive``) are
  documented.

Not found (the inventory lists them by hand): a public-looking but undocumented name
(Werkzeug's ``MapAdapter`` argument order, the environ keys Werkzeug reads), a name the service
also defines itself (gunicorn's ``conn.sock``: the service's ``OneSendAnswer`` has a
``sock`` too), and a private attribute of another library's object read through a
variable whose name the service also defines.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import socket
import textwrap
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import NamedTuple

import pytest

from service import private_parts
from service.private_parts import (
    CHECKED_VERSIONS,
    CPYTHON,
    PRIVATE_PARTS,
    PrivatePart,
    installed_version,
    is_checked,
)

REPO = Path(__file__).resolve().parents[2]
SERVICE = REPO / "service"

# Top-level modules of the libraries whose private parts are inventoried, by distribution.
LIBRARY_MODULES = {
    "flask": "flask", "werkzeug": "werkzeug", "gunicorn": "gunicorn", "marshmallow": "marshmallow",
    "flask_smorest": "flask-smorest", "webargs": "webargs", "apispec": "apispec", "orjson": "orjson",
    "prometheus_client": "prometheus-client",
}
# Libraries whose every name outside their documented settings/hooks is undocumented.
UNDOCUMENTED_LIBRARIES = frozenset({"gunicorn"})
# Underscore names the Python standard library documents.
STDLIB_DOCUMENTED = frozenset({
    "_replace", "_asdict", "_fields", "_field_defaults", "_make",  # collections.namedtuple
    "_value_", "_name_", "_missing_", "_generate_next_value_", "_ignore_", "_order_",  # enum
})
# What a C file reads of CPython's insides: private and unstable calls, object fields.
C_PRIVATE = re.compile(r"\b(_Py\w+|PyUnstable_\w+)|->((?:ob|d)_\w+)")
C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)


class Finding(NamedTuple):
    """A private or undocumented library name (``name``, as written) touched in ``path`` at ``line``."""

    name: str
    path: str
    line: int
    why: str


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def library_of(module: str) -> str | None:
    return LIBRARY_MODULES.get(module.partition(".")[0])


def library_bases(cls: type) -> list[type]:
    return [k for k in cls.__mro__ if library_of(getattr(k, "__module__", "") or "") is not None]


@cache
def set_on_self(cls: type) -> frozenset[str]:
    """The attributes ``cls``'s own source sets on ``self`` (its instances' attributes)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return frozenset()
    return frozenset(
        node.attr for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name) and node.value.id == "self"
    )


def library_base_with(cls: type, name: str) -> type | None:
    """The first library class in ``cls``'s MRO that defines ``name`` or sets it on ``self``."""
    for base in library_bases(cls):
        if name in vars(base) or name in set_on_self(base):
            return base
    return None


def class_names(node: ast.ClassDef) -> tuple[set[str], set[str]]:
    """(what the class defines or sets on ``self``, what its methods read from ``self``)."""
    defined: set[str] = set()
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(stmt.name)
        elif isinstance(stmt, ast.Assign):
            defined.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            defined.add(stmt.target.id)
    read: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id in ("self", "cls"):
            (defined if isinstance(sub.ctx, ast.Store) else read).add(sub.attr)
    return defined, read


def own_names(node: ast.AST, top_level: bool) -> Iterator[str]:
    """The names ``node`` defines outside a top-level class's body (those are judged
    against the class's library bases): functions, classes, assigned names, and what a
    nested class defines or sets on ``self``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef):
            yield child.name
            if not top_level:
                yield from class_names(child)[0]
                yield from own_names(child, False)
                continue
            for stmt in child.body:  # its members are judged in python_findings; what is inside them is ours
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield from own_names(stmt, False)
                elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                    yield from own_names(stmt.value, False) if stmt.value is not None else ()
                else:
                    yield from own_names(stmt, False)
            continue
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield child.name
        elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            yield child.id
        elif isinstance(child, ast.alias) and library_of(child.name) is None:
            yield (child.asname or child.name).partition(".")[0]
        elif isinstance(child, ast.arg):
            yield child.arg
        yield from own_names(child, False)


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts)


class Source(NamedTuple):
    path: str  # from the repository's root
    tree: ast.Module
    module: str | None  # importable as, for the classes' bases (None: a snippet, read alone)


def read_sources(paths: list[Path]) -> list[Source]:
    return [Source(str(p.relative_to(REPO)), ast.parse(p.read_text(), str(p)), module_name(p)) for p in paths]


def runtime_class(source: Source, node: ast.ClassDef) -> type | None:
    if source.module is None:
        return None
    cls = getattr(importlib.import_module(source.module), node.name, None)
    return cls if isinstance(cls, type) else None


def python_findings(sources: list[Source]) -> list[Finding]:
    """Every private or undocumented library name the Python ``sources`` touch (see the module's docstring)."""
    ours: set[str] = set()
    findings: list[Finding] = []
    top_classes = [(s, n) for s in sources for n in s.tree.body if isinstance(n, ast.ClassDef)]
    for source in sources:
        ours.update(own_names(source.tree, top_level=True))
    for source, node in top_classes:
        defined, read = class_names(node)
        cls = runtime_class(source, node)
        for name in sorted(defined | read):
            base = library_base_with(cls, name) if cls is not None else None
            if base is None:
                if name in defined:
                    ours.add(name)
                continue
            library = library_of(base.__module__)
            if name in ("__doc__", "__module__", "__qualname__") or not (
                is_private(name) or library in UNDOCUMENTED_LIBRARIES
            ):
                continue
            line = next(
                (getattr(sub, "lineno", node.lineno) for sub in ast.walk(node)
                 if (isinstance(sub, ast.Attribute) and sub.attr == name)
                 or (isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name == name)),
                node.lineno,
            )
            how = "overrides or sets" if name in defined else "reads"
            findings.append(Finding(name, source.path, line, f"{node.name} {how} {base.__module__}.{base.__qualname__}.{name}"))
    for source in sources:
        findings.extend(_touches(source, ours))
    return findings


def _touches(source: Source, ours: set[str]) -> Iterator[Finding]:
    """The underscore attributes, imports and gunicorn module reads of one source."""
    gunicorn_modules: set[str] = set()
    for node in ast.walk(source.tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            library = library_of(node.module)
            if library is None:
                continue
            for alias in node.names:
                if library in UNDOCUMENTED_LIBRARIES or is_private(alias.name) or any(
                    is_private(part) for part in node.module.split(".")
                ):
                    yield Finding(alias.asname or alias.name, source.path, node.lineno,
                                  f"imports {node.module}.{alias.name}")
                if library in UNDOCUMENTED_LIBRARIES and inspect.ismodule(_imported(node.module, alias.name)):
                    gunicorn_modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                library = library_of(alias.name)
                if library is not None and (
                    library in UNDOCUMENTED_LIBRARIES or any(is_private(p) for p in alias.name.split("."))
                ):
                    yield Finding(alias.asname or alias.name, source.path, node.lineno, f"imports {alias.name}")
                    gunicorn_modules.add(alias.asname or alias.name)
    gunicorn_names = gunicorn_object_names() if gunicorn_modules or _imports_gunicorn(source.tree) else {}
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in gunicorn_modules:
                yield Finding(f"{node.value.id}.{node.attr}", source.path, node.lineno, "reads a gunicorn module")
            elif node.attr in gunicorn_names and node.attr not in ours:
                yield Finding(node.attr, source.path, node.lineno, f"reads or sets {gunicorn_names[node.attr]}")
            elif is_private(node.attr) and node.attr not in ours and node.attr not in STDLIB_DOCUMENTED:
                yield Finding(node.attr, source.path, node.lineno, "reads or sets a private attribute")
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
            and is_private(node.args[1].value) and node.args[1].value not in ours
        ):
            yield Finding(node.args[1].value, source.path, node.lineno, f"{node.func.id} of a private attribute")


# The gunicorn modules whose objects a worker handles (its worker, connections, parser,
# requests, unreader): an attribute of theirs read through any variable is gunicorn's.
GUNICORN_OBJECT_MODULES = (
    "gunicorn.workers.base", "gunicorn.workers.gthread", "gunicorn.http.parser", "gunicorn.http.message",
    "gunicorn.http.unreader", "gunicorn.http.body",
)


@cache
def gunicorn_object_names() -> dict[str, str]:
    """Attribute name -> the gunicorn class that has it (in its ``__dict__`` or set on
    ``self``), for the classes of :data:`GUNICORN_OBJECT_MODULES`; gunicorn's settings
    (documented, read as ``cfg.<setting>``) and a socket's methods (``fileno``, which
    gunicorn's classes also have) left out."""
    from gunicorn.config import KNOWN_SETTINGS

    settings = {setting.name for setting in KNOWN_SETTINGS} | set(dir(socket.socket))
    names: dict[str, str] = {}
    for module_path in GUNICORN_OBJECT_MODULES:
        module = importlib.import_module(module_path)
        for cls in vars(module).values():
            if isinstance(cls, type) and cls.__module__ == module_path:
                for name in sorted(set(vars(cls)) | set_on_self(cls)):
                    if not (name.startswith("__") and name.endswith("__")) and name not in settings:
                        names.setdefault(name, f"{module_path}.{cls.__qualname__}.{name}")
    return names


def _imports_gunicorn(tree: ast.Module) -> bool:
    return any(
        (isinstance(node, ast.ImportFrom) and node.level == 0 and library_of(node.module or "") == "gunicorn")
        or (isinstance(node, ast.Import) and any(library_of(a.name) == "gunicorn" for a in node.names))
        for node in ast.walk(tree)
    )


def _imported(module: str, name: str) -> object:
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def c_findings(path: Path) -> Iterator[Finding]:
    """CPython's private calls and object fields read in one C file."""
    text = C_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), path.read_text())
    for match in C_PRIVATE.finditer(text):
        name = match.group(1) or match.group(2)
        yield Finding(name, str(path.relative_to(REPO)), text.count("\n", 0, match.start()) + 1, "CPython's insides")


# gunicorn's settings file: its server hooks' arguments (the arbiter and a worker) are
# gunicorn objects whose attributes gunicorn does not document.
GUNICORN_CONF = REPO / "deploy/gunicorn.conf.py"
HOOK_ARGUMENTS = frozenset({"server", "worker"})


def hook_findings(path: Path) -> Iterator[Finding]:
    """What the server hooks of a gunicorn settings file read of the arbiter or a worker
    (``server.handle_term``), but for what the service's worker class defines itself."""
    from service.gunicorn_worker import WholeRequestWorker

    ours = {name for klass in WholeRequestWorker.__mro__ if library_of(klass.__module__) is None
            for name in vars(klass)}
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id in HOOK_ARGUMENTS and node.attr not in ours
        ):
            yield Finding(f"{node.value.id}.{node.attr}", str(path.relative_to(REPO)), node.lineno,
                          "a server hook reads gunicorn's arbiter or worker")


def service_findings() -> list[Finding]:
    py = sorted(SERVICE.rglob("*.py"))
    c = sorted(p for ext in ("*.c", "*.h") for p in SERVICE.rglob(ext))
    return python_findings(read_sources(py)) + [f for p in c for f in c_findings(p)] + list(hook_findings(GUNICORN_CONF))


def uncovered(findings: list[Finding]) -> list[Finding]:
    """The findings no inventory entry covers (its ``touched_as`` holds the name, its ``modules`` the file)."""
    listed = {(name, module) for part in PRIVATE_PARTS for name in part.touched_as for module in part.modules}
    return [f for f in findings if (f.name, f.path) not in listed]


# --- the tests ----------------------------------------------------------------------------


def test_every_private_part_touched_is_in_the_inventory() -> None:
    missing = uncovered(service_findings())
    assert not missing, "private library parts not in service/private_parts.py:\n" + "\n".join(
        f"{f.path}:{f.line}: {f.name} ({f.why})" for f in missing)


def stale(parts: tuple[PrivatePart, ...]) -> list[str]:
    """What each entry says it touches, where it no longer is (a word search of the file)."""
    found = []
    for part in parts:
        for module in part.modules:
            text = (REPO / module).read_text()
            found += [f"{part.name}: {name!r} not in {module}" for name in part.touched_as
                      if not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text)]
    return found


def test_every_entry_is_still_touched_where_it_says() -> None:
    for part in PRIVATE_PARTS:
        assert part.library in CHECKED_VERSIONS and part.modules and part.touched_as and part.buys, part
    assert not stale(PRIVATE_PARTS), "stale entries of service/private_parts.py:\n" + "\n".join(stale(PRIVATE_PARTS))


def test_a_stale_entry_is_found() -> None:
    gone = PrivatePart("flask", "flask.Flask._gone", ("_gone",), ("service/http/app.py",), "nothing any more")
    assert stale((gone,)) == ["flask.Flask._gone: '_gone' not in service/http/app.py"]


def test_entries_are_unique() -> None:
    names = [(part.library, part.name) for part in PRIVATE_PARTS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("library", sorted(CHECKED_VERSIONS))
def test_installed_version_was_checked(library: str) -> None:
    """A pin bumped without rechecking the inventory fails here (README, "Private parts of libraries")."""
    version = installed_version(library)
    assert version is not None and is_checked(version, CHECKED_VERSIONS[library]), (
        f"{library} {version} is not a version service/private_parts.py was checked on "
        f"({', '.join(CHECKED_VERSIONS[library])}): run the equivalence tests, recheck its entries, "
        "then add the version")


def test_the_c_guard_names_the_checked_cpython() -> None:
    """The wire codec's private calls compile in (``CHECKED_CPYTHON``) only for the CPython
    series the inventory was checked on."""
    text = (REPO / "service/http/_wire_native.c").read_text()
    guard = re.search(r"#if PY_VERSION_HEX >= 0x(\w{4})0000 && PY_VERSION_HEX < 0x(\w{4})0000\s*#define CHECKED_CPYTHON 1",
                      text)
    assert guard is not None
    low, high = (bytes.fromhex(g) for g in guard.groups())
    assert high == bytes((low[0], low[1] + 1))  # one minor
    assert CHECKED_VERSIONS[CPYTHON] == (f"{low[0]}.{low[1]}",)


def test_every_library_with_an_entry_has_checked_versions() -> None:
    assert {part.library for part in PRIVATE_PARTS} <= set(CHECKED_VERSIONS)
    assert CPYTHON in CHECKED_VERSIONS


def checked_version(library: str) -> str | None:
    """A version of ``library`` the list was checked on (the installed one may not be: make test-compat)."""
    versions = private_parts.CHECKED_VERSIONS.get(library)
    return versions[0] if versions else installed_version(library)


def test_unchecked_libraries_names_a_version_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(private_parts, "installed_version", checked_version)
    assert private_parts.unchecked_libraries() == {}
    monkeypatch.setattr(private_parts, "installed_version", lambda library: "0.1" if library == "flask" else
                        checked_version(library))
    assert private_parts.unchecked_libraries() == {"flask": "0.1"}


def test_warn_unchecked_logs_once_naming_each_library(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    log = private_parts.logging.getLogger("test.private_parts")
    monkeypatch.setattr(private_parts, "installed_version", checked_version)
    assert private_parts.warn_unchecked(log) == {} and not caplog.records
    monkeypatch.setattr(private_parts, "installed_version",
                        lambda library: {"gunicorn": "26.2.0", "werkzeug": None}.get(library, checked_version(library)))
    assert private_parts.warn_unchecked(log) == {"werkzeug": "absent", "gunicorn": "26.2.0"}
    assert len(caplog.records) == 1 and caplog.records[0].levelname == "WARNING"
    assert "gunicorn 26.2.0 (checked: 27.0.1)" in caplog.text and "werkzeug absent" in caplog.text


# --- the detector itself, on snippets -----------------------------------------------------


def snippet_findings(code: str, *others: str) -> set[str]:
    sources = [Source(f"snippet{i}.py", ast.parse(textwrap.dedent(text)), None)
               for i, text in enumerate((code, *others))]
    return {f.name for f in python_findings(sources) if f.path == "snippet0.py"}


def test_detector_finds_a_new_private_access() -> None:
    assert snippet_findings("""
        import flask
        app = flask.Flask(__name__)
        app._foo = 1
        print(flask.Flask._bar, getattr(app, "_baz"))
    """) == {"_foo", "_bar", "_baz"}


def test_detector_leaves_the_services_own_names() -> None:
    assert snippet_findings("""
        class Mine:
            def __init__(self):
                self._cache = {}
            def _helper(self):
                return self._cache
        def use(m):
            return m._helper(), m._cache, Point(1, 2)._replace(x=3)
    """) == set()


def test_detector_finds_private_imports_and_gunicorn_names() -> None:
    assert snippet_findings("""
        from werkzeug._internal import _log
        from gunicorn import util
        from gunicorn.workers.gthread import TConn
        util.close(None)
    """) == {"_log", "util", "TConn", "util.close"}


def test_detector_finds_overrides_of_library_classes() -> None:
    """(c), on a real class: what a subclass defines or reads that its library base has."""
    source = Source("service/gunicorn_worker.py", ast.parse((REPO / "service/gunicorn_worker.py").read_text()),
                    "service.gunicorn_worker")
    found = {(f.name, f.why.split()[0]) for f in python_findings([source])}
    assert {("handle_error", "WholeRequestWorker"), ("is_parent_alive", "WholeRequestWorker"),
            ("nr_conns", "WholeRequestWorker"), ("PIPE", "WholeRequestWorker"),
            ("__init__", "WholeRequestConn"), ("chunk", "BufferedUnreader")} <= found
    assert ("limits", "WholeRequestWorker") not in found  # the worker's own attribute


def test_detector_fails_on_a_new_private_access_in_a_real_module() -> None:
    """A scratch copy of app.py touching ``flask.Flask._foo`` is found, and no entry covers it."""
    path = "service/http/app.py"
    text = (REPO / path).read_text() + "\n\ndef scratch(app: Flask) -> object:\n    return app._foo\n"
    findings = python_findings([Source(path, ast.parse(text), "service.http.app")])
    assert [f.name for f in uncovered(findings)] == ["_foo"]
    assert not uncovered(python_findings(read_sources([REPO / path])))


def test_detector_reads_c_files() -> None:
    found = {f.name for f in c_findings(REPO / "service/http/_wire_native.c")}
    assert {"_PyDict_NewPresized", "d_member", "ob_digit", "PyUnstable_Long_IsCompact"} <= found
