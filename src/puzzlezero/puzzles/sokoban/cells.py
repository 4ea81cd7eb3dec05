"""Sokoban's cell codes: each cell of a state is a set of bit flags (see :mod:`.rules`), here apart
so that the generator, the dead-square finder and the viewer read them without importing the rules."""

from __future__ import annotations

__all__ = ["AGENT", "BOX", "TARGET", "WALL", "cell_name"]

WALL, TARGET, BOX, AGENT = 1, 2, 4, 8


def cell_name(code: int) -> str:
    """Words for a cell code, for error messages (``"a box on a target"``)."""
    return {
        0: "floor",
        WALL: "a wall",
        TARGET: "a target",
        BOX: "a box",
        BOX | TARGET: "a box on a target",
        AGENT: "the agent",
        AGENT | TARGET: "the agent on a target",
    }.get(int(code), f"the invalid code {int(code)}")
