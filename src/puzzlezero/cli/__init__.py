"""The ``puzzlezero`` command line (typer). Each group of commands lives in its own module."""
