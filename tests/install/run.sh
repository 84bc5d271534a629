#!/usr/bin/env bash
# make install, pkg-config, make uninstall and make wheel, the way a C/C++ host and a Python
# team use them:
#
#   - make install into a new, empty prefix whose path has a space; a C and a C++ program
#     built with nothing but pkg-config's flags, against the shared and the static library,
#     run the walkthrough; make uninstall leaves the prefix empty (and so does it after two
#     installs under a DESTDIR);
#   - make wheel; the wheel installs into a fresh venv with no Rust toolchain on PATH, and
#     `import claimdag` and the `claimdag` command work from there; the command is the
#     native executable with every feature (mcp answers the official MCP SDK, pane, copy,
#     work); `import claimdag` starts no thread; auditwheel finds the manylinux policy of the
#     wheel's tag; the metadata is complete; the licence files are in the wheel and the
#     sdist; pip installs from the sdist too;
#   - one version everywhere: claimdag --version, claimdag_version(), claimdag.__version__
#     and pkg-config's Version are the workspace version of Cargo.toml.
#
# Prints "ok - ..." a check and "N passed, M failed"; exits non-zero on any failure.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
CARGO="${CARGO:-cargo}"
CC="${CC:-gcc}"
CXX="${CXX:-g++}"
PYTHON="${PYTHON:-python3}"
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac

if ! command -v pkg-config >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "== installing Debian's pkg-config package"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pkg-config
  else
    echo "tests/install: pkg-config is missing: install the pkg-config package" >&2
    exit 1
  fi
fi

# The workspace version: [workspace.package] version in Cargo.toml.
version="$(awk '/^\[/{s=($0=="[workspace.package]")} s&&/^version *=/{gsub(/.*= *"|".*/,"");print;exit}' Cargo.toml)"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "no workspace version in Cargo.toml" >&2; exit 1; }
major="${version%%.*}"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
prefix="$scratch/the prefix"
build="$scratch/build"
mkdir -p "$prefix" "$build"
unset CLAIMDAG_DIR CLAIMDAG_WORKSPACE CLAIMDAG_ACTOR

