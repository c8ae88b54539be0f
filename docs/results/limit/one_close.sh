#!/usr/bin/env bash
# docs/decisions.md, "The 90th percentile on four rankers": the default's decision on
# four rankers whose winner beats one rival by GAP and two by 0.45, for five gaps, 400 runs each.
# Prints one table row per gap from each run's decisions.csv; about 3 minutes on one core.
# Usage: docs/results/limit/one_close.sh [OUT]
set -euo pipefail
out=${1:-out/one-close}
joust=${JOUST:-target/release/joust}
[[ -x $joust ]] || cargo build --release --bin joust
mkdir -p "$out"
echo "| gap | oracle cost | median | 90th percentile | decided wrongly |"
echo "| --- | --- | --- | --- | --- |"
for gap in 0.1 0.05 0.02 0.01 0.005; do
    matrix="$out/one-close-$gap.txt"
    awk -v g="$gap" 'BEGIN {
        printf "0.5 %s 0.95 0.95\n%s 0.5 0.9 0.9\n0.05 0.1 0.5 0.5\n0.05 0.1 0.5 0.5\n", 0.5 + g, 0.5 - g
    }' >"$matrix"
    # Twelve times the close rival's oracle cost, so that every run decides within the horizon.
    steps=$(awk -v g="$gap" 'BEGIN { p = 0.5 + g; kl = p * log(2 * p) + (1 - p) * log(2 * (1 - p));
        printf "%d", 12 * log(60) / kl + 2000 }')
    "$joust" simulate --matrix "$matrix" --policy auto --steps "$steps" --runs 400 --seed 2 \
        --threads 1 --out "$out/$gap" >/dev/null
    wrong=$(jq '[.. | .decided_wrong? // empty] | max' "$out/$gap/summary.json")
    awk -F, -v g="$gap" -v w="$wrong" 'NR == 2 {
        printf "| %s | %d | %.2fx | %.2fx | %s |\n", g, $5, $10, $11, w }' "$out/$gap/decisions.csv"
done
