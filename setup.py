"""The project's one compiled module: the Penguin family's search in C
(``service.solver.plugins._penguin_native``), declared here once.

``make`` builds it in place (``python setup.py build_ext --inplace``, next to its source,
so gunicorn and pytest import it from the repository root as they import ``service``),
and so does the container image's build stage. ``service/solver/plugins/penguin.py``
stays the interpreted reference and uses the module when it can be imported.

The rest of the package's metadata is in pyproject.toml.
"""

from setuptools import Extension, setup

# Appended after the interpreter's own CFLAGS (which may say -O3), so this level wins.
OPTIMIZE = "-O2"

setup(
    ext_modules=[
        Extension(
            "service.solver.plugins._penguin_native",
            ["service/solver/plugins/_penguin_native.c"],
            extra_compile_args=[OPTIMIZE],
        ),
    ],
)
