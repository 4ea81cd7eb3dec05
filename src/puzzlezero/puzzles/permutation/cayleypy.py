"""CayleyPy generator files: ``{"actions": [[perm], ...], "names": ["f0", ..., "f0'", ...]}``.

Each action is a permutation of the state's positions in array form: a move maps a state ``s`` to
``s[perm]`` (NumPy indexing), the native format's convention, so actions are taken as they are.
The files list the inverses (``f0'``) beside the moves; a move that is its own inverse may be
listed once or, in some files, twice (``f0`` and an identical ``f0'``): the second copy is
dropped, since a definition holds each permutation once. The files have no goal: the default is
every position its own label (``"0"``, ``"1"``, ...).

>>> d = read({"actions": [[1, 2, 0], [2, 0, 1]], "names": ["t", "t'"]}, name="three")
>>> d["moves"], d["goal"]
({'t': [1, 2, 0], "t'": [2, 0, 1]}, ['0', '1', '2'])
>>> write(d)
{'actions': [[1, 2, 0], [2, 0, 1]], 'names': ['t', "t'"]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from puzzlezero.errors import DefinitionError
from puzzlezero.puzzles.permutation.definition import FORMAT

__all__ = ["read", "write"]


def _where(source: str | None) -> str:
    return source or "CayleyPy generators"


def _int_list(value: Any, what: str, where: str) -> list[int]:
    if not isinstance(value, list | tuple) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise DefinitionError(f"{where}: {what} must be a list of whole numbers")
    return [int(v) for v in value]


def read(
    data: Mapping[str, Any],
    *,
    name: str,
    goal: Sequence[str] | None = None,
    source: str | None = None,
) -> dict[str, Any]:
    """A CayleyPy generator file (parsed JSON) as a native definition named ``name``.

    ``goal`` is the solved state's labels (default: position ``i`` labelled ``str(i)``);
    ``source`` names the file in error messages. Moves keep the file's names and order."""
    where = _where(source)
    if not isinstance(data, Mapping):
        raise DefinitionError(f"{where}: a generator file is a JSON object with 'actions' and 'names'")
    actions = data.get("actions")
    names = data.get("names")
    if not isinstance(actions, list) or not actions:
        raise DefinitionError(f"{where}: 'actions' must be a non-empty list of permutations")
    if not isinstance(names, list) or not all(isinstance(m, str) for m in names):
        raise DefinitionError(f"{where}: 'names' must be a list of move names (text)")
    if len(names) != len(actions):
        raise DefinitionError(f"{where}: {len(actions)} actions but {len(names)} names")
    perms = [_int_list(a, f"actions[{i}] ({names[i]!r})", where) for i, a in enumerate(actions)]
    n = len(perms[0])
    for i, perm in enumerate(perms):
        if len(perm) != n:
            raise DefinitionError(
                f"{where}: actions[{i}] ({names[i]!r}) has {len(perm)} positions, actions[0] has {n}"
            )
    moves: dict[str, list[int]] = {}
    for mname, perm in zip(names, perms, strict=True):
        if mname in moves:
            raise DefinitionError(f"{where}: the move name {mname!r} appears twice in 'names'")
        base = mname[:-1] if mname.endswith("'") else None
        if base is not None and moves.get(base) == perm and perm == _inverse(perm):
            continue  # the second listing of a move that is its own inverse
        moves[mname] = perm
    if goal is None:
        labels = [str(i) for i in range(n)]
    else:
        labels = list(goal)
        if len(labels) != n:
            raise DefinitionError(f"{where}: the goal has {len(labels)} labels for {n} positions")
    return {"format": FORMAT, "name": name, "positions": n, "moves": moves, "goal": labels}


def _inverse(perm: Sequence[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        if 0 <= p < len(perm):
            inv[p] = i
    return inv


def write(defn: Mapping[str, Any]) -> dict[str, Any]:
    """A native definition's moves as a CayleyPy generator file (the moves as listed, in order;
    inverses that the definition leaves implicit are not added). The goal is not part of the
    format and is left out."""
    moves = defn.get("moves")
    if not isinstance(moves, Mapping) or not moves:
        raise DefinitionError(f"{defn.get('name', 'definition')}: no moves to write")
    return {
        "actions": [[int(v) for v in perm] for perm in moves.values()],
        "names": [str(m) for m in moves],
    }
