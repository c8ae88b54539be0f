//! Click models: simulated users who scan a shown result list and click.
//!
//! The cascade models of the online-evaluation literature, with the click and stop tables below
//! (`docs/simulation.md` shows what each does to the results): the user reads the list
//! top-down, clicks a document of relevance grade g with probability `click[g]`, and after a
//! click stops reading with probability `stop[g]`. Each of `perfect`,
//! `navigational` and `informational` comes for 5 relevance grades (0..=4, as MSLR-WEB ships) and
//! for 2 (0 = not relevant, 1 = relevant). A grade above a table's highest is read as its highest,
//! so the 2-grade models treat every positive grade as relevant.
//!
//! `random` ignores relevance: each shown document is clicked independently with probability 1/2
//! (no stopping). Interleaving methods that are fair show no preference under it.
//!
//! Names, as `--click-model` takes them: `perfect`, `navigational`, `informational` (5 grades),
//! the same with `:5` or `:2` to choose the grades explicitly (e.g. `navigational:2`), and `random`.

use rand::Rng;
use std::fmt;
use std::str::FromStr;

/// A simulated user.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClickModel {
    Cascade(Cascade),
    Random,
}

/// A cascade model: per-grade click and stop probabilities.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cascade {
    pub name: &'static str,
    pub click: &'static [f64],
    pub stop: &'static [f64],
}

const PERFECT_2: Cascade = Cascade {
    name: "perfect:2",
    click: &[0.0, 1.0],
    stop: &[0.0, 0.0],
};
const NAVIGATIONAL_2: Cascade = Cascade {
    name: "navigational:2",
    click: &[0.05, 0.95],
    stop: &[0.2, 0.9],
};
const INFORMATIONAL_2: Cascade = Cascade {
    name: "informational:2",
    click: &[0.4, 0.9],
    stop: &[0.1, 0.5],
};
const PERFECT_5: Cascade = Cascade {
    name: "perfect",
    click: &[0.0, 0.2, 0.4, 0.8, 1.0],
    stop: &[0.0; 5],
};
const NAVIGATIONAL_5: Cascade = Cascade {
    name: "navigational",
    click: &[0.05, 0.3, 0.5, 0.7, 0.95],
    stop: &[0.2, 0.3, 0.5, 0.7, 0.9],
};
const INFORMATIONAL_5: Cascade = Cascade {
    name: "informational",
    click: &[0.4, 0.6, 0.7, 0.8, 0.9],
    stop: &[0.1, 0.2, 0.3, 0.4, 0.5],
};

/// Every click model by its canonical name.
pub const CLICK_MODELS: [ClickModel; 7] = [
    ClickModel::Cascade(PERFECT_5),
    ClickModel::Cascade(NAVIGATIONAL_5),
    ClickModel::Cascade(INFORMATIONAL_5),
    ClickModel::Cascade(PERFECT_2),
    ClickModel::Cascade(NAVIGATIONAL_2),
    ClickModel::Cascade(INFORMATIONAL_2),
    ClickModel::Random,
];

impl ClickModel {
    pub fn name(&self) -> &'static str {
        match self {
            ClickModel::Cascade(c) => c.name,
            ClickModel::Random => "random",
        }
    }

    /// The expected number of clicks of one user on a list with these grades (best first):
    /// what [`Self::simulate`] clicks on average, computed without drawing.
    pub fn expected_clicks(&self, grades: impl IntoIterator<Item = u8>) -> f64 {
        match self {
            ClickModel::Random => grades.into_iter().count() as f64 / 2.0,
            ClickModel::Cascade(c) => {
                let top = c.click.len() - 1;
                // P(the user reads this position), times the click probability there.
                let (mut reads, mut clicks) = (1.0, 0.0);
                for grade in grades {
                    let g = (grade as usize).min(top);
                    clicks += reads * c.click[g];
                    reads *= 1.0 - c.click[g] * c.stop[g];
                }
                clicks
            }
        }
    }

    /// Simulates one user on a list whose documents have the given relevance grades (best
    /// first); writes the clicked positions (0-based, ascending) into `clicks`.
    pub fn simulate<R: Rng + ?Sized>(
        &self,
        grades: impl IntoIterator<Item = u8>,
        rng: &mut R,
        clicks: &mut Vec<usize>,
    ) {
        clicks.clear();
        match self {
            ClickModel::Random => {
                for (pos, _) in grades.into_iter().enumerate() {
                    if rng.random::<bool>() {
                        clicks.push(pos);
                    }
                }
            }
            ClickModel::Cascade(c) => {
                let top = c.click.len() - 1;
                for (pos, grade) in grades.into_iter().enumerate() {
                    let g = (grade as usize).min(top);
                    if rng.random::<f64>() < c.click[g] {
                        clicks.push(pos);
                        if rng.random::<f64>() < c.stop[g] {
                            break;
                        }
                    }
                }
            }
        }
    }
}

