"""The project's own error types.

Every problem with user input (a state, a move sequence, a file, a name) is raised as
:class:`PuzzleError` (or a subclass) with a message a person can act on, for example
``"corner at UFR is twisted: no legal cube has this"``. The CLI and the web API catch
exactly this type and print/return its message; anything else is a bug.
"""

from __future__ import annotations

__all__ = [
    "PuzzleError",
    "InvalidStateError",
    "InvalidMoveError",
    "UnknownNameError",
    "ModelFileError",
    "PluginError",
    "DefinitionError",
    "LevelFileError",
    "MissingTableError",
    "BudgetError",
    "MemoryBudgetError",
    "TableTimeoutError",
    "FileBusyError",
    "CheckpointMismatchError",
    "StorageFullError",
    "MissingExtraError",
]


class PuzzleError(ValueError):
    """Base class of every error caused by bad input; its message is meant for people."""


class InvalidStateError(PuzzleError):
    """A state text or array that no legal puzzle position has (wrong length, parity, ...)."""


class InvalidMoveError(PuzzleError):
    """A move or move sequence that cannot be read or applied."""


class UnknownNameError(PuzzleError, KeyError):
    """An unknown puzzle, model or option name; the message lists the valid ones."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class ModelFileError(PuzzleError):
    """A model, checkpoint or table file that is missing, corrupt or from another version."""


class DefinitionError(PuzzleError):
    """A puzzle definition (a permutation puzzle given as data) that cannot be used: the file, the
    field and what is wrong are in the message."""


class PluginError(PuzzleError):
    """A plugin (a puzzle of one's own, :mod:`puzzlezero.plugins`) that cannot be found or that
    fails while it loads; the message names the file or module and, for a failure inside it, the line."""


class LevelFileError(PuzzleError):
    """A level file (Boxoban's ``; N`` text files of Sokoban levels) that cannot be read; the
    message starts with the file name and the line number (``000.txt: line 14: ...``)."""


class MissingTableError(PuzzleError):
    """A pattern-database or group table that is not built where building is not allowed (a web
    request never builds one); the message names the command that builds it
    (``puzzlezero pdb build ...``)."""


class BudgetError(PuzzleError):
    """A limit on nodes, seconds or memory that a request or an option asks to exceed; the message
    names the limit and what to lower."""


class MemoryBudgetError(BudgetError):
    """The estimated peak memory of a search or of loading a model is above the memory budget; the
    message gives the estimate, the budget and the option to lower."""


class TableTimeoutError(BudgetError):
    """A table (the group solver's, a pattern database) that a search needs and that was not built
    before its deadline; the message names the command that builds it without a limit
    (``puzzlezero pdb build ...``); ``seconds``: the time its build had (0 when none)."""

    def __init__(self, message: str, seconds: float = 0.0) -> None:
        super().__init__(message)
        self.seconds = seconds


class FileBusyError(PuzzleError):
    """Another process holds the lock of a training run folder or a cache table."""


class CheckpointMismatchError(ModelFileError):
    """A checkpoint written for another configuration or package version than the one resuming it;
    the message names what differs."""


class StorageFullError(PuzzleError):
    """A write failed because the disk is full or a file-size limit was reached; the file it would
    have replaced is left intact, and the message names it."""


class MissingExtraError(PuzzleError):
    """Something that needs an optional part of the package (an extra) that is not installed; the
    message names the extra and the command that installs it (``pip install "puzzlezero[train]"``).
    :attr:`extra` is the extra's name."""

    def __init__(self, message: str, extra: str) -> None:
        super().__init__(message)
        self.extra = extra

    def __reduce__(self) -> tuple[type, tuple[str, str]]:  # across processes (web workers) whole
        return type(self), (str(self), self.extra)
