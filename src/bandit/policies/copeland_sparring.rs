//! Copeland sparring: `auto` versions 4 to 7's duels (module docs of [`super::auto`] say why),
//! at O(K) memory and at most O(K) work per duel and per outcome (amortised; see "Cost").
//!
//! The rule, from RUCB (Zoghi et al. 2014), its Copeland form CCB (Zoghi et al. 2015) and DTS
//! (Wu and Liu 2016), with their relative confidence bounds
//! `u_ij = w_ij / n_ij + sqrt(alpha L / n_ij)` ([`crate::bandit::stats::ucb`], alpha = 0.51, a
//! pair never compared has u = 1) and `l_ij = 1 - u_ji`:
//! 1. **Candidates**: `C` = the active arms with the fewest *confirmed losses* (arms `j` with
//!    `u_ij < 1/2`, i.e. `l_ji > 1/2`), i.e. the largest optimistic Copeland score. With a
//!    Condorcet winner this is RUCB's candidate set (arms no arm confidently beats); without one
//!    it is CCB's and DTS's (the arms that may still be Copeland winners).
//! 2. **The drawn arm**: one Thompson draw over `C` of Self-Sparring's per-arm posteriors
//!    Beta(wins + 1, losses + 1) (all its duels against active arms; a self-duel counts half a
//!    win and half a loss), drawn exactly by [`ArgmaxSampler`], which touches only the arms that
//!    could win the draw. Where Borda and Condorcet agree (MSLR) this exploits as Self-Sparring
//!    does; where they disagree, `C` is what keeps the draw on arms that may be the winner.
//! 3. **Exploration, half of the steps** (when `C` has more than one arm): RUCB's uniform pick
//!    of a candidate `c`; if `c` is not the drawn arm and their pair is not resolved (neither is
//!    confirmed to beat the other), the duel is (drawn, c): RMED's comparison of a candidate with
//!    the leader, which costs about c's own gap rather than two, and shows an arm that the
//!    draws neglect to lose. Otherwise `c` becomes the first arm of step 4.
//! 4. **Rival** of the first arm `c` (the drawn arm on the other half), as in RUCB and CCB: the
//!    arm `j` with the largest value among those **not confirmed to beat `c`** (`l_jc <= 1/2`:
//!    DTS's exclusion in its second step, which keeps a Copeland winner that loses to a few arms
//!    from being compared with them for ever), the value being u_jc for a candidate and the
//!    empirical preference w_jc / n_jc for an arm out of `C` (RMED's rule: an arm already shown
//!    to lose to some arm is compared with `c` only while it empirically beats `c`), 1 for a pair
//!    never compared; the lowest index among equals. While some pair of `c` was never compared,
//!    one of those is picked at random instead (a few random probes, then the rule above). If no
//!    rival has a value above 1/2, nothing is left that may beat `c`: it duels itself, at no
//!    regret if it is the winner.
//!
//! **Version 5** (`auto:version=5`, not the default) pairs the drawn arm differently, the
//! rest (candidates, bounds, rivals, cache) unchanged. Step 3 becomes Self-Sparring's second
//! draw: on every step with more than one candidate, a second independent Thompson draw over
//! `C`; if it is another arm and their pair is not resolved, the duel is (drawn, second).
//! Otherwise step 4 runs for the drawn arm, and its rival (not a probe of a pair never compared)
//! is taken only if one draw of the pair's preference, Beta(w_jc + 1, w_cj + 1), is above 1/2;
//! else the drawn arm duels itself (which the decision layer turns into a confirmation). Why:
//! on random 16-ranker subsets of MSLR-Navigational, version 4 paid about 40% more regret than
//! version 3 (DTS), and counting it by kind of duel (seed 2, 20 runs, 10^5 steps) put 420 of its
//! 1,040 on the uniform candidate of step 3 and 330 on rivals taken at their upper bound, where
//! DTS's own duels cost about 280: a uniform candidate and an optimistic rival keep comparing
//! the leader with arms nearly tied with it, which a Thompson draw visits only as often as the
//! evidence leaves them a chance. The guarantee above is kept in its form (a rival is still
//! only an arm not confirmed to beat `c`, and every pair can still be drawn), but a pair's
//! comparisons now also wait on its posterior, so the O(K^2 ln T / gap^2) argument is not
//! claimed for it. Cost: one more Thompson draw, and one Beta draw when a rival is taken.
//!
//! **Version 6** (`auto:version=6`; the default before version 7) changes whom an arm meets; the candidates,
//! bounds, draws and cache are version 4's:
//! - **Leading rivals first.** In step 4 an arm not confirmed to beat `c` whose empirical
//!   preference over `c` is above 1/2 (or that never met `c`) comes before every other, by that
//!   preference; the others keep version 4's values. So `c` meets the arm that leads it most:
//!   the comparison that confirms one of c's losses soonest (an arm's cheapest losses to confirm
//!   are its largest gaps, as in RMED's and ECW-RMED's analyses).
//! - **A uniform candidate meets its strongest beater.** In step 3, a candidate `c` other than
//!   the drawn arm that has met every arm duels its leading rival when it has one; otherwise
//!   the step is version 4's, so every open pair of candidates is still compared.
//! - **A check before a self-duel.** When `c` has no rival above 1/2, one random arm whose pair
//!   with `c` is open (neither confirmed to beat the other; up to four tries) and has had fewer
//!   than sqrt(t) comparisons (t the outcomes heard) meets `c` if one draw of its preference,
//!   Beta(w_jc + 1, w_cj + 1), is above 1/2; else `c` duels itself.
//!
//! Why. On a Copeland cycle over a tail (the `copeland` family: three Copeland winners that
//! beat each other and all 13 others) version 4 confirms the winners' one loss each within a
//! few dozen comparisons; its candidates, the arms with the fewest confirmed losses, are then
//! the tail arms whose losses are not confirmed yet, and it paired them with one another (both
//! sides of the duel bad) and with their widest upper bounds: about 0.2-0.5 regret per duel
//! from 10^3 to 10^4 steps, and twelve times Self-Sparring's regret at 10^6. Meeting the arm
//! that leads it most confirms a tail arm's losses against a Copeland winner: half a duel's
//! regret, at the largest gap. The check closes a trap of version 4 that the first two changes
//! made more frequent: a candidate whose last unconfirmed loss is to an arm out of the
//! candidates that it leads by chance (version 4 compares such an arm with it only while it
//! leads) duels itself, at full regret, until a doubling of T̄ reshuffles the candidates (on
//! `copeland-random` K=4 margin 0.1, one run in about 50 of either version without the check).
//! The draw meets such an arm while its posterior leaves it a fair chance of winning, and meets
//! an arm it clearly beats a bounded number of times (Thompson sampling's tail: about
//! 1/(4 gap^2) duels over a whole run).
//!
//! Why the sqrt(t) bound: a pair of a Copeland winner nearly tied at 1/2 is never resolved, and
//! the draw favours the other arm with probability about Phi(-2 gap sqrt(n)) after n
//! comparisons, so without a bound it is met O(ln t / gap^2) times where version 4 met it only
//! while it led (seed 9's near-tie cell in docs/results.md#earlier-designs, a Copeland winner
//! beating a ranker at 0.507). With it the check adds at most sqrt(t) comparisons per pair,
//! track-and-stop's forced exploration, which still reveals a trap's lead in time sublinear in t.
//!
//! What it guarantees: version 4's statements in their form: a rival is still an arm not
//! confirmed to beat `c`, every open pair of candidates is still compared through step 3's
//! version 4 branch or the check, and an arm leaves the candidates only through confirmed
//! losses. Cost: one look-up more in step 3, and up to four random arms and one Beta draw
//! before a self-duel. Measured in docs/results.md#earlier-designs.
//!
//! **Version 7** (`auto:version=7`; the default before version 8) is version 6 with DTS's first arm once
//! the bounds show no Condorcet winner: when every active arm has a confirmed loss and there are
//! 2 to [`COPELAND_DRAW_MAX`] candidates,
//! - **the first arm is a Copeland draw** (DTS's, Wu and Liu 2016, over the candidates only):
//!   each candidate's score counts its confirmed wins, and one draw of its preference,
//!   Beta(w_cj + 1, w_jc + 1), above 1/2 for each open pair; the largest score wins, uniformly
//!   among equals. Step 3's uniform candidate still meets the drawn arm while their pair is open,
//!   but no longer takes its place as the first arm;
//! - **the belief** (the champion) is the candidate of the largest estimated Copeland score
//!   (confirmed wins, and for each open pair the posterior chance that it leads), the most
//!   played among equals.
//!
//! Why: where two candidates tie on confirmed losses and one of them has a pair within a few
//! thousandths of 1/2 that no horizon resolves (`copeland-random` at small margins,
//! docs/results.md#earlier-designs), version 6's Thompson draw reads each arm's results against
//! all arms, and the uniform candidate took the first place on half the steps: both played
//! about as often, and the most played was the Copeland winner in 38% of runs on seed 12's
//! cell. The Copeland draw gives the winner the first place whenever the unresolved pair is
//! drawn against the other, and the belief reads the scores rather than the plays. With a
//! Condorcet winner (no confirmed loss) nothing changes. Cost: |C| K reads and at most as many
//! Beta draws per duel while it applies, O(K) as [`COPELAND_DRAW_MAX`] bounds |C|.
//!
//! **Version 8** (`auto:version=8`, the default) is version 7 with one more step once the
//! bounds show no Condorcet winner (every active arm has a confirmed loss): when the first arm's
//! rival (step 4) is an arm leading it that it has met at least sqrt(t) times (t the outcomes
//! heard) and their pair is still open, a near-tie, its other open pairs met fewer than sqrt(t)
//! times each draw the other arm's preference over it, Beta(w_jc + 1, w_cj + 1), as DTS draws
//! its second arm (Wu and Liu 2016, over these pairs only); the largest draw, if above 1/2, is
//! the rival instead.
//!
//! Why: version 6's rivals put an arm leading the first one before every other, by its lead,
//! and a pair within a few thousandths of 1/2 leads about half the time for any number of
//! comparisons. When that first arm is the only candidate, it meets that rival on nearly every
//! duel while a pair it lost early by chance (3 of 7, say, to an arm that beats it at 0.7) is
//! never compared again. On a 64-ranker `copeland-random` matrix at margin 0.01 version 7
//! named a wrong ranker in 4 of 16 runs; in a run examined, a ranker with a Copeland score 12
//! below the winners' was the only candidate at 10^6 duels, with 18 of its losses unexamined
//! and 75% of the duels spent on its pair at 0.501 (docs/results.md#auto-version-8). The
//! posterior draw gives the pairs examined least a chance while the near-tie holds the first
//! place. Both sqrt(t) bounds are version 6's for its check before a self-duel, for the same
//! reason: drawing every open pair on every duel (DTS's rule) meets a Copeland winner's pair
//! within 0.01 of 1/2 on a share of the duels that does not shrink (regret linear in T on
//! `copeland-random` K=4 at margin 0.01, DTS's and this step's without the bounds). Drawing
//! only behind a near-tie leaves the `copeland` family as version 7 had it: drawing on every
//! duel of the first arm met the tail again at each doubling of t (`copeland` K=16, 16 runs:
//! 1,853 +- 36 regret at 10^6 against version 7's 1,721 +- 26). With a Condorcet winner nothing changes: version 8 duels exactly as versions 6 and
//! 7. Cost: K reads and up to K Beta draws on the duels where it applies, O(K).
//!
//! **Time.** `L = ln T̄`, with `T̄` the smallest power of two above the outcomes heard so far
//! (self-duels included, as a time step): a bound is never narrower than with `ln t`, so every
//! "confirmed" statement holds with at least the confidence of DTS's and RUCB's, and the bounds,
//! hence the candidate set and the rivals, change only through the pair an outcome touched,
//! except once per doubling of `t`, when everything is recomputed.
//!
//! **What it guarantees.** Through the confidence bounds, as RUCB's and CCB's analyses use
//! them (Zoghi et al. 2014, Lemma 1; Zoghi et al. 2015): with alpha > 1/2, with probability at
//! least 1 - delta every bound holds for every pair from a time C(delta) on. On that event:
//! (a) a Condorcet winner is never confirmed to lose, so it is always a candidate (and the
//! champion report's belief, the most played candidate, can only be it once the others are out);
//! (b) an arm that some arm beats leaves `C` once that pair is resolved, and since the winner
//! is a candidate and is the rival of last resort of every candidate it beats, every other arm
//! leaves after O(ln T / gap^2) comparisons of its pairs; without a Condorcet winner, an arm
//! whose Copeland score is below the best leaves once enough of its pairs are resolved, and a
//! Copeland winner is never again compared with an arm confirmed to beat it, so self-duels of
//! the Copeland winners are what remains. Regret is then O(K^2 ln T / gap_min^2), the order of
//! RUCB's and CCB's bounds (not RMED's asymptotically optimal K ln T, nor DTS's
//! K ln T + K^2 ln ln T). What is not proven: the empirical values of step 4 for arms out of
//! `C` can leave a pair unexamined while its mean is on the wrong side of 1/2; what reopens it
//! is RMED's mechanism, the bounds widening with ln T̄ until the arm is a candidate again. A pair
//! nearly tied at 1/2 costs up to 1/gap^2 duels, as for every policy of this kind.
//!
//! **Cost.** The persisted state is empty: everything above is a function of the win matrix and
//! the outcomes heard, kept in a cache ([`Cached`]) rebuilt by `warm`, so a state read from the
//! database chooses exactly as the live one. Per duel: one exact Thompson draw over `C` (a
//! handful of Beta draws once the posteriors separate, at most |C|) and an O(1) look-up of the
//! rival (plus up to four random probes while the first arm has pairs never compared). Per
//! outcome: O(1) for the pair's bounds, two updates of the Thompson sampler (O(K) at worst, a
//! sorted insert, and a threshold of the arm's posterior from bounds on its tail), and a rescan
//! of one arm's column (O(K)) only when the arms it keeps by value (the first eight) all fell
//! below the rest; O(K) when the fewest confirmed losses changes, which happens at most K times between
//! doublings; O(K^2) once per doubling of `t`, which is O(K^2 / t) per outcome amortised.
//! Without a cache (a state not warmed), `select` computes what it needs from the win matrix
//! in O(K^2), choosing the same.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bandit::stats::beta::sample_beta;
use crate::bandit::stats::cached::{Cached, evidence_total};
use crate::bandit::stats::normal::normal_cdf;
use crate::bandit::stats::thompson_argmax::{ArgmaxSampler, with_self_duels};
use crate::bandit::stats::ucb::{threshold, ucb};
use crate::bandit::{Arm, Pair, TieRule, View};

