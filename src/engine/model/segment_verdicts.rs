//! Each segment's champion report and decision, computed from the segment's own counts with the
//! experiment's decision settings through the same pure functions as the experiment's
//! (`bandit::champion_report`, `bandit::decide`). The policy learns from all traffic; a
//! segment's numbers only read it.

use crate::bandit::{Arm, ChampionReport, Decision, View, WinMatrix, champion_report, decide};

use super::snapshot::Snapshot;

/// One segment's counts, win matrix, champion report and decision.
pub struct SegmentVerdict {
    pub label: String,
    /// Decisive outcomes counted for the segment.
    pub outcomes: i64,
    pub ties: i64,
    pub wins: WinMatrix,
    pub report: ChampionReport,
    pub decision: Decision,
}

/// Every segment with any count or a known label, in index order.
pub fn segment_verdicts(s: &Snapshot) -> Vec<SegmentVerdict> {
    let counts = &s.segments;
    let k = s.names.len();
    counts
        .segments()
        .into_iter()
        .map(|seg| {
            let mut wins = WinMatrix::new(k);
            let (mut outcomes, mut ties) = (0i64, 0i64);
            for (&(g, w, l), &n) in counts.wins.range((seg, i32::MIN, i32::MIN)..) {
                if g != seg {
                    break;
                }
                wins.add_wins(w as Arm, l as Arm, n as u32);
                outcomes += n;
            }
            for (&(g, a, b), &n) in counts.ties.range((seg, i32::MIN, i32::MIN)..) {
                if g != seg {
                    break;
                }
                wins.add_ties(a as Arm, b as Arm, n as u32);
                ties += n;
            }
            let view = View::new(&wins, &s.state.active, s.state.ties);
            let settings = s.decision_settings;
            let report = champion_report(&view, None, None, settings.delta);
            let decision = decide(&view, &settings);
            SegmentVerdict {
                label: counts.label(seg),
                outcomes,
                ties,
                wins,
                report,
                decision,
            }
        })
        .collect()
}
