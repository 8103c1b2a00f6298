#!/usr/bin/env bash
# Holds the include graph of core/ to the layer table of core/README.md: the
# table's rows give the layers top to bottom, and an #include that reaches a
# layer above its own (for app/, any src/ folder) needs a line
# "- `FROM` → `TO`: reason" in the list under the table. Prints every arrow
# that has none, and exits 1 if there is one. Run by scripts/lint.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readme="$root/core/README.md"

# Layer rank of each folder, from the table's rows in order ("| name | `src/x/`, `src/y/` | ...").
declare -A rank
r=0
while IFS= read -r line; do
  folders=$(printf '%s\n' "$line" | awk -F'|' '{print $3}' | grep -oE '`(src/)?[a-z_]+/`' | tr -d '`' || true)
  [ -z "$folders" ] && continue
  for f in $folders; do
    f=${f%/}
    rank[${f#src/}]=$r
  done
  r=$((r + 1))
done < <(sed -n '/^| layer | folder | may call |/,/^$/p' "$readme" | tail -n +3)
if [ "${#rank[@]}" -lt 10 ]; then
  echo "blis: check-layers: cannot read the layer table of $readme" >&2
  exit 1
fi

# The allowed upward arrows: "- `from` → `to`:".
allowed=$(grep -oE '^- `[a-z_]+` → `[a-z_]+`:' "$readme" | sed -E 's/^- `([a-z_]+)` → `([a-z_]+)`:/\1>\2/' || true)

bad=0
check() {  # FROM-folder DIR
  local from="$1" dir="$2"
  while IFS=: read -r file _ inc; do
    local to
    to=$(printf '%s' "$inc" | sed -E 's/^#include "([a-z_]+)\/.*/\1/')
    [ "$to" = "$from" ] && continue
    [ -z "${rank[$to]+x}" ] && continue  # not a layer of core/src (e.g. "blis/...")
    local up=0
    if [ "$from" = app ] || [ "${rank[$to]}" -lt "${rank[$from]}" ]; then up=1; fi
    [ "$up" = 0 ] && continue
    if ! grep -qx "$from>$to" <<<"$allowed"; then
      echo "blis: check-layers: ${file#"$root"/} includes $to/, a layer above $from/ (core/README.md lists no reason)" >&2
      bad=1
    fi
  done < <(grep -rnE '^#include "[a-z_]+/' "$dir" --include='*.cpp' --include='*.hpp' || true)
}
check app "$root/core/app"
for d in "$root"/core/src/*/; do
  name=$(basename "$d")
  if [ -z "${rank[$name]+x}" ]; then
    echo "blis: check-layers: core/src/$name/ is not a row of the layer table in core/README.md" >&2
    bad=1
    continue
  fi
  check "$name" "$d"
done
if [ "$bad" = 0 ]; then echo "blis: layers clean (${#rank[@]} folders)" >&2; fi
exit "$bad"
