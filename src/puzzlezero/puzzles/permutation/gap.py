"""GAP generators in cycle notation, as puzzle files for GAP write them::

    # a comment
    U:=( 1, 3, 8, 6)( 2, 5, 7, 4)( 9,33,25,17)(10,34,26,18);
    R:=(25,27,32,30)(26,29,31,28)( 3,38,43,19)( 5,36,45,21);
    Gen:=[U, R];
    ip:=[[1, 2, 3], [4, 5]];

Points are numbered from 1. Statements end with ``;`` and may span lines; ``#`` starts a comment.

* ``NAME:=permutation;`` defines a permutation: cycles ``(a,b,c)(d,e)`` (``()`` is the identity),
  or a product of cycles and names already defined, ``A*B`` (first ``A``, then ``B``, as in GAP),
  with powers ``A^2``, ``A^-1``.
* ``NAME:=[A, B, ...];`` or ``NAME:=Group(A, B, ...);`` (or ``Group(Gen)``) lists the generators:
  the puzzle's moves, in that order, named as the permutations are. Without such a list every
  permutation defined is a move, in the order of definition.
* ``ip:=[[points], ...];`` lists identical pieces: the points of one list hold identical labels in
  the goal; every other point has a label of its own.
* Whole-line comments may carry what cycle notation cannot: ``# positions: N`` (the number of
  positions, else the largest point named), ``# goal: A;A;B;...`` (the goal's labels, one per
  position) and ``# move: IDENT NAME`` (the move that GAP calls ``IDENT`` is named ``NAME``, for
  names that are no GAP identifiers, such as ``r'``).

Direction: GAP's permutation ``p`` maps point ``i`` to ``i^p``, i.e. the sticker at position ``i``
moves to position ``p(i)``. In the native array form (``child = parent[perm]``) the child has at
``p(i)`` what the parent had at ``i``, so ``perm[p(i)] = i``: the array is the inverse of ``p``'s
image list. For example ``(1,2,3)`` sends the sticker at 1 to 2, at 2 to 3 and at 3 to 1, which is
the array ``[2, 0, 1]``: ``["a", "b", "c"]`` becomes ``["c", "a", "b"]``.

GAP lists no inverses: the definition's checker adds them (``U'``).

>>> d = read("t:=(1,2,3);", name="three")
>>> d["moves"], d["goal"]
({'t': [2, 0, 1]}, ['0', '1', '2'])
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from puzzlezero.errors import DefinitionError
from puzzlezero.puzzles.permutation.definition import FORMAT, MAX_POSITIONS

__all__ = ["read", "write"]

_TOKEN = re.compile(r"(?P<int>\d+)|(?P<name>[A-Za-z_@][A-Za-z0-9_@]*)|(?P<assign>:=)|(?P<sym>[()\[\],*^;-])")
_DIRECTIVE = re.compile(r"#\s*(positions|goal|move)\s*:\s*(.*?)\s*$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MAX_POWER = 1_000_000
# GAP's keywords and the names the writer uses for its own lists
_RESERVED = frozenset(
    """and atomic break continue do elif else end false fi for function if in local mod not od or
    readonly readwrite rec repeat return then true until while quit QUIT IsBound Unbind TryNextMethod
    Info Assert Group Gen ip""".split()
)

Perm = dict[int, int]  # point -> image, 1-based, fixed points left out


@dataclass
class _Token:
    kind: str
    text: str
    line: int


def _compose(p: Perm, q: Perm) -> Perm:
    """``p*q`` in GAP's order: first ``p``, then ``q``."""
    out: Perm = {}
    for i in p.keys() | q.keys():
        j = p.get(i, i)
        k = q.get(j, j)
        if k != i:
            out[i] = k
    return out


def _inverse(p: Perm) -> Perm:
    return {v: k for k, v in p.items()}


def _power(p: Perm, k: int) -> Perm:
    if k < 0:
        p, k = _inverse(p), -k
    out: Perm = {}
    while k:
        if k & 1:
            out = _compose(out, p)
        p = _compose(p, p)
        k >>= 1
    return out


