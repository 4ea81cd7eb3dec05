#!/usr/bin/env bash
# Install what the browser tests (tests/web/test_browser.py, `pytest -m browser`) need, when missing:
# Debian's Chromium and ChromeDriver via apt-get, and the Python Playwright driver via pip.
# Playwright is only the driver: it runs /usr/bin/chromium (`executable_path`); never run
# `playwright install`, which downloads a browser of its own.
# Usage: scripts/install_browser.sh [PYTHON]   (default: python3)
set -euo pipefail

PYTHON=${1:-python3}

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    echo "chromium: $(/usr/bin/chromium --version 2>/dev/null | head -n1)"
else
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        SUDO="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver
    echo "installed: $(/usr/bin/chromium --version 2>/dev/null | head -n1)"
fi

if "$PYTHON" -c "import playwright" 2>/dev/null; then
    echo "playwright: $("$PYTHON" -m pip show playwright 2>/dev/null | sed -n 's/^Version: //p')"
else
    "$PYTHON" -m pip install --quiet "playwright>=1.40"
    echo "installed playwright (driver only; the browser is /usr/bin/chromium)"
fi