/// RUCB's, CCB's and DTS's alpha: above the 1/2 their analyses need.
pub const ALPHA: f64 = 0.51;

/// Random probes for a pair never compared before the cached rival is taken.
const PROBES: usize = 4;

/// How the drawn arm is paired: version 4's rule (steps 3 and 4 of the module docs) or
/// version 5's (a second Thompson draw, and a Thompson check of the rival).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairing {
    Uniform,
    Thompson,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CopelandSparring {
    /// Outcomes heard (wins, ties that count, self-duels): the t of the confidence bounds.
    pub heard: u64,
    /// Version 6's rivals (module docs, "Version 6"): leading rivals first, a uniform candidate
    /// meeting its strongest beater, and a check before a self-duel. Absent in the states of
    /// versions 4 and 5, which load as they were.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub beaters: bool,
    /// Version 7's Copeland draw (module docs, "Version 7"). Absent in the states of versions 4
    /// to 6, which load as they were.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub copeland_draws: bool,
    /// Version 8's draw over the first arm's open pairs while its rival is a near-tie, once no
    /// arm is unbeaten (module docs, "Version 8").
    /// Absent in the states of versions 4 to 7, which load as they were.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub thompson_rivals: bool,
    #[serde(skip)]
    cache: Cached<Derived>,
}

