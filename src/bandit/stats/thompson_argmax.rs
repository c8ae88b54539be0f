//! [`ArgmaxSampler`]: the arm with the largest of independent draws X_a ~ Beta(alpha_a, beta_a)
//! (alpha, beta >= 1), drawn exactly while touching only the arms that could be the largest.
//!
//! Per arm the cache keeps a threshold u_a with a small tail probability q_a = P(X_a > u_a) <= EPS
//! ([`super::beta_tail`]), computed exactly, but only when a draw needs it: usually the first
//! threshold tried is shown good enough by bounds on q_a that cost a density instead of a continued
//! fraction, and those bounds decide most of the draws of step 2 below. A draw of X_a is the same as first deciding
//! whether it lands in its tail (probability q_a), then drawing it from the tail (X_a | X_a > u_a)
//! or from the body (X_a | X_a <= u_a). One argmax then goes:
//! 1. The direct arms (the most-played arm, whose posterior changes at almost every step, and any
//!    arm without a usable threshold) are drawn in full.
//! 2. Which of the other arms land in their tails: candidates by geometric skipping with
//!    probability EPS over the arms, each kept with probability q_a / EPS (so each arm is in its
//!    tail independently with probability q_a, at one logarithm per candidate). Tail arms are
//!    drawn from their tails.
//! 3. The remaining arms, in decreasing u_a, are drawn from their bodies until u_a falls below the
//!    running maximum M: every arm after that has X_a <= u_a < M and cannot win, so it is never
//!    drawn.
//!
//! Every arm's draw has its exact distribution, independently of the others, so the chosen arm
//! has exactly the distribution of the argmax of full draws. Once the posteriors concentrate, the
//! most-played arm's draw lies above almost every other threshold and a selection draws a handful
//! of arms instead of all of them.
//!
//! The cache is a deterministic function of the posterior counts and the active arms (the
//! thresholds depend on each arm's (alpha, beta) only, the order breaks ties by arm index, the
//! direct arm is the most-played active arm, lowest index among equals), so a cache rebuilt from a
//! stored state makes the same choices from the same RNG as the one kept step by step.

use std::sync::atomic::{AtomicU64, Ordering};

use rand::Rng;

use super::beta::sample_beta;
use super::beta_tail::{
    LazyThresholds, LowerBound, Tail, sample_body, sample_upper_tail, upper_tail,
};
use crate::bandit::{Arm, Pair, View};

/// Largest tail probability of a threshold: about 2 tail candidates per draw on 136 arms.
pub const EPS: f64 = 1.0 / 64.0;

/// One arm's cached threshold, for the posterior (alpha, beta) it was computed for.
#[derive(Clone, Debug)]
struct Entry {
    alpha: f64,
    beta: f64,
    /// The threshold, or `None`: the arm is drawn in full. Computed only for arms other than the
    /// leader (whose posterior changes at almost every step and is always drawn in full).
    threshold: Option<Threshold>,
}

/// A threshold u, bounds on its tail probability q, and q itself once computed: most arms'
/// posteriors change several times between the draws that need their q (step 2 of the module
/// docs, about EPS of the arms per draw), so it is computed when first needed
/// ([`LazyThresholds`]), the same value as if computed at once. The lower bound likewise: only a
/// draw below the upper bound reads it.
#[derive(Debug)]
struct Threshold {
    u: f64,
    q_at_most: f64,
    /// `None` when q is exact from the start.
    q_lower: Option<LowerBound>,
    /// The bits of q, or `UNKNOWN`.
    q: AtomicU64,
}

const UNKNOWN: u64 = u64::MAX;

impl Clone for Threshold {
    fn clone(&self) -> Self {
        Threshold {
            u: self.u,
            q_at_most: self.q_at_most,
            q_lower: self.q_lower,
            q: AtomicU64::new(self.q.load(Ordering::Relaxed)),
        }
    }
}

impl Threshold {
    fn new((u, tail): (f64, Tail)) -> Self {
        let (q_at_most, q_lower, q) = match tail {
            Tail::Exact(q) => (q, None, q.to_bits()),
            Tail::Within(at_most, lower) => (at_most, Some(lower), UNKNOWN),
        };
        Threshold {
            u,
            q_at_most,
            q_lower,
            q: AtomicU64::new(q),
        }
    }

