#!/usr/bin/env bash
# The README's second command: set up, build everything, run the whole test
# suite. .ci/run calls exactly this.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/build.sh"
cd "${BLIS_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)" "$@"
