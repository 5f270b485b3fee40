"""The one part of the package that pyproject.toml cannot declare without setuptools' experimental
``ext-modules`` table: the parser's record loop, a C extension (plain CPython API, no numpy
headers). Building it needs a C compiler and Python's headers (scripts/setup.sh installs
Debian's gcc and python3-dev) and makes the wheel specific to CPython 3.11 and the platform it
is built on."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("latscope.link.record_loop", ["host/latscope/link/record_loop.c"])])