passed=0
failed=0
check() { # check NAME COMMAND...
  local name="$1"
  shift
  if "$@"; then
    echo "ok - $name"
    passed=$((passed + 1))
  else
    echo "not ok - $name"
    failed=$((failed + 1))
  fi
}
# run NAME COMMAND...: a test program's own "ok - " / "not ok - " lines count.
run() {
  local name="$1" out="$build/$1.out" status=0 ok bad
  shift
  "$@" >"$out" 2>&1 || status=$?
  cat "$out"
  ok=$(grep -c '^ok - ' "$out" || true)
  bad=$(grep -c '^not ok - ' "$out" || true)
  passed=$((passed + ok))
  failed=$((failed + bad))
  if [ "$status" -ne 0 ] && [ "$bad" -eq 0 ]; then
    echo "not ok - $name exited with status $status"
    failed=$((failed + 1))
  fi
}
empty() { [ -d "$1" ] && [ -z "$(find "$1" -mindepth 1 -print -quit)" ]; }
needed() { LC_ALL=C readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p'; }

echo "== make install PREFIX=\"$prefix\""
make --no-print-directory install PREFIX="$prefix" CARGO="$CARGO"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
libdir="$(pkg-config --variable=libdir claimdag)"

installed() {
  [ -x "$prefix/bin/claimdag" ] && [ -f "$prefix/include/claimdag.h" ] &&
    [ -f "$prefix/lib/libclaimdag.so.$version" ] && [ ! -L "$prefix/lib/libclaimdag.so.$version" ] &&
    [ "$(readlink "$prefix/lib/libclaimdag.so.$major")" = "libclaimdag.so.$version" ] &&
    [ "$(readlink "$prefix/lib/libclaimdag.so")" = "libclaimdag.so.$major" ] &&
    [ -f "$prefix/lib/libclaimdag.a" ] && [ -f "$prefix/lib/pkgconfig/claimdag.pc" ] &&
    cmp -s LICENSE-MIT "$prefix/share/doc/claimdag/LICENSE-MIT" &&
    cmp -s LICENSE-APACHE "$prefix/share/doc/claimdag/LICENSE-APACHE" &&
    cmp -s include/claimdag.h "$prefix/include/claimdag.h"
}
check "make install puts the command, the header, both libraries and claimdag.pc in the prefix" installed

soname() {
  local s
  s="$(LC_ALL=C readelf -d "$prefix/lib/libclaimdag.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')"
  echo "# SONAME: $s"
  [ "$s" = "libclaimdag.so.$major" ]
}
check "the installed library's SONAME is libclaimdag.so.$major" soname

# Libs.private is what rustc prints for the static library on this platform.
libs_private() {
  local printed pc
  printed="$("$CARGO" rustc --release -p claimdag-capi --lib --crate-type staticlib -- \
    --print native-static-libs 2>&1 | sed -n 's/^note: native-static-libs: *//p' | tail -1)"
  pc="$(sed -n 's/^Libs.private: *//p' "$prefix/lib/pkgconfig/claimdag.pc")"
  echo "# Libs.private: $pc"
  echo "# pkg-config --static --libs claimdag: $(pkg-config --static --libs claimdag)"
  [ -n "$printed" ] && [ "$pc" = "$printed" ] && [[ " $pc " == *" -lc "* ]]
}
check "claimdag.pc's Libs.private is rustc's native-static-libs" libs_private
check "libdir of claimdag.pc is the prefix's lib, space and all" [ "$libdir" = "$prefix/lib" ]

# pkg-config prints a path with a space escaped (-I/a\ b/include), as a shell word; eval
# reads it back into words.
eval "shared_flags=($(pkg-config --cflags --libs claimdag))"
# The linker takes libclaimdag.so over libclaimdag.a when both are in libdir: a static link
# names the archive (-l:libclaimdag.a) and takes the rest from --static.
eval "static_flags=($(pkg-config --static --cflags --libs claimdag | sed 's/-lclaimdag\b/-l:libclaimdag.a/'))"
warn=(-Wall -Wextra -Wpedantic -Werror)

build_and_run() { # build_and_run NAME COMPILER STD SOURCE shared|static
  local name="$1" compiler="$2" std="$3" src="$4" kind="$5" flags
  if [ "$kind" = shared ]; then
    flags=("${shared_flags[@]}" -Wl,-rpath,"$libdir")
  else
    flags=("${static_flags[@]}")
  fi
  echo "== $name: $compiler $std ${src##*/} ${flags[*]}"
  if ! "$compiler" "$std" "${warn[@]}" "$src" "${flags[@]}" -o "$build/$name"; then
    echo "not ok - $name does not build"
    failed=$((failed + 1))
    return
  fi
  if [ "$kind" = shared ]; then
    check "$name needs libclaimdag.so.$major" grep -qx "libclaimdag.so.$major" <(needed "$build/$name")
  else
    check "$name does not need libclaimdag.so" \
      bash -c '! grep -q libclaimdag <<<"$1"' _ "$(needed "$build/$name")"
  fi
  run "$name" "$build/$name" "$scratch/store-$name"
}
build_and_run c-shared "$CC" -std=c99 "$root/tests/install/walkthrough.c" shared
build_and_run c-static "$CC" -std=c99 "$root/tests/install/walkthrough.c" static
build_and_run cpp-shared "$CXX" -std=c++11 "$root/tests/install/walkthrough.cpp" shared
build_and_run cpp-static "$CXX" -std=c++11 "$root/tests/install/walkthrough.cpp" static

cli_version="$("$prefix/bin/claimdag" --version || true)"
c_version="$("$build/c-shared" --version || true)"
pc_version="$(pkg-config --modversion claimdag || true)"
check "the installed command runs: $cli_version" [ "$cli_version" = "claimdag $version" ]

echo "== make uninstall PREFIX=\"$prefix\""
make --no-print-directory uninstall PREFIX="$prefix"
check "make uninstall leaves the prefix empty" empty "$prefix"

# A package build: DESTDIR, installed twice (the second install keeps the first one's
# directories as its own), removed once.
stage="$scratch/stage dir"
mkdir -p "$stage"
echo "== make install DESTDIR=\"$stage\" PREFIX=/opt/claimdag (twice)"
make --no-print-directory install DESTDIR="$stage" PREFIX=/opt/claimdag CARGO="$CARGO" >/dev/null
make --no-print-directory install DESTDIR="$stage" PREFIX=/opt/claimdag CARGO="$CARGO" >/dev/null
check "under DESTDIR, claimdag.pc names the PREFIX" \
  grep -qx 'prefix=/opt/claimdag' "$stage/opt/claimdag/lib/pkgconfig/claimdag.pc"
make --no-print-directory uninstall DESTDIR="$stage" PREFIX=/opt/claimdag
check "make uninstall under DESTDIR leaves the prefix empty" empty "$stage/opt/claimdag"

echo "== make wheel"
make --no-print-directory wheel
wheels=("$target/wheels/claimdag-$version-"*.whl)
sdist="$target/wheels/claimdag-$version.tar.gz"
check "make wheel builds one abi3 wheel: ${wheels[*]##*/}" \
  bash -c '[ "$#" -eq 1 ] && [ -f "$1" ] && [[ "${1##*/}" == *-abi3-* ]]' _ "${wheels[@]}"
check "make wheel builds the sdist ${sdist##*/}" [ -f "$sdist" ]
wheel="${wheels[0]}"

in_wheel() {
  "$PYTHON" - "$wheel" "$version" <<'PY'
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
info = f"claimdag-{sys.argv[2]}.dist-info/licenses/"
sys.exit(0 if {info + "LICENSE-MIT", info + "LICENSE-APACHE"} <= names else 1)
PY
}
check "the wheel has LICENSE-MIT and LICENSE-APACHE" in_wheel
in_sdist() {
  local names
  names="$(tar -tzf "$sdist")"
  grep -qx "claimdag-$version/LICENSE-MIT" <<<"$names" &&
    grep -qx "claimdag-$version/LICENSE-APACHE" <<<"$names"
}
check "the sdist has LICENSE-MIT and LICENSE-APACHE" in_sdist

# A fresh venv; pip runs with a PATH that has no cargo, no rustc and no compiler, from no
# index: only the wheel itself.
venv="$scratch/venv"
nobin="$scratch/empty-path"
mkdir -p "$nobin"
"$PYTHON" -m venv "$venv"
echo "== pip install ${wheel##*/} into a fresh venv, PATH=$nobin"
pip_install() {
  (cd "$scratch" && env PATH="$nobin" PIP_FIND_LINKS= PIP_NO_INDEX=1 \
    "$venv/bin/python" -m pip install --quiet --no-index --only-binary :all: "$wheel")
}
check "the wheel installs with no Rust toolchain on PATH" pip_install
py_version="$(cd "$scratch" && env PATH="$nobin" "$venv/bin/python" -c \
  'import claimdag; print(claimdag.__version__)' || true)"
check "import claimdag in the venv: $py_version" [ "$py_version" = "$version" ]
venv_cli() {
  local d="$scratch/store-venv" a
  [ "$(env PATH="$nobin" "$venv/bin/claimdag" --version)" = "claimdag $version" ] &&
    a="$(env PATH="$nobin" "$venv/bin/claimdag" --dir "$d" upsert --summary "from the wheel")" &&
    env PATH="$nobin" "$venv/bin/claimdag" --dir "$d" list | grep -q "from the wheel" &&
    [ "$(env PATH="$nobin" "$venv/bin/claimdag" --dir "$d" claim "$a" --assignee name:w1)" = "gen=2" ]
}
check "the venv's claimdag command runs" venv_cli

# The command is the native executable with every feature, not a Python script.
is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }
native_cli() { is_elf "$venv/bin/claimdag"; }
check "the venv's claimdag is a native executable" native_cli
dash_m() {
  [ "$(cd "$scratch" && env PATH="$nobin" "$venv/bin/python" -m claimdag --version)" = \
    "claimdag $version" ]
}
check "python -m claimdag runs the same command" dash_m
# The official MCP SDK (in the test tools' venv) starts the venv's `claimdag mcp` with no
# Rust toolchain and nothing else on PATH.
tools="$root/.venv/bin/python"
[ -x "$tools" ] || "$PYTHON" -m venv "$root/.venv"
"$tools" -m pip install --quiet --progress-bar off "mcp>=2,<3" "auditwheel>=6"
mcp_init() {
  local out
  out="$("$tools" tests/install/mcp_initialize.py "$venv/bin/claimdag" "$scratch/store-mcp" \
    "$nobin")" && echo "# $out" && [[ "$out" == "claimdag $version "*"['from the MCP client']" ]]
}
check "claimdag mcp from the wheel answers the MCP SDK's initialize, tools/list, tools/call" \
  mcp_init