/// Version 6: added to the value of a rival that leads the first arm (its empirical preference
/// above 1/2), so that it comes before the others, which keep version 4's values (at most 1).
const LEADING: f64 = 1.0;

/// Version 7: the most candidates whose Copeland scores are drawn (each draw reads the
/// candidate's column, so a duel costs at most this many times K).
const COPELAND_DRAW_MAX: usize = 8;

/// Arms a column's [`Rivals`] keeps by value.
const TOP: usize = 8;

/// The arms of a column with the largest values (at most [`TOP`], first by decreasing value,
/// then by increasing index) and a bound on every other arm of the column, in the same order:
/// while the first arm comes before the bound, it is the rival (the largest value, the lowest
/// index among equals), and the column is rescanned only when it does not. Keeping several arms
/// matters for the drawn arm's column, where a few nearly tied arms take turns as the rival.
#[derive(Clone, Copy, Debug)]
struct Rivals {
    /// (value, arm).
    top: [(f64, u32); TOP],
    len: u8,
    /// No other arm comes before this (value, arm) (arms that are no rivals aside).
    bound: (f64, u32),
}

const NO_RIVALS: Rivals = Rivals {
    top: [(f64::NEG_INFINITY, 0); TOP],
    len: 0,
    bound: (f64::NEG_INFINITY, u32::MAX),
};

