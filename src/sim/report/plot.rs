//! Figures in the style of the papers: cumulative regret against steps on log-log axes with a
//! shaded standard-error band per policy, and accuracy against steps on a log x axis. Each is
//! written as SVG and PNG, drawn with the report's shared pieces (`figure.rs`). [`write_plots`]
//! writes these two and the report's other figures (`plot_decisions.rs`, `plot_users.rs`).

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::figure::{FONT, Figure, draw_curve, draw_legend, ensure_font, write_figure};
use super::summary::Summary;
use crate::sim::run::RegretKind;

/// Cumulative regret against steps, log-log, with standard-error bands.
struct RegretFigure;

impl Figure for RegretFigure {
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
        // Log axes cannot show zero: the y range starts below the smallest positive mean.
        let positive = summary
            .policies
            .iter()
            .flat_map(|p| &p.checkpoints)
            .map(|c| c.regret_mean)
            .filter(|v| *v > 0.0);
        let y_min = positive.clone().fold(f64::INFINITY, f64::min);
        let y_max = summary
            .policies
            .iter()
            .flat_map(|p| &p.checkpoints)
            .map(|c| c.regret_mean + c.regret_stderr)
            .fold(0.0, f64::max);
        let (y_min, y_max) = if y_min.is_finite() && y_max > y_min {
            (y_min / 2.0, y_max * 2.0)
        } else {
            (1e-3, 1.0)
        };
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{}: cumulative regret", summary.source_label()),
                (FONT, 24),
            )
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d((1.0..steps).log_scale(), (y_min..y_max).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("steps")
            .y_desc(match summary.policies.first().map(|p| p.regret_kind) {
                Some(RegretKind::Copeland) => "cumulative Copeland regret",
                Some(RegretKind::NdcgUtility) => "cumulative NDCG@10 regret",
                _ => "cumulative regret",
            })
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 18))
            .x_label_formatter(&|x| format!("{x:.0e}"))
            .y_label_formatter(&|y| format!("{y:.0e}"))
            .draw()
            .map_err(err)?;
        for (i, p) in summary.policies.iter().enumerate() {
            let clamp = |v: f64| v.max(y_min);
            let upper = p
                .checkpoints
                .iter()
                .map(|c| (c.step as f64, clamp(c.regret_mean + c.regret_stderr)));
            let lower = p
                .checkpoints
                .iter()
                .rev()
                .map(|c| (c.step as f64, clamp(c.regret_mean - c.regret_stderr)));
            let line = p
                .checkpoints
                .iter()
                .map(|c| (c.step as f64, clamp(c.regret_mean)))
                .collect();
            draw_curve(
                &mut chart,
                i,
                &p.policy,
                line,
                Some(upper.chain(lower).collect()),
            )?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        root.present().map_err(err)
    }
}

/// The fraction of runs whose champion is a true winner against steps (log x axis).
struct AccuracyFigure;

impl Figure for AccuracyFigure {
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
                format!("{}: accuracy of the champion", summary.source_label()),
                (FONT, 24),
            )
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d((1.0..steps).log_scale(), 0.0..1.02)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("steps")
            .y_desc("fraction of runs naming the true winner")
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 18))
            .x_label_formatter(&|x| format!("{x:.0e}"))
            .draw()
            .map_err(err)?;
        for (i, p) in summary.policies.iter().enumerate() {
            let line = p
                .checkpoints
                .iter()
                .map(|c| (c.step as f64, c.accuracy))
                .collect();
            draw_curve(&mut chart, i, &p.policy, line, None)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present().map_err(err)
    }
}

/// Writes `regret.{svg,png}`, `accuracy.{svg,png}` and `decisions.{svg,png}` into `dir`, and with
/// the users' measures of a `--letor` simulation `clicks.{svg,png}` and `ndcg.{svg,png}`; returns
/// their paths.
pub fn write_plots(summary: &Summary, dir: &Path) -> Result<Vec<PathBuf>, String> {
    ensure_font()?;
    let mut written = write_figure(&RegretFigure, summary, dir, "regret")?;
    written.extend(write_figure(&AccuracyFigure, summary, dir, "accuracy")?);
    written.extend(super::plot_decisions::write_decision_plot(summary, dir)?);
    written.extend(super::plot_users::write_user_plots(summary, dir)?);
    Ok(written)
}
