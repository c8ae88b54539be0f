#!/usr/bin/env bash
# docs/results.md's comparison of `auto` (version 2, and version 1 for reference) with the
# baselines: regret at every power of ten up to STEPS on every kind of matrix, and auto with delayed,
# batched feedback. Writes a directory of summary.json, curves.csv and plots per matrix and
# prints the table of docs/results.md (table.py).
#
# Usage: docs/results/auto/run.sh [STEPS RUNS [OUT]] (default 100000 20 and this directory).
# MATRICES="cycle arxiv6" runs only those (names as in the list below); THREADS sets --threads
# (default 2; the figures do not depend on it, only the speed).
#
# Where the slow policies run (DTS makes about 40,000 steps/s on 136 arms and 770,000 on 16 at
# 10^5 steps; one run of 10^7 steps on 136 arms would take over four minutes):
# - DTS: everywhere up to 10^6 steps; at 10^7 only on at most 20 arms, and not on Cycle (where it
#   had 20 times auto's regret at 10^6).
# - auto version 1: up to 10^6 (it is in the table to show what version 2 changed).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/../../.."
steps=${1:-100000}
runs=${2:-20}
out=${3:-$here}
source "$here/common.sh"
policies=(--policy auto:version=2 --policy self_sparring
          --policy "$tuned_merge_dts" --policy rmed1 --policy rucb)
((steps <= 1000000)) && policies+=(--policy auto:version=1)

# The number of arms of a matrix named as above.
arms() {
  case $1 in
    *mslr*) echo 136 ;;
    cycle | cycle2) echo 20 ;;
    arxiv6) echo 6 ;;
    utility:*) echo 6 ;;
    random-*) echo "$1" | cut -d: -f2 ;;
  esac
}

runs_dts() {
  if ((steps <= 1000000)); then return 0; fi
  [[ $1 != cycle ]] && (($(arms "$1") <= 20))
}

for matrix in ${MATRICES:-$all}; do
  name=$(basename "$matrix" .txt | tr ':' '-')
  dts=()
  if runs_dts "$matrix"; then dts=(--policy dts); fi
  $joust simulate --matrix "$matrix" "${policies[@]}" "${dts[@]}" --steps "$steps" --runs "$runs" \
    --seed 1 --threads "$threads" --out "$out/$name"
done
for matrix in cycle data/mslr-navigational.txt; do
  name=$(basename "$matrix" .txt | tr ':' '-')
  [[ -n ${MATRICES:-} && " $MATRICES " != *" $matrix "* ]] && continue
  $joust simulate --matrix "$matrix" --policy auto:version=2 --steps "$steps" --runs "$runs" --seed 1 \
    --threads "$threads" --delay 1000 --batch 1000 --out "$out/delayed-$name"
done
python3 "$here/table.py" "$out"
