//! Delayed conversions: two rankers shown through the service's interleaving, users who click
//! and, later, buy, and the per-metric outcomes the service would decide (`click` over all
//! clicks, `purchase` by the first purchase, `revenue` by value; a window with no purchase is a
//! tie), so that the metrics' preference estimates and their disagreement are measured.
//!
//! The conversion model: each query has a pool of documents, each with an attractiveness `a`
//! (click probability once examined), a purchase probability `q` once clicked and a price `v`.
//! Ranker `attractive` orders by `a`; ranker `buyable` by expected purchases `a q`. A user
//! examines rank r (0-based) with probability 1/(r+1), clicks an examined document with
//! probability `a`, buys a clicked one with probability `q` after an exponential delay; a
//! purchase after the metric's window is lost. Clicks favour `attractive`; purchases can favour
//! `buyable`: the two metrics may name different champions, which is what the service's
//! `metrics_agree` flags.

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp};

use crate::bandit::BanditRng;
use crate::interleave::{Method, Outcome, SoftOutcome, interleave};

/// The conversion model's parameters.
#[derive(Debug, Clone, Copy)]
pub struct ConversionModel {
    /// Documents per query.
    pub pool: usize,
    /// Documents each ranker lists (the shown list is at most twice this).
    pub list_len: usize,
    /// Mean delay from the click to the purchase, in seconds.
    pub mean_delay_secs: f64,
    /// The purchase metrics' attribution window, in seconds.
    pub window_secs: f64,
}

/// The metrics measured, in report order.
pub const METRICS: [&str; 3] = ["click", "purchase", "revenue"];
/// The two rankers, in the order they are passed to the interleaving (A, B).
pub const RANKERS: [&str; 2] = ["attractive", "buyable"];

/// One run's counts per metric: wins of A, wins of B, ties.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MetricCounts {
    pub a: u64,
    pub b: u64,
    pub ties: u64,
}

impl MetricCounts {
    fn add(&mut self, o: Outcome) {
        match o {
            Outcome::A => self.a += 1,
            Outcome::B => self.b += 1,
            Outcome::Tie => self.ties += 1,
        }
    }

    /// P(A beats B) among decided duels; `None` without any.
    pub fn preference(&self) -> Option<f64> {
        let n = self.a + self.b;
        (n > 0).then(|| self.a as f64 / n as f64)
    }
}

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct ConversionRun {
    /// Per metric, in [`METRICS`] order.
    pub counts: [MetricCounts; 3],
    pub clicks: u64,
    pub purchases: u64,
    /// Purchases after the window: never counted.
    pub purchases_lost: u64,
}

struct Doc {
    a: f64,
    q: f64,
    price: f64,
}

/// Draws a query's documents: attractiveness and purchase propensity are independent, so the
/// most attractive documents are not the most bought.
fn query<R: Rng + ?Sized>(pool: usize, rng: &mut R) -> Vec<Doc> {
    (0..pool)
        .map(|_| Doc {
            a: rng.random_range(0.05..0.6),
            q: rng.random::<f64>().powi(2) * 0.5,
            price: rng.random_range(10.0..100.0),
        })
        .collect()
}

/// The top `len` documents by `key`, best first.
fn top(docs: &[Doc], len: usize, key: impl Fn(&Doc) -> f64) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..docs.len() as u32).collect();
    ids.sort_by(|&x, &y| key(&docs[y as usize]).total_cmp(&key(&docs[x as usize])));
    ids.truncate(len);
    ids
}

fn draw<R: Rng + ?Sized>(soft: SoftOutcome, rng: &mut R) -> Outcome {
    soft.sample(rng)
}

