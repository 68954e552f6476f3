#!/usr/bin/env bash
# `mecha --version`: wall time (mean of 200 runs) and peak RSS. Targets: < 5 ms, < 10 MB.
set -euo pipefail
mecha=${1:-build/mecha}
runs=200
start=$(date +%s%N)
for _ in $(seq $runs); do "$mecha" --version >/dev/null; done
end=$(date +%s%N)
mean_us=$(( (end - start) / runs / 1000 ))
rss_kb=$(/usr/bin/time -f '%M' "$mecha" --version 2>&1 >/dev/null | tail -1)
echo "mecha --version: mean ${mean_us} us over ${runs} runs, peak RSS ${rss_kb} KB"
