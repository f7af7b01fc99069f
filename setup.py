"""The project's compiled modules, declared here once: the Penguin family's search in C
(``service.solver.plugins._penguin_native``), Forty Thieves' search parts
(``service.solver.plugins._forty_thieves_native``), the wire format's per-card passes
(``service.http._wire_native``) and the Penguin family's legal moves
(``service.engine._penguin_moves_native``).

``make`` builds them in place (``python setup.py build_ext --inplace``, each next to its source,
so gunicorn and pytest import it from the repository root as they import ``service``),
and so does the container image's build stage. Each plug-in (``penguin.py``,
``forty_thieves.py``), the wire format (``wire.py``) and the Penguin family's rules
(``service/engine/penguin.py``) stay the interpreted reference and use their module when it
can be imported.

The rest of the package's metadata is in pyproject.toml.
"""

from setuptools import Extension, setup

# Appended after the interpreter's own CFLAGS (which may say -O3), so this level wins.
OPTIMIZE = "-O2"
# The growable array and key set both modules include (a change rebuilds both).
KEYSET_HEADER = "service/solver/plugins/_native_keyset.h"

setup(
    ext_modules=[
        Extension(
            "service.solver.plugins._penguin_native",
            ["service/solver/plugins/_penguin_native.c"],
            depends=[KEYSET_HEADER],
            extra_compile_args=[OPTIMIZE],
        ),
        Extension(
            "service.solver.plugins._forty_thieves_native",
            ["service/solver/plugins/_forty_thieves_native.c"],
            depends=[KEYSET_HEADER],
            extra_compile_args=[OPTIMIZE],
        ),
        Extension(
            "service.http._wire_native",
            ["service/http/_wire_native.c"],
            extra_compile_args=[OPTIMIZE],
        ),
        Extension(
            "service.engine._penguin_moves_native",
            ["service/engine/_penguin_moves_native.c"],
            extra_compile_args=[OPTIMIZE],
        ),
    ],
)
