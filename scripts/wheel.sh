#!/usr/bin/env bash
# `make wheel`: the abi3 wheel and the sdist of the Python package, built by maturin into
# $CARGO_TARGET_DIR/wheels (target/wheels), with the licence files inside both. maturin
# comes from PyPI into the project's virtual environment (.venv) the first time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
PYTHON="${PYTHON:-python3}"
VENV=.venv
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
out="$target/wheels"

if [ ! -x "$VENV/bin/python" ]; then
  echo "== creating $VENV with $("$PYTHON" --version 2>&1)"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
fi
# The range of [build-system] requires in pyproject.toml.
if ! "$VENV/bin/python" -m maturin --version >/dev/null 2>&1; then
  echo "== installing maturin into $VENV"
  "$VENV/bin/python" -m pip install --quiet --progress-bar off "maturin>=1.9.4,<2"
fi

mkdir -p "$out"
# Only this build's files in the directory, so that claimdag-*.whl names one wheel.
rm -f "$out"/claimdag-*.whl "$out"/claimdag-*.tar.gz
echo "== maturin build --release (abi3 wheel)"
"$VENV/bin/python" -m maturin build --release --out "$out"
echo "== maturin sdist"
"$VENV/bin/python" -m maturin sdist --out "$out"
ls -l "$out"
