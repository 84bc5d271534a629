#!/usr/bin/env bash
# The Python tests, from nothing: a virtual environment at .venv (repo root), the test tools
# from PyPI, the package built and installed with `pip install .` (maturin, release build),
# then pytest over tests/python. Exits non-zero on any failure, and when no test ran.
set -euo pipefail
cd "$(dirname "$0")/../.."

PYTHON="${PYTHON:-python3}"
VENV=.venv

if [ ! -x "$VENV/bin/python" ]; then
    echo "== creating $VENV with $("$PYTHON" --version 2>&1)"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
fi
PY="$VENV/bin/python"

echo "== installing the test tools (type checkers, the agent frameworks test_mcp_frameworks loads, and the HTTP client test_serve uses)"
# pyright is pinned: test_stubs asserts the exact lines it refuses. Its wheel carries its
# JavaScript, and the nodejs extra brings node from PyPI (no npm registry needed).
"$PY" -m pip install --quiet --progress-bar off --upgrade "pip>=23" "pytest>=7" "mypy>=1.10" \
    "pyright[nodejs]==1.1.414" "mcp>=2,<3" "openai-agents>=0.24" "pydantic-ai-slim[mcp]>=2.68" \
    "httpx>=0.27" "prometheus-client>=0.20" "selenium>=4.20"

# test_dashboard drives Debian's chromium, headless, through Debian's chromedriver.
bash scripts/need.sh chromium chromedriver=chromium-driver

# langchain-mcp-adapters needs the MCP SDK 1.x: an environment of its own, which
# test_mcp_frameworks runs a script in (it talks to the server only, not the module).
LC_VENV=.venv-langchain
if [ ! -x "$LC_VENV/bin/python" ]; then
    rm -rf "$LC_VENV"
    "$PYTHON" -m venv "$LC_VENV"
fi
"$LC_VENV/bin/python" -m pip install --quiet --progress-bar off --upgrade "pip>=23" \
    "mcp>=1.24,<2" "langchain-mcp-adapters>=0.3.2"
export CLAIMDAG_LANGCHAIN_PYTHON="$PWD/$LC_VENV/bin/python"

echo "== pip install . (builds the native claimdag command and module in release mode)"
"$PY" -m pip install --quiet --progress-bar off .

echo "== cargo build --release -p claimdag-capi (the C library for test_same_json)"
"${CARGO:-cargo}" build --release -p claimdag-capi
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
export CLAIMDAG_C_LIB_DIR="$target/release"
# test_same_json's C program asks the loader for the library's soname (libclaimdag.so.0).
bash scripts/soname-link.sh "$CLAIMDAG_C_LIB_DIR"
# The command the wheel installed, with its MCP server: test_mcp drives it through the
# official MCP Python SDK.
export CLAIMDAG_CLI="$PWD/$VENV/bin/claimdag"

echo "== a throwaway PostgreSQL server (scripts/pg.sh) for tests/python/test_postgres.py"
pgdir="$(mktemp -d)/pg"
CLAIMDAG_TEST_PG="$(bash scripts/pg.sh start "$pgdir")"
# test_postgres restarts it (scripts/pg.sh restart) to see every door reconnect.
export CLAIMDAG_TEST_PG_DIR="$pgdir"
export CLAIMDAG_TEST_PG
trap 'bash scripts/pg.sh stop "$pgdir" >/dev/null 2>&1 || true' EXIT

echo "== pytest tests/python"
status=0
"$PY" -m pytest -p no:cacheprovider tests/python "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "error: pytest collected no tests" >&2
    exit 1
fi
exit "$status"
