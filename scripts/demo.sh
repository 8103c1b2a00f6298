#!/usr/bin/env bash
# The README's first command: set up, build, and run a real simulation
# (Qwen3-14B on one H100, 50 requests at 2 req/s).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/build.sh" --target blis
exec "${BLIS_BUILD_DIR:-$root/build}/stage/bin/blis" run --model qwen/qwen3-14b --rate 2 --num-requests 50 "$@"
