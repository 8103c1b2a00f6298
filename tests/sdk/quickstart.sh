#!/usr/bin/env bash
# The SDK as a vendor meets it (issue 6): the commands of sdk/README.md, taken
# from the README itself so the two cannot drift apart, run against a fresh
# temporary prefix: install blis, build the example plugin out of tree
# against the installed SDK only, run it by path and by name, build the
# README's C and C++ examples with pkg-config. Then what the README promises
# around them: the installed layout, nothing test-only installed, the
# installed binary finding its own plugins, data and scripts, and one-line
# errors for a missing key.
#
# Needs BLIS_TEST_SOURCE_DIR and BLIS_TEST_BUILD_DIR (a built tree).
set -euo pipefail
src=${BLIS_TEST_SOURCE_DIR:?}
build=${BLIS_TEST_BUILD_DIR:?}
readme=$src/sdk/README.md
start=$SECONDS

work=$(mktemp -d "${TMPDIR:-/tmp}/blis-sdk-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Nothing may lead the installed blis back to the build tree.
unset BLIS_DATA_DIR BLIS_SCRIPT_DIR BLIS_PLUGIN_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH
export HOME=$work/home
mkdir -p "$HOME"
PREFIX=$HOME/blis  # what the README's install block sets

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
expect() {  # expect FILE TEXT: FILE contains TEXT
  grep -qF -- "$2" "$1" || { echo "--- $1:" >&2; cat "$1" >&2; fail "expected '$2' in $(basename "$1")"; }
}

# The fenced block right after the line "<!-- test: NAME -->" of the README.
block() {
  local text
  text=$(awk -v marker="<!-- test: $1 -->" '
    $0 == marker { armed = 1; next }
    armed && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$readme")
  [ -n "$text" ] || fail "sdk/README.md has no block marked '$1'"
  printf '%s\n' "$text"
}

# Runs the install block from a stand-in for the blis source tree, then the
# given blocks from DIR, in one shell (a block may cd or set PREFIX for the
# next). The install block is idempotent, so each call may run it again.
run_blocks() {  # run_blocks DIR OUT ERR BLOCK...
  local dir=$1 out=$2 err=$3
  shift 3
  local script=""
  for b in "$@"; do script+="$(block "$b")"$'\n'; done
  set +e
  (
    set -e
    cd "$work/tree"
    # This tree is already configured and built, so configuring and
    # building are skipped; installing installs it.
    cmake() {
      case "$1 $2" in
        "-S .") echo "[test] skipped: cmake $* ($build is configured)" ;;
        "--build build") echo "[test] skipped: cmake $* ($build is built)" ;;
        "--install build") command cmake --install "$build" "${@:3}" ;;
        *) echo "[test] unexpected in the install block: cmake $*" >&2; return 1 ;;
      esac
    }
    eval "$(block install)"
    unset -f cmake
    [ "$PREFIX" = "$HOME/blis" ] || { echo "[test] the install block must set PREFIX=\$HOME/blis" >&2; exit 1; }
    cd "$dir"
    eval "$script"
  ) >"$out" 2>"$err"
  local status=$?
  set -e
  if [ $status -ne 0 ]; then
    cat "$out" "$err" >&2
    fail "the README blocks ($*) failed with status $status"
  fi
}

mkdir -p "$work/tree"
ln -s "$src/scripts" "$src/examples" "$work/tree/"

# 1. Install, build the vendor example, run it by path, by --plugin-dir, installed.
run_blocks "$work/tree" "$work/vendor.out" "$work/vendor.err" vendor vendor-install
out=$work/vendor.out
expect "$out" "build/libacme-latency.so: blis plugin library, ABI 1.15, 1 plugin(s)"
expect "$out" "latency-model     acme-linear        1.0.0    Acme accelerator"
[ "$(grep -c '"completed_requests": 20,' "$out")" -eq 3 ] || fail "expected three runs of 20 requests"
# Same plugin, same inputs: the three runs agree to the byte.
[ "$(grep '"ttft_mean_ms"' "$out" | sort -u | wc -l)" -eq 1 ] || fail "the three runs differ"
# The last run (installed, by name) prints the example's expected output.
expected=$src/examples/vendor-latency-plugin/expected.txt
tail -n "$(wc -l <"$expected")" "$out" | cmp -s - "$expected" ||
  fail "the example's output differs from examples/vendor-latency-plugin/expected.txt"
ttft=$(grep -m1 '"ttft_mean_ms"' "$out" | tr -dc '0-9.')
itl=$(grep -m1 '"itl_mean_ms"' "$out" | tr -dc '0-9.')
awk -v t="$ttft" -v i="$itl" 'BEGIN { exit !(t > 5 && t < 500 && i > 1 && i < 50) }' ||
  fail "implausible metrics: ttft_mean_ms=$ttft itl_mean_ms=$itl"
grep -q "^blis-sdk_DIR:PATH=$PREFIX/lib/cmake/blis-sdk$" "$HOME/acme/build/CMakeCache.txt" ||
  fail "the example did not find blis-sdk in the installed prefix"
