"""The package's version, in one place: setuptools reads it for both distributions (this one's
``pyproject.toml`` and the research models' ``setup.py``), and ``puzzlezero.__version__`` is it."""

__version__ = "0.2.0"
