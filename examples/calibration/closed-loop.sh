#!/bin/sh
# The closed loop of docs/calibration.md "Fit": a blis serve whose blackbox
# coefficients the fitter is not told (the table's betas scaled by 1.4, 0.7,
# 1.3), observed at --time-scale $TS, fitted, and a second workload predicted
# with the fitted file and observed from the same server.
# Usage: sh closed-loop.sh [BLIS] [WORKDIR]
set -eu
BLIS=${1:-blis}
W=${2:-$(mktemp -d)}
TS=${3:-1}
ALPHA=8888.089034078324,0.18488961143592303,0
SERVER_BETA=19009.461327554294,27.611259530324023,35.51960793249843
A="--rate 12 --num-requests 300 --seed 7 --prompt-tokens 700 --prompt-tokens-stdev 400 --prompt-tokens-min 50
   --prompt-tokens-max 2000 --output-tokens 100 --output-tokens-stdev 60 --output-tokens-min 10 --output-tokens-max 300"
B="--rate 8 --num-requests 200 --seed 11 --prompt-tokens 900 --prompt-tokens-stdev 200 --prompt-tokens-min 200
   --prompt-tokens-max 1600 --output-tokens 60 --output-tokens-stdev 20 --output-tokens-min 10 --output-tokens-max 150"

$BLIS serve --port 8129 --time-scale $TS --model qwen/qwen3-14b --latency-model blackbox \
  --alpha-coeffs $ALPHA --beta-coeffs $SERVER_BETA 2> "$W/serve.log" &
SERVER=$!
trap 'kill $SERVER' EXIT
sleep 2
# 1. Observe workload A.
$BLIS observe --server-url http://127.0.0.1:8129 --model qwen/qwen3-14b --time-scale $TS --record-itl $A \
  --trace-header "$W/a.yaml" --trace-data "$W/a.csv" > "$W/observed-a.txt" 2>/dev/null
# 2. Fit the blackbox coefficients to it (starting from the table's).
$BLIS calibrate --fit blackbox --model qwen/qwen3-14b --trace-header "$W/a.yaml" --trace-data "$W/a.csv" \
  --fit-output "$W/fitted.toml"
# 3. Predict workload B with the fitted model, and observe it from the server.
$BLIS run "$W/fitted.toml" $B > "$W/predicted-b.txt"
$BLIS observe --server-url http://127.0.0.1:8129 --model qwen/qwen3-14b --time-scale $TS --record-itl $B \
  --trace-header "$W/b.yaml" --trace-data "$W/b.csv" > "$W/observed-b.txt" 2>/dev/null
for k in e2e_mean_ms ttft_mean_ms ttft_p99_ms; do
  printf '%-14s observed %12s predicted %12s\n' "$k" \
    "$(grep -m1 "\"$k\"" "$W/observed-b.txt" | tr -d ' ,' | cut -d: -f2)" \
    "$(grep -m1 "\"$k\"" "$W/predicted-b.txt" | tr -d ' ,' | cut -d: -f2)"
done
