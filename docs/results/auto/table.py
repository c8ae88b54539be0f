#!/usr/bin/env python3
"""Prints the README's table of auto against the baselines from the summaries run.sh wrote:
regret (mean +- s.e.) at 10^4 and at the last step, accuracy at the last step, per matrix."""
import json
import sys
from pathlib import Path

here = Path(sys.argv[1])
print("| matrix | policy | regret at 10^4 | regret at the end | accuracy | steps/s |")
print("| --- | --- | --- | --- | --- | --- |")
for d in sorted(p for p in here.iterdir() if (p / "summary.json").exists()):
    s = json.loads((d / "summary.json").read_text())
    for p in s["policies"]:
        cps = p["checkpoints"]
        at4 = min(cps, key=lambda c: abs(c["step"] - 10_000))
        last = cps[-1]
        name = p["policy"].split(":")[0] + (" (tuned)" if p["policy"].startswith("merge_dts:") else "")
        feedback = f", delay {s['delay']} batch {s['batch']}" if s["delay"] or s["batch"] > 1 else ""
        print(f"| {d.name} | `{name}`{feedback} | {at4['regret_mean']:,.0f} ± {at4['regret_stderr']:,.0f} | "
              f"{last['regret_mean']:,.0f} ± {last['regret_stderr']:,.0f} | {last['accuracy']:.2f} | "
              f"{p['steps_per_second']:,.0f} |")
print(f"\n{s['runs']} runs of {s['steps']:,} steps each, seed 1.")