class _Parser:
    def __init__(self, text: str, where: str) -> None:
        self.where = where
        self.directives: list[tuple[str, str, int]] = []
        self.tokens: list[_Token] = []
        for lineno, raw in enumerate(text.splitlines(), start=1):
            code, _, comment = raw.partition("#")
            if not code.strip() and comment:
                m = _DIRECTIVE.match("#" + comment)
                if m:
                    self.directives.append((m.group(1), m.group(2), lineno))
            pos = 0
            while pos < len(code):
                if code[pos].isspace():
                    pos += 1
                    continue
                m = _TOKEN.match(code, pos)
                if not m or m.lastgroup is None:
                    self.fail(lineno, f"unexpected {code[pos]!r}")
                self.tokens.append(_Token(m.lastgroup, m.group(), lineno))
                pos = m.end()
        self.i = 0

    def fail(self, line: int, message: str) -> NoReturn:
        raise DefinitionError(f"{self.where}: line {line}: {message}")

    def peek(self) -> _Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def line(self) -> int:
        tok = self.peek()
        return tok.line if tok else (self.tokens[-1].line if self.tokens else 1)

    def take(self, text: str | None = None, kind: str | None = None, what: str = "") -> _Token:
        tok = self.peek()
        if tok is None or (text is not None and tok.text != text) or (kind is not None and tok.kind != kind):
            found = repr(tok.text) if tok else "the end of the text"
            self.fail(self.line(), f"expected {what or repr(text)}, found {found}")
        self.i += 1
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.text == text

    # ---- values ---------------------------------------------------------------------------------
    def point(self) -> int:
        tok = self.take(kind="int", what="a point (a whole number from 1)")
        value = int(tok.text)
        if not 1 <= value <= MAX_POSITIONS:
            self.fail(tok.line, f"point {value} is outside 1..{MAX_POSITIONS}")
        return value

    def cycle_next(self) -> bool:
        """Whether a cycle starts here: ``(`` followed by a point or by ``)``."""
        if not self.at("(") or self.i + 1 >= len(self.tokens):
            return False
        nxt = self.tokens[self.i + 1]
        return nxt.kind == "int" or nxt.text == ")"

    def cycles(self) -> Perm:
        """One or more cycles ``(a,b,c)(d,e)``; juxtaposed cycles multiply left to right."""
        out: Perm = {}
        while self.cycle_next():
            start = self.take("(")
            points: list[int] = []
            if not self.at(")"):
                points.append(self.point())
                while self.at(","):
                    self.take(",")
                    points.append(self.point())
            self.take(")", what="',' or ')' in a cycle")
            if len(set(points)) != len(points):
                twice = next(p for p in points if points.count(p) > 1)
                self.fail(start.line, f"point {twice} appears twice in one cycle")
            if len(points) > 1:
                out = _compose(out, {p: points[(k + 1) % len(points)] for k, p in enumerate(points)})
        return out

    def factor(self, perms: Mapping[str, Perm]) -> Perm:
        tok = self.peek()
        if tok is None:
            self.fail(self.line(), "expected a permutation, found the end of the text")
        if tok.text == "(":
            if self.cycle_next():
                value = self.cycles()
            else:
                self.take("(")
                value = self.product(perms)
                self.take(")", what="')'")
        elif tok.kind == "name":
            self.take()
            if tok.text not in perms:
                known = ", ".join(perms) or "none yet"
                self.fail(tok.line, f"{tok.text!r} is not a permutation defined above (defined: {known})")
            value = perms[tok.text]
        else:
            self.fail(tok.line, f"expected a permutation (cycles or a name), found {tok.text!r}")
        if self.at("^"):
            self.take("^")
            sign = -1 if self.at("-") else 1
            if sign < 0:
                self.take("-")
            exp = self.take(kind="int", what="a whole-number power")
            k = sign * int(exp.text)
            if abs(k) > _MAX_POWER:
                self.fail(exp.line, f"power {k} is outside -{_MAX_POWER}..{_MAX_POWER}")
            value = _power(value, k)
        return value

    def product(self, perms: Mapping[str, Perm]) -> Perm:
        value = self.factor(perms)
        while self.at("*"):
            self.take("*")
            value = _compose(value, self.factor(perms))
        return value

    def list_value(self) -> list[Any]:
        self.take("[")
        items: list[Any] = []
        if not self.at("]"):
            while True:
                tok = self.peek()
                if tok is not None and tok.text == "[":
                    items.append(self.list_value())
                elif tok is not None and tok.kind == "int":
                    items.append(self.point())
                elif tok is not None and tok.kind == "name":
                    self.take()
                    items.append(tok)
                else:
                    self.fail(
                        self.line(), "list entries must be names of permutations, points or lists of points"
                    )
                if not self.at(","):
                    break
                self.take(",")
        self.take("]", what="',' or ']' in a list")
        return items


@dataclass
class _Parsed:
    perms: dict[str, Perm]
    gens: list[str] | None
    ip: list[list[int]]
    directives: list[tuple[str, str, int]]


