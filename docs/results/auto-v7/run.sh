#!/usr/bin/env bash
# docs/results.md#earlier-designs: auto version 7 against version 6, version 3 (DTS), tuned
# MergeDTS, Self-Sparring and RMED1 on the grids of matrix seeds 9, 11 and 12 and 64 rankers of
# seed 13 (the grids version 6 was reported on), 4 runs per policy and cell, 10^6 steps; then
# versions 7, 6 and 3 on the copeland-random cells of seeds 21-24 at margins 0.005, 0.01 and
# 0.02, 16 runs each. Writes grid.md and grid.json per grid, and a log per cell, under OUT
# (default out/auto-v7); about 40 minutes on two cores.
# Usage: docs/results/auto-v7/run.sh [OUT]
set -euo pipefail
out=${1:-out/auto-v7}
# shellcheck disable=SC2054 # the commas are inside policy specs, not between elements
policies=(--policy auto:version=7 --policy auto:version=6 --policy auto:version=3
    --policy merge_dts:alpha=0.262144,batch_size=16 --policy self_sparring --policy rmed1)
# shellcheck source=docs/results/lib/grid.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/grid.sh"
grid 11 4,16 0.01,0.1 seed-11 &
grid 12 4,16 0.005,0.3 seed-12-extremes &
wait
grid 9 4,16 0.01,0.1 seed-9 &
grid 13 64 0.01,0.1 seed-13-64 &
wait
mkdir -p "$out/copeland-random"
for seed in 21 22 23 24; do
    for margin in 0.005 0.01 0.02; do
        "$joust" simulate --matrix "family:copeland-random:16:$margin:0.05:$seed" \
            --policy auto:version=7 --policy auto:version=6 --policy auto:version=3 \
            --steps 1000000 --runs 16 --seed 2 --threads 1 \
            --out "$out/copeland-random/$seed-$margin" >"$out/copeland-random/$seed-$margin.log"
    done
done
