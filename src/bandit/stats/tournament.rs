//! The batch tournament shared by MergeRUCB and MergeDTS (li-2020 Algorithm 1, lines 6-24; the
//! merge strategy of zoghi-2015 MergeRUCB): arms are split into small batches, duels happen only
//! inside a batch, an arm is eliminated once an optimistic bound says another arm of its batch
//! beats it, and batches are merged as arms disappear, until one arm survives.
//!
//! Conventions (following the MergeDTS authors' implementation; docs/policies.md):
//! - Counts carry a prior of one win each way: u_ij is computed from w_ij + 1 wins out of
//!   n_ij + 2 comparisons, so no pair divides by zero.
//! - The log term is ln(t + C) with t = 1 at the first outcome of a stage, i.e. the paper's t
//!   starts at C + 1 and is reset to C + 1 at every new stage. t advances with outcomes (updates,
//!   counted ties and self-duels: [`Tournament::tick`]), never with selections.
//! - Elimination is strict (u_ij < 1/2). Because `select` is read-only, it happens in `update`:
//!   after each outcome the batches of the two arms are checked (a growing t only raises bounds, so
//!   no other batch can have a newly dominated arm), and every batch is checked when a stage
//!   starts (t drops back). While dominated arms remain, one of them, chosen uniformly at random,
//!   is removed, and the check repeats.
//! - A batch left with one arm while other batches exist is merged into the next batch.
//! - A new stage starts when at most K / 2^stage + 1 arms survive (K counts every arm that entered,
//!   including arms added later); the survivors are then re-batched as the paper's Phase IV says:
//!   whole old batches are paired, smallest with largest, while a pair fits in 1.5 M (see
//!   [`rebatch`]), so arms that already met stay together and batches stay near M. Only when
//!   pairing cannot keep every batch within [0.5 M, 1.5 M] are the survivors cut into even batches.
//!   Cutting them into as few batches as 1.5 M allows, which an earlier version did, makes batches
//!   of about 1.5 M in every later stage. (An earlier note credited this re-batching with 18% less
//!   regret on MSLR-Navigational, but its two figures were taken at C = 4e6 and C = 4e5; at
//!   C = 4e6 the regret is 14,315 +- 400 either way, so the effect was not isolated.)
//!   Re-batching therefore keeps every batch within [0.5 M, 1.5 M] when a stage starts (whenever
//!   at least 0.5 M arms survive; a test checks it), which the authors' code does not enforce.
//!   Within a stage, eliminations shrink batches below 0.5 M and a lone arm merged into the next
//!   batch may take it past 1.5 M; the bound is restored at the next stage.
//! - Stages once one batch remains (`reset_single_batch`): by default a stage still begins
//!   whenever the survivors fall to K / 2^stage + 1, even when they already share one batch, so
//!   t keeps being reset as the field thins. The MergeDTS authors' code begins stages only while
//!   more than one batch remains; after that t runs on to the end
//!   ([`Tournament::with_single_batch_reset`] with `false`). MergeRUCB always resets.
//! - The initial batches are a random partition (the arms shuffled with the policy's RNG, then cut
//!   into ceil(K / M) batches of even sizes): rankers' indices often follow their age or quality.
//! - A new arm joins the smallest batch; a retired arm leaves its batch at once.
//! - Which batch a selection draws from: the paper cycles batches by t mod (number of batches), but
//!   t only moves with outcomes, so between two outcomes every selection would hit the same batch,
//!   and when outcomes arrive in groups whose size is a multiple of the number of batches one batch
//!   would get every duel forever. We draw the batch uniformly at random instead: each batch still
//!   gets 1/b of the duels in expectation, whatever the feedback cadence.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::cached::{Cached, evidence_total};
use super::ucb::threshold;
use crate::bandit::{Arm, BanditRng, View};