impl Rivals {
    /// The rival and its value, `None` for no rival.
    #[inline]
    fn first(&self) -> Option<(Arm, f64)> {
        (self.len > 0).then(|| (self.top[0].1 as Arm, self.top[0].0))
    }

    /// Whether the list may no longer show the rival (a rescan is needed).
    #[inline]
    fn stale(&self) -> bool {
        if self.len == 0 {
            self.bound.0 > f64::NEG_INFINITY
        } else {
            !Self::before(self.top[0], self.bound)
        }
    }

    /// Whether (v, j) comes before (w, i): a larger value, or the same and a lower index.
    #[inline]
    fn before((v, j): (f64, u32), (w, i): (f64, u32)) -> bool {
        v > w || (v == w && j < i)
    }

    /// Widens the bound to cover `entry`.
    #[inline]
    fn cover(&mut self, entry: (f64, u32)) {
        if Self::before(entry, self.bound) {
            self.bound = entry;
        }
    }

    /// Files `entry` (an arm not in the list) in order, the last one going under the bound if
    /// the list is full.
    fn insert(&mut self, entry: (f64, u32)) {
        let len = self.len as usize;
        let pos = self.top[..len].partition_point(|&e| Self::before(e, entry));
        if pos == TOP {
            return self.cover(entry);
        }
        if len == TOP {
            self.cover(self.top[TOP - 1]);
        } else {
            self.len += 1;
        }
        let len = self.len as usize;
        self.top.copy_within(pos..len - 1, pos + 1);
        self.top[pos] = entry;
    }

    /// Arm `j`'s value is now `value` (`None`: it is no rival).
    fn offer(&mut self, j: Arm, value: Option<f64>) {
        let j = j as u32;
        let len = self.len as usize;
        if let Some(pos) = self.top[..len].iter().position(|e| e.1 == j) {
            self.top.copy_within(pos + 1..len, pos);
            self.len -= 1;
        }
        match value {
            Some(v) if Self::before((v, j), self.bound) => self.insert((v, j)),
            // Covered by the bound, or no rival.
            _ => {}
        }
    }
}

/// Everything the policy derives from the win matrix and `heard`.
#[derive(Clone, Debug)]
struct Derived {
    /// (arms, evidence recorded, heard) when it was last brought up to date: a tie the policy
    /// does not hear of (ties ignored) changes none of them, nor anything the cache holds.
    stamp: (usize, u64, u64),
    /// [`CopelandSparring::beaters`].
    beaters: bool,
    /// [`CopelandSparring::copeland_draws`].
    copeland_draws: bool,
    /// [`CopelandSparring::thompson_rivals`].
    thompson_rivals: bool,
    /// ln T̄.
    log_term: f64,
    /// Per arm: score and comparisons against active arms (Self-Sparring's posterior counts).
    wins: Vec<f64>,
    plays: Vec<f64>,
    /// Per arm: active arms that confidently beat it (u_ij < 1/2).
    lost: Vec<u32>,
    /// The fewest confirmed losses of an active arm: the candidates have exactly this many.
    fewest: u32,
    /// Per arm: active arms it was never compared with.
    unexplored: Vec<u32>,
    /// Per arm c: its rival (step 4 of the module docs), with the next ones.
    rival: Vec<Rivals>,
    /// The candidates (the active arms with `fewest` confirmed losses), in index order.
    candidate_list: Vec<Arm>,
    /// Thompson draws over the candidates.
    sampler: ArgmaxSampler,
}

fn stamp(view: &View, heard: u64) -> (usize, u64, u64) {
    (view.k(), evidence_total(view), heard)
}

/// ln of the smallest power of two above `heard` (at least 2).
fn log_term(heard: u64) -> f64 {
    (horizon(heard) as f64).ln()
}

