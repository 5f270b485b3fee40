"""The one part of the package that pyproject.toml cannot declare without setuptools' experimental
``ext-modules`` table: the compiled loops, C extensions (plain CPython API, no numpy headers):
the parser's record loop and the batch analysis's window loop. Building them needs a C compiler
and Python's headers (scripts/setup.sh installs Debian's gcc and python3-dev) and makes the
wheel specific to CPython 3.11 and the platform it is built on."""

from setuptools import Extension, setup

#: Both loops take their arrays through host/latscope/_pybuffers.h: found by ``include_dirs``;
#: in ``depends``, a change to it rebuilds them and setuptools puts it in the sdist.
SHARED = "host/latscope"


def compiled_loop(module: str, source: str) -> Extension:
    return Extension(module, [source], include_dirs=[SHARED], depends=[f"{SHARED}/_pybuffers.h"])


setup(
    ext_modules=[
        compiled_loop("latscope.link.record_loop", "host/latscope/link/record_loop.c"),
        compiled_loop("latscope.analysis.window_loop", "host/latscope/analysis/window_loop.c"),
    ]
)
