//! The result of crediting clicks: which ranker won, certain or as probabilities.

use rand::Rng;
use serde::{Deserialize, Serialize};

/// Credits and probabilities closer than this are equal. They are sums of products and of
/// inverse ranks, so two equal quantities computed along different paths can differ in their
/// last bits (Optimized: 1 + 1/2 + 1/3 + 1/4 = 2.0833333333333335 one way, 2.083333333333333 the
/// other); reading that as a win would name a winner where there is none.
pub const TIE_TOLERANCE: f64 = 1e-12;

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

    /// The certain outcome of comparing two credits (more credit wins, equal within
    /// [`TIE_TOLERANCE`] is a tie).
    pub fn compare(credit_a: f64, credit_b: f64) -> SoftOutcome {
        if credit_a > credit_b + TIE_TOLERANCE {
            SoftOutcome::A
        } else if credit_b > credit_a + TIE_TOLERANCE {
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
        if self.a > self.b + TIE_TOLERANCE {
            Outcome::A
        } else if self.b > self.a + TIE_TOLERANCE {
            Outcome::B
        } else {
            Outcome::Tie
        }
    }

    /// One outcome drawn with these probabilities: A wins, B wins and a tie as often as the
    /// judgement says, so the recorded outcomes average to it. Unlike [`Self::most_likely`],
    /// which turns 0.6 / 0.4 into a certain win, this keeps a method that is fair on average
    /// fair in what is recorded. A certain outcome uses no randomness.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Outcome {
        if self.a >= 1.0 {
            Outcome::A
        } else if self.b >= 1.0 {
            Outcome::B
        } else if self.tie >= 1.0 {
            Outcome::Tie
        } else {
            let u: f64 = rng.random();
            if u < self.a {
                Outcome::A
            } else if u < self.a + self.b {
                Outcome::B
            } else {
                Outcome::Tie
            }
        }
    }
}
