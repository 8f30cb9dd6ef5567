#!/bin/sh
# Prints, one per line, the packages (dpkg) that provide the shared libraries the given ELF files
# load: what a runtime image must install so the build stage's binaries run there. Run in the
# build stage; the runtime stage has the same distribution, so the names match. Libraries no
# package owns (a toolkit installed by hand) are named on stderr and left out.
set -eu
for file in "$@"; do ldd "$file"; done |
  awk '/=> \// { print $3 }' | sort -u |
  while read -r lib; do
    owner=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")" 2>/dev/null || true)
    if [ -n "$owner" ]; then
      printf '%s\n' "${owner%%:*}"
    else
      printf 'runtime-packages: no package owns %s\n' "$lib" >&2
    fi
  done | sort -u
