#!/usr/bin/env python3
"""Prints the table (docs/results.md) of delayed feedback against immediate feedback at 10^6 steps.

Arguments: the directory of run.sh's immediate-feedback summaries (same steps, runs and seed) and
the one delayed.sh wrote. Per matrix and policy: regret with immediate and with delayed feedback,
their ratio, and the blind floor: the regret of uniformly random duels over the steps chosen before
the first outcome arrives. Until then a policy that treats the arms alike cannot tell them apart,
so its expected regret per step is the mean regret of a random duel, whatever it does; the floor
over the floor-to-immediate ratio says how close to immediate feedback any such policy can come."""

import json
import sys
from pathlib import Path

immediate_dir, delayed_dir = Path(sys.argv[1]), Path(sys.argv[2])
labels = {"merge_dts:": "merge_dts (tuned)"}


def final(policy):
    c = policy["checkpoints"][-1]
    return c["regret_mean"], c["regret_stderr"], c["accuracy"]


print(
    "| matrix | policy | immediate | delayed | ratio | blind floor | floor / immediate | accuracy |"
)
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for d in sorted(p for p in delayed_dir.iterdir() if (p / "summary.json").exists()):
    delayed = json.loads((d / "summary.json").read_text())
    immediate = json.loads((immediate_dir / d.name / "summary.json").read_text())
    assert (delayed["steps"], delayed["runs"], delayed["seed"]) == (
        immediate["steps"],
        immediate["runs"],
        immediate["seed"],
    ), d.name
    blind = json.loads((d / "blind" / "summary.json").read_text())
    floor, floor_se, _ = final(blind["policies"][0])
    by_name = {p["policy"]: p for p in immediate["policies"]}
    for p in delayed["policies"]:
        im, im_se, _ = final(by_name[p["policy"]])
        de, de_se, acc = final(p)
        name = next((v for k, v in labels.items() if p["policy"].startswith(k)), p["policy"])
        print(
            f"| {d.name} | `{name}` | {im:,.0f} ± {im_se:,.0f} | {de:,.0f} ± {de_se:,.0f} | "
            f"{de / im:.2f}x | {floor:,.0f} ± {floor_se:,.0f} | {floor / im:.2f}x | {acc:.2f} |"
        )
print(
    f"\n{delayed['runs']} runs of {delayed['steps']:,} steps each, seed 1, delay "
    f"{delayed['delay']}, batch {delayed['batch']} (mean ± s.e.); blind floor: uniform duels "
    f"over the first {blind['steps']:,} steps, {blind['runs']} runs."
)
