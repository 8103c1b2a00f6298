#!/usr/bin/env bash
# Installs what is missing, then configures (once) and builds blis in ./build.
# A second run rebuilds only what changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
build="${BLIS_BUILD_DIR:-$root/build}"
# Configured once (scripts/configure.sh says how; CI adds -Werror).
"$root/scripts/configure.sh" default "$build"
cmake --build "$build" -j "$(nproc)" "$@" >&2
