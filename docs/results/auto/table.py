#!/usr/bin/env python3
"""Prints docs/results.md's table of auto against the baselines from the summaries run.sh
wrote: regret (mean +- s.e.) at every power of ten from 10^4 to the last step, accuracy at the
last step, per matrix."""

import json
import sys
from pathlib import Path

here = Path(sys.argv[1])
dirs = sorted(p for p in here.iterdir() if (p / "summary.json").exists())
steps = json.loads((dirs[0] / "summary.json").read_text())["steps"]
powers = [10**e for e in range(4, 8) if 10**e <= steps]
print(
    "| matrix | policy | "
    + " | ".join(f"regret at 10^{len(str(p)) - 1}" for p in powers)
    + " | accuracy | steps/s |"
)
print("| --- | --- | " + "--- | " * len(powers) + "--- | --- |")
labels = {"merge_dts:": "merge_dts (tuned)", "auto:version=1": "auto (version 1)"}
for d in dirs:
    s = json.loads((d / "summary.json").read_text())
    for p in s["policies"]:
        cps = p["checkpoints"]
        at = [min(cps, key=lambda c: abs(c["step"] - n)) for n in powers]
        name = next((v for k, v in labels.items() if p["policy"].startswith(k)), p["policy"])
        feedback = (
            f", delay {s['delay']} batch {s['batch']}" if s["delay"] or s["batch"] > 1 else ""
        )
        regrets = " | ".join(f"{c['regret_mean']:,.0f} ± {c['regret_stderr']:,.0f}" for c in at)
        print(
            f"| {d.name} | `{name}`{feedback} | {regrets} | {cps[-1]['accuracy']:.2f} | "
            f"{p['steps_per_second']:,.0f} |"
        )
print(f"\n{s['runs']} runs of {s['steps']:,} steps each, seed 1 (mean ± s.e.).")