def _parse(text: str, where: str) -> _Parsed:
    p = _Parser(text, where)
    perms: dict[str, Perm] = {}
    lists: dict[str, list[str]] = {}
    gens: list[str] | None = None
    gens_line = 0
    ip: list[list[int]] | None = None
    while p.peek() is not None:
        if p.at(";"):
            p.take(";")
            continue
        name = p.take(kind="name", what="an assignment NAME:=...")
        p.take(":=", what="':='")
        tok = p.peek()
        new_gens: list[str] | None = None
        if tok is not None and tok.text == "[":
            items = p.list_value()
            if items and all(isinstance(x, list) for x in items):
                if name.text.lower() != "ip":
                    p.fail(
                        name.line, "a list of point lists is read only as ip:=[[...], ...] (identical pieces)"
                    )
                if not all(isinstance(v, int) for x in items for v in x):
                    p.fail(name.line, "ip must be a list of lists of points")
                ip = [list(x) for x in items]
            elif name.text.lower() == "ip" and not items:
                ip = []
            elif items and all(isinstance(x, _Token) for x in items):
                new_gens = []
                for x in items:
                    if x.text not in perms:
                        p.fail(x.line, f"{x.text!r} in the generator list is not a permutation defined above")
                    new_gens.append(x.text)
            else:
                p.fail(name.line, "a list must name permutations ([A, B]) or be ip:=[[points], ...]")
        elif tok is not None and tok.text == "Group":
            p.take()
            p.take("(", what="'(' after Group")
            args: list[str] = []
            if p.at("["):
                items = p.list_value()
                if not all(isinstance(x, _Token) for x in items):
                    p.fail(name.line, "Group([...]) must name permutations")
                args = [x.text for x in items]
            elif not p.at(")"):
                args.append(p.take(kind="name", what="a generator's name").text)
                while p.at(","):
                    p.take(",")
                    args.append(p.take(kind="name", what="a generator's name").text)
            p.take(")", what="')' after Group's generators")
            if len(args) == 1 and args[0] in lists:
                new_gens = lists[args[0]]
            else:
                for a in args:
                    if a not in perms:
                        p.fail(name.line, f"{a!r} in Group(...) is not a permutation defined above")
                new_gens = args
        else:
            perms[name.text] = p.product(perms)
        if new_gens is not None:
            if not new_gens:
                p.fail(name.line, "the generator list is empty")
            lists[name.text] = new_gens
            if gens is not None and new_gens != gens:
                p.fail(name.line, f"a second, different generator list (the first is on line {gens_line})")
            if gens is None:
                gens, gens_line = new_gens, name.line
        if p.peek() is None:
            p.fail(p.line(), "expected ';' at the end of the statement, found the end of the text")
        p.take(";", what="';' at the end of the statement")
    return _Parsed(perms, gens, ip or [], p.directives)


def read(text: str, *, name: str, source: str | None = None) -> dict[str, Any]:
    """GAP generator text as a native definition named ``name`` (``source`` names the file in
    error messages). See the module's description for the statements read."""
    where = source or "GAP generators"
    if not isinstance(text, str):
        raise DefinitionError(f"{where}: GAP generators are text")
    parsed = _parse(text, where)
    move_idents = parsed.gens if parsed.gens is not None else list(parsed.perms)
    if not move_idents:
        raise DefinitionError(f"{where}: no permutations defined (expected lines like M:=(1,2,3)(4,5);)")
    largest = 0
    for ident in move_idents:
        if parsed.perms[ident]:
            largest = max(largest, max(parsed.perms[ident]))
    for group in parsed.ip:
        largest = max([largest, *group])
    positions: int | None = None
    goal_text: tuple[str, int] | None = None
    renames: dict[str, str] = {}
    for key, value, line in parsed.directives:
        if key == "positions":
            if not value.isdigit() or not 1 <= int(value) <= MAX_POSITIONS:
                raise DefinitionError(
                    f"{where}: line {line}: '# positions:' needs a whole number from 1 to {MAX_POSITIONS}"
                )
            positions = int(value)
            if positions < largest:
                raise DefinitionError(
                    f"{where}: line {line}: '# positions: {positions}' but point {largest} is named"
                )
        elif key == "goal":
            goal_text = (value, line)
        else:
            parts = value.split()
            if len(parts) != 2 or parts[0] not in move_idents:
                raise DefinitionError(
                    f"{where}: line {line}: '# move:' needs the GAP name of a move and its name, e.g. '# move: U_inv U''"
                )
            renames[parts[0]] = parts[1]
    n = positions if positions is not None else largest
    if n < 1:
        raise DefinitionError(f"{where}: the permutations move no point; add '# positions: N'")
    owner: dict[int, int] = {}
    for k, group in enumerate(parsed.ip):
        for pt in group:
            if pt in owner:
                raise DefinitionError(f"{where}: ip: point {pt} is in two lists of identical pieces")
            owner[pt] = k
    if goal_text is not None:
        labels = goal_text[0].split(";")
        if len(labels) != n:
            raise DefinitionError(
                f"{where}: line {goal_text[1]}: '# goal:' has {len(labels)} labels for {n} positions"
            )
        for group in parsed.ip:
            if len({labels[pt - 1] for pt in group}) > 1:
                raise DefinitionError(
                    f"{where}: line {goal_text[1]}: '# goal:' gives different labels to points {group}, "
                    "which ip lists as identical"
                )
    else:
        labels = [str(j) for j in range(n)]
        for group in parsed.ip:
            first = str(min(group) - 1)
            for pt in group:
                labels[pt - 1] = first
    moves: dict[str, list[int]] = {}
    for ident in move_idents:
        mname = renames.get(ident, ident)
        if mname in moves:
            raise DefinitionError(f"{where}: the move {mname!r} is listed twice")
        perm = list(range(n))
        for i, image in parsed.perms[ident].items():
            perm[image - 1] = i - 1  # child[p(i)] = parent[i]
        moves[mname] = perm
    return {"format": FORMAT, "name": name, "positions": n, "moves": moves, "goal": labels}


