//! Segments with different winners: traffic is a mix of segments, segment `s` (with weight
//! `weights[s]`) prefers rankers by its own matrix, whose Condorcet winner is ranker `s`
//! (then the others in index order, each higher-ranked ranker beating a lower one with
//! probability 1/2 + `gap`). The policy selects from all traffic and learns from all of it, as
//! the service's does; each segment keeps its own win counts, from which its champion and
//! decision are read as the experiment view's `segments` reads them.

use rand::{Rng, SeedableRng};

use crate::bandit::{
    Arm, BanditRng, DecisionSettings, Outcome, PolicySpec, TieRule, View, WinMatrix,
    champion_report, decide,
};
use crate::sim::matrix::PrefMatrix;
use crate::sim::run::new_state;

/// The segments and the rankers.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentModel {
    /// Rankers; at least as many as segments.
    pub k: usize,
    /// Each segment's share of the traffic (normalised); segment `s`'s winner is ranker `s`.
    pub weights: Vec<f64>,
    /// Preference margin within a segment: 1/2 + gap for the higher-ranked ranker; in (0, 0.5].
    pub gap: f64,
}

impl SegmentModel {
    pub fn validate(&self) -> Result<(), String> {
        if self.weights.is_empty() || self.weights.len() > self.k {
            return Err("need between 1 and k segments".into());
        }
        if self.weights.iter().any(|w| !(w.is_finite() && *w > 0.0)) {
            return Err("segment weights must be positive".into());
        }
        if !(self.gap > 0.0 && self.gap <= 0.5) {
            return Err("the gap must be in (0, 0.5]".into());
        }
        Ok(())
    }

    /// Segment `s`'s preference matrix: ranker `s` first, then the others in index order.
    pub fn matrix(&self, s: usize) -> PrefMatrix {
        let rank = |i: usize| {
            if i == s {
                0
            } else {
                1 + i - usize::from(i > s)
            }
        };
        let rows = (0..self.k)
            .map(|i| {
                (0..self.k)
                    .map(|j| match rank(i).cmp(&rank(j)) {
                        std::cmp::Ordering::Less => 0.5 + self.gap,
                        std::cmp::Ordering::Equal => 0.5,
                        std::cmp::Ordering::Greater => 0.5 - self.gap,
                    })
                    .collect()
            })
            .collect();
        PrefMatrix::from_rows(rows, None).expect("a valid matrix")
    }

    /// The whole traffic's matrix: the segments' matrices mixed by weight.
    pub fn mixture(&self) -> PrefMatrix {
        let total: f64 = self.weights.iter().sum();
        let matrices: Vec<PrefMatrix> = (0..self.weights.len()).map(|s| self.matrix(s)).collect();
        let rows = (0..self.k)
            .map(|i| {
                (0..self.k)
                    .map(|j| {
                        matrices
                            .iter()
                            .zip(&self.weights)
                            .map(|(m, w)| w * m.p(i, j))
                            .sum::<f64>()
                            / total
                    })
                    .collect()
            })
            .collect();
        PrefMatrix::from_rows(rows, None).expect("a valid mixture")
    }
}

/// One segment at the end of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentRun {
    /// Decisive comparisons in the segment.
    pub outcomes: u64,
    /// The champion of the segment's own counts.
    pub champion: Option<Arm>,
    /// Whether the segment's decision is made, and for whom (a Condorcet decision).
    pub decided: bool,
    pub decided_champion: Option<Arm>,
}

/// One run: the policy of `spec` for `steps` duels over the mixed traffic, seeded by `seed`.
/// Returns each segment's result and the champion of all traffic.
pub fn run(
    spec: &PolicySpec,
    model: &SegmentModel,
    settings: &DecisionSettings,
    steps: u64,
    seed: u64,
) -> Result<(Vec<SegmentRun>, Option<Arm>), String> {
    let mut rng = BanditRng::seed_from_u64(seed);
    let mut state = new_state(spec, model.k, &mut rng).map_err(|e| e.to_string())?;
    let matrices: Vec<PrefMatrix> = (0..model.weights.len()).map(|s| model.matrix(s)).collect();
    let total: f64 = model.weights.iter().sum();
    let mut counts: Vec<WinMatrix> = matrices.iter().map(|_| WinMatrix::new(model.k)).collect();
    for _ in 0..steps {
        let pair = state.select(&mut rng);
        let mut u = rng.random_range(0.0..total);
        let s = model
            .weights
            .iter()
            .position(|&w| {
                u -= w;
                u < 0.0
            })
            .unwrap_or(model.weights.len() - 1);
        let outcome = if pair.first == pair.second {
            Outcome::Tie
        } else if matrices[s].duel(pair.first, pair.second, &mut rng) {
            counts[s].record_win(pair.first, pair.second);
            Outcome::FirstWins
        } else {
            counts[s].record_win(pair.second, pair.first);
            Outcome::SecondWins
        };
        state
            .record(pair, outcome, &mut rng)
            .map_err(|e| e.to_string())?;
    }
    let active = vec![true; model.k];
    let segments = counts
        .iter()
        .map(|wins| {
            let view = View::new(wins, &active, TieRule::Ignore);
            let report = champion_report(&view, None, None, settings.delta);
            let decision = decide(&view, settings);
            SegmentRun {
                outcomes: (0..model.k)
                    .flat_map(|i| (0..model.k).map(move |j| (i, j)))
                    .map(|(i, j)| wins.wins(i, j) as u64)
                    .sum(),
                champion: report.ranker,
                decided: decision.decided,
                decided_champion: decision.champion,
            }
        })
        .collect();
    Ok((segments, state.champion().ranker))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> SegmentModel {
        SegmentModel {
            k: 4,
            weights: vec![0.5, 0.3, 0.2],
            gap: 0.2,
        }
    }

    #[test]
    fn each_segments_matrix_has_its_own_winner_and_the_mix_has_segment_zeros() {
        let m = model();
        for s in 0..3 {
            assert_eq!(m.matrix(s).condorcet_winner(), Some(s));
        }
        // Ranker 0 vs 1: 0.5 * 0.7 + 0.3 * 0.3 + 0.2 * 0.7 = 0.58.
        let mix = m.mixture();
        assert!((mix.p(0, 1) - 0.58).abs() < 1e-12);
        assert_eq!(mix.condorcet_winner(), Some(0));
    }

    #[test]
    fn uniform_sampling_finds_each_segments_winner() {
        // Uniform duels: the smallest segment (20% of 6,000 duels) sees each of the 6 pairs
        // about 200 times, its winner winning each at 0.7: a pair's empirical share falls
        // below 1/2 with probability below 1e-8 (Hoeffding, exp(-2 * 200 * 0.2^2)), so every
        // segment's champion is its winner, on every seed.
        let spec = PolicySpec::parse_cli("uniform").unwrap();
        let settings = DecisionSettings::default();
        for seed in 0..5 {
            let (segments, overall) = run(&spec, &model(), &settings, 6_000, seed).unwrap();
            for (s, seg) in segments.iter().enumerate() {
                assert_eq!(seg.champion, Some(s), "seed {seed}: {segments:?}");
            }
            assert_eq!(overall, Some(0));
        }
    }
}