/// Confidence parameters shared by the Merge policies.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Confidence {
    pub alpha: f64,
    /// The exploration offset C of ln(t + C).
    pub c: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tournament {
    confidence: Confidence,
    batch_size: usize,
    batches: Vec<Vec<Arm>>,
    /// Stages begun so far (the paper's s, starting at 1).
    stage: u32,
    /// Arms that ever entered the tournament (the K of the stage rule).
    entered: usize,
    /// Outcomes since the stage began.
    t: u64,
    /// Whether a stage may still begin (resetting t) once every survivor shares one batch. States
    /// stored before this choice existed read as `true`, the behaviour they were run with.
    #[serde(default = "resets_single_batch_before")]
    reset_single_batch: bool,
    #[serde(skip)]
    cache: Cached<Bounds>,
}

/// Per arm: the batch it is in and its largest pair threshold against its batch-mates (it is
/// dominated exactly when the log term is below it).
#[derive(Clone)]
struct Bounds {
    synced: u64,
    batch_of: Vec<usize>,
    worst: Vec<f64>,
}

const NO_BATCH: usize = usize::MAX;

/// What states stored without `reset_single_batch` did: stages kept beginning in one batch.
fn resets_single_batch_before() -> bool {
    true
}

/// Pair threshold of (i, j) with the prior of one win each way.
fn prior_threshold(view: &View, i: Arm, j: Arm, alpha: f64) -> f64 {
    threshold(view.score(i, j) + 1.0, view.count(i, j) + 2.0, alpha)
}

/// Cuts `arms` into `batches` runs of even sizes.
fn split_even(arms: &[Arm], batches: usize) -> Vec<Vec<Arm>> {
    let batches = batches.max(1);
    let (base, extra) = (arms.len() / batches, arms.len() % batches);
    let mut out = Vec::with_capacity(batches);
    let mut start = 0;
    for b in 0..batches {
        let len = base + usize::from(b < extra);
        out.push(arms[start..start + len].to_vec());
        start += len;
    }
    out
}

/// The paper's Phase IV: batches are paired smallest with largest, as long as a pair fits in
/// 1.5 M, and pairing repeats while some batch is at most 0.5 M and pairs still form. Arms that
/// already met stay together, and batches stay close to M (the batch size the parameters were
/// tuned for). When pairing cannot bring every batch within [0.5 M, 1.5 M] (e.g. a small batch
/// whose every partner would overflow), the survivors are cut into even batches instead.
fn rebatch(mut batches: Vec<Vec<Arm>>, batch_size: usize) -> Vec<Vec<Arm>> {
    let m = batch_size as f64;
    let max_size = (1.5 * m).floor().max(1.0) as usize;
    let too_small = |b: &[Vec<Arm>]| b.len() > 1 && b.iter().any(|x| x.len() as f64 <= 0.5 * m);
    loop {
        let before = batches.len();
        batches = pair_small_with_large(batches, max_size);
        if !too_small(&batches) || batches.len() == before {
            break;
        }
    }
    let fits = |x: &Vec<Arm>| x.len() as f64 >= 0.5 * m && x.len() <= max_size;
    let survivors: usize = batches.iter().map(Vec::len).sum();
    if batches.len() > 1 && !batches.iter().all(fits) {
        let arms: Vec<Arm> = batches.concat();
        return split_even(&arms, survivors.div_ceil(max_size));
    }
    batches
}

/// One pairing pass: sorted by size (stable, so the outcome depends only on the batches), the
/// smallest batch joins the largest when both fit in `max_size`; otherwise the largest stays alone.
fn pair_small_with_large(mut batches: Vec<Vec<Arm>>, max_size: usize) -> Vec<Vec<Arm>> {
    batches.sort_by_key(Vec::len);
    let mut out = Vec::with_capacity(batches.len());
    let (mut i, mut j) = (0usize, batches.len());
    while i < j {
        let last = j - 1;
        if i == last {
            out.push(std::mem::take(&mut batches[i]));
            break;
        }
        if batches[i].len() + batches[last].len() > max_size {
            out.push(std::mem::take(&mut batches[last]));
            j -= 1;
        } else {
            let mut joined = std::mem::take(&mut batches[i]);
            joined.append(&mut batches[last]);
            out.push(joined);
            i += 1;
            j -= 1;
        }
    }
    out
}