[ -f "$PREFIX/lib/blis/plugins/libacme-latency.so" ] || fail "the example did not install beside blis's plugins"

# 2. The installed layout, and nothing test-only in it.
for f in bin/blis include/blis/plugin.h include/blis/plugin.hpp lib/pkgconfig/blis-sdk.pc \
         lib/cmake/blis-sdk/blis-sdkConfig.cmake lib/cmake/blis-sdk/blis-sdkConfigVersion.cmake \
         lib/cmake/blis-sdk/blis-sdkTargets.cmake lib/cmake/blis-sdk/blis-sdk-plugin.cmake \
         lib/blis/plugins/libblis-latency-roofline.so share/blis/data/defaults.toml \
         share/blis/scripts/scorers/kv_headroom.lua; do
  [ -f "$PREFIX/$f" ] || fail "not installed: $f"
done
if find "$PREFIX" | grep -E 'fixture|/tests?/|bench|catch' >"$work/extra"; then
  cat "$work/extra" >&2
  fail "test-only files were installed"
fi
blis=$PREFIX/bin/blis
"$blis" plugins list >"$work/list"
expect "$work/list" "$PREFIX/lib/blis/plugins/libblis-latency-roofline.so"
expect "$work/list" "$PREFIX/share/blis/scripts/scorers/kv_headroom.lua"
if grep -E '^[a-z-]+ +[a-z-]+ +[0-9.]+ +/' "$work/list" |
    grep -vE " $PREFIX/(lib/blis/plugins|share/blis/scripts)/"; then
  fail "the installed blis loaded plugins from elsewhere"
fi
# Data (the default roofline run) and Lua scripts (by name, from share/blis/scripts).
(cd "$work" && "$blis" run --model qwen/qwen3-14b --num-requests 5 --num-instances 2 \
  --routing-policy weighted --routing-scorers scorers/kv_headroom.lua:1 >"$work/lua.out")
expect "$work/lua.out" '"completed_requests": 5,'

# 3. Without CMake: the README's C and C++ examples, built with pkg-config.
pc=$work/pc
mkdir -p "$pc"
block per_token.c >"$pc/per_token.c"
block per_token.cpp >"$pc/per_token.cpp"
run_blocks "$pc" "$pc/out" "$pc/err" pkg-config
expect "$pc/out" "./libper-token-c.so: blis plugin library, ABI 1.15, 1 plugin(s)"
expect "$pc/out" "latency-model     per-token-c        1.0.0    1 ms a step plus a price per token"
expect "$pc/out" "latency-model     per-token-cpp      1.0.0    A base time per step plus a price per token"
# The examples are clean code, too.
cflags=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags blis-sdk)
# shellcheck disable=SC2086
cc -std=c99 -Wall -Wextra -Wpedantic -Werror -fsyntax-only $cflags "$pc/per_token.c"
# shellcheck disable=SC2086
c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only $cflags "$pc/per_token.cpp"
(cd "$pc" && "$blis" run --model qwen/qwen3-14b --num-requests 5 --latency-model ./libper-token-c.so \
  >"$pc/run-c.out")
expect "$pc/run-c.out" '"completed_requests": 5,'
(cd "$pc" && "$blis" run --model qwen/qwen3-14b --num-requests 5 --latency-model ./libper-token-cpp.so \
  --plugin-config per-token-cpp.us_per_token=40 >"$pc/run-cpp.out")
expect "$pc/run-cpp.out" '"completed_requests": 5,'

# 4. A missing or ill-typed key: one line naming the file, the plugin and the key; exit 2.
refused() {  # refused MESSAGE blis-args...
  local message=$1 status=0
  shift
  (cd "$pc" && "$blis" "$@") >"$work/refused.out" 2>"$work/refused.err" || status=$?
  [ $status -eq 2 ] || fail "expected exit status 2, got $status: blis $*"
  [ ! -s "$work/refused.out" ] || fail "output on stdout: blis $*"
  [ "$(wc -l <"$work/refused.err")" -eq 1 ] || { cat "$work/refused.err" >&2; fail "not one line: blis $*"; }
  expect "$work/refused.err" "$message"
}
refused "blis: error: $PREFIX/lib/blis/plugins/libacme-latency.so: plugin 'acme-linear': create() failed: config key 'efficiency' is missing" \
  run --model qwen/qwen3-14b --num-requests 5 --latency-model acme-linear
refused "plugin 'acme-linear': create() failed: config key 'efficiency' must be a number, not a string" \
  run --model qwen/qwen3-14b --num-requests 5 --latency-model acme-linear --plugin-config acme-linear.efficiency=fast
refused "./libper-token-cpp.so: plugin 'per-token-cpp': create() failed: config key 'us_per_token' is missing" \
  run --model qwen/qwen3-14b --num-requests 5 --latency-model ./libper-token-cpp.so
refused "./libper-token-c.so: plugin 'per-token-c': create() failed: config key 'us_per_token' must be a number" \
  run --model qwen/qwen3-14b --num-requests 5 --latency-model ./libper-token-c.so --plugin-config per-token-c.us_per_token=[1]

echo "sdk quickstart: passed in $((SECONDS - start)) s"
