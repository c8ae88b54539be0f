# Sourced by run.sh and delayed.sh from the repository root: the matrices of docs/results.md's auto
# tables, the thread count and the binary, so both scripts measure the same things.
threads=${THREADS:-2}
# JOUST=path runs that binary instead of building one (e.g. a copy, so builds can go on meanwhile).
joust=${JOUST:-}
if [[ -z $joust ]]; then cargo build --release --quiet; joust=target/release/joust; fi
# shellcheck disable=SC2034 # used by the scripts that source this file
all="cycle cycle2 arxiv6 utility:2good:linear random-condorcet:16:1 random-condorcet:64:1
  random-condorcet:136:1 random-copeland:16:1 random-copeland:64:1 random-copeland:136:1
  data/mslr-navigational.txt data/mslr-perfect.txt"
tuned_merge_dts=merge_dts:alpha=0.262144,batch_size=16,c=4000000