/// T̄: the smallest power of two above `heard` (at least 2). `log_term` changes exactly when
/// this does, which is what an outcome checks (without two logarithms).
#[inline]
fn horizon(heard: u64) -> u64 {
    (heard + 1).max(2).next_power_of_two()
}

/// Whether `j` is confirmed to beat `i` (u_ij < 1/2).
#[inline]
fn confirmed_loss(view: &View, i: Arm, j: Arm, log_term: f64) -> bool {
    log_term < threshold(view.score(i, j), view.count(i, j), ALPHA)
}

impl Derived {
    fn build(view: &View, heard: u64, design: &CopelandSparring) -> Derived {
        let k = view.k();
        let log_term = log_term(heard);
        let mut d = Derived {
            stamp: stamp(view, heard),
            beaters: design.beaters,
            copeland_draws: design.copeland_draws,
            thompson_rivals: design.thompson_rivals,
            log_term,
            wins: vec![0.0; k],
            plays: vec![0.0; k],
            lost: vec![0; k],
            fewest: 0,
            unexplored: vec![0; k],
            rival: vec![NO_RIVALS; k],
            candidate_list: Vec::new(),
            sampler: ArgmaxSampler::build(k, |_| None),
        };
        for i in view.active_arms() {
            for j in view.active_arms().filter(|&j| j != i) {
                let n = view.count(i, j);
                d.wins[i] += view.score(i, j);
                d.plays[i] += n;
                d.lost[i] += confirmed_loss(view, i, j, log_term) as u32;
                d.unexplored[i] += (n <= 0.0) as u32;
            }
        }
        d.fewest = d.fewest_losses(view);
        d.rebuild_candidates(view);
        d
    }

    /// Everything that depends on which arms are candidates: O(K^2).
    fn rebuild_candidates(&mut self, view: &View) {
        self.candidate_list = view
            .active_arms()
            .filter(|&a| self.lost[a] == self.fewest)
            .collect();
        for c in view.active_arms() {
            self.rescan_rival(view, c);
        }
        self.sampler = ArgmaxSampler::build(view.k(), |a| self.posterior(view, a));
    }

    /// `arm` became a candidate or stopped being one, the fewest losses unchanged: its value
    /// changed in every column.
    fn candidate_changed(&mut self, view: &View, arm: Arm) {
        match self.candidate_list.binary_search(&arm) {
            Ok(pos) => {
                self.candidate_list.remove(pos);
            }
            Err(pos) => self.candidate_list.insert(pos, arm),
        }
        for c in view.active_arms().filter(|&c| c != arm) {
            self.offer_rival(view, c, arm);
        }
    }

    /// The fewest confirmed losses of an active arm.
    fn fewest_losses(&self, view: &View) -> u32 {
        view.active_arms()
            .map(|a| self.lost[a])
            .min()
            .unwrap_or(u32::MAX)
    }

    fn is_candidate(&self, view: &View, arm: Arm) -> bool {
        view.is_active(arm) && self.lost[arm] == self.fewest
    }

    /// The first arm's Thompson posterior, `None` outside the candidates.
    fn posterior(&self, view: &View, arm: Arm) -> Option<(f64, f64)> {
        let (w, n) = (self.wins[arm], self.plays[arm]);
        with_self_duels(
            view,
            arm,
            self.is_candidate(view, arm),
            w + 1.0,
            n - w + 1.0,
        )
    }

    /// The value `j` offers as a rival of `c`: `None` if `j` is confirmed to beat `c`; else u_jc
    /// for a candidate, the empirical preference for an arm out of the candidates (1 for a pair
    /// never compared); version 6 puts an arm that leads `c` (or never met it) before all of
    /// them, at [`LEADING`] plus its empirical preference.
    #[inline]
    fn rival_value(&self, view: &View, j: Arm, c: Arm) -> Option<f64> {
        // Two reads of the win matrix: count(c, j) = count(j, c) = the sum of the scores.
        let (score, lost_to) = (view.score(j, c), view.score(c, j));
        let count = lost_to + score;
        if self.log_term < threshold(lost_to, count, ALPHA) {
            // j is confirmed to beat c.
            return None;
        }
        let lead = if count > 0.0 { score / count } else { 1.0 };
        if self.beaters && lead > 0.5 {
            // Version 6: an arm leading c comes before every other, by its lead.
            return Some(LEADING + lead);
        }
        Some(if self.is_candidate(view, j) {
            ucb(score, count, ALPHA, self.log_term)
        } else if count > 0.0 {
            score / count
        } else {
            1.0
        })
    }

    /// Recomputes c's rivals from its column: the largest u_jc, the lowest index among equals.
    fn rescan_rival(&mut self, view: &View, c: Arm) {
        let mut best = NO_RIVALS;
        for j in view.active_arms().filter(|&j| j != c) {
            if let Some(v) = self.rival_value(view, j, c) {
                best.insert((v, j as u32));
            }
        }
        self.rival[c] = best;
    }

    /// The entry of `j` in c's column changed: keep the rival in step with a full rescan.
    fn offer_rival(&mut self, view: &View, c: Arm, j: Arm) {
        let value = self.rival_value(view, j, c);
        self.rival[c].offer(j, value);
        if self.rival[c].stale() {
            self.rescan_rival(view, c);
        }
    }

