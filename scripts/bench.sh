#!/bin/bash
# bench.sh [options] [RUN...]: times the runs that guard blis's speed (issue 16)
# and prints one Markdown table, headed by the commit measured.
#
#   --blis PATH   the blis binary (default: build/stage/bin/blis, else build/core/app/blis)
#   --reps N      repetitions per run; CPU is the minimum (default 3)
#   --label TEXT  what the table's header names the binary by (say its commit);
#                 default: this checkout's commit, for its own build
#   --list        print the runs' names and commands, run nothing
#   --instructions  count instructions instead of timing (valgrind's callgrind,
#                 one repetition: the count is the same on a busy machine)
#   RUN...        names of runs to time (default: all except the long ones)
#
# Columns: CPU seconds (user+sys, min over the repetitions), peak RSS (max),
# events per CPU second (from `--profile`), peak RSS bytes per request.
# CPU time, not wall time: the machine is shared. With --instructions:
# instructions (callgrind's Ir), instructions per event and per request.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
blis=""
reps=3
label=""
list=0
instructions=0
names=()
while [ $# -gt 0 ]; do
  case $1 in
    --blis) blis=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --list) list=1; shift ;;
    --instructions) instructions=1; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
if [ -z "$blis" ]; then
  for c in "$here/build/stage/bin/blis" "$here/build/core/app/blis"; do
    [ -x "$c" ] && { blis=$c; break; }
  done
fi
[ -x "$blis" ] || { echo "bench.sh: no blis binary (build it, or give --blis PATH)" >&2; exit 2; }
lua_pa="$(dirname "$blis")/../share/blis/scripts/scorers/prefix_affinity.lua"
[ -f "$lua_pa" ] || lua_pa="$here/scripts/scorers/prefix_affinity.lua"

base="run --model qwen/qwen3-14b"
prefix="--num-instances 16 --rate 300 --num-requests 200000 --routing-policy weighted --prefix-tokens 512"
# name|requests|arguments; names ending in "-long" run only when named.
runs=(
  "16x100k|100000|$base --num-instances 16 --rate 300 --num-requests 100000"
  "16x1M|1000000|$base --num-instances 16 --rate 300 --num-requests 1000000"
  "1x1M-rate500|1000000|$base --rate 500 --num-requests 1000000"
  "128x12k|12000|$base --num-instances 128 --rate 200 --num-requests 12000"
  "prefix-16x200k-native|200000|$base $prefix --routing-scorers prefix-affinity:3,queue-depth:2,kv-utilization:2"
  "prefix-16x200k-lua|200000|$base $prefix --routing-scorers $lua_pa:3,queue-depth:2,kv-utilization:2"
  "16x10M-long|10000000|$base --num-instances 16 --rate 300 --num-requests 10000000"
)

if [ $list = 1 ]; then
  for r in "${runs[@]}"; do IFS='|' read -r n q a <<<"$r"; echo "$n: blis $a"; done
  exit 0
fi
selected() {
  local n=$1
  if [ ${#names[@]} -eq 0 ]; then [[ $n != *-long ]]; return; fi
  for s in "${names[@]}"; do [ "$s" = "$n" ] && return 0; done
  return 1
}
for s in "${names[@]}"; do
  found=0
  for r in "${runs[@]}"; do [ "${r%%|*}" = "$s" ] && found=1; done
  [ $found = 1 ] || { echo "bench.sh: unknown run '$s' (see --list)" >&2; exit 2; }
done

commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$here" diff --quiet HEAD 2>/dev/null || commit="$commit-dirty"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
how="min of $reps"
[ $instructions = 1 ] && how="callgrind instructions"
if [ -n "$label" ]; then
  echo "$label: $blis, $how"
elif [[ $blis == "$here"/build/* ]]; then
  echo "commit $commit, $(basename "$blis") $blis, $how"
else
  # A binary from elsewhere: this checkout's commit says nothing about it.
  echo "$blis ($("$blis" --version 2>/dev/null | head -1)), $how; give --label to name its commit"
fi
echo
if [ $instructions = 1 ]; then
  command -v valgrind >/dev/null || { echo "bench.sh: --instructions needs valgrind (apt-get install valgrind)" >&2; exit 2; }
  echo "| run | instructions | per event | per request |"
  echo "|---|---:|---:|---:|"
  for r in "${runs[@]}"; do
    IFS='|' read -r name requests args <<<"$r"
    selected "$name" || continue
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$blis" $args --profile >/dev/null 2>"$tmp/err" ||
      { echo "bench.sh: $name failed:" >&2; tail -3 "$tmp/err" >&2; exit 1; }
    ir=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$tmp/cg")
    events=$(sed -n 's/^profile: \([0-9]*\) events.*/\1/p' "$tmp/err")
    awk -v n="$name" -v i="$ir" -v e="$events" -v q="$requests" 'BEGIN {
      printf "| %s | %.4g G | %.0f | %.0f |\n", n, i / 1e9, (e > 0 ? i / e : 0), i / q }'
  done
  exit 0
fi
echo "| run | CPU s | peak RSS MiB | events/s | bytes/request |"
echo "|---|---:|---:|---:|---:|"
for r in "${runs[@]}"; do
  IFS='|' read -r name requests args <<<"$r"
  selected "$name" || continue
  best="" rss=0 events=0
  for ((i = 0; i < reps; i++)); do
    # shellcheck disable=SC2086
    /usr/bin/time -o "$tmp/time" -f '%U %S %M' "$blis" $args --profile >/dev/null 2>"$tmp/err" ||
      { echo "bench.sh: $name failed:" >&2; tail -3 "$tmp/err" >&2; exit 1; }
    read -r user sys kib <"$tmp/time"
    cpu=$(echo "$user + $sys" | bc)
    if [ -z "$best" ] || [ "$(echo "$cpu < $best" | bc)" = 1 ]; then best=$cpu; fi
    [ "$kib" -gt "$rss" ] && rss=$kib
    events=$(sed -n 's/^profile: \([0-9]*\) events.*/\1/p' "$tmp/err")
  done
  awk -v n="$name" -v c="$best" -v k="$rss" -v e="$events" -v q="$requests" 'BEGIN {
    printf "| %s | %.2f | %.0f | %.0f | %.0f |\n", n, c, k / 1024, (c > 0 ? e / c : 0), k * 1024 / q }'
done
