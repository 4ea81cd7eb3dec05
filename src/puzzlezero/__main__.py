"""``python -m puzzlezero``: the same as the ``puzzlezero`` console script."""

import sys

from puzzlezero.cli.main import main

sys.exit(main())
