#!/usr/bin/env bash
# Builds and runs one libFuzzer target of fuzz/ (docs/testing.md):
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]
#   scripts/fuzz.sh all SECONDS      every target in turn, SECONDS each (what CI runs)
# Targets: scenario_toml policy_toml policy_yaml workload_yaml trace_csv settings flags lua_script
# sweep_rows event_text lua_callbacks.
# Installs clang if missing, builds with clang, ASan and UBSan in ./build-fuzz
# (BLIS_FUZZ_BUILD_DIR) at -O1, through ccache when it is installed, and
# starts from the checked-in seeds of fuzz/corpus/TARGET, with the dictionary
# of the target's language (fuzz/dict/) unless a -dict= flag is given. What it discovers goes to build-fuzz/corpus/TARGET,
# never into the tree; a crash, leak, sanitizer report or hang is written to
# build-fuzz/artifacts/TARGET/ and makes the script fail. Add such an input as
# a regression test, and, when it is small and interesting, to the seeds.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
targets=(scenario_toml policy_toml policy_yaml workload_yaml trace_csv settings flags lua_script
         sweep_rows event_text lua_callbacks)
# The dictionary of each target's language (fuzz/dict/NAME.dict); none for the rest.
declare -A dicts=([scenario_toml]=toml [policy_toml]=toml [policy_yaml]=yaml [workload_yaml]=yaml
                  [trace_csv]=csv [lua_script]=lua [lua_callbacks]=lua [event_text]=event [sweep_rows]=json)
if [ $# -lt 2 ]; then
  echo "usage: scripts/fuzz.sh TARGET|all SECONDS [libFuzzer flags...]" >&2
  echo "targets: ${targets[*]}" >&2
  exit 2
fi
target="$1" seconds="$2"
shift 2
if [ "$target" != all ] && [[ ! " ${targets[*]} " =~ " $target " ]]; then
  echo "blis: fuzz.sh: no target '$target' (targets: ${targets[*]})" >&2
  exit 2
fi

"$root/scripts/install-deps.sh" clang-14 libclang-rt-14-dev
build="${BLIS_FUZZ_BUILD_DIR:-$root/build-fuzz}"
# The instrumented tree (scripts/configure.sh sanitized), which
# scripts/test-sanitizers.sh builds the test suite in.
"$root/scripts/configure.sh" sanitized "$build"
if [ "$target" = all ]; then
  # Every target at once: the core they share is compiled once, in parallel.
  cmake --build "$build" -j "$(nproc)" --target blis_fuzz >&2
  for t in "${targets[@]}"; do "$0" "$t" "$seconds" "$@"; done
  exit 0
fi
cmake --build "$build" -j "$(nproc)" --target "fuzz_$target" >&2

corpus="$build/corpus/$target"
artifacts="$build/artifacts/$target"
mkdir -p "$corpus" "$artifacts"
dict=()
if [ -n "${dicts[$target]:-}" ] && [[ ! " $* " =~ " -dict=" ]]; then
  dict=(-dict="$root/fuzz/dict/${dicts[$target]}.dict")
fi
# The targets write each input to a scratch file ($TMPDIR): in memory when
# /dev/shm is there, which doubles the rate of the file readers' targets.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
echo "blis: fuzzing $target for ${seconds}s" >&2
# -timeout: one input taking longer is a hang (a Lua call may spend 2 s of
# CPU before its limit stops it, and libFuzzer runs an input twice when it
# checks for leaks). -rss_limit_mb: the Lua heap alone may take 256 MB, and
# ASan doubles what it costs.
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
  "$build/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" "$@" \
    "$corpus" "$root/fuzz/corpus/$target"
