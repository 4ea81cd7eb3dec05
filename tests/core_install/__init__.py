"""The core install: ``pip install puzzlezero`` without extras (no PyTorch, no matplotlib) solves,
values and benches with the shipped models, from the command line and the API.

``scripts/test_core_install.sh`` runs this folder in a fresh virtual environment holding only the
core package and pytest; there the tests call the installed ``puzzlezero`` console script. In the
development environment, where torch is installed, the same commands run in a subprocess that
blocks ``torch`` and ``matplotlib`` before anything is imported, so the main suite checks the same
contract."""
