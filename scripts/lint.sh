#!/usr/bin/env bash
# The layer and complexity checks (scripts/check-layers.sh,
# scripts/check-complexity.sh), clang-tidy over core/ with the
# checks of .clang-tidy (zero findings is the rule: any finding fails, but the
# cognitive complexities of scripts/cognitive-debt.txt), and clang-format over the files that follow
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
if ! run-clang-tidy-14 -p "$build" -j "$(nproc)" -quiet "${files[@]}" > "$build/clang-tidy.log" 2>&1; then
  # Every finding fails, but a cognitive complexity listed in
  # scripts/cognitive-debt.txt at or above its figure today (it may only shrink).
  mapfile -t findings < <(sed 's/\x1b\[[0-9;]*m//g' "$build/clang-tidy.log" | grep -E "(warning|error):" | sort -u)
  if [ "${#findings[@]}" = 0 ]; then
    cat "$build/clang-tidy.log" >&2
    echo "blis: clang-tidy failed (full log: $build/clang-tidy.log)" >&2
    exit 1
  fi
  left=0
  for f in "${findings[@]}"; do
    if [[ "$f" =~ ^$root/([^:]+):[0-9]+:[0-9]+:\ (warning|error):\ function\ \'([^\']+)\'\ has\ cognitive\ complexity\ of\ ([0-9]+) ]]; then
      allowed=$(awk -v f="${BASH_REMATCH[1]}" -v n="${BASH_REMATCH[3]}" '$1 == f && $2 == n {print $3}' \
        "$root/scripts/cognitive-debt.txt")
      [ -n "$allowed" ] && [ "${BASH_REMATCH[4]}" -le "$allowed" ] && continue
    fi
    echo "$f" >&2
    left=1
  done
  if [ "$left" = 1 ]; then
    echo "blis: clang-tidy found the above (full log: $build/clang-tidy.log)" >&2
    exit 1
  fi
fi
echo "blis: clang-format on fuzz/" >&2
clang-format-14 --dry-run -Werror fuzz/*.cpp fuzz/*.hpp
echo "blis: lint clean" >&2
