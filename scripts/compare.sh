#!/usr/bin/env bash
# compare.sh BEFORE AFTER [LIST]: runs every configuration of LIST (default
# tests/compare/configs.txt) with two blis binaries and compares what a user
# sees: stdout, the exit status, and every file the run writes (@OUT@ in a
# line is a fresh folder of each run's own). For refactors that must keep
# every printed byte (issue 24; issue 31): the golden tests cover the
# reference's numbers, this covers the rest of the surface.
#
# Prints one line per configuration that differs and a last line
# "compare: N configurations, bad=K"; exits 1 when K > 0. Run from the
# repository's root (the list names examples/ by relative paths).
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
before=$1 after=$2
list=${3:-"$(dirname "$0")/../tests/compare/configs.txt"}
for b in "$before" "$after"; do [ -x "$b" ] || { echo "compare.sh: $b is not an executable" >&2; exit 2; }; done
[ -f "$list" ] || { echo "compare.sh: no list $list" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 bad=0
# stderr without what may differ between runs: the run's own folder, wall
# times ("(0.16 s)"), and the order in which parallel jobs report.
quiet() { sed -E "s|$1|OUT|g; s/\([0-9.]+ s\)//g" "$1/stderr" | sort; }
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  n=$((n + 1))
  for side in before after; do
    bin=$before; [ $side = after ] && bin=$after
    out="$tmp/$side/$n"
    mkdir -p "$out/files"
    args=${line//@OUT@/$out/files}
    # shellcheck disable=SC2086
    eval "\"$bin\" $args" >"$out/stdout" 2>"$out/stderr"
    echo $? >"$out/status"
  done
  if ! diff -r "$tmp/before/$n" "$tmp/after/$n" -x stderr >/dev/null 2>&1 ||
     ! diff <(quiet "$tmp/before/$n") <(quiet "$tmp/after/$n") >/dev/null; then
    bad=$((bad + 1))
    echo "differs: $line"
    diff -r "$tmp/before/$n" "$tmp/after/$n" 2>&1 | head -5 | sed 's/^/  /'
  fi
done <"$list"
echo "compare: $n configurations, bad=$bad"
[ $bad = 0 ]
