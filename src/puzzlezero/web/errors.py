"""The HTTP status and message of every error the API answers with, in one table.

``app.py`` answers raised errors with it, a queued job (``jobs.py``) records the same status and
message for its poller, and an error a worker reports by its class name (``{"error", "kind"}``)
gets the status of that class, so every way of solving fails alike.
"""

from __future__ import annotations

import logging

from puzzlezero import errors
from puzzlezero.errors import BudgetError, MissingTableError, ModelFileError, PuzzleError
from puzzlezero.web.line import QueueFullError, SolveTimeoutError, WorkerCrashedError

__all__ = ["ApiError", "STATUS", "http_error", "worker_error"]

log = logging.getLogger("puzzlezero.web")

#: the message of an unexpected error (the traceback goes to the server log only)
INTERNAL = "internal server error: the solver or server hit a bug (it has been logged)"


class ApiError(Exception):
    """A request the API refuses, with its HTTP status and a message for people."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


#: exception type -> HTTP status, most specific first (a missing model is a PuzzleError too).
#: 503: the server lacks something a request needs (a model file, a table its operator builds
#: with ``puzzlezero pdb build``, a worker); 422: the request asks for more than a limit allows
#: (memory, nodes, seconds); 429: the line, or this client's share of it, is full (``Retry-After``).
STATUS: tuple[tuple[type[Exception], int], ...] = (
    (ModelFileError, 503),
    (MissingTableError, 503),
    (BudgetError, 422),
    (PuzzleError, 400),
    (QueueFullError, 429),
    (SolveTimeoutError, 504),
    (WorkerCrashedError, 503),
)

#: the project's error classes by name, as a worker reports them (``run_job``'s ``"kind"``)
_PUZZLE_ERRORS: dict[str, type[PuzzleError]] = {
    name: cls
    for name in errors.__all__
    if isinstance(cls := getattr(errors, name), type) and issubclass(cls, PuzzleError)
}


def http_error(exc: BaseException) -> tuple[int, str]:
    """``(status, message)`` for ``exc``; anything unknown is a logged 500 with a short message."""
    if isinstance(exc, ApiError):
        return exc.status, str(exc)
    for kind, status in STATUS:
        if isinstance(exc, kind):
            return status, str(exc)
    log.error("internal error", exc_info=exc)
    return 500, INTERNAL


def worker_error(message: str, kind: str) -> ApiError:
    """The error to answer for a worker's ``{"error": message, "kind": class name}``: the status
    of that :mod:`puzzlezero.errors` class (another class name, a plugin's own error: 400)."""
    cls = _PUZZLE_ERRORS.get(kind, PuzzleError)
    status = next(status for k, status in STATUS if issubclass(cls, k))
    return ApiError(status, message)
