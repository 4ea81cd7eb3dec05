"""The version of this distribution, and its requirement ``puzzlezero==VERSION``, from the one
place the version is written: the core package's ``src/puzzlezero/_version.py``.

Why a setup.py and not ``[tool.setuptools.dynamic]``: setuptools reads a version attribute or
file only from inside the project's folder, and the core's ``_version.py`` lies two folders up.
In the checkout (an editable install, a wheel or sdist built from here) that file is read as it
is. A wheel built from this distribution's sdist (``python -m build`` builds the wheel that way)
has no checkout around it; there the sdist's own ``PKG-INFO``, written from the same file when the
sdist was made, gives the version. Both ways the two distributions carry one version, and this one
requires exactly the core of that version.
"""

from email.parser import Parser
from pathlib import Path
from runpy import run_path

from setuptools import setup

HERE = Path(__file__).resolve().parent
CORE_VERSION_FILE = HERE.parent.parent / "src" / "puzzlezero" / "_version.py"


def version() -> str:
    if CORE_VERSION_FILE.is_file():
        return str(run_path(str(CORE_VERSION_FILE))["__version__"])
    pkg_info = HERE / "PKG-INFO"
    if pkg_info.is_file():
        return str(Parser().parsestr(pkg_info.read_text(encoding="utf-8"))["Version"])
    raise SystemExit(f"no version: neither {CORE_VERSION_FILE} (a checkout) nor {pkg_info} (an sdist) exists")


VERSION = version()

setup(version=VERSION, install_requires=[f"puzzlezero=={VERSION}"])
