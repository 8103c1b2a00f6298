#!/usr/bin/env bash
# Installs what is missing, then configures (once) and builds blis in ./build.
# A second run rebuilds only what changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
build="${BLIS_BUILD_DIR:-$root/build}"
if [ ! -f "$build/build.ninja" ]; then
  # CI builds with -Werror: the project's code has no warnings, and keeps none.
  werror=OFF
  if [ "${CI:-}" = true ]; then werror=ON; fi
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBLIS_WERROR="$werror" >&2
fi
cmake --build "$build" -j "$(nproc)" "$@" >&2
