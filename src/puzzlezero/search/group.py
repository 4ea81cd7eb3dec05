"""Temporary alias: this solver moved to :mod:`puzzlezero.classic.group` (the same module object)."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("puzzlezero.classic.group")
