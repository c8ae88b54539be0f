#!/usr/bin/env bash
# docs/results.md#auto-version-8: auto version 8 against versions 7, 6 and 3 (DTS), tuned
# MergeDTS, Self-Sparring and RMED1 on the grids of matrix seeds 9, 11 and 12 and 64 rankers of
# seed 13 (version 7's grids), 4 runs per policy and cell, 10^6 steps; then the matrices the
# section names: the 64-ranker `copeland-random` margin 0.01 cell of seed 13 (16 runs), the
# `copeland-random` K=16 cells of seeds 21-24 and seed 12's near-tie cell (16 runs), `copeland`
# K=16 margin 0.3 (16 runs) and seed 9's `copeland-random` K=4 margin 0.01 cell (32 runs).
# Writes grid.md and grid.json per grid, and a directory and log per matrix, under OUT (default
# out/auto-v8); about 70 minutes on two cores (an OUT holding version 7's grids, from
# docs/results/auto-v7/run.sh, is reused: only version 8 runs there).
# Usage: docs/results/auto-v8/run.sh [OUT]
set -euo pipefail
out=${1:-out/auto-v8}
# shellcheck disable=SC2054 # the commas are inside policy specs, not between elements
policies=(--policy auto:version=8 --policy auto:version=7 --policy auto:version=6
    --policy auto:version=3 --policy merge_dts:alpha=0.262144,batch_size=16 --policy self_sparring
    --policy rmed1)
# shellcheck source=docs/results/lib/grid.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/grid.sh"
grid 9 4,16 0.01,0.1 seed-9 &
grid 11 4,16 0.01,0.1 seed-11 &
wait
grid 12 4,16 0.005,0.3 seed-12-extremes &
grid 13 64 0.01,0.1 seed-13-64 &
wait
# One matrix: NAME MATRIX RUNS SEED POLICY...
one() {
    local name=$1 matrix=$2 runs=$3 seed=$4
    shift 4
    local specs=()
    for p in "$@"; do specs+=(--policy "$p"); done
    "$joust" simulate --matrix "$matrix" "${specs[@]}" --steps 1000000 --runs "$runs" \
        --seed "$seed" --threads 2 --out "$out/$name" >"$out/$name.log"
}
mkdir -p "$out/copeland-random"
one cr64 family:copeland-random:64:0.01:0.05:359638726008709742 16 2 \
    auto:version=8 auto:version=7 auto:version=3
for seed in 21 22 23 24; do
    for margin in 0.005 0.01 0.02; do
        one "copeland-random/$seed-$margin" "family:copeland-random:16:$margin:0.05:$seed" 16 2 \
            auto:version=8
    done
done
one cr-seed-12 family:copeland-random:16:0.005:0.05:14414590344186600372 16 3 auto:version=8
one copeland-16 family:copeland:16:0.3:0.05:4 16 5 auto:version=8 auto:version=7
one cr4-seed-9 family:copeland-random:4:0.01:0.05:7683892845518429341 32 3 \
    auto:version=8 auto:version=7
