#!/usr/bin/env bash
# docs/results.md#earlier-designs: the default (auto version 4) against version 3 (DTS), tuned
# MergeDTS, Self-Sparring and RMED1 on matrices it was not developed on (matrix seeds 3 and 4),
# 4 runs per policy and cell, 10^6 steps. Writes grid.md and grid.json under OUT (default
# out/auto-v4). The 64- and 200-ranker grids are the slow ones (DTS and RMED1 cost O(K^2) per step).
# Usage: docs/results/auto-v4/run.sh [OUT]
set -euo pipefail
out=${1:-out/auto-v4}
joust=${JOUST:-target/release/joust}
[[ -x $joust ]] || cargo build --release --bin joust
# shellcheck disable=SC2054 # the commas are inside policy specs, not between elements
policies=(--policy auto:version=4 --policy auto:version=3 --policy merge_dts:alpha=0.262144,batch_size=16
    --policy self_sparring --policy rmed1)
"$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed 3 --seed 1 --sizes 4,16 \
    --margins 0.01,0.1 --steps 1000000 --runs 4 --threads 1 --out "$out/seed-3"
"$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed 4 --seed 1 --sizes 4,16 \
    --margins 0.005,0.3 --steps 1000000 --runs 4 --threads 1 --out "$out/seed-4-extremes"
"$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed 3 --seed 1 --sizes 64 \
    --margins 0.01,0.1 --steps 1000000 --runs 4 --threads 1 --out "$out/seed-3-64"
"$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed 4 --seed 1 --sizes 200 \
    --margins 0.01,0.1 --steps 100000 --runs 4 --threads 1 --out "$out/seed-4-200"
