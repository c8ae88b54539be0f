#!/usr/bin/env python3
"""Prints the multileaving tables of docs/results.md from the summaries run.sh wrote: per policy, regret at
the last step (mean +- s.e.), the first checkpoint where at least 90% of runs name the best
feature, the NDCG@10 of the shown lists over the whole run and in its last window, and clicks
per query in the last window."""
import json
import sys
from pathlib import Path

here = Path(sys.argv[1])
rows = []
for d in sorted(p for p in here.iterdir() if (p / "summary.json").exists()):
    s = json.loads((d / "summary.json").read_text())
    m = s["letor"]["rankers_per_query"]
    method = s["letor"]["interleaving"]["method"]
    for p in s["policies"]:
        cps = p["checkpoints"]
        last = cps[-1]
        reach = next((c["step"] for c in cps if c["accuracy"] >= 0.9), None)
        # The windows partition the steps: weight each window's mean by its length.
        prev, total = 0, 0.0
        for c in cps:
            total += c["shown_ndcg"]["mean"] * (c["step"] - prev)
            prev = c["step"]
        rows.append((d.name, m, method, p["policy"], last["regret_mean"], last["regret_stderr"],
                     last["accuracy"], reach, total / prev, last["shown_ndcg"]["mean"],
                     last["shown_ndcg"]["stderr"], last["clicks"]["mean"], p["steps_per_second"],
                     s["runs"], s["steps"]))
print("| run | m | method | policy | regret | accuracy | queries to accuracy 0.9 | shown NDCG@10, whole run | last window | clicks/query, last window | steps/s |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    reach = f"{r[7]:,}" if r[7] is not None else f"> {r[14]:,}"
    print(f"| {r[0]} | {r[1]} | {r[2]} | `{r[3]}` | {r[4]:,.0f} ± {r[5]:,.0f} | {r[6]:.2f} | {reach} | "
          f"{r[8]:.4f} | {r[9]:.4f} ± {r[10]:.4f} | {r[11]:.3f} | {r[12]:,.0f} |")
print()
for name, runs, steps in sorted({(r[0], r[13], r[14]) for r in rows}):
    print(f"{name}: {runs} runs of {steps:,} queries")
