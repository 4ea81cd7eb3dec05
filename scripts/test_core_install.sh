#!/usr/bin/env bash
# Test the core install, `pip install puzzlezero` without extras, in a fresh virtual environment:
#   1. a new venv (python3 -m venv) gets the core package (from this checkout, or from a wheel
#      with --wheels) with constraints.txt, and pytest, nothing else;
#   2. torch and matplotlib (the train extra) must not be importable there;
#   3. tests/core_install runs in it: the installed `puzzlezero` command and the API solve a cube
#      and a 15-puzzle with the shipped models, value a state, bench generated cases, print the
#      version, and `puzzlezero train` names the extra it needs;
#   4. the research models' companion is added (from packages/, or its wheel with --wheels) and
#      its tests run: its models are found by name.
# Prints the install time and the venv's size.
# Usage: scripts/test_core_install.sh [--wheels DIR] [--keep VENV_DIR]
#   --wheels DIR   install the wheels in DIR (scripts/build_dists.sh DIR builds them)
#   --keep DIR     make the venv at DIR and leave it there (default: a temporary folder, removed)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

WHEELS=""
VENV=""
while [ $# -gt 0 ]; do
    case "$1" in
        --wheels) WHEELS=$(cd "$2" && pwd); shift 2 ;;
        --keep) VENV=$2; shift 2 ;;
        *) echo "usage: $0 [--wheels DIR] [--keep VENV_DIR]" >&2; exit 2 ;;
    esac
done
if [ -z "$VENV" ]; then
    TMP=$(mktemp -d)
    trap 'rm -rf "$TMP"' EXIT
    VENV=$TMP/venv
fi
PY=${PYTHON:-python3}

if [ -n "$WHEELS" ]; then
    core=$(ls "$WHEELS"/puzzlezero-*.whl)
    companion=$(ls "$WHEELS"/puzzlezero_research_models-*.whl)
else
    core=$ROOT
    companion=$ROOT/packages/puzzlezero-research-models
fi

rm -rf "$VENV"
start=$(date +%s)
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q -c constraints.txt "$core" pytest
install_seconds=$(( $(date +%s) - start ))
echo "core install: ${install_seconds} s, venv $(du -sh "$VENV" | cut -f1) ($VENV)"

for module in torch matplotlib; do
    if "$VENV/bin/python" -c "import $module" 2>/dev/null; then
        echo "error: $module is importable in the core install (it belongs to the train extra)" >&2
        exit 1
    fi
done
echo "torch and matplotlib: not installed, as expected"

# -p no:cacheprovider: nothing written into the checkout; the tests import the installed package
# (the checkout's src/ is not on sys.path)
"$VENV/bin/python" -m pytest -q -p no:cacheprovider -p no:warnings tests/core_install

"$VENV/bin/python" -m pip install -q -c constraints.txt "$companion"
echo "with puzzlezero-research-models: venv $(du -sh "$VENV" | cut -f1)"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider -p no:warnings \
    tests/core_install/test_research_models.py tests/core_install/test_distributions.py