    /// A counted result between `a` and `b`: `a` gained `gain_a` (1, 1/2 or 0) of it.
    fn learn(&mut self, view: &View, a: Arm, b: Arm, gain_a: f64) {
        let (score_a, score_b) = (view.score(a, b), view.score(b, a));
        let n = score_a + score_b;
        let was_a = self.log_term < threshold(score_a - gain_a, n - 1.0, ALPHA);
        let was_b = self.log_term < threshold(n - score_a - (1.0 - gain_a), n - 1.0, ALPHA);
        // confirmed_loss(a, b) and (b, a), from the same two reads.
        let now_a = self.log_term < threshold(score_a, n, ALPHA);
        let now_b = self.log_term < threshold(score_b, n, ALPHA);
        let was_candidate = [self.is_candidate(view, a), self.is_candidate(view, b)];
        self.lost[a] = self.lost[a] + now_a as u32 - was_a as u32;
        self.lost[b] = self.lost[b] + now_b as u32 - was_b as u32;
        self.wins[a] += gain_a;
        self.wins[b] += 1.0 - gain_a;
        self.plays[a] += 1.0;
        self.plays[b] += 1.0;
        if n == 1.0 {
            self.unexplored[a] -= 1;
            self.unexplored[b] -= 1;
        }
        if (now_a, now_b) != (was_a, was_b) {
            let fewest = self.fewest_losses(view);
            if fewest != self.fewest {
                // The candidate set changed as a whole.
                self.fewest = fewest;
                return self.rebuild_candidates(view);
            }
        }
        for (arm, was) in [(a, was_candidate[0]), (b, was_candidate[1])] {
            let is = self.is_candidate(view, arm);
            if is != was {
                self.candidate_changed(view, arm);
            }
            let p = self.posterior(view, arm);
            self.sampler.set(arm, p);
        }
        self.offer_rival(view, a, b);
        self.offer_rival(view, b, a);
    }

    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R, pairing: Pairing) -> Pair {
        let copeland = self.copeland_draw(view, rng);
        let drawn = copeland
            .or_else(|| self.sampler.sample(rng))
            .or_else(|| view.active_arms().next())
            .expect("an experiment has an active arm");
        let mut first = drawn;
        if pairing == Pairing::Thompson {
            return self.select_thompson(view, rng, drawn);
        }
        let candidates = self.candidate_list.len();
        if candidates > 1 && rng.random::<bool>() {
            // RUCB's other half: a candidate uniformly at random (in index order), against the
            // drawn one while their pair is unresolved (RMED's comparison with the leader).
            let r = rng.random_range(0..candidates);
            if let Some(&c) = self.candidate_list.get(r) {
                // Version 6: the candidate meets the arm that leads it most, once it has met
                // every arm, if one leads it (else as version 4, which keeps every open pair of
                // candidates compared).
                if self.beaters
                    && c != drawn
                    && self.unexplored[c] == 0
                    && let Some((j, value)) = self.rival[c].first()
                    && value > LEADING + 0.5
                {
                    return Pair::new(c, j);
                }
                let resolved = confirmed_loss(view, c, drawn, self.log_term)
                    || confirmed_loss(view, drawn, c, self.log_term);
                if c != drawn && !resolved {
                    return Pair::new(drawn, c);
                }
                // Version 7, once no arm is unbeaten: the drawn arm stays first, so a
                // candidate the draw passed over plays only as a rival.
                if copeland.is_none() {
                    first = c;
                }
            }
        }
        self.probe_or_rival(view, rng, first)
    }

    /// Version 7's first arm (module docs, "Version 7"): once every active arm has a confirmed
    /// loss and there are 2 to [`COPELAND_DRAW_MAX`] candidates, the candidate with the largest
    /// drawn Copeland score (a confirmed win counts 1, a confirmed loss 0, an open pair one draw
    /// of its preference above 1/2), uniformly among equals; `None` otherwise, without a draw.
    fn copeland_draw<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Option<Arm> {
        if !self.copeland_applies() {
            return None;
        }
        let mut best: Option<(u32, Arm)> = None;
        let mut equals = 0;
        for &c in &self.candidate_list {
            let mut score = 0;
            for j in view.active_arms().filter(|&j| j != c) {
                let wins = self.confirmed_win(view, c, j).unwrap_or_else(|| {
                    let (won, lost) = (view.score(c, j), view.score(j, c));
                    sample_beta(won + 1.0, lost + 1.0, rng) > 0.5
                });
                score += wins as u32;
            }
            match best {
                Some((s, _)) if s > score => {}
                Some((s, _)) if s == score => {
                    equals += 1;
                    if rng.random_range(0..equals) == 0 {
                        best = Some((score, c));
                    }
                }
                _ => {
                    best = Some((score, c));
                    equals = 1;
                }
            }
        }
        best.map(|(_, c)| c)
    }

    /// Version 7's estimate of `c`'s Copeland score: its confirmed wins, and for each open pair
    /// the chance that `c` leads it, P(Beta(w_cj + 1, w_jc + 1) > 1/2) by its normal
    /// approximation, Phi((w_cj - w_jc) / sqrt(n + 2)) (a pair never compared counts half).
    fn estimated_copeland(&self, view: &View, c: Arm) -> f64 {
        view.active_arms()
            .filter(|&j| j != c)
            .map(|j| match self.confirmed_win(view, c, j) {
                Some(won) => f64::from(u8::from(won)),
                None => {
                    let (won, lost) = (view.score(c, j), view.score(j, c));
                    normal_cdf((won - lost) / (won + lost + 2.0).sqrt())
                }
            })
            .sum()
    }

    /// Whether version 7's Copeland draw and champion apply: every active arm has a confirmed
    /// loss (no Condorcet winner by the bounds) and there are 2 to [`COPELAND_DRAW_MAX`]
    /// candidates.
    fn copeland_applies(&self) -> bool {
        self.copeland_draws
            && self.fewest > 0
            && (2..=COPELAND_DRAW_MAX).contains(&self.candidate_list.len())
    }

    /// `Some(true)` when `c` is confirmed to beat `j`, `Some(false)` when `j` is confirmed to
    /// beat `c`, `None` while their pair is open.
    #[inline]
    fn confirmed_win(&self, view: &View, c: Arm, j: Arm) -> Option<bool> {
        if confirmed_loss(view, j, c, self.log_term) {
            Some(true)
        } else if confirmed_loss(view, c, j, self.log_term) {
            Some(false)
        } else {
            None
        }
    }

    /// Version 5's steps 3 and 4 (module docs, "Version 5"): a second Thompson draw over the
    /// candidates against the first while their pair is open; else the first arm's rival, taken
    /// only when a draw of the pair's preference says the rival wins.
    fn select_thompson<R: Rng + ?Sized>(&self, view: &View, rng: &mut R, drawn: Arm) -> Pair {
        if self.candidate_list.len() > 1
            && let Some(c) = self.sampler.sample(rng)
            && c != drawn
            && !confirmed_loss(view, c, drawn, self.log_term)
            && !confirmed_loss(view, drawn, c, self.log_term)
        {
            return Pair::new(drawn, c);
        }
        match self.probe_or_rival(view, rng, drawn) {
            pair if pair.first == pair.second => pair,
            pair => {
                let j = if pair.first == drawn {
                    pair.second
                } else {
                    pair.first
                };
                let (score, count) = (view.score(j, drawn), view.count(j, drawn));
                if count <= 0.0 || sample_beta(score + 1.0, count - score + 1.0, rng) > 0.5 {
                    pair
                } else {
                    Pair::new(drawn, drawn)
                }
            }
        }
    }

    /// Step 4 of the module docs for the first arm `first`: a probe of a pair never compared,
    /// else its rival, else a self-duel.
    fn probe_or_rival<R: Rng + ?Sized>(&self, view: &View, rng: &mut R, first: Arm) -> Pair {
        if self.unexplored[first] > 0 {
            for _ in 0..PROBES {
                let j = rng.random_range(0..view.k());
                if j != first && view.is_active(j) && view.count(first, j) <= 0.0 {
                    return Pair::new(first, j);
                }
            }
        }
        if self.thompson_rivals && self.fewest > 0 {
            // Version 8: the rival leads `first` after sqrt(t) comparisons, their pair open.
            let cap = (self.stamp.2 as f64).sqrt();
            if let Some((j, value)) = self.rival[first].first()
                && value > LEADING + 0.5
                && view.count(first, j) >= cap
                && let Some(j) = self.thompson_rival(view, rng, first, cap)
            {
                return Pair::new(first, j);
            }
        }
        match self.rival[first].first() {
            Some((j, value)) if value > 0.5 => Pair::new(first, j),
            _ if self.beaters => self.check_before_self_duel(view, rng, first),
            _ => Pair::new(first, first),
        }
    }

    /// Version 8's examination of `first`'s open pairs, while its rival is a near-tie (module
    /// docs, "Version 8"): DTS's second arm over the open pairs compared fewer than `cap`
    /// (sqrt(t)) times. Each such arm draws its preference over `first`, Beta(w_jc + 1, w_cj + 1); the
    /// largest draw is the rival if it is above 1/2, else `None` (version 7's rival then). O(K)
    /// reads and Beta draws.
    fn thompson_rival<R: Rng + ?Sized>(
        &self,
        view: &View,
        rng: &mut R,
        first: Arm,
        cap: f64,
    ) -> Option<Arm> {
        let mut best: Option<(f64, Arm)> = None;
        for j in view.active_arms().filter(|&j| j != first) {
            let (score, count) = (view.score(j, first), view.count(j, first));
            if count >= cap || self.confirmed_win(view, first, j).is_some() {
                continue;
            }
            let draw = sample_beta(score + 1.0, count - score + 1.0, rng);
            if best.is_none_or(|(b, _)| draw > b) {
                best = Some((draw, j));
            }
        }
        best.filter(|&(draw, _)| draw > 0.5).map(|(_, j)| j)
    }

    /// Version 6's check before a self-duel of `first`: the first of up to [`PROBES`] random
    /// arms whose pair with `first` is open meets it if the pair has had fewer than sqrt(t)
    /// comparisons (t the outcomes heard) and one draw of its preference over `first` is above
    /// 1/2; else `first` duels itself.
    fn check_before_self_duel<R: Rng + ?Sized>(
        &self,
        view: &View,
        rng: &mut R,
        first: Arm,
    ) -> Pair {
        let open = (0..PROBES)
            .map(|_| rng.random_range(0..view.k()))
            .find(|&j| {
                j != first
                    && view.is_active(j)
                    && !confirmed_loss(view, first, j, self.log_term)
                    && !confirmed_loss(view, j, first, self.log_term)
            });
        if let Some(j) = open {
            let heard = self.stamp.2 as f64;
            let (score, count) = (view.score(j, first), view.count(j, first));
            if count < heard.sqrt() && sample_beta(score + 1.0, count - score + 1.0, rng) > 0.5 {
                return Pair::new(first, j);
            }
        }
        Pair::new(first, first)
    }
}

