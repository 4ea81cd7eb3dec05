#!/usr/bin/env python
"""Write a benchmark case file of random states: ``puzzlezero cases`` under its former name.

Example (the cube2 set used for the shipped model's card):
    python scripts/make_cases.py cube2 --n 1000 --depth 100 200 --seed 2026 --out benchmarks/cube2_random1000.json
is ``puzzlezero cases cube2 --n 1000 --depth 100 200 --seed 2026 --out benchmarks/cube2_random1000.json``.
"""

from __future__ import annotations

import sys

from puzzlezero.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["cases", *sys.argv[1:]]))