    /// Whether r < q, for r at most the upper bound: the lower bound decides most, and q is
    /// computed only for the r between them.
    #[inline]
    fn below_q(&self, r: f64, alpha: f64, beta: f64) -> bool {
        match self.q_lower {
            Some(lower) if r < lower.at_least(alpha, beta, self.u) => true,
            _ => r < self.q(alpha, beta),
        }
    }

    /// q = P(X > u) for the posterior (alpha, beta) the threshold is for.
    fn q(&self, alpha: f64, beta: f64) -> f64 {
        match self.q.load(Ordering::Relaxed) {
            UNKNOWN => {
                // It converges for the counts LazyThresholds leaves lazy (tested on a
                // grid of them); were it not to, the bound stands in.
                let q = upper_tail(alpha, beta, self.u);
                debug_assert!(q.is_some(), "no tail for ({alpha}, {beta}) at {}", self.u);
                let q = q.unwrap_or(self.q_at_most);
                self.q.store(q.to_bits(), Ordering::Relaxed);
                q
            }
            bits => f64::from_bits(bits),
        }
    }
}

/// An arm's Beta posterior counts with its self-duels added as half a win and half a loss each
/// (a self-duel is a tie of the arm with itself), or `None` for an arm out of the running.
pub fn with_self_duels(
    view: &View,
    arm: Arm,
    running: bool,
    wins: f64,
    losses: f64,
) -> Option<(f64, f64)> {
    if !view.is_active(arm) || !running {
        return None;
    }
    let half_self_duels = 0.5 * view.wins.ties(arm, arm) as f64;
    Some((wins + half_self_duels, losses + half_self_duels))
}

#[derive(Clone, Debug)]
pub struct ArgmaxSampler {
    /// Per arm (retired arms included, as `None`).
    entries: Vec<Option<Entry>>,
    /// The most-played active arm (largest alpha + beta, lowest index among equals).
    leader: Option<Arm>,
    /// Active arms other than the leader that have a threshold, by decreasing u, then index.
    /// (u, arm).
    order: Vec<(f64, Arm)>,
    /// Active arms other than the leader without a threshold.
    full: Vec<Arm>,
    /// ln(1 - EPS), for geometric skipping.
    ln_keep: f64,
    thresholds: LazyThresholds,
}

impl ArgmaxSampler {
    /// The cache for arms with posteriors `params(a)`, `None` for arms that are not drawn.
    pub fn build(k: usize, params: impl Fn(Arm) -> Option<(f64, f64)>) -> Self {
        let mut sampler = ArgmaxSampler {
            entries: vec![None; k],
            leader: None,
            order: Vec::new(),
            full: Vec::new(),
            ln_keep: (-EPS).ln_1p(),
            thresholds: LazyThresholds::new(EPS),
        };
        for a in 0..k {
            sampler.entries[a] = params(a).map(|(alpha, beta)| Entry {
                alpha,
                beta,
                threshold: None,
            });
        }
        sampler.leader = (0..k)
            .filter_map(|a| sampler.entries[a].as_ref().map(|e| (a, e.alpha + e.beta)))
            .fold(None, |best: Option<(Arm, f64)>, (a, n)| match best {
                Some((_, m)) if m >= n => best,
                _ => Some((a, n)),
            })
            .map(|(a, _)| a);
        for a in 0..k {
            if Some(a) != sampler.leader {
                sampler.place(a);
            }
        }
        sampler
    }

    /// Whether the cache was built for exactly these posteriors (`params` as in [`Self::build`]).
    pub fn matches(&self, k: usize, params: impl Fn(Arm) -> Option<(f64, f64)>) -> bool {
        self.entries.len() == k
            && (0..k).all(|a| {
                let want = params(a);
                match (&self.entries[a], want) {
                    (None, None) => true,
                    (Some(e), Some((alpha, beta))) => e.alpha == alpha && e.beta == beta,
                    _ => false,
                }
            })
    }

