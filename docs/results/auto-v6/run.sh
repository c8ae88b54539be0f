#!/usr/bin/env bash
# docs/results.md#auto-version-6: auto version 6 against version 4, version 3 (DTS), tuned
# MergeDTS, Self-Sparring and RMED1 on matrices of seeds 7 to 12, which version 6 was not
# developed on (it was, on copeland cells of seeds 3 to 6), 4 runs per policy and cell, 10^6
# steps. Writes grid.md and grid.json under OUT (default out/auto-v6); about 7 minutes per grid
# of 4 and 16 rankers on one core.
# Usage: docs/results/auto-v6/run.sh [OUT]
set -euo pipefail
out=${1:-out/auto-v6}
joust=${JOUST:-target/release/joust}
[[ -x $joust ]] || cargo build --release --bin joust
# shellcheck disable=SC2054 # the commas are inside policy specs, not between elements
policies=(--policy auto:version=6 --policy auto:version=4 --policy auto:version=3
    --policy merge_dts:alpha=0.262144,batch_size=16 --policy self_sparring --policy rmed1)
"$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed 7 --seed 1 --sizes 4,16 \
    --margins 0.01,0.1 --steps 1000000 --runs 4 --threads 1 --out "$out/seed-7" &
"$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed 8 --seed 1 --sizes 4,16 \
    --margins 0.005,0.3 --steps 1000000 --runs 4 --threads 1 --out "$out/seed-8-extremes" &
wait
# Two more seeds, run after the first two had been read.
"$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed 9 --seed 1 --sizes 4,16 \
    --margins 0.01,0.1 --steps 1000000 --runs 4 --threads 1 --out "$out/seed-9" &
"$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed 10 --seed 1 --sizes 4,16 \
    --margins 0.005,0.3 --steps 1000000 --runs 4 --threads 1 --out "$out/seed-10-extremes" &
wait
# With the check's sqrt(t) bound: two fresh seeds, and seed 9 again.
"$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed 11 --seed 1 --sizes 4,16 \
    --margins 0.01,0.1 --steps 1000000 --runs 4 --threads 1 --out "$out/seed-11" &
"$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed 12 --seed 1 --sizes 4,16 \
    --margins 0.005,0.3 --steps 1000000 --runs 4 --threads 1 --out "$out/seed-12-extremes" &
wait
"$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed 9 --seed 1 --sizes 4,16 \
    --margins 0.01,0.1 --steps 1000000 --runs 4 --threads 1 --out "$out/seed-9-bounded"
# 64 rankers: DTS and RMED1 cost O(K^2) per step, about 25 minutes.
"$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed 7 --seed 1 --sizes 64 \
    --margins 0.01,0.1 --steps 1000000 --runs 4 --threads 1 --out "$out/seed-7-64"
