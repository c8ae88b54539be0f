#!/usr/bin/env bash
# The table (docs/results.md) of what delayed, batched feedback (--delay 1000 --batch 1000) costs `auto`
# and two baselines at 10^6 steps on every kind of matrix, next to the regret every policy that
# treats the arms alike must pay before its first outcome arrives (delayed_table.py explains).
# Immediate-feedback figures come from run.sh's 10^6 table (steps-1000000, the same seeds).
#
# Usage: docs/results/auto/delayed.sh [OUT] (default docs/results/auto/delayed-1000000).
# MATRICES, THREADS and JOUST as in run.sh. It took under 4 minutes on two threads (216 s).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/../../.."
out=${1:-$here/delayed-1000000}
source "$here/common.sh"
# Outcomes of steps 1..1000 are due from step 1001 and applied together at step 2000: the first
# 2,000 duels are chosen knowing nothing.
blind=2000
for matrix in ${MATRICES:-$all}; do
  name=$(basename "$matrix" .txt | tr ':' '-')
  $joust simulate --matrix "$matrix" --policy auto --policy self_sparring \
    --policy "$tuned_merge_dts" --steps 1000000 --runs 10 \
    --seed 1 --threads "$threads" --delay 1000 --batch 1000 --out "$out/$name"
  $joust simulate --matrix "$matrix" --policy uniform --steps "$blind" --runs 200 --seed 1 \
    --threads "$threads" --out "$out/$name/blind"
done
python3 "$here/delayed_table.py" "$here/steps-1000000" "$out"
