"""Web app: a FastAPI JSON API (``/api``, docs at ``/docs``) and pages for the cube (cubing.js 3-D
view, SVG fallback) and the board puzzles. Start it with ``puzzlezero serve``.

Needs the ``web`` extra (FastAPI, uvicorn); the 3-D cube needs ``npm ci`` in the repository root.
"""

from puzzlezero.web.app import create_app
from puzzlezero.web.config import ServerConfig

__all__ = ["ServerConfig", "create_app"]
