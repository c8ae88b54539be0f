#!/usr/bin/env python3
"""How late one confidence sequence crosses, whatever the policy: the 90th percentile's floor.

A Condorcet decision on four rankers whose winner has one close rival ends when the winner's
lower bound against that rival crosses 1/2. This script leaves out everything a policy adds (the
search for the leader, the other rivals, the duels it spends elsewhere): the pair is compared at
every step from the first, and the decision step is the crossing. It prints the median and 90th
percentile of that step over the oracle cost ln((K - 1) / delta) / kl(p, 1/2), for four
boundaries at joust's error split (0.9 delta over K one-sided sequences):

- joust's boundary: the tighter of two one-sided normal mixtures, tuned for 60 and 1,000
  comparisons at 0.2 and 0.8 of alpha (src/bandit/decision/confidence.rs);
- the mixture tuned for the gap itself: one normal mixture tightest at the oracle cost, which no
  rule can use, as it needs the gap it is to find;
- a scale-free sum: the average of eight one-sided mixtures tuned for 60 * 3^i comparisons
  (i = 0..7), crossing when the average passes 1 / alpha (valid by Ville's inequality);
- a betting test (Waudby-Smith and Ramdas 2023): the wealth of bets on wins at the predictable
  aGRAPA fraction (mu - 1/2) / (sigma^2 + (mu - 1/2)^2), at most 1.5, from the estimates before
  each block, crossing when the wealth passes 1 / alpha (Ville's inequality again);
- the Neyman-Pearson floor: the fixed sample size at which the most powerful test at level
  alpha, knowing the gap and looking once, rejects in 90% of runs.

The sum of each block of comparisons is drawn from its normal approximation (the pair is near
1/2, blocks are 1/300 of the oracle cost), so figures are within a few percent of exact draws.
Standard library only; about a minute.

    python3 docs/results/limit/single_crossing.py [runs] [seed]
"""

import math
import random
import sys
from statistics import NormalDist

DELTA = 0.05
RANKERS = 4
LN_ALPHA = math.log(0.9 * DELTA / RANKERS)
GAPS = [0.1, 0.05, 0.02, 0.01, 0.005]


def kl_half(p):
    """Bernoulli relative entropy kl(p, 1/2)."""
    return p * math.log(2 * p) + (1 - p) * math.log(2 * (1 - p))


def one_sided_term(ln_alpha):
    """2 ln(1 / (2 alpha Phi_0)), the one-sided mixture's log term (confidence.rs)."""
    ln_two_alpha = math.log(2) + ln_alpha
    x0 = math.sqrt(-2 * ln_two_alpha)
    phi0 = 1 - math.exp(ln_two_alpha) / (x0 * math.sqrt(2 * math.pi))
    return -2 * (ln_two_alpha + math.log(phi0))


def rho_tuned(log_term, comparisons):
    """rho of the mixture tightest at `comparisons`: x - ln(1 + x) = log_term, rho = n / 4 / x."""
    x = log_term + math.log(1 + log_term)
    for _ in range(60):
        x -= (x - math.log(1 + x) - log_term) * (1 + x) / x
    return comparisons / 4 / x


def mixtures(scales):
    """(log term, rho) per (comparisons, share of alpha), as joust builds its two scales."""
    terms = [(one_sided_term(LN_ALPHA + math.log(w)), t) for t, w in scales]
    return [(term, rho_tuned(term, t)) for term, t in terms]


def tighter_of(mixes):
    """The margin of S - n/2 at n comparisons: the smallest of the mixtures' margins."""
    return lambda n: math.sqrt(
        min((n / 4 + rho) * (term + math.log((n / 4 + rho) / rho)) for term, rho in mixes)
    )


def averaged(scales):
    """The margin at which the average of one-sided normal mixtures (weights w) passes 1 / alpha."""
    rhos = [(w, rho_tuned(one_sided_term(LN_ALPHA), t)) for t, w in scales]
    phi = NormalDist().cdf

    def ln_value(d, n):
        terms = []
        for w, rho in rhos:
            v = n / 4 + rho
            terms.append(
                math.log(w)
                + math.log(2)
                + 0.5 * math.log(rho / v)
                + d * d / (2 * v)
                + math.log(phi(d / math.sqrt(v)))
            )
        top = max(terms)
        return top + math.log(sum(math.exp(t - top) for t in terms))

    def margin(n):
        lo, hi = 0.0, 10 * math.sqrt(n) + 50
        for _ in range(50):
            mid = (lo + hi) / 2
            if ln_value(mid, n) >= -LN_ALPHA:
                hi = mid
            else:
                lo = mid
        return hi

    return margin


def median_and_90th(steps):
    steps = sorted(steps)
    return steps[len(steps) // 2], steps[int(0.9 * len(steps))]


def crossings(margin, p, oracle, runs, rng):
    """Median and 90th percentile of S - n/2 first crossing `margin`, per oracle cost."""
    block = max(1, int(oracle / 300))
    mean, sd = block * p, math.sqrt(block * p * (1 - p))
    margins = {}
    steps = []
    for _ in range(runs):
        s, n = 0.0, 0
        while True:
            s += rng.gauss(mean, sd)
            n += block
            if n not in margins:
                margins[n] = margin(n)
            if s - n / 2 > margins[n]:
                break
        steps.append(n / oracle)
    return median_and_90th(steps)


def betting(p, oracle, runs, rng):
    """Median and 90th percentile of the betting test's crossing, over the oracle cost."""
    block = max(1, int(oracle / 300))
    mean, sd = block * p, math.sqrt(block * p * (1 - p))
    steps = []
    for _ in range(runs):
        s, n, ln_wealth = 0.0, 0, 0.0
        while ln_wealth < -LN_ALPHA:
            mu = (0.5 + s) / (1 + n)
            edge = mu - 0.5
            bet = min(max(edge / (mu * (1 - mu) + edge * edge), 0.0), 1.5)
            wins = rng.gauss(mean, sd)
            ln_wealth += wins * math.log(1 + bet / 2) + (block - wins) * math.log(1 - bet / 2)
            s += wins
            n += block
        steps.append(n / oracle)
    return median_and_90th(steps)


def neyman_pearson(p, oracle):
    """The fixed n at which the level-alpha test of p = 1/2 rejects with probability 0.9."""
    z = NormalDist().inv_cdf
    n = ((z(1 - math.exp(LN_ALPHA)) * 0.5 + z(0.9) * math.sqrt(p * (1 - p))) / (p - 0.5)) ** 2
    return n / oracle


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    joust = tighter_of(mixtures([(60, 0.2), (1000, 0.8)]))
    free = averaged([(60 * 3**i, 1 / 8) for i in range(8)])
    print(f"median / 90th percentile over the oracle cost, {runs} runs, K {RANKERS}, delta {DELTA}")
    columns = "joust's two scales | tuned for the gap | scale-free sum | betting"
    print(f"| gap | oracle cost | {columns} | Neyman-Pearson (90th) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for gap in GAPS:
        p = 0.5 + gap
        oracle = math.log((RANKERS - 1) / DELTA) / kl_half(p)
        tuned = tighter_of(mixtures([(oracle, 1.0)]))
        cells = [crossings(m, p, oracle, runs, rng) for m in (joust, tuned, free)]
        cells.append(betting(p, oracle, runs, rng))
        shown = " | ".join(f"{a:.2f}x / {b:.2f}x" for a, b in cells)
        print(f"| {gap} | {oracle:,.0f} | {shown} | {neyman_pearson(p, oracle):.2f}x |", flush=True)


if __name__ == "__main__":
    main()