impl CopelandSparring {
    pub fn new() -> Self {
        CopelandSparring::default()
    }

    /// Version 6's rivals ([`CopelandSparring::beaters`]).
    pub fn with_beaters() -> Self {
        CopelandSparring {
            beaters: true,
            ..CopelandSparring::default()
        }
    }

    /// Version 7: version 6 with the Copeland draw ([`CopelandSparring::copeland_draws`]).
    pub fn with_copeland_draws() -> Self {
        CopelandSparring {
            beaters: true,
            copeland_draws: true,
            ..CopelandSparring::default()
        }
    }

    /// Version 8: version 7 with Thompson rivals behind a near-tie
    /// ([`CopelandSparring::thompson_rivals`]).
    pub fn with_thompson_rivals() -> Self {
        CopelandSparring {
            thompson_rivals: true,
            ..CopelandSparring::with_copeland_draws()
        }
    }

    fn fresh(&self, view: &View) -> Option<&Derived> {
        self.cache
            .0
            .as_ref()
            .filter(|d| d.stamp == stamp(view, self.heard))
    }

    /// `f` of the cache when it is fresh, else of a state derived from the win matrix now (a
    /// state not warmed chooses exactly as a warmed one).
    fn with_derived<T>(&self, view: &View, f: impl FnOnce(&Derived) -> T) -> T {
        match self.fresh(view) {
            Some(d) => f(d),
            None => f(&Derived::build(view, self.heard, self)),
        }
    }

