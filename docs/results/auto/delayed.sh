#!/usr/bin/env bash
# The README's table of what delayed, batched feedback (--delay 1000 --batch 1000) costs `auto`
# and two baselines at 10^6 steps on every kind of matrix, next to the regret every policy that
# treats the arms alike must pay before its first outcome arrives (delayed_table.py explains).
# Immediate-feedback figures come from run.sh's 10^6 table (steps-1000000, the same seeds).
#
# Usage: docs/results/auto/delayed.sh [OUT] (default docs/results/auto/delayed-1000000).
# MATRICES, THREADS and JOUST as in run.sh. About 25 minutes of one core.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/../../.."
out=${1:-$here/delayed-1000000}
threads=${THREADS:-2}
joust=${JOUST:-}
if [[ -z $joust ]]; then cargo build --release --quiet; joust=target/release/joust; fi
all="cycle cycle2 arxiv6 utility:2good:linear random-condorcet:16:1 random-condorcet:64:1
  random-condorcet:136:1 random-copeland:16:1 random-copeland:64:1 random-copeland:136:1
  ../shared/data/mslr-navigational.txt ../shared/data/mslr-perfect.txt"
# Outcomes of steps 1..1000 are due from step 1001 and applied together at step 2000: the first
# 2,000 duels are chosen knowing nothing.
blind=2000
for matrix in ${MATRICES:-$all}; do
  name=$(basename "$matrix" .txt | tr ':' '-')
  $joust simulate --matrix "$matrix" --policy auto --policy self_sparring \
    --policy merge_dts:alpha=0.262144,batch_size=16,c=4000000 --steps 1000000 --runs 10 \
    --seed 1 --threads "$threads" --delay 1000 --batch 1000 --out "$out/$name"
  $joust simulate --matrix "$matrix" --policy uniform --steps "$blind" --runs 200 --seed 1 \
    --threads "$threads" --out "$out/$name/blind"
done
python3 "$here/delayed_table.py" "$here/steps-1000000" "$out"
