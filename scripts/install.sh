#!/usr/bin/env bash
# `make install` and `make uninstall` (Linux):
#
#   PREFIX=/usr/local DESTDIR= scripts/install.sh install
#   PREFIX=/usr/local DESTDIR= scripts/install.sh uninstall
#
# install builds the release command and C library with cargo and puts them under
# $DESTDIR$PREFIX:
#
#   bin/claimdag
#   include/claimdag.h
#   lib/libclaimdag.so.X.Y.Z, lib/libclaimdag.so.X (the soname) -> it, lib/libclaimdag.so -> it
#   lib/libclaimdag.a
#   lib/pkgconfig/claimdag.pc     (Libs.private: what rustc prints as native-static-libs)
#   share/doc/claimdag/           (LICENSE-MIT, LICENSE-APACHE, CHANGELOG.md)
#   share/claimdag/install-manifest
#
# The manifest lists every file, link and directory the install created, relative to
# $DESTDIR$PREFIX; uninstall removes exactly those, directories only when empty, and leaves
# $DESTDIR$PREFIX itself. The .pc file names $PREFIX (not $DESTDIR), as a package expects.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cmd="${1:?usage: install.sh install|uninstall}"
PREFIX="${PREFIX:-/usr/local}"
DESTDIR="${DESTDIR:-}"
CARGO="${CARGO:-cargo}"
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
rel="$target/release"

die() {
  echo "install.sh: $*" >&2
  exit 1
}

case "$PREFIX" in
  /*) ;;
  *) die "PREFIX must be an absolute path, not '$PREFIX'" ;;
esac
# The .pc file quotes the prefix, and the manifest has one path a line.
case "$PREFIX$DESTDIR" in
  *$'\n'* | *'"'* | *'\'* | *'$'*) die "PREFIX and DESTDIR may not contain a newline, \", \\ or \$" ;;
esac
PREFIX="${PREFIX%/}"
[ -n "$PREFIX" ] || PREFIX=/
dest="${DESTDIR%/}$PREFIX"
dest="${dest%/}"
manifest_rel=share/claimdag/install-manifest
manifest="$dest/$manifest_rel"

# uninstall: the files and links of the manifest, the manifest, then the directories it
# lists, deepest first, each only when empty.
uninstall() {
  [ -f "$manifest" ] || die "nothing to uninstall: $manifest is missing"
  local kind path files=() dirs=() i d
  while IFS=' ' read -r kind path; do
    case "$kind" in
      file | link) files+=("$path") ;;
      dir) dirs+=("$path") ;;
    esac
  done <"$manifest"
  for path in "${files[@]}"; do rm -f -- "$dest/$path"; done
  rm -f -- "$manifest"
  for ((i = ${#dirs[@]} - 1; i >= 0; i--)); do
    d="$dest/${dirs[i]}"
    [ -d "$d" ] || continue
    rmdir -- "$d" 2>/dev/null || echo "kept $d: not empty"
  done
  echo "removed the claimdag install from $dest"
}

entries=() # the new manifest, in creation order: "dir PATH", "file PATH", "link PATH"
declare -A written=()

# mkdirs REL: creates $dest/REL and its missing parents, recording each one it creates.
mkdirs() {
  local rel="$1" sofar="" part
  local IFS=/
  for part in $rel; do
    sofar="${sofar:+$sofar/}$part"
    if [ ! -d "$dest/$sofar" ]; then
      mkdir -- "$dest/$sofar"
      entries+=("dir $sofar")
    fi
  done
}

# put MODE SOURCE REL: installs SOURCE as $dest/REL.
put() {
  mkdirs "$(dirname "$3")"
  install -m "$1" -- "$2" "$dest/$3"
  entries+=("file $3")
  written["$3"]=1
}

# link TARGET REL: $dest/REL becomes a symbolic link to TARGET.
link() {
  ln -sfn -- "$1" "$dest/$2"
  entries+=("link $2")
  written["$2"]=1
}

install_all() {
  echo "== cargo build --release: the claimdag command and the C library"
  "$CARGO" build --release --bin claimdag
  "$CARGO" build --release -p claimdag-capi
  # The system libraries libclaimdag.a needs, as rustc prints them for this platform.
  local out libs
  out="$("$CARGO" rustc --release -p claimdag-capi --lib --crate-type staticlib -- \
    --print native-static-libs 2>&1)" || { echo "$out" >&2; die "cargo rustc failed"; }
  libs="$(sed -n 's/^note: native-static-libs: *//p' <<<"$out" | tail -1)"
  [ -n "$libs" ] || die "rustc printed no native-static-libs"

  local id version so soname
  id="$("$CARGO" pkgid -p claimdag-capi)"
  version="${id##*[@#]}"
  [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || die "no version in '$id'"
  so="$rel/libclaimdag.so"
  soname="$(LC_ALL=C readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')"
  [ "$soname" = "libclaimdag.so.${version%%.*}" ] ||
    die "$so has soname '$soname', expected libclaimdag.so.${version%%.*}"

  local old=""
  if [ -f "$manifest" ]; then old="$(cat "$manifest")"; fi
  mkdir -p -- "${dest:-/}"
  # Directories an earlier install created stay ours.
  local kind path
  while IFS=' ' read -r kind path; do
    if [ "$kind" = dir ] && [ -d "$dest/$path" ]; then
      entries+=("dir $path")
    fi
  done <<<"$old"

  put 0755 "$rel/claimdag" bin/claimdag
  put 0644 "$root/include/claimdag.h" include/claimdag.h
  put 0755 "$so" "lib/libclaimdag.so.$version"
  link "libclaimdag.so.$version" "lib/$soname"
  link "$soname" lib/libclaimdag.so
  put 0644 "$rel/libclaimdag.a" lib/libclaimdag.a

  local pc="$rel/claimdag.pc"
  cat >"$pc" <<EOF
prefix=$PREFIX
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: claimdag
Description: A fenced claim DAG: leases and generation fences for many workers on one body of work
URL: https://github.com/claimdag/claimdag
Version: $version
Cflags: -I"\${includedir}"
Libs: -L"\${libdir}" -lclaimdag
Libs.private: $libs
EOF
  put 0644 "$pc" lib/pkgconfig/claimdag.pc
  local doc
  for doc in LICENSE-MIT LICENSE-APACHE CHANGELOG.md; do
    put 0644 "$root/$doc" "share/doc/claimdag/$doc"
  done

  # Files of an earlier install that this one did not write again (an older version's
  # libclaimdag.so.X.Y.Z) go.
  while IFS=' ' read -r kind path; do
    case "$kind" in
      file | link) [ -n "${written[$path]:-}" ] || rm -f -- "$dest/$path" ;;
    esac
  done <<<"$old"

  mkdirs "$(dirname "$manifest_rel")"
  printf '%s\n' "${entries[@]}" >"$manifest.tmp"
  mv -f -- "$manifest.tmp" "$manifest"
  echo "installed claimdag $version into $dest"
}

case "$cmd" in
  install) install_all ;;
  uninstall) uninstall ;;
  *) die "unknown command '$cmd' (install or uninstall)" ;;
esac
