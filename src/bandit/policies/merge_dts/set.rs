//! MergeDTS with m rankers per query: a multi-dueling generalisation of li-2020 (its future work
//! (2): "a generalization of MergeDTS ... to the case of online ranker evaluation tasks with a
//! multi-dueling setup"), of our own design. The batches, the elimination rule, merging and
//! stages are MergeDTS's unchanged ([`crate::bandit::stats::tournament`]); only the choice of arms per query and
//! how one query's results are learnt are new.
//!
//! Selection, in a batch drawn uniformly at random (as the pairwise policy does):
//! - a batch of at most m arms is shown whole: every pair of it is compared by the one query;
//! - a larger batch: Phase I picks the first arm c exactly as MergeDTS does (the arm winning the
//!   most Thompson-sampled duels of the batch, ties at random); Phase II samples
//!   phi_j ~ Beta(w_jc + 1, w_cj + 1) for the batch's other arms and adds the m - 1 arms with the
//!   lowest phi, i.e. the arms the samples say c beats most clearly. li-2020's second arm is the
//!   single argmin ("knock the weakest link out of the batch"); taking the m - 1 weakest links
//!   is the same rule for m - 1 opponents.
//! - once one arm survives, it alone is shown (a self-duel), as the pairwise policy compares it
//!   with itself.
//!
//! The set is c followed by its opponents in order of phi (the whole-batch case keeps batch
//! order); m = 2 is the pairwise policy's `select` itself.
//!
//! Learning: every result of the query is one outcome of the tournament's clock (t grows by the
//! number of pairwise results, as if they had been posted one by one), and the elimination check
//! then runs over every batch once, after the whole query's evidence is in the win matrix (the
//! state updates the matrix with all results before the policy hears of them). A query of one or
//! no result goes through the pairwise `update` / `tie`, so m = 2 learns exactly as `record` does.
//! Late, batched, out-of-order and lost feedback behave as in the pairwise policy: `select_set` is
//! read-only and only the win matrix and the clock carry evidence.
//!
//! Why it should work: the elimination rule is the same one-sided Hoeffding bound per pair, which
//! holds however the comparisons were chosen, so an arm is still eliminated only when a batch-mate
//! beats it with high confidence, and the Condorcet winner, which no arm beats, survives with the
//! same probability as in MergeDTS (the union bound now runs over more outcomes per step; the
//! ln(t + C) term counts them). What changes is the rate: one query gives c up to m - 1
//! comparisons instead of one, and the weakest arms of the batch, the ones elimination can remove
//! soonest, are the ones compared, so batches shrink up to m - 1 times faster per query. Showing
//! weak arms costs regret only while they survive, and they survive fewest queries. Thompson
//! sampling keeps its role: when a batch is larger than m, c is usually the batch's best arm, so
//! the evidence gathered is mostly "best against the rest", which is what elimination needs.
//! With m at least the batch size every query compares a whole batch, and Thompson sampling has
//! nothing left to choose: pick M > m (e.g. the tuned M = 16 with m <= 8) to keep it useful.

use rand::Rng;

use crate::bandit::multi::{PairResult, SetUpdate};
use crate::bandit::stats::argbest::ArgMax;
use crate::bandit::stats::beta::sample_beta;
use crate::bandit::stats::duel_table::DuelTable;
use crate::bandit::stats::tournament::Tournament;
use crate::bandit::{Arm, View};