impl FromStr for ClickModel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let canonical = match s {
            "perfect:5" => "perfect",
            "navigational:5" => "navigational",
            "informational:5" => "informational",
            other => other,
        };
        CLICK_MODELS
            .iter()
            .find(|m| m.name() == canonical)
            .copied()
            .ok_or_else(|| {
                let names: Vec<&str> = CLICK_MODELS.iter().map(|m| m.name()).collect();
                format!("unknown click model '{s}'; known: {}", names.join(", "))
            })
    }
}

impl fmt::Display for ClickModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::BanditRng;
    use rand::SeedableRng;

    #[test]
    fn names_round_trip_and_aliases_resolve() {
        for m in CLICK_MODELS {
            assert_eq!(m.name().parse::<ClickModel>().unwrap(), m);
        }
        assert_eq!(
            "navigational:5".parse::<ClickModel>().unwrap().name(),
            "navigational"
        );
        assert!(
            "psychic"
                .parse::<ClickModel>()
                .unwrap_err()
                .contains("known: perfect")
        );
    }

    #[test]
    fn perfect_user_clicks_exactly_the_relevant_documents() {
        let mut rng = BanditRng::seed_from_u64(1);
        let mut clicks = Vec::new();
        let m: ClickModel = "perfect:2".parse().unwrap();
        for _ in 0..100 {
            // Grades above 1 count as relevant for the 2-grade model.
            m.simulate([0, 1, 0, 3, 1], &mut rng, &mut clicks);
            assert_eq!(clicks, [1, 3, 4]);
        }
        let m: ClickModel = "perfect".parse().unwrap();
        for _ in 0..100 {
            m.simulate([0, 4, 0, 0], &mut rng, &mut clicks);
            assert_eq!(clicks, [1]);
        }
    }

    #[test]
    fn navigational_user_stops_after_a_highly_relevant_click() {
        // After clicking a grade-4 document the user stops with probability 0.9, so a second
        // grade-4 document right below is clicked with probability
        // P(click 1st) P(no stop) P(click 2nd) + P(skip 1st) P(click 2nd)
        // = 0.95 * 0.1 * 0.95 + 0.05 * 0.95 = 0.1378.
        // Over n = 20,000 users the standard error is sqrt(0.1378 * 0.8622 / n) = 0.0024; the
        // bound 0.012 is 5 standard errors (false alarm rate below 1e-6).
        let m: ClickModel = "navigational".parse().unwrap();
        let mut rng = BanditRng::seed_from_u64(7);
        let mut clicks = Vec::new();
        let n = 20_000;
        let mut second = 0;
        for _ in 0..n {
            m.simulate([4, 4], &mut rng, &mut clicks);
            second += clicks.contains(&1) as usize;
        }
        let rate = second as f64 / n as f64;
        assert!((rate - 0.1378).abs() < 0.012, "rate {rate}");
    }

    #[test]
    fn random_user_clicks_each_document_half_the_time() {
        // 10 positions x 10,000 users: each position's click rate has standard error
        // sqrt(0.25 / 10,000) = 0.005; 0.025 is 5 standard errors.
        let mut rng = BanditRng::seed_from_u64(3);
        let mut clicks = Vec::new();
        let mut counts = [0usize; 10];
        for _ in 0..10_000 {
            ClickModel::Random.simulate([0u8; 10], &mut rng, &mut clicks);
            for &c in &clicks {
                counts[c] += 1;
            }
        }
        for c in counts {
            assert!((c as f64 / 10_000.0 - 0.5).abs() < 0.025, "{counts:?}");
        }
    }
}