impl Tournament {
    pub fn new(k: usize, batch_size: usize, confidence: Confidence, rng: &mut BanditRng) -> Self {
        let mut arms: Vec<Arm> = (0..k).collect();
        for i in (1..k).rev() {
            arms.swap(i, rng.random_range(0..=i));
        }
        let batches = split_even(&arms, k.div_ceil(batch_size));
        Tournament {
            confidence,
            batch_size,
            batches,
            stage: 1,
            entered: k,
            t: 0,
            reset_single_batch: true,
            cache: Cached(None),
        }
    }

    /// Chooses whether stages keep beginning (t reset, survivors re-batched) once every survivor
    /// shares one batch (`true`, the default of [`Tournament::new`]), or whether t then runs on
    /// to the end, as in the MergeDTS authors' code (`false`).
    pub fn with_single_batch_reset(mut self, reset: bool) -> Self {
        self.reset_single_batch = reset;
        self
    }

    pub fn resets_single_batch(&self) -> bool {
        self.reset_single_batch
    }

    /// Outcomes (and self-duels) since the current stage began.
    pub fn t(&self) -> u64 {
        self.t
    }

    pub fn batches(&self) -> &[Vec<Arm>] {
        &self.batches
    }

    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    pub fn confidence(&self) -> Confidence {
        self.confidence
    }

    pub fn stage(&self) -> u32 {
        self.stage
    }

    /// A step that carries no evidence (a self-duel when ties are ignored): only the clock moves.
    pub fn tick(&mut self) {
        self.t += 1;
    }

    /// ln(t + C) for the next step.
    pub fn log_term(&self) -> f64 {
        (self.confidence.c + 1.0 + self.t as f64).ln()
    }

    pub fn survivors(&self) -> Vec<Arm> {
        let mut s: Vec<Arm> = self.batches.iter().flatten().copied().collect();
        s.sort_unstable();
        s
    }

    /// The last survivor, once only one arm is left.
    pub fn settled(&self) -> Option<Arm> {
        match self.batches.as_slice() {
            [only] if only.len() == 1 => Some(only[0]),
            _ => None,
        }
    }

