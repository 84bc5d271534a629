#!/usr/bin/env bash
# scripts/soname-link.sh DIR: links DIR/<soname> (libclaimdag.so.0) to DIR/libclaimdag.so.
#
# libclaimdag.so carries a soname (bindings/c/build.rs), so a program linked against it
# asks the loader for libclaimdag.so.0. `make install` creates that link in the prefix;
# this script creates it where cargo built the library, for programs linked against
# target/*/libclaimdag.so with -Wl,-rpath (the in-tree tests).
set -euo pipefail
dir="${1:?usage: soname-link.sh DIR}"
so="$dir/libclaimdag.so"
[ -f "$so" ] || { echo "soname-link.sh: $so is missing" >&2; exit 1; }
soname="$(LC_ALL=C readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')"
if [ -n "$soname" ] && [ "$soname" != libclaimdag.so ]; then
  ln -sfn libclaimdag.so "$dir/$soname"
fi
