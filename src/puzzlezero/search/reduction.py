"""Temporary alias: this solver moved to :mod:`puzzlezero.classic.reduction` (the same module object)."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("puzzlezero.classic.reduction")
