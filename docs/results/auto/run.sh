#!/usr/bin/env bash
# The README's comparison of `auto` (version 2, and version 1 for reference) with the baselines:
# regret at 10^4 and 10^5 steps on every kind of matrix, 20 runs each, and auto with delayed,
# batched feedback. DTS runs on the matrices of at most 64 arms only (1,600 steps/s on 136), and
# beyond 10^5 steps on those of at most 20 (15,000 steps/s on 64).
# Writes a directory of summary.json, curves.csv and plots per matrix here and prints the
# README's table (table.py). Usage: docs/results/auto/run.sh [STEPS RUNS [OUT]] (default
# 100000 20 and this directory); measured 2.5 minutes on 2 cores, 4.5 for 1000000 10.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/../../.."
steps=${1:-100000}
runs=${2:-20}
out=${3:-$here}
cargo build --release --quiet
joust=target/release/joust
policies=(--policy auto --policy auto:version=1 --policy self_sparring
          --policy merge_dts:alpha=0.262144,batch_size=16,c=4000000 --policy rmed1 --policy rucb)
for matrix in cycle cycle2 arxiv6 utility:2good:linear random-condorcet:16:1 \
    random-condorcet:64:1 random-copeland:16:1 \
    ../shared/data/mslr-navigational.txt ../shared/data/mslr-perfect.txt; do
  name=$(basename "$matrix" .txt | tr ':' '-')
  dts=(--policy dts)
  [[ $matrix == *mslr* || ($matrix == *:64:* && $steps -gt 100000) ]] && dts=()
  $joust simulate --matrix "$matrix" "${policies[@]}" "${dts[@]}" --steps "$steps" --runs "$runs" --seed 1 \
    --threads 2 --out "$out/$name"
done
for matrix in cycle ../shared/data/mslr-navigational.txt; do
  name=$(basename "$matrix" .txt | tr ':' '-')
  $joust simulate --matrix "$matrix" --policy auto --steps "$steps" --runs "$runs" --seed 1 \
    --threads 2 --delay 1000 --batch 1000 --out "$out/delayed-$name"
done
python3 "$here/table.py" "$out"
