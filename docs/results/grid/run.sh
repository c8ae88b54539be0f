#!/usr/bin/env bash
# docs/results.md's family grid: every baseline and auto version 2 on generated matrices of
# every family, matrix seed 2. Three grids: sizes 4-64 at margins 0.01 and 0.1 (10^6 steps),
# the extreme margins 0.005 and 0.3 at sizes 4 and 16 (10^6 steps), and 200 rankers (10^5 steps,
# 4 runs: DTS and RMED1 cost O(K^2) per step). Then auto (version 3) against the same policies on
# other matrices (matrix seeds 3 and 4), and a check that auto (version 3) makes exactly DTS's
# figures on the first grid's cells (10^5 steps). Writes grid.md and grid.json under OUT
# (default out/grid).
# Usage: docs/results/grid/run.sh [OUT]
set -euo pipefail
out=${1:-out/grid}
joust=${JOUST:-target/release/joust}
[[ -x $joust ]] || cargo build --release --bin joust
# shellcheck disable=SC2054 # the commas are inside policy specs, not between elements
baselines=(--policy auto:version=2 --policy merge_dts:alpha=0.262144,batch_size=16
    --policy self_sparring --policy rmed1 --policy dts)
common=(--noise 0.05 --matrix-seed 2 --seed 1)
"$joust" grid "${baselines[@]}" "${common[@]}" --sizes 4,16,64 --margins 0.01,0.1 \
    --steps 1000000 --runs 8 --out "$out/main"
"$joust" grid "${baselines[@]}" "${common[@]}" --sizes 4,16 --margins 0.005,0.3 \
    --steps 1000000 --runs 8 --out "$out/extremes"
"$joust" grid "${baselines[@]}" "${common[@]}" --sizes 200 --margins 0.01,0.1 \
    --steps 100000 --runs 4 --out "$out/size-200"
"$joust" grid --policy auto:version=3 --policy auto:version=2 --policy merge_dts:alpha=0.262144,batch_size=16 \
    --policy self_sparring --policy rmed1 --noise 0.05 --matrix-seed 3 --seed 1 \
    --sizes 4,16 --margins 0.01,0.1 --steps 1000000 --runs 8 --out "$out/seed-3"
"$joust" grid --policy auto:version=3 --policy auto:version=2 --policy merge_dts:alpha=0.262144,batch_size=16 \
    --policy self_sparring --policy rmed1 --noise 0.05 --matrix-seed 4 --seed 1 \
    --sizes 4,16 --margins 0.01,0.1 --steps 1000000 --runs 8 --out "$out/seed-4"
"$joust" grid --policy auto:version=3 --policy dts "${common[@]}" --sizes 4,16,64 --margins 0.01,0.1 \
    --steps 100000 --runs 8 --out "$out/auto-is-dts"
