# shellcheck shell=bash
# Sourced by docs/results/auto-v6/run.sh and auto-v7/run.sh: one `joust grid` of the policies in
# the array `policies`, with the binary `joust` and the output directory `out` the script set.
# Usage: grid MATRIX_SEED SIZES MARGINS DIR (4 runs per policy and cell, 10^6 steps, one thread).
# shellcheck disable=SC2154 # joust, policies and out are the sourcing script's
grid() {
    "$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed "$1" --seed 1 --sizes "$2" \
        --margins "$3" --steps 1000000 --runs 4 --threads 1 --out "$out/$4"
}
