#!/usr/bin/env bash
# The MPI mode's checks (docs/distributed.md): installs Debian's Open MPI if
# missing, builds blis with -DBLIS_WITH_MPI=ON in build-mpi, and checks that
# `mpirun -np 3 blis ...` prints exactly what one process prints for a sweep,
# a Lua search and a plan (its table, JSON and report), and that a failing
# worker stops the run cleanly.
# The default build and the README's two commands never need MPI.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BLIS_MPI_BUILD_DIR:-$root/build-mpi}"

if ! command -v mpirun >/dev/null 2>&1 || ! dpkg-query -W -f='${Status}' libopenmpi-dev 2>/dev/null | grep -q "install ok installed"; then
  echo "blis: installing Open MPI (openmpi-bin, libopenmpi-dev)" >&2
  SUDO=(); [ "$(id -u)" -eq 0 ] || SUDO=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends openmpi-bin libopenmpi-dev >&2
fi
"$root/scripts/install-deps.sh"
# As the default build (scripts/configure.sh), so that ccache serves it from that one's objects.
"$root/scripts/configure.sh" default "$build" -DBLIS_WITH_MPI=ON -DBLIS_BUILD_TESTS=OFF -DBLIS_BUILD_BENCH=OFF
cmake --build "$build" -j "$(nproc)" >&2

# Open MPI refuses root unless told; ranks yield while they wait (2 cores).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
blis="$build/stage/bin/blis"
mpi=(mpirun --oversubscribe -np 3 "$blis")
cd "$root"
passed=0 failed=0
check() {  # name, then the command whose success means the check passed
  local name=$1; shift
  if "$@" >/dev/null 2>&1; then passed=$((passed + 1)); echo "ok: $name"
  else failed=$((failed + 1)); echo "FAILED: $name"; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

sweep=examples/routing-comparison/routing.toml
"$blis" run "$sweep" --jobs 1 > "$tmp/one.json" 2>/dev/null
"${mpi[@]}" run "$sweep" > "$tmp/mpi.json" 2>/dev/null
check "mpirun -np 3: a TOML sweep prints what --jobs 1 prints" cmp "$tmp/one.json" "$tmp/mpi.json"

"${mpi[@]}" run examples/capacity-planning/capacity.lua > "$tmp/search.txt" 2>/dev/null
check "mpirun -np 3: a Lua search prints its expected report" cmp examples/capacity-planning/expected.txt "$tmp/search.txt"

"${mpi[@]}" plan --model qwen/qwen3-14b --rate 200 --slo 'ttft_p99<500ms' > "$tmp/plan.txt" 2>/dev/null
check "mpirun -np 3: blis plan gives its expected answer" cmp examples/plan/expected.txt "$tmp/plan.txt"

# The plan's steady-state judgement and its report's CDFs come from the
# workers' timed samples: the JSON and the report must be those of one process.
plan=(plan --model qwen/qwen3-14b --rate 200 --slo 'ttft_p99<500ms' --format json)
"$blis" "${plan[@]}" --report "$tmp/r1" > "$tmp/plan1.json" 2>/dev/null
"${mpi[@]}" "${plan[@]}" --report "$tmp/r3" > "$tmp/plan3.json" 2>/dev/null
check "mpirun -np 3: blis plan's JSON is that of one process" cmp "$tmp/plan1.json" "$tmp/plan3.json"
check "mpirun -np 3: blis plan's report is that of one process" diff -r "$tmp/r1" "$tmp/r3"

cat > "$tmp/bad.toml" <<'TOML'
model = "qwen/qwen3-14b"
num-requests = 20
[[sweep]]
rate = 5
[[sweep]]
rate = 10
latency-model = "nope"
TOML
set +e
"${mpi[@]}" run "$tmp/bad.toml" > "$tmp/bad.out" 2> "$tmp/bad.err"
status=$?
set -e
check "a failing worker: exit 2, nothing on stdout" test "$status" -eq 2 -a ! -s "$tmp/bad.out"
check "a failing worker: rank 0 reports its error" grep -q "unknown latency model 'nope'" "$tmp/bad.err"

# A scenario's path rights travel to the workers with its configurations: a
# pool naming a library is refused there as in one process.
cat > "$tmp/lib.toml" <<'TOML'
model = "qwen/qwen3-14b"
num-requests = 20
[[pools]]
name = "evil"
count = 1
latency-model = "/nonexistent/libevil.so"
[sweep]
rate = [5, 10]
TOML
set +e
"${mpi[@]}" run "$tmp/lib.toml" > "$tmp/lib.out" 2> "$tmp/lib.err"
status=$?
set -e
check "a scenario's pool library is refused on the workers too: exit 2" test "$status" -eq 2 -a ! -s "$tmp/lib.out"
check "a scenario's pool library: the refusal names the rule" grep -q "a scenario file may not load native code" "$tmp/lib.err"

echo "mpi: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
