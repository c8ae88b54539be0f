#!/usr/bin/env bash
# Reproduces the multileaving results of docs/results.md (section "Many rankers per query"): li-2020
# section 6.6 in spirit, then multi-dueling policies at 4, 8 and 16 rankers per query against
# pairwise ones. Writes one directory of summary.json, curves.csv and plots per configuration
# here, then prints its tables (table.py). Usage: docs/results/multileave/run.sh
# [STEPS RUNS] (for the comparisons at 4, 8 and 16 rankers; default 100000 20); about 5 minutes
# on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/../../.."
steps=${1:-100000}
runs=${2:-20}
cargo build --release --quiet
joust=target/release/joust
mkdir -p target/multileave
data=target/multileave/mslr-shaped.txt
# 1,000 queries of 60 documents with 136 features, as many as MSLR-WEB has.
$joust letor-gen --size 1000:60:136 --seed 1 --out "$data"
common=(--letor "$data" --click-model navigational --steps "$steps" --runs "$runs" --seed 1
        --threads 2)
tuned=merge_dts:alpha=0.262144,batch_size=16,c=4000000
# li-2020 section 6.6: MergeDTS with Probabilistic Interleaving against Sample-Only Scored
# Multileave over every ranker the UCB estimates leave unbeaten (alpha 0.51 for both), for 2M
# queries and 5 runs as in the paper.
li=(--letor "$data" --click-model navigational --steps 2000000 --runs 5 --seed 1 --threads 2)
$joust simulate "${li[@]}" --method probabilistic --policy merge_dts:alpha=0.51 \
  --out "$here/li2020-mergedts-pi"
$joust simulate "${li[@]}" --method sample_only_scored --rankers-per-query 136 \
  --policy ucb_candidates:alpha=0.51 --out "$here/li2020-sosm-ucb"
# Pairwise policies with Team-Draft, then multi-dueling ones with Team-Draft Multileave.
$joust simulate "${common[@]}" --method team_draft --policy self_sparring --policy "$tuned" \
  --policy rucb --out "$here/pairwise"
for m in 4 8 16; do
  $joust simulate "${common[@]}" --method team_draft_multileave --rankers-per-query "$m" \
    --policy mdb --policy self_sparring --policy "$tuned" --policy ucb_candidates \
    --out "$here/m$m"
done
# The multileaving method at 8 rankers per query (Team-Draft Multileave is in m8 above).
# Probabilistic Multileave is left out: its exact marginalisation enumerates 8! assignments per
# clicked round, about a millisecond per query.
for method in sample_only_scored pairwise_preference; do
  $joust simulate "${common[@]}" --method "$method" --rankers-per-query 8 \
    --policy mdb --policy self_sparring --out "$here/m8-$method"
done
python3 "$here/table.py" "$here"