pane_dump() {
  env PATH="$nobin" "$venv/bin/claimdag" --dir "$scratch/store-venv" pane --dump |
    grep -q "from the wheel"
}
check "claimdag pane from the wheel draws a frame" pane_dump
copy_store() {
  env PATH="$nobin" "$venv/bin/claimdag" copy --from "$scratch/store-venv" \
    --to "$scratch/store-copy" >/dev/null &&
    env PATH="$nobin" "$venv/bin/claimdag" --dir "$scratch/store-copy" list |
    grep -q "from the wheel"
}
check "claimdag copy from the wheel copies the store" copy_store
work_once() {
  env PATH="$nobin" "$venv/bin/claimdag" --dir "$scratch/store-work" upsert --summary w >/dev/null &&
    env PATH="/usr/bin:/bin" "$venv/bin/claimdag" --dir "$scratch/store-work" work \
      --actor name:w --max 1 -- true >/dev/null &&
    env PATH="$nobin" "$venv/bin/claimdag" --dir "$scratch/store-work" list --all |
    grep -q "  done  "
}
check "claimdag work from the wheel runs a command under a claim" work_once
# import claimdag and a store call start no thread: no async runtime in the module.
one_thread() {
  [ "$(cd "$scratch" && env PATH="$nobin" "$venv/bin/python" -c '
import os, sys, claimdag
claimdag.Store(sys.argv[1]).list()
print(len(os.listdir("/proc/self/task")))' "$scratch/store-venv")" = 1 ]
}
check "import claimdag and a store call start no thread" one_thread

audit() {
  local out
  out="$("$root/.venv/bin/auditwheel" show "$wheel")" || return 1
  echo "$out" | tr '\n' ' ' | sed 's/  */ /g; s/^/# auditwheel show: /' | cut -c1-300
  local tag="${wheel##*-abi3-}"
  tag="${tag%.whl}"
  [[ "$tag" == manylinux_* ]] &&
    echo "$out" | tr '\n' ' ' | grep -q "consistent with the following platform tag: \"$tag\""
}
check "auditwheel show: the wheel meets the manylinux policy of its tag" audit
metadata() {
  "$PYTHON" - "$wheel" "$version" <<'PY'
import sys, zipfile
from email.parser import Parser
z = zipfile.ZipFile(sys.argv[1])
meta = Parser().parsestr(z.read(f"claimdag-{sys.argv[2]}.dist-info/METADATA").decode())
readme = open("README.md", encoding="utf-8").read()
urls = {v.split(",")[0] for v in meta.get_all("Project-URL") or []}
checks = {
    "License-Expression": meta["License-Expression"] == "MIT OR Apache-2.0",
    "Requires-Python": meta["Requires-Python"] == ">=3.9",
    "Project-URL": {"Homepage", "Documentation", "Repository", "Issues", "Changelog"} <= urls,
    "Classifier": len(meta.get_all("Classifier") or []) >= 10,
    "description": meta.get_payload().strip() == readme.strip()
    and meta["Description-Content-Type"].startswith("text/markdown"),
}
bad = [k for k, ok in checks.items() if not ok]
print("# wheel metadata:", "missing or wrong: " + ", ".join(bad) if bad else "complete")
sys.exit(1 if bad else 0)
PY
}
check "the wheel's metadata: licence, Requires-Python, URLs, classifiers, the README" metadata
echo "# wheel size: $(stat -c %s "$wheel") bytes (${wheel##*/}); sdist: $(stat -c %s "$sdist") bytes"

# pip install from the sdist: maturin from PyPI, cargo builds both the module and the command.
# The build shares this build's target directory so that the dependencies are not compiled
# again; the sdist is repacked with its files' times set to now, so that cargo compiles the
# project's own crates from the sdist's sources rather than finding them up to date.
sdist_venv="$scratch/sdist-venv"
"$PYTHON" -m venv "$sdist_venv"
mkdir -p "$scratch/sdist-now"
tar -xzf "$sdist" -C "$scratch/sdist-now"
find "$scratch/sdist-now" -exec touch {} +
fresh_sdist="$scratch/${sdist##*/}"
tar -czf "$fresh_sdist" -C "$scratch/sdist-now" "$(basename "$sdist" .tar.gz)"
echo "== pip install ${sdist##*/} into a fresh venv (builds from source)"
from_sdist() {
  (cd "$scratch" && CARGO_TARGET_DIR="$target" "$sdist_venv/bin/python" -m pip install \
    --quiet --progress-bar off --no-binary claimdag "$fresh_sdist") &&
    [ "$(cd "$scratch" && "$sdist_venv/bin/python" -c 'import claimdag; print(claimdag.__version__)')" = \
      "$version" ] &&
    is_elf "$sdist_venv/bin/claimdag" &&
    [ "$("$sdist_venv/bin/claimdag" --version)" = "claimdag $version" ]
}
check "pip install from the sdist builds and installs the module and the command" from_sdist
no_binary_in_sdist() { ! tar -tzf "$sdist" | grep -q 'wheel-data/scripts/'; }
check "the sdist carries no built command" no_binary_in_sdist

echo "# versions: Cargo.toml $version, claimdag --version '$cli_version', claimdag_version() '$c_version'," \
  "claimdag.__version__ '$py_version', pkg-config '$pc_version'"
one_version() {
  [ "$cli_version" = "claimdag $version" ] && [ "$c_version" = "$version" ] &&
    [ "$py_version" = "$version" ] && [ "$pc_version" = "$version" ]
}
check "one version everywhere: $version" one_version

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
