#!/usr/bin/env bash
# The layer and complexity checks (scripts/check-layers.sh,
# scripts/check-complexity.sh), clang-tidy over core/ with the
# checks of .clang-tidy (zero findings is the rule: any finding fails), and clang-format over the files that follow
# .clang-format already (fuzz/; the rest of the tree is formatted by hand and
# not rewritten). Uses the compile_commands.json of ./build (BLIS_BUILD_DIR),
# configuring it if needed. Arguments: files to check instead of all of core/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh" clang-tidy-14 clang-format-14
build="${BLIS_BUILD_DIR:-$root/build}"
if [ ! -f "$build/compile_commands.json" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
fi
cd "$root"
# The include graph against core/README.md's layer table (no upward arrow without a reason).
"$root/scripts/check-layers.sh"
# No function above McCabe 35, but the listed debt, which may only shrink.
"$root/scripts/check-complexity.sh"
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(find core/src core/app -name '*.cpp' | sort)
fi
echo "blis: clang-tidy on ${#files[@]} files" >&2
run-clang-tidy-14 -p "$build" -j "$(nproc)" -quiet "${files[@]}" > "$build/clang-tidy.log" 2>&1 || {
  grep -E "(warning|error):" "$build/clang-tidy.log" | sort -u >&2 || cat "$build/clang-tidy.log" >&2
  echo "blis: clang-tidy found the above (full log: $build/clang-tidy.log)" >&2
  exit 1
}
echo "blis: clang-format on fuzz/" >&2
clang-format-14 --dry-run -Werror fuzz/*.cpp fuzz/*.hpp
echo "blis: lint clean" >&2