    /// Brings the cache up to date (`warm`).
    pub fn warm(&mut self, view: &View) {
        self.cache = Cached(Some(Derived::build(view, self.heard, self)));
    }

    /// The next duel, paired as `pairing` says (version 4 or 5 of `auto`).
    pub fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R, pairing: Pairing) -> Pair {
        self.with_derived(view, |d| d.select(view, rng, pairing))
    }

    /// A result between distinct active arms `a` and `b`, `a` gaining `gain_a` of it, now in the
    /// win matrix.
    pub fn learn(&mut self, view: &View, a: Arm, b: Arm, gain_a: f64) {
        let before = (view.k(), evidence_total(view).wrapping_sub(1), self.heard);
        self.heard += 1;
        let incremental = horizon(self.heard) == horizon(self.heard - 1);
        match self.cache.0.as_mut() {
            Some(d) if incremental && d.stamp == before => {
                d.learn(view, a, b, gain_a);
                d.stamp = stamp(view, self.heard);
            }
            _ => self.warm(view),
        }
    }

    /// A self-duel of `arm` (or a tie not counted as evidence): a time step, and half a win and
    /// half a loss in the arm's Thompson posterior.
    pub fn self_duel(&mut self, view: &View, arm: Arm) {
        // Under half-win ties the self-duel is evidence recorded (a tie), otherwise not.
        let recorded = evidence_total(view) - (view.ties == TieRule::HalfWin) as u64;
        let before = (view.k(), recorded, self.heard);
        self.heard += 1;
        let incremental = horizon(self.heard) == horizon(self.heard - 1);
        match self.cache.0.as_mut() {
            Some(d) if incremental && d.stamp == before => {
                let p = d.posterior(view, arm);
                d.sampler.set(arm, p);
                d.stamp = stamp(view, self.heard);
            }
            _ => self.warm(view),
        }
    }

    /// The candidates: the active arms with the fewest confirmed losses.
    pub fn candidates(&self, view: &View) -> Vec<Arm> {
        self.with_derived(view, |d| d.candidate_list.clone())
    }

    /// The candidate that took part in the most duels (self-duels included), the lowest index
    /// among equals; version 7, where it draws by Copeland score, the candidate of the largest
    /// estimated score first ([`Derived::estimated_copeland`]).
    pub fn belief(&self, view: &View) -> Option<Arm> {
        self.with_derived(view, |d| {
            let copeland = d.copeland_applies();
            let estimate = |a: Arm| {
                if copeland {
                    d.estimated_copeland(view, a)
                } else {
                    0.0
                }
            };
            view.active_arms()
                .filter(|&a| d.is_candidate(view, a))
                .map(|a| (a, (estimate(a), d.plays[a] + view.wins.ties(a, a) as f64)))
                .fold(None, |best: Option<(Arm, (f64, f64))>, (a, n)| match best {
                    Some((_, m)) if m >= n => best,
                    _ => Some((a, n)),
                })
                .map(|(a, _)| a)
        })
    }

    /// The arms' confirmed losses, as the cache holds them (for
    /// tests of its bookkeeping; `None` without a fresh cache).
    pub fn cached_losses(&self, view: &View) -> Option<Vec<u32>> {
        self.fresh(view).map(|d| d.lost.clone())
    }

    /// The losses recomputed from the win matrix (what the cache must equal).
    pub fn losses_from_scratch(&self, view: &View) -> Vec<u32> {
        Derived::build(view, self.heard, self).lost
    }
}
