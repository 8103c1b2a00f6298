#!/usr/bin/env bash
# The whole test suite again, built with AddressSanitizer and
# UndefinedBehaviorSanitizer (every target: core, binary, plugins, tests) in
# the instrumented tree that scripts/fuzz.sh builds its targets in
# (./build-fuzz, BLIS_FUZZ_BUILD_DIR; clang at -O1, scripts/configure.sh).
# Any report fails the test that caused it; tests that launch the blis binary
# run it instrumented too. Arguments go to ctest (e.g. -R 'unit: ' for a
# subset). docs/testing.md says more.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh" clang-14 libclang-rt-14-dev
build="${BLIS_FUZZ_BUILD_DIR:-$root/build-fuzz}"
"$root/scripts/configure.sh" sanitized "$build"
cmake --build "$build" -j "$(nproc)" >&2
cd "$build"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Tests that bound a command's CPU time allow instrumented code this factor.
export BLIS_TEST_SLOWDOWN="${BLIS_TEST_SLOWDOWN:-4}"
# Tests that bound a command's memory with a data limit skip it (ASan maps its
# shadow memory); those that expect one budget of a Lua call may meet the other.
export BLIS_TEST_SANITIZED=1
# Instrumented code runs a few times slower: give each test more time. One
# test more than there are cores: instrumented tests wait on their blis
# processes often enough to leave a third of the CPU idle otherwise.
ctest --output-on-failure -j "$(($(nproc) + 1))" --timeout 900 "$@"