    /// The posterior of `arm` is now `params` (`None`: it is no longer drawn; arms beyond the
    /// cache's length are added).
    pub fn set(&mut self, arm: Arm, params: Option<(f64, f64)>) {
        if arm >= self.entries.len() {
            self.entries.resize(arm + 1, None);
        }
        if self.entries[arm].as_ref().map(|e| (e.alpha, e.beta)) == params {
            return;
        }
        // Its old place in `order` stays until the new one is known, so that a small move of
        // its threshold shifts only the arms between the two (`refile`).
        let hole = self.unplace_later(arm);
        let was_leader = self.leader == Some(arm);
        self.entries[arm] = params.map(|(alpha, beta)| Entry {
            alpha,
            beta,
            threshold: None,
        });
        let played = |s: &Self, a: Arm| s.entries[a].as_ref().map(|e| e.alpha + e.beta);
        if was_leader {
            // The leader's count only grows while it is active; otherwise rescan.
            if params.is_none() {
                self.leader = None;
                let best = (0..self.entries.len())
                    .filter_map(|a| played(self, a).map(|n| (a, n)))
                    .fold(None, |best: Option<(Arm, f64)>, (a, n)| match best {
                        Some((_, m)) if m >= n => best,
                        _ => Some((a, n)),
                    });
                if let Some((a, _)) = best {
                    self.unplace(a);
                    self.leader = Some(a);
                }
            }
            return;
        }
        let Some(n) = played(self, arm) else {
            self.fill(hole);
            return;
        };
        let takes_lead = match self.leader.and_then(|l| played(self, l).map(|m| (l, m))) {
            None => true,
            Some((l, m)) => n > m || (n == m && arm < l),
        };
        if takes_lead {
            self.fill(hole);
            if let Some(old) = self.leader.replace(arm) {
                self.place(old);
            }
        } else {
            self.refile(arm, hole);
        }
    }

    /// [`Self::unplace`], except that an arm in `order` keeps its entry there: its position is
    /// returned, for [`Self::refile`] or [`Self::fill`]. An arm in `full` leaves it at once.
    fn unplace_later(&mut self, arm: Arm) -> Option<usize> {
        let u = self.entries[arm].as_ref()?.threshold.as_ref().map(|t| t.u);
        match u {
            Some(u) => {
                let pos = self.order.partition_point(|&e| before(e, (u, arm)));
                (self.order.get(pos) == Some(&(u, arm))).then_some(pos)
            }
            None => {
                if let Ok(pos) = self.full.binary_search(&arm) {
                    self.full.remove(pos);
                }
                None
            }
        }
    }

    /// Removes the entry left at `hole`.
    fn fill(&mut self, hole: Option<usize>) {
        if let Some(pos) = hole {
            self.order.remove(pos);
        }
    }

    /// [`Self::place`] for an arm whose old entry in `order`, if any, is still at `hole`: the
    /// arms between its old and new positions shift by one.
    fn refile(&mut self, arm: Arm, hole: Option<usize>) {
        let Some(old) = hole else {
            return self.place(arm);
        };
        let Some(u) = self.compute_threshold(arm) else {
            self.order.remove(old);
            return self.file_full(arm);
        };
        // The order with the old entry is still sorted, and the old entry comes before the new
        // one exactly when it sits below `pos`.
        let pos = self.order.partition_point(|&e| before(e, (u, arm)));
        if pos > old {
            self.order[old..pos].rotate_left(1);
            self.order[pos - 1] = (u, arm);
        } else {
            self.order[pos..=old].rotate_right(1);
            self.order[pos] = (u, arm);
        }
    }

    /// Computes the threshold of `arm` (not the leader) into its entry: its u, `None` without
    /// one.
    fn compute_threshold(&mut self, arm: Arm) -> Option<f64> {
        let e = self.entries[arm].as_mut()?;
        e.threshold = self
            .thresholds
            .threshold(e.alpha, e.beta)
            .map(Threshold::new);
        e.threshold.as_ref().map(|t| t.u)
    }

    fn file_full(&mut self, arm: Arm) {
        let pos = self.full.partition_point(|&a| a < arm);
        self.full.insert(pos, arm);
    }

    /// Computes the threshold of `arm` (not the leader) and files it under `order` or `full`.
    fn place(&mut self, arm: Arm) {
        if self.entries[arm].is_none() {
            return;
        }
        match self.compute_threshold(arm) {
            None => self.file_full(arm),
            Some(u) => {
                let pos = self.order.partition_point(|&e| before(e, (u, arm)));
                self.order.insert(pos, (u, arm));
            }
        }
    }

    /// Takes `arm` out of `order` or `full`, where its entry's threshold filed it (if it is
    /// there: the leader is in neither).
    fn unplace(&mut self, arm: Arm) {
        let hole = self.unplace_later(arm);
        self.fill(hole);
    }

