#!/bin/sh
# Renders a blis report with a headless Chromium and checks that the
# screenshot exists and is not blank. Skips (exit 0) when no Chromium is
# installed: it is not part of the default test suite.
#
#   scripts/check-report.sh BLIS_BINARY [REPORT_DIR]
#
# Without REPORT_DIR it writes a small plan's report to a temporary folder.
set -eu

blis=${1:?usage: scripts/check-report.sh BLIS_BINARY [REPORT_DIR]}
browser=
for b in ${CHECK_REPORT_BROWSERS:-chromium chromium-browser google-chrome}; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
  echo "check-report: no chromium found; skipped (apt-get install chromium to run it)"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dir=${2:-}
if [ -z "$dir" ]; then
  dir=$work/report
  "$blis" plan --model qwen/qwen3-14b --rate 40 --slo 'ttft_p99<500ms' --max-instances 8 --quiet \
    --report "$dir" >/dev/null
fi
[ -f "$dir/report.html" ] || { echo "check-report: $dir/report.html is missing" >&2; exit 1; }

png=$work/report.png
# Chromium wants a writable home for its profile; keep it inside $work.
HOME=$work timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$work/profile" --screenshot="$png" --window-size=1200,2400 \
  "file://$(cd "$dir" && pwd)/report.html" >/dev/null 2>&1 || true
[ -s "$png" ] || { echo "check-report: $browser produced no screenshot" >&2; exit 1; }

# Not blank: a blank page compresses to a few kilobytes, charts to far more.
size=$(wc -c <"$png")
if [ "$size" -lt 30000 ]; then
  echo "check-report: the screenshot is only $size bytes: the page looks blank" >&2
  exit 1
fi
echo "check-report: $dir/report.html rendered by $browser ($size bytes of PNG)"
