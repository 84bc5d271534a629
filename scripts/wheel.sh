#!/usr/bin/env bash
# `make wheel`: the abi3 wheel and the sdist of the Python package, built into
# $CARGO_TARGET_DIR/wheels (target/wheels) through the package's own build backend
# (python/build_backend.py: maturin, after cargo builds the native `claimdag` command the
# wheel carries), with the licence files inside both. maturin comes from PyPI into the
# project's virtual environment (.venv) the first time.
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
# The hooks pip calls (PEP 517), called the same way: the sdist, then the wheel (release),
# tagged with the manylinux policy maturin finds its libraries to meet (for a local
# `pip install`, maturin tags it linux_x86_64). maturin builds into target/wheels itself and
# copies the wheel out, so the hooks write into a scratch directory first.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
"$VENV/bin/python" - "$scratch" <<'PY'
import sys
sys.path.insert(0, "python")
import build_backend
print("== sdist:", build_backend.build_sdist(sys.argv[1]), flush=True)
settings = {"build-args": "--compatibility pypi"}
print("== wheel:", build_backend.build_wheel(sys.argv[1], settings), flush=True)
PY
mv "$scratch"/* "$out"/
ls -l "$out"
