# shellcheck shell=bash
# Sourced by docs/results/auto-v6/run.sh, auto-v7/run.sh and auto-v8/run.sh: sets `joust` (the
# binary: $JOUST, else target/release/joust, built if missing) and defines `grid`, one `joust grid`
# of the policies in the sourcing script's array `policies` into its output directory `out`.
# Usage: grid MATRIX_SEED SIZES MARGINS DIR (4 runs per policy and cell, 10^6 steps, one thread).
# shellcheck disable=SC2154 # policies and out are the sourcing script's
joust=${JOUST:-target/release/joust}
[[ -x $joust ]] || cargo build --release --bin joust
grid() {
    "$joust" grid "${policies[@]}" --noise 0.05 --matrix-seed "$1" --seed 1 --sizes "$2" \
        --margins "$3" --steps 1000000 --runs 4 --threads 1 --out "$out/$4"
}
