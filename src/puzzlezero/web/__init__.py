"""Web app: a FastAPI JSON API (``/api``, docs at ``/docs``) and pages for the cube (cubing.js 3-D
view, SVG fallback) and the board puzzles. Start it with ``puzzlezero serve``.

Needs the ``web`` extra (FastAPI, uvicorn); the 3-D cube needs ``npm ci`` in the repository root.
The names below load on first use, so ``puzzlezero.web.config`` (the settings, read by the CLI's
help) imports without FastAPI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from puzzlezero.web.app import create_app
    from puzzlezero.web.config import ServerConfig

__all__ = ["ServerConfig", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from puzzlezero.web.app import create_app

        return create_app
    if name == "ServerConfig":
        from puzzlezero.web.config import ServerConfig

        return ServerConfig
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
