"""The HTTP status and message of every error the API answers with, in one table.

``app.py`` answers raised errors with it, and a queued job (``jobs.py``) records the same status
and message for its poller, so both ways of solving fail alike.
"""

from __future__ import annotations

import logging

from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.web.pool import QueueFullError, SolveTimeoutError, WorkerCrashedError

__all__ = ["ApiError", "STATUS", "http_error"]

log = logging.getLogger("puzzlezero.web")

#: the message of an unexpected error (the traceback goes to the server log only)
INTERNAL = "internal server error: the solver or server hit a bug (it has been logged)"


class ApiError(Exception):
    """A request the API refuses, with its HTTP status and a message for people."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


#: exception type -> HTTP status, most specific first (a missing model is a PuzzleError too)
STATUS: tuple[tuple[type[Exception], int], ...] = (
    (ModelFileError, 503),
    (PuzzleError, 400),
    (QueueFullError, 429),
    (SolveTimeoutError, 504),
    (WorkerCrashedError, 503),
)


def http_error(exc: BaseException) -> tuple[int, str]:
    """``(status, message)`` for ``exc``; anything unknown is a logged 500 with a short message."""
    if isinstance(exc, ApiError):
        return exc.status, str(exc)
    for kind, status in STATUS:
        if isinstance(exc, kind):
            return status, str(exc)
    log.error("internal error", exc_info=exc)
    return 500, INTERNAL