/// One run of `duels` duels with the seed `seed`.
pub fn run(model: &ConversionModel, method: &Method, duels: u64, seed: u64) -> ConversionRun {
    let mut rng = BanditRng::seed_from_u64(seed);
    let delay = Exp::new(1.0 / model.mean_delay_secs.max(1e-9)).expect("a positive rate");
    let mut out = ConversionRun::default();
    for _ in 0..duels {
        let docs = query(model.pool, &mut rng);
        let attractive = top(&docs, model.list_len, |d| d.a);
        let buyable = top(&docs, model.list_len, |d| d.a * d.q);
        let shown = interleave(
            method,
            &[&attractive, &buyable],
            2 * model.list_len,
            &mut rng,
        )
        .expect("two lists interleave");
        let mut clicks = Vec::new();
        // (delay, position, price) of each purchase within the window.
        let mut purchases: Vec<(f64, usize, f64)> = Vec::new();
        for (rank, &doc) in shown.shown().iter().enumerate() {
            let d = &docs[doc as usize];
            if rng.random::<f64>() < d.a / (rank as f64 + 1.0) {
                clicks.push(rank);
                if rng.random::<f64>() < d.q {
                    out.purchases += 1;
                    let after = delay.sample(&mut rng);
                    if after <= model.window_secs {
                        purchases.push((after, rank, d.price));
                    } else {
                        out.purchases_lost += 1;
                    }
                }
            }
        }
        out.clicks += clicks.len() as u64;
        // click: every click, as the clicks call credits them.
        let click = draw(shown.soft_outcome(&clicks), &mut rng);
        out.counts[0].add(click);
        // purchase: the first purchase in time decides; none is a tie.
        purchases.sort_by(|x, y| x.0.total_cmp(&y.0));
        let purchase = match purchases.first() {
            Some(&(_, position, _)) => draw(shown.soft_outcome(&[position]), &mut rng),
            None => Outcome::Tie,
        };
        out.counts[1].add(purchase);
        // revenue: every purchase weighted by its price; none is a tie.
        let events: Vec<(usize, f64)> = purchases.iter().map(|&(_, p, v)| (p, v)).collect();
        let revenue = if events.is_empty() {
            Outcome::Tie
        } else {
            draw(shown.value_weighted(&events), &mut rng)
        };
        out.counts[2].add(revenue);
    }
    out
}

/// Mean and standard error of the values.
pub fn mean_stderr(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    if n == 0.0 {
        return (f64::NAN, f64::NAN);
    }
    let mean = values.iter().sum::<f64>() / n;
    if n < 2.0 {
        return (mean, f64::NAN);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(window_secs: f64) -> ConversionModel {
        ConversionModel {
            pool: 30,
            list_len: 5,
            mean_delay_secs: 3600.0,
            window_secs,
        }
    }

    #[test]
    fn clicks_favour_attractive_and_purchases_favour_buyable() {
        let method = Method::from_name("team_draft").unwrap();
        let r = run(&model(86_400.0), &method, 4_000, 5);
        let click = r.counts[0].preference().unwrap();
        let purchase = r.counts[1].preference().unwrap();
        // With 4,000 duels the standard error of each share is below 0.02: these margins are
        // many standard errors wide.
        assert!(click > 0.55, "click preference of attractive {click}");
        assert!(
            purchase < 0.45,
            "purchase preference of attractive {purchase}"
        );
        let decided: u64 = r.counts.iter().map(|c| c.a + c.b + c.ties).sum();
        assert_eq!(decided, 3 * 4_000);
    }

    #[test]
    fn a_short_window_loses_the_late_purchases() {
        let method = Method::from_name("team_draft").unwrap();
        let r = run(&model(3600.0), &method, 4_000, 6);
        // Exponential delays with the window at the mean: a share 1/e of purchases is late.
        let lost = r.purchases_lost as f64 / r.purchases as f64;
        let e = (-1.0f64).exp();
        let se = (e * (1.0 - e) / r.purchases as f64).sqrt();
        assert!(
            (lost - e).abs() < 4.0 * se,
            "lost {lost}, expected {e} +- {se}"
        );
        let ties = r.counts[1].ties;
        assert!(ties > 0);
    }
}