    /// The arm with the largest draw, or `None` when no arm is drawn.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<Arm> {
        let mut best = Running {
            max: f64::NEG_INFINITY,
            arm: None,
        };
        // 1. Direct arms.
        for &a in self.leader.iter().chain(self.full.iter()) {
            let e = self.entry(a);
            best.offer(a, sample_beta(e.alpha, e.beta, rng));
        }
        // 2. Tail arms, by geometric skipping over the order (their positions, increasing, kept
        // in `tails`, on the stack unless there are many).
        let mut tails = Positions::default();
        let mut pos = 0usize;
        while pos < self.order.len() {
            let v = 1.0 - rng.random::<f64>();
            let skip = (v.ln() / self.ln_keep).floor();
            if skip >= (self.order.len() - pos) as f64 {
                break;
            }
            pos += skip as usize;
            let a = self.order[pos].1;
            let e = self.entry(a);
            let t = e.threshold.as_ref().expect("ordered arms have thresholds");
            // In its tail with probability q (q is needed only between its bounds).
            let r = rng.random::<f64>() * EPS;
            if r < t.q_at_most && t.below_q(r, e.alpha, e.beta) {
                best.offer(a, sample_upper_tail(e.alpha, e.beta, t.u, rng));
                tails.push(pos);
            }
            pos += 1;
        }
        // 3. Bodies in decreasing threshold until the threshold is below the running maximum.
        let mut next_tail = 0;
        for (pos, &(u, a)) in self.order.iter().enumerate() {
            if u < best.max {
                break;
            }
            if tails.get(next_tail) == Some(pos) {
                next_tail += 1;
                continue;
            }
            let e = self.entry(a);
            best.offer(a, sample_body(e.alpha, e.beta, u, rng));
        }
        best.arm
    }

    fn entry(&self, arm: Arm) -> &Entry {
        self.entries[arm]
            .as_ref()
            .expect("placed arms have entries")
    }
}

/// Whether the ordered (u, arm) `e` comes before `f` in `order`: decreasing u, then increasing
/// index.
#[inline]
fn before(e: (f64, Arm), f: (f64, Arm)) -> bool {
    e.0 > f.0 || (e.0 == f.0 && e.1 < f.1)
}

/// Increasing positions, the first few on the stack.
#[derive(Default)]
struct Positions {
    head: [usize; 8],
    len: usize,
    rest: Vec<usize>,
}

impl Positions {
    #[inline]
    fn push(&mut self, pos: usize) {
        if self.len < self.head.len() {
            self.head[self.len] = pos;
        } else {
            self.rest.push(pos);
        }
        self.len += 1;
    }

    #[inline]
    fn get(&self, i: usize) -> Option<usize> {
        if i >= self.len {
            None
        } else if i < self.head.len() {
            Some(self.head[i])
        } else {
            Some(self.rest[i - self.head.len()])
        }
    }
}

/// The largest draw so far (the first of equal draws keeps it).
struct Running {
    max: f64,
    arm: Option<Arm>,
}

impl Running {
    #[inline]
    fn offer(&mut self, arm: Arm, x: f64) {
        if x > self.max {
            self.max = x;
            self.arm = Some(arm);
        }
    }
}