# ---- writing ------------------------------------------------------------------------------------
def _identifiers(names: Sequence[str]) -> list[str]:
    out: list[str] = []
    taken: set[str] = set()
    for name in names:
        ident = re.sub(r"[^A-Za-z0-9_]", "_", name.replace("'", "_inv"))
        if not _IDENT.fullmatch(ident):
            ident = f"M_{ident}"
        base, k = ident, 2
        while ident in taken or ident in _RESERVED:
            ident = f"{base}_{k}"
            k += 1
        taken.add(ident)
        out.append(ident)
    return out


def _goal(defn: Mapping[str, Any], n: int) -> list[str]:
    goal = defn.get("goal")
    labels = goal.split(";") if isinstance(goal, str) else [str(v) for v in goal or []]
    if len(labels) != n:
        raise DefinitionError(
            f"{defn.get('name', 'definition')}: the goal has {len(labels)} labels for {n} positions"
        )
    return labels


def _cycles(perm: Sequence[int]) -> str:
    n = len(perm)
    image = [0] * n  # p(i): where the sticker at i goes, the inverse of the array form
    for i, src in enumerate(perm):
        image[int(src)] = i
    seen = [False] * n
    parts: list[str] = []
    for start in range(n):
        if seen[start] or image[start] == start:
            continue
        cycle = []
        i = start
        while not seen[i]:
            seen[i] = True
            cycle.append(str(i + 1))
            i = image[i]
        parts.append("(" + ",".join(cycle) + ")")
    return "".join(parts) or "()"


def _wrap(head: str, body: str, width: int = 100) -> list[str]:
    lines: list[str] = []
    line = head
    for piece in re.findall(r"\([^)]*\)", body) or [body]:
        if len(line) + len(piece) > width and line.strip():
            lines.append(line)
            line = "  "
        line += piece
    lines.append(line + ";")
    return lines


def write(defn: Mapping[str, Any]) -> str:
    """A native definition as GAP text: each move in cycle notation, ``Gen:=[...]`` listing the
    moves in order, ``ip`` for the goal's repeated labels, and ``# positions:``, ``# goal:`` and
    ``# move:`` comments so that :func:`read` gives the same definition back."""
    moves = defn.get("moves")
    n = defn.get("positions")
    name = str(defn.get("name", "puzzle"))
    if not isinstance(moves, Mapping) or not moves or not isinstance(n, int):
        raise DefinitionError(f"{name}: a definition needs 'positions' and 'moves' to be written")
    labels = _goal(defn, n)
    names = [str(m) for m in moves]
    idents = _identifiers(names)
    description = str(defn.get("description", "")).replace("\n", " ")
    out = [f"# {name}" + (f": {description}" if description else ""), f"# positions: {n}"]
    out.append("# goal: " + ";".join(labels))
    out += [f"# move: {ident} {m}" for ident, m in zip(idents, names, strict=True) if ident != m]
    for ident, perm in zip(idents, moves.values(), strict=True):
        if len(perm) != n:
            raise DefinitionError(
                f"{name}: move {names[idents.index(ident)]!r} has {len(perm)} positions, not {n}"
            )
        out += _wrap(f"{ident}:=", _cycles(perm))
    out.append("Gen:=[" + ", ".join(idents) + "];")
    groups: dict[str, list[int]] = {}
    for j, lab in enumerate(labels):
        groups.setdefault(lab, []).append(j + 1)
    ip = [g for g in groups.values() if len(g) > 1]
    if ip:
        out.append("ip:=[" + ", ".join("[" + ",".join(map(str, g)) + "]" for g in ip) + "];")
    return "\n".join(out) + "\n"
