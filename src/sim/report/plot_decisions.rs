//! The decisions of a simulation: against steps (log x axis), per policy, the fraction of runs
//! decided (solid) and the fraction decided wrongly (dashed, same colour), with the default
//! delta as a grey line: the wrong fraction should stay under it. On a matrix with a Condorcet
//! winner, the oracle cost and the lower bound are dotted vertical lines (black and grey), and
//! each policy's legend gives its median and 90th-percentile decision step as ratios to the
//! oracle cost. Written as `decisions.{svg,png}`.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::decision_ratios::ratio_text;
use super::figure::{FONT, Figure, draw_curve, draw_legend, write_figure};
use super::summary::Summary;
use crate::bandit::DEFAULT_DELTA;

struct DecisionFigure;

impl Figure for DecisionFigure {
    fn draw<DB: DrawingBackend>(
        &self,
        root: DrawingArea<DB, Shift>,
        summary: &Summary,
    ) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        root.fill(&WHITE).map_err(err)?;
        let steps = summary.steps.max(2) as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "{}: decided (solid) and decided wrongly (dashed)",
                    summary.source_label()
                ),
                (FONT, 22),
            )
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d((1.0..steps).log_scale(), 0.0..1.02)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("steps")
            .y_desc("fraction of runs")
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 18))
            .x_label_formatter(&|x| format!("{x:.0e}"))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(LineSeries::new(
                [(1.0, DEFAULT_DELTA), (steps, DEFAULT_DELTA)],
                RGBColor(150, 150, 150).stroke_width(1),
            ))
            .map_err(err)?;
        // The limit of the first policy that has one (delta may differ between policies; the
        // legend's ratios are each policy's own).
        if let Some(d) = summary.policies.iter().find_map(|p| p.decision_limit) {
            for (x, colour) in [
                (d.oracle_cost, RGBColor(0, 0, 0)),
                (d.lower_bound, RGBColor(150, 150, 150)),
            ] {
                if x > 1.0 && x < steps {
                    let dots = DashedLineSeries::new([(x, 0.0), (x, 1.02)], 2, 4, colour.into());
                    chart.draw_series(dots).map_err(err)?;
                }
            }
        }
        for (i, p) in summary.policies.iter().enumerate() {
            let decided = p
                .checkpoints
                .iter()
                .map(|c| (c.step as f64, c.decided))
                .collect();
            let label = match &p.decision_limit {
                Some(d) => format!(
                    "{} (median {}, p90 {} the oracle)",
                    p.policy,
                    ratio_text(d.to_oracle.median),
                    ratio_text(d.to_oracle.p90)
                ),
                None => p.policy.clone(),
            };
            let colour = draw_curve(&mut chart, i, &label, decided, None)?;
            let wrong: Vec<(f64, f64)> = p
                .checkpoints
                .iter()
                .map(|c| (c.step as f64, c.decided_wrong))
                .collect();
            chart
                .draw_series(DashedLineSeries::new(wrong, 6, 4, colour.stroke_width(2)))
                .map_err(err)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        root.present().map_err(err)
    }
}

/// Writes `decisions.{svg,png}` into `dir`; returns their paths.
pub fn write_decision_plot(summary: &Summary, dir: &Path) -> Result<Vec<PathBuf>, String> {
    write_figure(&DecisionFigure, summary, dir, "decisions")
}
