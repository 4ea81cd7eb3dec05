"""Build of the optional C kernel (everything else is in pyproject.toml).

The sliding-puzzle IDA* kernel is compiled when a C compiler is available; without one the install
still succeeds and the numba kernel is used instead (``optional=True``).
"""

import sys

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "puzzlezero.classic.optimal._csliding",
            ["src/puzzlezero/classic/optimal/_csliding.c"],
            extra_compile_args=[] if sys.platform == "win32" else ["-O3"],
            optional=True,
        )
    ]
)