/// The arms of one query of m > 2 rankers. `table` returns the cached Phase I table of a batch
/// when it is up to date.
pub fn select_set<'a, R: Rng + ?Sized>(
    tournament: &Tournament,
    table: impl Fn(usize) -> Option<&'a DuelTable>,
    view: &View,
    m: usize,
    rng: &mut R,
) -> Vec<Arm> {
    if let Some(last) = tournament.settled() {
        return vec![last];
    }
    let b = tournament.pick_batch(rng);
    let batch = &tournament.batches()[b];
    if batch.len() <= m {
        return batch.clone();
    }
    // Phase I, as MergeDTS.
    let built;
    let table = match table(b) {
        Some(t) => t,
        None => {
            built = DuelTable::build(view, batch, &[]);
            &built
        }
    };
    let mut wins = vec![0u32; batch.len()];
    table.sample_wins(view, &mut wins, rng);
    let mut first = ArgMax::new();
    for (pos, &w) in wins.iter().enumerate() {
        first.offer(pos, w as f64, rng);
    }
    let c = batch[first.arm().expect("batch is not empty")];
    // Phase II: the m - 1 lowest phi_j.
    let mut phi: Vec<(f64, Arm)> = batch
        .iter()
        .filter(|&&j| j != c)
        .map(|&j| {
            (
                sample_beta(view.score(j, c) + 1.0, view.score(c, j) + 1.0, rng),
                j,
            )
        })
        .collect();
    phi.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut set = Vec::with_capacity(m);
    set.push(c);
    set.extend(phi.iter().take(m - 1).map(|&(_, j)| j));
    set
}

/// Learns a query of two or more results (all already in `view`): the clock moves once per
/// result and the tournament re-checks every batch. Returns whether the batches changed; the
/// caller brings its Phase I tables up to date.
pub fn learn_set<R: Rng + ?Sized>(
    tournament: &mut Tournament,
    view: &View,
    heard: &SetUpdate,
    rng: &mut R,
) -> bool {
    let Some((last, before)) = heard.results.split_last() else {
        return false;
    };
    for _ in before {
        tournament.tick();
    }
    // Bring the cached bounds to the whole query's evidence, so that `record` cannot take its
    // one-outcome shortcut and instead checks every batch.
    tournament.warm(view);
    let (a, b, tie) = match *last {
        PairResult::Win(w) => (w.winner, w.loser, false),
        PairResult::Tie(a, b) => (a, b, true),
    };
    tournament.record(view, a, b, tie, rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::stats::tournament::Confidence;
    use crate::bandit::{BanditRng, TieRule, WinMatrix};
    use rand::SeedableRng;

    #[test]
    fn the_first_arm_meets_the_weakest_links_and_small_batches_are_shown_whole() {
        let mut rng = BanditRng::seed_from_u64(1);
        let conf = Confidence { alpha: 0.5, c: 1e6 };
        // One batch of six: arm 0 edges arm 1 (55 of 100); both beat arms 2-5 90 of 100, which
        // are even among themselves.
        let tournament = Tournament::new(6, 8, conf, &mut rng);
        let mut w = WinMatrix::new(6);
        w.add_wins(0, 1, 55);
        w.add_wins(1, 0, 45);
        for strong in [0, 1] {
            for weak in 2..6 {
                w.add_wins(strong, weak, 90);
                w.add_wins(weak, strong, 10);
            }
        }
        for i in 2..6 {
            for j in 2..6 {
                if i != j {
                    w.add_wins(i, j, 25);
                }
            }
        }
        let active = [true; 6];
        let view = View::new(&w, &active, TieRule::Ignore);
        // c is 0 or 1: each strong arm wins its four sampled duels with the weak arms unless a
        // Beta(11, 91) sample (mean 0.11, sd 0.03) exceeds 1/2, 13 sd away, and a weak arm wins
        // at most three. Its opponents' phi are Beta(11, 91) for the weak arms and Beta(46, 56)
        // (mean 0.45, sd 0.05) or Beta(56, 46) for the other strong arm, which is among the two
        // lowest only if it falls about 4 sd below its mean while three weak samples rise 4 sd
        // above theirs: far below 1e-6 per draw, so 1,000 draws never see it.
        for _ in 0..1_000 {
            let set = select_set(&tournament, |_| None, &view, 3, &mut rng);
            assert_eq!(set.len(), 3);
            assert!(set[0] < 2, "{set:?}");
            assert!(set[1..].iter().all(|&a| a >= 2), "{set:?}");
        }
        let mut whole = select_set(&tournament, |_| None, &view, 6, &mut rng);
        whole.sort_unstable();
        assert_eq!(whole, vec![0, 1, 2, 3, 4, 5]);
    }
}
