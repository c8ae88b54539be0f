#!/usr/bin/env bash
# docs/results.md#earlier-designs: auto version 6 against version 4, version 3 (DTS), tuned
# MergeDTS, Self-Sparring and RMED1 on matrices of seeds 9, 11 and 12, 64 rankers of seed 13
# and 200 of seed 14 (version 6 was developed on copeland cells of seeds 3 to 5), 4 runs per
# policy and cell, 10^6 steps (10^5 at 200 rankers). Writes grid.md and grid.json under OUT
# (default out/auto-v6); about 7 minutes per grid on one core (the 64-ranker grid about 15).
# Usage: docs/results/auto-v6/run.sh [OUT]
set -euo pipefail
out=${1:-out/auto-v6}
# shellcheck disable=SC2054 # the commas are inside policy specs, not between elements
policies=(--policy auto:version=6 --policy auto:version=4 --policy auto:version=3
    --policy merge_dts:alpha=0.262144,batch_size=16 --policy self_sparring --policy rmed1)
# shellcheck source=docs/results/lib/grid.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/grid.sh"
grid 11 4,16 0.01,0.1 seed-11 &
grid 12 4,16 0.005,0.3 seed-12-extremes &
wait
grid 9 4,16 0.01,0.1 seed-9-bounded
# 64 rankers: DTS and RMED1 cost O(K^2) per step, about 15 minutes.
grid 13 64 0.01,0.1 seed-13-64
# 200 rankers, 10^5 steps: about 5 minutes on two threads.
"$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed 14 --seed 1 --sizes 200 \
    --margins 0.01,0.1 --steps 100000 --runs 4 --threads 2 --out "$out/seed-14-200"
