"""The Santa 2023 competition's files, imported as definitions and case files.

The competition's files are downloaded by the user from the competition (they are not part of this
package: their licence is the competition's):

``puzzle_info.csv``
    ``puzzle_type,allowed_moves``: the moves of each type as a Python dict literal
    ``{'f0': [...], 'f1': [...], ...}``, array-form permutations (a move maps a state ``s`` to
    ``s[perm]``), forward moves only. It is read as data (:func:`ast.literal_eval` after a check of
    its characters), never run.
``puzzles.csv``
    ``id,puzzle_type,solution_state,initial_state,num_wildcards``: states are labels joined by
    ``;``; a state is solved when at most ``num_wildcards`` positions differ from the solution.
a submission (``sample_submission.csv`` or any ``id,moves`` file)
    moves joined by ``.``, ``-m`` for the inverse of ``m``.

:func:`import_santa` writes one definition per (puzzle type, solution state) and beside it one case
file of that definition's puzzles. Names:

* a goal that is one of the generated family's (:mod:`.families`), with the family's moves, takes
  the family's name and definition: ``cube_3-3-3`` for the standard goal (its case file names that
  built-in puzzle, so models trained on it apply), ``cube_3-3-3-distinct`` for the all-distinct one;
* otherwise a goal whose labels all differ adds ``-distinct`` to the type's name (``/`` written
  ``-``) unless the family's distinct goal has that name already, and any other goal ``-goal1``,
  ``-goal2``, ... (by the number of puzzles, most first); where the moves are the family's, such a
  definition keeps the family's moves (in its order, inverses included), pieces and drawing;
* a goal whose labels all differ, of a registered family whose own colours name every piece (the
  2x2x2 and the 3x3x3: :func:`colours_name_the_pieces`), has its cases read in those colours (each
  label the colour of its goal position; the case keeps ``given_state`` and ``given_goal``) and its
  case file names the family's puzzle, so its model and defaults solve them: a state that moves
  pieces as wholes reaches the goal of distinct labels exactly when it shows the family's colours.
  A goal any of whose cases allows wildcards (fewer differing colours are not fewer differing
  labels) or holds a piece's stickers apart is left as it is.

Moves keep the competition's names; the definition's checker adds each inverse as ``m'``, which
:func:`format_santa_moves` writes back as the competition's ``-m``.

A case file is ``{"puzzle": ..., "source": ..., "cases": [{"id", "state", "goal", "wildcards",
"best_known"?}]}``: ``puzzle`` is a built-in puzzle's name or the definition file's name beside it,
``best_known`` the length of the submission's solution, given only where replaying it (``s[perm]``
move by move) solves the case within its wildcards; the other solutions are listed in the summary's
:attr:`ImportSummary.rejected`.

Why one file: one format's importer, reading, checking and writing the competition's files, each
step bound to the files' conventions described above.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from puzzlezero.errors import DefinitionError
from puzzlezero.puzzles.permutation.colours import colours_name_the_pieces, keeps_the_pieces
from puzzlezero.puzzles.permutation.definition import (
    FORMAT,
    MAX_MOVES,
    MAX_POSITIONS,
    Definition,
    refuse_repeated_keys,
)

__all__ = [
    "ImportSummary",
    "ImportedPuzzle",
    "RejectedSolution",
    "SantaCase",
    "definition_json",
    "find_santa_files",
    "format_santa_moves",
    "import_santa",
    "read_allowed_moves",
    "read_puzzles",
    "read_submission",
    "santa_notation",
    "solves",
]

#: the characters a move dictionary may hold (names, numbers, brackets, quotes, separators)
_DICT_CHARS = re.compile(r"[\w\s'\",:\[\]{}.+-]*")
#: the largest competition file read (its puzzle_info.csv and puzzles.csv are a few megabytes)
MAX_CSV_BYTES = 256 * 1024 * 1024
_TYPE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
_FAMILY_GOALS = ("standard", "distinct", "alternating")
_PUZZLES_COLUMNS = ("id", "puzzle_type", "solution_state", "initial_state", "num_wildcards")


@dataclass(frozen=True)
class SantaCase:
    """One row of ``puzzles.csv``: states as ``;``-joined labels."""

    id: int
    puzzle_type: str
    goal: str
    state: str
    wildcards: int
    line: int


@dataclass(frozen=True)
class RejectedSolution:
    """A submission line that is not a solution of its case, and why."""

    id: int
    puzzle_type: str
    reason: str


@dataclass(frozen=True)
class ImportedPuzzle:
    """One definition written and its case file: ``puzzle`` is what the case file names (a
    built-in puzzle, or the definition file's name), ``family`` whether the definition is the
    generated family's, ``best_known`` how many cases got a checked solution length."""

    puzzle_type: str
    name: str
    puzzle: str
    definition: Path
    cases_file: Path
    cases: int
    best_known: int
    family: bool
    #: the registered puzzle whose colours these cases were read in (goals whose labels all differ,
    #: where the family's own colours name every piece: :func:`colours_name_the_pieces`)
    read_as: str | None = None

    @property
    def bench_puzzle(self) -> str:
        """What ``bench`` takes for these cases: the registered puzzle the case file names, else
        the definition file written beside it."""
        return str(self.definition) if self.puzzle == self.definition.name else self.puzzle


@dataclass(frozen=True)
class ImportSummary:
    """What :func:`import_santa` wrote: the puzzles (one definition and one case file each), the
    submission lines rejected, and notes (a type whose moves differ from its family's)."""

    out_dir: Path
    puzzles: tuple[ImportedPuzzle, ...]
    rejected: tuple[RejectedSolution, ...] = ()
    notes: tuple[str, ...] = ()
    solutions_checked: int = 0

    @property
    def files(self) -> tuple[Path, ...]:
        """Every file written: each definition, then its case file."""
        return tuple(p for imp in self.puzzles for p in (imp.definition, imp.cases_file))

    @property
    def cases_per_type(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for imp in self.puzzles:
            out[imp.puzzle_type] = out.get(imp.puzzle_type, 0) + imp.cases
        return out

    def lines(self) -> list[str]:
        """A report for people: one line per puzzle, then the rejected solutions and the notes."""
        out = [
            f"{imp.cases_file.name}: {imp.cases} case{'s' * (imp.cases != 1)} of {imp.puzzle_type} ({imp.puzzle}"
            + (", built-in" if imp.family and imp.puzzle == imp.name else "")
            + (", read in its colours" if imp.read_as else "")
            + (f"; {imp.best_known} best known" if imp.best_known else "")
            + ")"
            for imp in self.puzzles
        ]
        unknown = sum(1 for r in self.rejected if r.puzzle_type == "?")
        wrong = len(self.rejected) - unknown
        if self.solutions_checked or unknown:
            n = self.solutions_checked
            out.append(
                f"{n} submitted solution{'s' * (n != 1)} checked: {n - wrong} solve their puzzle, {wrong} do not"
                + (f"; {unknown} name no puzzle" if unknown else "")
            )
        out += [f"rejected id {r.id} ({r.puzzle_type}): {r.reason}" for r in self.rejected]
        out += self.notes
        return out


# ---- reading ------------------------------------------------------------------------------------
@contextmanager
def _big_fields() -> Iterator[None]:
    """csv's field size limit raised for the big cubes' move dictionaries (megabytes)."""
    old = csv.field_size_limit()
    csv.field_size_limit(1 << 30)
    try:
        yield
    finally:
        csv.field_size_limit(old)


def _rows(path: Path, columns: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line, row)`` of a CSV file with the header ``columns`` (others are ignored), at most
    :data:`MAX_CSV_BYTES` long."""
    try:
        size = path.stat().st_size
        if size > MAX_CSV_BYTES:
            raise DefinitionError(
                f"{path.name}: {size} bytes; the competition's files are read up to {MAX_CSV_BYTES}"
            )
        with _big_fields(), open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            missing = [c for c in columns if c not in header]
            if missing:
                raise DefinitionError(
                    f"{path.name}: the header lacks {', '.join(missing)} (expected {','.join(columns)})"
                )
            for row in reader:
                if any(row.get(c) is None for c in columns):
                    raise DefinitionError(
                        f"{path.name}: line {reader.line_num}: fewer fields than the header's"
                    )
                yield reader.line_num, {c: row[c] for c in columns}
    except OSError as exc:
        raise DefinitionError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise DefinitionError(f"{path.name}: not UTF-8 text") from None
    except csv.Error as exc:
        raise DefinitionError(f"{path.name}: not a readable CSV file ({exc})") from None


def _parse_moves(text: str, where: str) -> dict[str, list[int]]:
    if len(text) > 512 * 1024 * 1024 or not _DICT_CHARS.fullmatch(text):
        raise DefinitionError(
            f"{where}: allowed_moves must be a dict literal of move name -> list of positions"
        )
    try:  # the usual form, single-quoted names and lists of numbers, is JSON once quoted so
        value = json.loads(
            text.replace("'", '"'),
            object_pairs_hook=refuse_repeated_keys(f"{where}: allowed_moves names the move {{key!r}} twice"),
        )
    except DefinitionError:
        raise
    except (ValueError, RecursionError):
        try:
            tree = ast.parse(text.strip(), mode="eval")
            if isinstance(tree.body, ast.Dict):
                keys = [k.value for k in tree.body.keys if isinstance(k, ast.Constant)]
                refuse_repeated_keys(f"{where}: allowed_moves names the move {{key!r}} twice")(
                    [(k, None) for k in keys if isinstance(k, str)]
                )
            value = ast.literal_eval(tree)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise DefinitionError(f"{where}: allowed_moves is not a Python dict literal") from None
    if not isinstance(value, dict) or not value:
        raise DefinitionError(
            f"{where}: allowed_moves must be a non-empty dict of move name -> list of positions"
        )
    if len(value) > MAX_MOVES:
        raise DefinitionError(f"{where}: {len(value)} moves; at most {MAX_MOVES}")
    moves: dict[str, list[int]] = {}
    n: int | None = None
    for name, perm in value.items():
        if not isinstance(name, str) or not name or name.startswith("-") or re.search(r"[\s.;]", name):
            raise DefinitionError(
                f"{where}: move name {name!r} must be text without spaces, '.', ';' or a leading '-'"
            )
        if not isinstance(perm, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in perm
        ):
            raise DefinitionError(f"{where}: move {name!r} must be a list of whole numbers")
        n = len(perm) if n is None else n
        if len(perm) != n or not 1 <= n <= MAX_POSITIONS:
            raise DefinitionError(f"{where}: move {name!r} has {len(perm)} positions, the first move {n}")
        if sorted(perm) != list(range(n)):
            raise DefinitionError(f"{where}: move {name!r} is not a permutation of the positions 0..{n - 1}")
        if perm == list(range(n)):
            raise DefinitionError(f"{where}: move {name!r} moves nothing (it is the identity)")
        same = next((m for m, p in moves.items() if p == perm), None)
        if same is not None:
            raise DefinitionError(f"{where}: moves {same!r} and {name!r} are the same permutation")
        moves[name] = perm
    return moves


def read_allowed_moves(path: Path, types: Sequence[str] | None = None) -> dict[str, dict[str, list[int]]]:
    """``puzzle_info.csv``: puzzle type -> move name -> permutation (array form), in file order;
    only the ``types`` given (default all) are parsed."""
    wanted = None if types is None else set(types)
    out: dict[str, dict[str, list[int]]] = {}
    for line, row in _rows(Path(path), ("puzzle_type", "allowed_moves")):
        ptype = row["puzzle_type"].strip()
        if ptype in out:
            raise DefinitionError(f"{Path(path).name}: line {line}: the puzzle type {ptype!r} appears twice")
        if wanted is not None and ptype not in wanted:
            continue
        out[ptype] = _parse_moves(row["allowed_moves"], f"{Path(path).name}: line {line} ({ptype})")
    return out


def read_puzzles(path: Path) -> list[SantaCase]:
    """``puzzles.csv`` as cases (states checked for shape only: labels without spaces)."""
    p = Path(path)
    cases: list[SantaCase] = []
    seen: set[int] = set()
    for line, row in _rows(p, _PUZZLES_COLUMNS):
        where = f"{p.name}: line {line}"
        try:
            cid = int(row["id"])
            wildcards = int(row["num_wildcards"])
        except ValueError:
            raise DefinitionError(f"{where}: id and num_wildcards must be whole numbers") from None
        if cid in seen:
            raise DefinitionError(f"{where}: the id {cid} appears twice")
        if wildcards < 0:
            raise DefinitionError(f"{where}: num_wildcards must be 0 or more")
        seen.add(cid)
        goal, state = row["solution_state"].strip(), row["initial_state"].strip()
        for what, text in (("solution_state", goal), ("initial_state", state)):
            if not text or any(not lab or re.search(r"\s", lab) for lab in text.split(";")):
                raise DefinitionError(f"{where}: {what} must be labels without spaces joined by ';'")
        cases.append(SantaCase(cid, row["puzzle_type"].strip(), goal, state, wildcards, line))
    return cases


def read_submission(path: Path) -> dict[int, str]:
    """An ``id,moves`` CSV: id -> the moves text (``.``-joined, ``-m`` for inverses)."""
    p = Path(path)
    out: dict[int, str] = {}
    for line, row in _rows(p, ("id", "moves")):
        try:
            cid = int(row["id"])
        except ValueError:
            raise DefinitionError(f"{p.name}: line {line}: id must be a whole number") from None
        if cid in out:
            raise DefinitionError(f"{p.name}: line {line}: the id {cid} appears twice")
        out[cid] = row["moves"].strip()
    return out


def find_santa_files(folder: Path) -> tuple[Path, Path, Path | None]:
    """``puzzle_info.csv``, ``puzzles.csv`` and, where present, ``sample_submission.csv`` (or
    ``submission.csv``) of a folder of the competition's files."""
    folder = Path(folder)
    info, puzzles = folder / "puzzle_info.csv", folder / "puzzles.csv"
    for p in (info, puzzles):
        if not p.is_file():
            raise DefinitionError(f"{folder}: no {p.name}; download the competition's files into this folder")
    sub = next(
        (folder / s for s in ("submission.csv", "sample_submission.csv") if (folder / s).is_file()), None
    )
    return info, puzzles, sub


# ---- moves --------------------------------------------------------------------------------------
def solves(
    moves_text: str,
    allowed: Mapping[str, Sequence[int]],
    state: Sequence[str],
    goal: Sequence[str],
    wildcards: int,
) -> str | None:
    """Why ``moves_text`` (``.``-joined, ``-m`` for inverses) does not take ``state`` to ``goal``
    within ``wildcards`` differing positions, or ``None`` when it does."""
    perms = {m: np.asarray(p, dtype=np.int64) for m, p in allowed.items()}
    s = np.asarray(state, dtype=object)
    target = np.asarray(goal, dtype=object)
    if s.shape != target.shape:
        return f"the state has {s.size} labels and the goal {target.size}"
    tokens = moves_text.split(".") if moves_text else []
    inverses: dict[str, np.ndarray] = {}
    for k, tok in enumerate(tokens):
        name = tok[1:] if tok.startswith("-") else tok
        perm = perms.get(name)
        if perm is None:
            return f"move {k + 1} {tok!r} is not a move of this puzzle"
        if tok.startswith("-"):
            if name not in inverses:
                inverses[name] = np.argsort(perm)
            perm = inverses[name]
        s = s[perm]
    wrong = int((s != target).sum())
    if wrong > wildcards:
        return f"after its {len(tokens)} moves {wrong} positions differ from the goal ({wildcards} allowed)"
    return None


def format_santa_moves(names: Sequence[str], mapping: Mapping[str, str] | None = None) -> str:
    """Move names in the competition's notation: joined by ``.``, each name through ``mapping``
    (see :func:`santa_notation`) where it has one, else ``m'`` written ``-m``.

    >>> format_santa_moves(["f0", "r1'", "d0"])
    'f0.-r1.d0'
    """
    out = []
    for name in names:
        if mapping is not None and name in mapping:
            out.append(mapping[name])
        elif name.endswith("'") and len(name) > 1:
            out.append("-" + name[:-1])
        else:
            out.append(name)
    return ".".join(out)


def santa_notation(
    moves: Mapping[str, Sequence[int]], allowed: Mapping[str, Sequence[int]]
) -> dict[str, str]:
    """For a definition's ``moves``, each move's name in the competition's notation, matched by
    permutation: a competition move ``f0`` as ``f0``, its inverse as ``-f0``. Moves with no match
    are left out."""
    names: dict[bytes, str] = {}
    for m, perm in allowed.items():
        p = np.asarray(perm, dtype=np.int64)
        names.setdefault(p.tobytes(), m)
    for m, perm in allowed.items():
        p = np.asarray(perm, dtype=np.int64)
        names.setdefault(np.argsort(p).astype(np.int64).tobytes(), "-" + m)
    out: dict[str, str] = {}
    for m, perm in moves.items():
        hit = names.get(np.asarray(perm, dtype=np.int64).tobytes())
        if hit is not None:
            out[m] = hit
    return out


# ---- importing ----------------------------------------------------------------------------------
def _base_name(ptype: str) -> str:
    base = _TYPE_NAME.sub("-", ptype.replace("/", "-")).strip("-_.")
    return base[:48] or "santa"


def _family(ptype: str, goal: str) -> dict[str, Any] | None:
    try:
        from puzzlezero.puzzles.permutation.families import family_definition
    except ImportError:  # pragma: no cover - the module ships with the package
        return None
    try:
        out = family_definition(ptype, goal)
    except (ValueError, KeyError, TypeError):
        return None
    return dict(out)


def _family_matches(family: Mapping[str, Any], allowed: Mapping[str, list[int]]) -> bool:
    """Whether a family definition has exactly the competition's moves (plus their inverses
    ``m'``), with the same permutations."""
    fmoves = family.get("moves", {})
    if any(list(fmoves.get(m, ())) != perm for m, perm in allowed.items()):
        return False
    return all(m in allowed or (m.endswith("'") and m[:-1] in allowed) for m in fmoves)


def definition_json(defn: Mapping[str, Any]) -> str:
    """A definition as JSON text of one field a line and one move a line (a big cube's moves stay
    a few megabytes, where a number a line would triple them)."""
    lines = []
    for key, value in defn.items():
        if key == "moves" and isinstance(value, Mapping):
            moves = ",\n".join(
                f"    {json.dumps(m)}: {json.dumps(list(p), separators=(',', ':'))}" for m, p in value.items()
            )
            lines.append(f'  "moves": {{\n{moves}\n  }}')
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _goal_list(goal: Any) -> list[str]:
    return goal.split(";") if isinstance(goal, str) else [str(v) for v in goal]


def _in_colours(
    family: Mapping[str, Any], labels: Sequence[str], rows: Sequence[SantaCase]
) -> list[str] | None:
    """The states of ``rows`` (of the goal ``labels``, all different) in the family's colours,
    each label the colour of its goal position, where that loses nothing
    (:func:`colours_name_the_pieces`, :func:`keeps_the_pieces`, no wildcards); else ``None``."""
    if len(set(labels)) != len(labels) or not colours_name_the_pieces(family):
        return None
    states = [c.state.split(";") for c in rows]
    if any(c.wildcards for c in rows) or not all(keeps_the_pieces(family, labels, s) for s in states):
        return None
    colours = dict(zip(labels, _goal_list(family["goal"]), strict=True))
    return [";".join(colours[label] for label in s) for s in states]


def import_santa(
    puzzle_info: Path,
    puzzles: Path,
    out_dir: Path,
    *,
    submission: Path | None = None,
    types: Sequence[str] | None = None,
    registered: Collection[str] = (),
) -> ImportSummary:
    """Import the competition's files into ``out_dir`` (made if missing; files there of the same
    names are replaced): a definition ``{name}.json`` and a case file ``{name}.cases.json`` per
    (puzzle type, solution state), named as the module describes. ``types`` limits the import to
    some puzzle types (``cube_2/2/2`` or ``cube_2-2-2``); ``submission`` adds each case's
    ``best_known`` length from a checked solution. ``registered``: the names of the registered
    puzzles (``puzzlezero.registry.names()``); a case file of a generated family's usual goal
    names the family's puzzle where it is one of them (so its shipped model and defaults apply),
    else its definition file, as every other case file does (the competition's cubes of 8 layers
    and more, ``wreath_100/100`` and ``globe_33/3`` are generated, not registered)."""
    from puzzlezero.storage import atomic_write_json, atomic_write_text

    all_cases = read_puzzles(Path(puzzles))
    cases = all_cases
    present = list(dict.fromkeys(c.puzzle_type for c in cases))
    if types is not None:
        by_key = {t: t for t in present} | {_base_name(t): t for t in present}
        unknown = [t for t in types if t not in by_key]
        if unknown:
            raise DefinitionError(
                f"{Path(puzzles).name} has no puzzles of type {unknown[0]!r}; its types are {', '.join(present)}"
            )
        chosen = {by_key[t] for t in types}
        cases = [c for c in cases if c.puzzle_type in chosen]
        present = [t for t in present if t in chosen]
    allowed_all = read_allowed_moves(Path(puzzle_info), present)
    for c in cases:
        if c.puzzle_type not in allowed_all:
            raise DefinitionError(
                f"{Path(puzzles).name}: line {c.line}: the puzzle type {c.puzzle_type!r} is not in {Path(puzzle_info).name}"
            )
        n = len(next(iter(allowed_all[c.puzzle_type].values())))
        goal_labels, state = c.goal.split(";"), c.state.split(";")
        if len(goal_labels) != n or len(state) != n:
            raise DefinitionError(
                f"{Path(puzzles).name}: line {c.line}: {c.puzzle_type} has {n} positions; the solution state has "
                f"{len(goal_labels)} labels and the initial state {len(state)}"
            )
        if Counter(goal_labels) != Counter(state):
            raise DefinitionError(
                f"{Path(puzzles).name}: line {c.line}: the initial state's labels are not those of the solution state"
            )
        if c.wildcards >= n:
            raise DefinitionError(f"{Path(puzzles).name}: line {c.line}: num_wildcards must be below {n}")
    solutions = read_submission(Path(submission)) if submission is not None else {}
    all_ids = {c.id for c in all_cases}
    rejected: list[RejectedSolution] = [
        RejectedSolution(cid, "?", "no puzzle has this id") for cid in solutions if cid not in all_ids
    ]
    notes: list[str] = []
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DefinitionError(f"{out}: cannot make the folder: {exc.strerror or exc}") from None
    imported: list[ImportedPuzzle] = []
    taken: set[str] = set()
    checked = 0
    for ptype in present:
        allowed = allowed_all[ptype]
        rows = [c for c in cases if c.puzzle_type == ptype]
        goals = Counter(c.goal for c in rows)
        order = sorted(goals, key=lambda g: (-goals[g], next(i for i, c in enumerate(rows) if c.goal == g)))
        family_goals: dict[str, tuple[str, dict[str, Any]]] = {}
        template: dict[str, Any] | None = None
        for kind in _FAMILY_GOALS:
            fam = _family(ptype, kind)
            if fam is None:
                continue
            if not _family_matches(fam, allowed):
                notes.append(
                    f"{ptype}: the competition's moves differ from the generated {fam.get('name')}'s; "
                    "imported as its own puzzle, which the shipped models do not solve"
                )
                break
            template = template or fam
            family_goals.setdefault(";".join(_goal_list(fam["goal"])), (kind, fam))
        base = _base_name(ptype) if template is None else str(template["name"])
        family_names = {str(fam["name"]) for _, fam in family_goals.values()}
        k = 0
        for goal in order:
            labels = goal.split(";")
            hit = family_goals.get(goal)
            if hit is not None:
                kind, defn = hit
                name = str(defn["name"])
            else:
                kind = ""
                if len(set(labels)) == len(labels) and f"{base}-distinct" not in family_names:
                    name = f"{base}-distinct"
                else:
                    k += 1
                    name = f"{base}-goal{k}"
                if template is not None:
                    defn = {key: v for key, v in template.items() if key not in ("goal", "wildcards")}
                    defn["description"] = f"{template.get('description', ptype)}; another goal"[:500]
                else:
                    defn = {
                        "format": FORMAT,
                        "name": name,
                        "description": f"the Santa 2023 competition's {ptype}",
                        "positions": len(labels),
                        "moves": {m: list(p) for m, p in allowed.items()},
                    }
                defn["name"] = name
                defn["goal"] = labels
            while name in taken:  # two types of one name once written with '-' for '/'
                name = f"{name}-{len(taken)}"
                defn["name"] = name
            taken.add(name)
            def_path = out / f"{name}.json"
            if not kind:  # what is written reads back (a family's own definition is checked already)
                Definition.from_dict(
                    {key: v for key, v in defn.items() if key != "pieces"}, where=def_path.name
                )
            group = [c for c in rows if c.goal == goal]
            in_colours = None
            if template is not None and kind != "standard" and str(template["name"]) in registered:
                in_colours = _in_colours(template, labels, group)
            case_list: list[dict[str, Any]] = []
            best = 0
            for j, c in enumerate(group):
                entry: dict[str, Any] = {
                    "id": c.id,
                    "state": c.state,
                    "goal": c.goal,
                    "wildcards": c.wildcards,
                }
                if in_colours is not None and template is not None:
                    entry["state"] = in_colours[j]
                    entry["goal"] = ";".join(_goal_list(template["goal"]))
                    entry["given_state"], entry["given_goal"] = c.state, c.goal
                text = solutions.get(c.id)
                if text is not None:
                    checked += 1
                    why = solves(text, allowed, c.state.split(";"), labels, c.wildcards)
                    if why is None:
                        entry["best_known"] = len(text.split(".")) if text else 0
                        best += 1
                    else:
                        rejected.append(RejectedSolution(c.id, ptype, why))
                case_list.append(entry)
            puzzle = name if kind == "standard" and name in registered else def_path.name
            read_as = None
            if in_colours is not None and template is not None:
                puzzle = read_as = str(template["name"])
            sources = [Path(puzzles).name] + ([f"best_known: {Path(submission).name}"] if submission else [])
            cases_path = out / f"{name}.cases.json"
            atomic_write_text(def_path, definition_json(defn))
            atomic_write_json(
                cases_path,
                {
                    "puzzle": puzzle,
                    "source": "Santa 2023 competition: " + "; ".join(sources),
                    "cases": case_list,
                },
            )
            imported.append(
                ImportedPuzzle(
                    ptype, name, puzzle, def_path, cases_path, len(group), best, bool(kind), read_as
                )
            )
    return ImportSummary(
        out_dir=out,
        puzzles=tuple(imported),
        rejected=tuple(sorted(rejected, key=lambda r: r.id)),
        notes=tuple(notes),
        solutions_checked=checked,
    )
