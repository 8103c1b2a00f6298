#!/usr/bin/env bash
# Configures a build tree of blis, the same way for every script:
#   scripts/configure.sh default   DIR [cmake flags...]   scripts/build.sh, test-mpi.sh
#   scripts/configure.sh sanitized DIR [cmake flags...]   scripts/fuzz.sh, test-sanitizers.sh
# DIR is configured when it has no build.ninja or was configured with other
# flags (kept in DIR/blis-configure), and left alone otherwise.
#
# Both kinds get:
# - -DBLIS_WERROR=ON when CI=true: the project's code has no warnings, and keeps none;
# - ccache as the compiler launcher when it is installed (scripts/install-deps.sh
#   installs it) and no launcher is set already. The MPI build compiles every
#   file but two exactly as the default build does, so in CI it is mostly cache
#   hits; a second build after a small change is too.
# "sanitized" is clang at -O1 (as libFuzzer's documentation and OSS-Fuzz build)
# with ASan, UBSan and libFuzzer's coverage, tests included: one tree serves
# the fuzz targets and the whole suite under the sanitizers, so CI compiles
# the instrumented core once (docs/testing.md has the figures).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ $# -lt 2 ] || { [ "$1" != default ] && [ "$1" != sanitized ]; }; then
  echo "usage: scripts/configure.sh default|sanitized DIR [cmake flags...]" >&2
  exit 2
fi
kind=$1 build=$2
shift 2
flags=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
if [ "$kind" = sanitized ]; then
  flags+=("-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG"
          -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DBLIS_FUZZ=ON
          -DBLIS_SANITIZE=address,undefined -DBLIS_BUILD_TESTS=ON -DBLIS_BUILD_BENCH=OFF)
fi
if [ "${CI:-}" = true ]; then flags+=(-DBLIS_WERROR=ON); else flags+=(-DBLIS_WERROR=OFF); fi
if [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null 2>&1; then
  flags+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
flags+=("$@")
if [ ! -f "$build/build.ninja" ] || [ "$(cat "$build/blis-configure" 2>/dev/null)" != "${flags[*]}" ]; then
  cmake -S "$root" -B "$build" "${flags[@]}" >&2
  printf '%s' "${flags[*]}" >"$build/blis-configure"
fi