/// Self-Sparring's step: the argmaxes of two independent Thompson draws. Uses `cached` when it is
/// in step with the counts (`true`) or still matches every posterior, else builds a sampler for
/// this call, so the choice (and the random numbers used) never depends on the cache.
pub fn thompson_pair<R: Rng + ?Sized>(
    cached: Option<(&ArgmaxSampler, bool)>,
    k: usize,
    posterior: impl Fn(Arm) -> Option<(f64, f64)>,
    rng: &mut R,
) -> Pair {
    let built;
    let sampler = match cached {
        Some((s, true)) => s,
        Some((s, false)) if s.matches(k, &posterior) => s,
        _ => {
            built = ArgmaxSampler::build(k, &posterior);
            &built
        }
    };
    let first = sampler.sample(rng).expect("at least one arm can be drawn");
    let second = sampler.sample(rng).expect("at least one arm can be drawn");
    Pair::new(first, second)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::BanditRng;
    use rand::SeedableRng;

    /// P(arm a has the largest draw) for independent Beta draws, by the midpoint rule on a grid
    /// of 200,000 cells: the integral of f_a(x) prod_{b != a} F_b(x), with every density
    /// normalised on the grid and its CDF accumulated along it (error far below 1e-4).
    #[allow(clippy::needless_range_loop)]
    fn exact_argmax_probabilities(params: &[(f64, f64)]) -> Vec<f64> {
        let n = 200_000;
        let h = 1.0 / n as f64;
        let densities: Vec<Vec<f64>> = params
            .iter()
            .map(|&(a, b)| {
                let logs: Vec<f64> = (0..n)
                    .map(|i| {
                        let x = (i as f64 + 0.5) * h;
                        (a - 1.0) * x.ln() + (b - 1.0) * (1.0 - x).ln()
                    })
                    .collect();
                let top = logs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let raw: Vec<f64> = logs.iter().map(|l| (l - top).exp()).collect();
                let total: f64 = raw.iter().sum::<f64>() * h;
                raw.into_iter().map(|d| d / total).collect()
            })
            .collect();
        let mut cdf = vec![0.0; params.len()];
        let mut out = vec![0.0; params.len()];
        for i in 0..n {
            // CDF at the cell's midpoint: everything before plus half of this cell.
            let mid: Vec<f64> = (0..params.len())
                .map(|b| cdf[b] + 0.5 * densities[b][i] * h)
                .collect();
            for a in 0..params.len() {
                let others: f64 = (0..params.len())
                    .filter(|&b| b != a)
                    .map(|b| mid[b])
                    .product();
                out[a] += densities[a][i] * h * others;
            }
            for b in 0..params.len() {
                cdf[b] += densities[b][i] * h;
            }
        }
        out
    }

    #[test]
    fn picks_each_arm_with_the_argmax_probability_of_full_draws() {
        // A concentrated leader (arm 0), close rivals, a wide arm and clearly worse arms, so that
        // every path is taken: the leader drawn in full, tails, bodies, and skipped arms.
        let params = [
            (900.0, 600.0),
            (60.0, 40.0),
            (55.5, 40.5),
            (3.0, 2.0),
            (20.0, 30.0),
            (1.0, 1.0),
            (4.5, 12.5),
        ];
        let exact = exact_argmax_probabilities(&params);
        let sampler = ArgmaxSampler::build(params.len(), |a| Some(params[a]));
        let mut rng = BanditRng::seed_from_u64(17);
        let draws = 200_000;
        let mut counts = vec![0u32; params.len()];
        for _ in 0..draws {
            counts[sampler.sample(&mut rng).unwrap()] += 1;
        }
        // Each frequency has standard error sqrt(p (1 - p) / 200000) <= 0.00112; 5 sigma of the
        // largest is 0.0056, and the integration error is far below that.
        for (a, (&c, &p)) in counts.iter().zip(&exact).enumerate() {
            let freq = c as f64 / draws as f64;
            let sigma = (p * (1.0 - p) / draws as f64).sqrt().max(1e-4);
            assert!((freq - p).abs() < 5.0 * sigma, "arm {a}: {freq} vs {p}");
        }
    }

    #[test]
    fn a_cache_kept_step_by_step_equals_one_built_at_once() {
        let mut rng = BanditRng::seed_from_u64(8);
        let k = 12;
        let mut params: Vec<Option<(f64, f64)>> = (0..k).map(|_| Some((1.0, 1.0))).collect();
        let mut kept = ArgmaxSampler::build(k, |a| params[a]);
        for step in 0..3_000 {
            let arm = rng.random_range(0..k);
            if step == 1_500 {
                params[3] = None;
            } else if let Some((a, b)) = params[arm] {
                params[arm] = Some(if rng.random::<f64>() < 0.3 + 0.05 * arm as f64 {
                    (a + 1.0, b)
                } else {
                    (a + 0.5, b + 0.5)
                });
            }
            let changed = if step == 1_500 { 3 } else { arm };
            kept.set(changed, params[changed]);
        }
        let built = ArgmaxSampler::build(k, |a| params[a]);
        assert!(kept.matches(k, |a| params[a]));
        assert_eq!(kept.leader, built.leader);
        assert_eq!(kept.order, built.order);
        assert_eq!(kept.full, built.full);
        let (mut r1, mut r2) = (BanditRng::seed_from_u64(2), BanditRng::seed_from_u64(2));
        for _ in 0..500 {
            assert_eq!(kept.sample(&mut r1), built.sample(&mut r2));
        }
    }
}