    /// A batch drawn uniformly at random (see the module docs), as its index.
    pub fn pick_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        rng.random_range(0..self.batches.len())
    }

    /// The batch holding `arm`, if it survives.
    pub fn batch_of(&self, arm: Arm) -> Option<usize> {
        if let Some(b) = self
            .cache
            .0
            .as_ref()
            .and_then(|c| c.batch_of.get(arm).copied())
        {
            return (b != NO_BATCH).then_some(b);
        }
        self.batches.iter().position(|b| b.contains(&arm))
    }

    fn worst_direct(&self, view: &View, batch: usize, i: Arm) -> f64 {
        self.batches[batch]
            .iter()
            .filter(|&&j| j != i)
            .map(|&j| prior_threshold(view, i, j, self.confidence.alpha))
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Rebuilds the cached bounds (after loading a persisted state).
    pub fn warm(&mut self, view: &View) {
        self.rebuild(view);
    }

    fn rebuild(&mut self, view: &View) {
        let k = view.k();
        let mut batch_of = vec![NO_BATCH; k];
        let mut worst = vec![f64::NEG_INFINITY; k];
        for (b, batch) in self.batches.iter().enumerate() {
            for &i in batch {
                batch_of[i] = b;
                worst[i] = self.worst_direct(view, b, i);
            }
        }
        self.cache = Cached(Some(Bounds {
            synced: evidence_total(view),
            batch_of,
            worst,
        }));
    }

    fn refresh_batch(&mut self, view: &View, batch: usize) {
        let values: Vec<(Arm, f64)> = self.batches[batch]
            .iter()
            .map(|&i| (i, self.worst_direct(view, batch, i)))
            .collect();
        if let Some(cache) = self.cache.0.as_mut() {
            for (i, w) in values {
                cache.worst[i] = w;
            }
        }
    }

    fn worst(&self, arm: Arm) -> f64 {
        self.cache
            .0
            .as_ref()
            .map_or(f64::NEG_INFINITY, |c| c.worst[arm])
    }

    /// Learns of one outcome between `a` and `b` (already in `view`): a win of `a` over `b`, or a
    /// tie counted as half a win each (`tie`). Returns whether the batches changed (an arm was
    /// eliminated, batches merged or a stage began).
    pub fn record<R: Rng + ?Sized>(
        &mut self,
        view: &View,
        a: Arm,
        b: Arm,
        tie: bool,
        rng: &mut R,
    ) -> bool {
        self.t += 1;
        let total = evidence_total(view);
        let in_step = self
            .cache
            .0
            .as_ref()
            .is_some_and(|c| c.synced + 1 == total && c.batch_of.len() == view.k());
        if !in_step {
            self.rebuild(view);
            return self.settle(view, None, rng);
        }
        let (batch_a, batch_b) = (self.batch_of(a), self.batch_of(b));
        let mut touched = Vec::with_capacity(1);
        let same_batch = batch_a.filter(|_| batch_a == batch_b);
        if let Some(ba) = same_batch {
            // Only the pair (a, b) changed: the worst thresholds of a and b move only if the new
            // cell exceeds them, or if the old cell was their maximum (then rescan the batch).
            let alpha = self.confidence.alpha;
            let (da, db) = if tie { (0.5, 0.5) } else { (1.0, 0.0) };
            for (i, j, di) in [(a, b, da), (b, a, db)] {
                let count = view.count(i, j) + 2.0;
                let old = threshold(view.score(i, j) + 1.0 - di, count - 1.0, alpha);
                let new = threshold(view.score(i, j) + 1.0, count, alpha);
                let worst = self.worst(i);
                let value = if new >= worst {
                    new
                } else if old >= worst {
                    self.worst_direct(view, ba, i)
                } else {
                    worst
                };
                self.cache.0.as_mut().expect("in step").worst[i] = value;
            }
            touched.push(ba);
        }
        let cache = self.cache.0.as_mut().expect("in step");
        cache.synced = total;
        let log_term = self.log_term();
        let any_dominated =
            !touched.is_empty() && (log_term < self.worst(a) || log_term < self.worst(b));
        if !any_dominated && !self.stage_due() {
            return false;
        }
        self.settle(view, Some(&touched), rng)
    }

    /// Eliminates dominated arms (in `batches`, or everywhere), merges single-arm batches and
    /// starts new stages until nothing changes. Expects an up-to-date cache.
    fn settle<R: Rng + ?Sized>(
        &mut self,
        view: &View,
        batches: Option<&[usize]>,
        rng: &mut R,
    ) -> bool {
        let mut changed = false;
        let mut to_check: Vec<usize> = match batches {
            Some(b) => b.to_vec(),
            None => (0..self.batches.len()).collect(),
        };
        loop {
            for &batch in &to_check {
                changed |= self.eliminate_in(view, batch, rng);
            }
            let merged = self.merge_singletons();
            changed |= merged;
            if merged {
                self.rebuild(view);
            }
            if self.stage_due() {
                self.begin_stage();
                self.rebuild(view);
                changed = true;
                to_check = (0..self.batches.len()).collect();
                continue;
            }
            if !merged {
                return changed;
            }
            to_check = (0..self.batches.len()).collect();
        }
    }

    /// Removes dominated arms of one batch, one at a time, chosen uniformly at random.
    fn eliminate_in<R: Rng + ?Sized>(&mut self, view: &View, batch: usize, rng: &mut R) -> bool {
        let mut changed = false;
        loop {
            let log_term = self.log_term();
            let dominated: Vec<usize> = (0..self.batches[batch].len())
                .filter(|&pos| log_term < self.worst(self.batches[batch][pos]))
                .collect();
            if dominated.is_empty() || self.batches[batch].len() <= 1 {
                return changed;
            }
            let pos = dominated[rng.random_range(0..dominated.len())];
            let arm = self.batches[batch].remove(pos);
            if let Some(cache) = self.cache.0.as_mut() {
                cache.batch_of[arm] = NO_BATCH;
                cache.worst[arm] = f64::NEG_INFINITY;
            }
            self.refresh_batch(view, batch);
            changed = true;
        }
    }

    /// Merges every single-arm batch into the next one while more than one batch exists; drops
    /// empty batches. Returns whether anything changed.
    fn merge_singletons(&mut self) -> bool {
        let mut changed = false;
        let before = self.batches.len();
        self.batches.retain(|b| !b.is_empty());
        changed |= self.batches.len() != before;
        while self.batches.len() > 1 {
            let Some(m) = self.batches.iter().position(|b| b.len() == 1) else {
                break;
            };
            let lone = self.batches.remove(m);
            let next = m % self.batches.len();
            self.batches[next].extend(lone);
            changed = true;
        }
        changed
    }

    fn stage_due(&self) -> bool {
        let survivors: usize = self.batches.iter().map(Vec::len).sum();
        let limit = self.entered as f64 / 2f64.powi(self.stage.min(60) as i32) + 1.0;
        let more_stages = self.reset_single_batch || self.batches.len() > 1;
        more_stages && survivors > 1 && self.stage < 64 && survivors as f64 <= limit
    }

    /// Starts the next stage: t back to its start and the survivors re-batched.
    fn begin_stage(&mut self) {
        self.stage += 1;
        self.t = 0;
        let old = std::mem::take(&mut self.batches);
        self.batches = rebatch(old, self.batch_size);
    }

    /// A new arm joins the smallest batch.
    pub fn add_arm(&mut self, view: &View, arm: Arm) {
        self.entered += 1;
        match self.batches.iter_mut().min_by_key(|b| b.len()) {
            Some(b) => b.push(arm),
            None => self.batches.push(vec![arm]),
        }
        self.rebuild(view);
    }

    /// A retired arm leaves its batch at once (a lone arm left behind joins the next batch).
    pub fn retire_arm(&mut self, view: &View, arm: Arm) {
        for b in &mut self.batches {
            b.retain(|&a| a != arm);
        }
        self.merge_singletons();
        self.rebuild(view);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn initial_batches_partition_the_arms_evenly() {
        let mut rng = BanditRng::seed_from_u64(1);
        let conf = Confidence {
            alpha: 0.5,
            c: 10.0,
        };
        let t = Tournament::new(136, 16, conf, &mut rng);
        assert_eq!(t.batches().len(), 9);
        assert!(t.batches().iter().all(|b| (15..=16).contains(&b.len())));
        assert_eq!(t.survivors(), (0..136).collect::<Vec<_>>());
    }

    #[test]
    fn rebatching_pairs_whole_batches_smallest_with_largest() {
        // Sizes 3, 5, 7, 9, 10 with M = 8 (so at most 12): 3 + 10 overflows, so 10 stays alone;
        // then 3 joins 9 and 5 joins 7.
        let mut next = 0;
        let old: Vec<Vec<Arm>> = [3usize, 5, 7, 9, 10]
            .iter()
            .map(|&n| {
                next += n;
                (next - n..next).collect()
            })
            .collect();
        let new = rebatch(old.clone(), 8);
        let mut sizes: Vec<usize> = new.iter().map(Vec::len).collect();
        sizes.sort();
        assert_eq!(sizes, vec![10, 12, 12]);
        // Every new batch is a union of whole old batches: arms that met stay together.
        for batch in &new {
            for o in &old {
                let inside = o.iter().filter(|a| batch.contains(a)).count();
                assert!(inside == 0 || inside == o.len(), "{o:?} split by {new:?}");
            }
        }
    }

    #[test]
    fn rebatching_keeps_sizes_within_half_and_one_and_a_half_m() {
        let conf = Confidence {
            alpha: 0.5,
            c: 10.0,
        };
        let mut rng = BanditRng::seed_from_u64(2);
        for m in [2usize, 4, 8, 16] {
            for trial in 0..200 {
                let mut t = Tournament::new(200, m, conf, &mut rng);
                // Thin the batches at random, as eliminations do, then start a stage.
                for b in &mut t.batches {
                    let keep = 1 + (trial * 7 + b.len()) % b.len();
                    b.truncate(keep);
                }
                t.merge_singletons();
                let survivors = t.survivors().len();
                t.begin_stage();
                assert_eq!(t.survivors().len(), survivors);
                if survivors as f64 >= 0.5 * m as f64 {
                    for b in t.batches() {
                        let s = b.len() as f64;
                        assert!(
                            s >= 0.5 * m as f64 && s <= 1.5 * m as f64,
                            "M={m}: {:?}",
                            t.batches()
                        );
                    }
                }
            }
        }
    }
}
