"""Import circles of the package: the strongly connected components of its module graph.

Reads every ``import`` statement of ``src/puzzlezero`` with :mod:`ast` (nothing is imported) and
prints the components of more than one module, three times: counting only module-level imports
(those that run when a module is first imported), counting the imports inside functions too, and
counting every import, those made only for type annotations (``if TYPE_CHECKING:`` blocks) too:
a reader of the code, and a tool that draws the import graph, sees those as well.

    python scripts/import_cycles.py [SRC_DIR]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = "puzzlezero"


def modules(src: Path) -> dict[str, Path]:
    """Module name -> file, for every ``.py`` file of the package under ``src``."""
    out = {}
    for path in sorted((src / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _target(name: str, known: dict[str, Path]) -> str | None:
    """The package module ``name`` stands for (itself, else its longest known prefix)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imports(
    module: str, path: Path, known: dict[str, Path], *, nested: bool, type_checking: bool = False
) -> set[str]:
    """The package modules ``module`` imports: at module level, inside functions too where
    ``nested``, and in ``TYPE_CHECKING`` blocks too where ``type_checking`` (else left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if not type_checking and isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            inner = top and not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import | ast.ImportFrom) and (top or nested):
                names: list[str] = []
                if isinstance(child, ast.Import):
                    names = [a.name for a in child.names]
                else:
                    base = child.module or ""
                    if child.level:
                        pkg = module.split(".") if is_pkg else module.split(".")[:-1]
                        pkg = pkg[: len(pkg) - (child.level - 1)]
                        base = ".".join(pkg + ([base] if base else []))
                    # ``from pkg import sub``: the submodule where ``sub`` is one, else ``pkg`` itself
                    names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in child.names]
                for n in names:
                    t = _target(n, known)
                    if t is not None and t != module:
                        out.add(t)
            visit(child, inner)

    visit(tree, True)
    return out


def components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm), largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    sys.setrecursionlimit(10_000)

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            strong(v)
    return sorted(out, key=len, reverse=True)


def main() -> None:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "src"
    known = modules(src)
    counts = (
        ("module-level imports", False, False),
        ("module-level and function-level imports", True, False),
        ("all imports, annotations included", True, True),
    )
    for what, nested, type_checking in counts:
        graph = {
            m: imports(m, p, known, nested=nested, type_checking=type_checking) for m, p in known.items()
        }
        comps = components(graph)
        print(f"{what}: {len(comps)} circle(s), {sum(map(len, comps))} modules in them")
        for comp in comps:
            print(f"  {len(comp)}: {' '.join(comp)}")


if __name__ == "__main__":
    main()
