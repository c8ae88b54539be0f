//! The result of crediting clicks: which ranker won, certain or as probabilities.

use serde::{Deserialize, Serialize};

/// Which of the two compared rankers the clicks favour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    A,
    B,
    Tie,
}

/// Probabilities of A winning, B winning and a tie (they sum to 1). Deterministic methods put all
/// mass on one; Probabilistic interleaving spreads it over the rankers' possible assignments.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SoftOutcome {
    pub a: f64,
    pub b: f64,
    pub tie: f64,
}

impl SoftOutcome {
    pub const A: SoftOutcome = SoftOutcome {
        a: 1.0,
        b: 0.0,
        tie: 0.0,
    };
    pub const B: SoftOutcome = SoftOutcome {
        a: 0.0,
        b: 1.0,
        tie: 0.0,
    };
    pub const TIE: SoftOutcome = SoftOutcome {
        a: 0.0,
        b: 0.0,
        tie: 1.0,
    };

    /// The certain outcome of comparing two credits (more credit wins, equal is a tie).
    pub fn compare(credit_a: f64, credit_b: f64) -> SoftOutcome {
        if credit_a > credit_b {
            SoftOutcome::A
        } else if credit_b > credit_a {
            SoftOutcome::B
        } else {
            SoftOutcome::TIE
        }
    }

    /// A's share when ties count half: the quantity a preference matrix estimates.
    pub fn a_score(&self) -> f64 {
        self.a + 0.5 * self.tie
    }

    /// P(A wins) - P(B wins), in [-1, 1]: the expected outcome with A = +1, B = -1, tie = 0.
    pub fn expected(&self) -> f64 {
        self.a - self.b
    }

    /// The same judgement seen from B's side.
    pub fn swapped(&self) -> SoftOutcome {
        SoftOutcome {
            a: self.b,
            b: self.a,
            tie: self.tie,
        }
    }

    /// The more likely winner; a tie when A and B are equally likely.
    pub fn most_likely(&self) -> Outcome {
        // Marginalised probabilities are sums of products: compare with a small tolerance so that
        // a symmetric situation reads as the tie it is.
        const EPS: f64 = 1e-12;
        if self.a > self.b + EPS {
            Outcome::A
        } else if self.b > self.a + EPS {
            Outcome::B
        } else {
            Outcome::Tie
        }
    }
}
