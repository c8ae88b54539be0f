//! li-2020 Figure 5's two panels for a `--letor` simulation: clicks per query on the shown list
//! and the NDCG@10 of the shown list against steps (log x axis), one line per policy with its
//! standard-error band. Written as `clicks.{svg,png}` and `ndcg.{svg,png}` when the summary has
//! the users' measures (never for `--matrix`).

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::figure::{FONT, Figure, draw_curve, draw_legend, write_figure};
use super::summary::{Checkpoint, MeanSe, Summary};

/// One of the two measures.
#[derive(Clone, Copy)]
struct Measure {
    file: &'static str,
    title: &'static str,
    axis: &'static str,
    value: fn(&Checkpoint) -> Option<MeanSe>,
}

const MEASURES: [Measure; 2] = [
    Measure {
        file: "clicks",
        title: "clicks per query on the shown list",
        axis: "clicks per query (window since the previous checkpoint)",
        value: |c| c.clicks,
    },
    Measure {
        file: "ndcg",
        title: "NDCG@10 of the shown list",
        axis: "NDCG@10 (window since the previous checkpoint)",
        value: |c| c.shown_ndcg,
    },
];

impl Figure for Measure {
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
        let points = |c: &Checkpoint| (self.value)(c).filter(|m| m.mean.is_finite());
        let values: Vec<MeanSe> = summary
            .policies
            .iter()
            .flat_map(|p| p.checkpoints.iter().filter_map(points))
            .collect();
        let low = values
            .iter()
            .map(|m| m.mean - m.stderr)
            .fold(f64::INFINITY, f64::min);
        let high = values
            .iter()
            .map(|m| m.mean + m.stderr)
            .fold(f64::NEG_INFINITY, f64::max);
        let pad = ((high - low) * 0.05).max(1e-3);
        let steps = summary.steps.max(2) as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{}: {}", summary.source_label(), self.title),
                (FONT, 24),
            )
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d((1.0..steps).log_scale(), (low - pad)..(high + pad))
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("steps")
            .y_desc(self.axis)
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 16))
            .x_label_formatter(&|x| format!("{x:.0e}"))
            .draw()
            .map_err(err)?;
        for (i, p) in summary.policies.iter().enumerate() {
            let series: Vec<(f64, MeanSe)> = p
                .checkpoints
                .iter()
                .filter_map(|c| points(c).map(|m| (c.step as f64, m)))
                .collect();
            let band: Vec<(f64, f64)> = series
                .iter()
                .map(|(x, m)| (*x, m.mean + m.stderr))
                .chain(series.iter().rev().map(|(x, m)| (*x, m.mean - m.stderr)))
                .collect();
            let line = series.iter().map(|(x, m)| (*x, m.mean)).collect();
            draw_curve(&mut chart, i, &p.policy, line, Some(band))?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present().map_err(err)
    }
}

/// Writes `clicks.svg`, `clicks.png`, `ndcg.svg` and `ndcg.png` into `dir` when the summary has
/// the users' measures; returns the paths written. The font is registered by the caller.
pub(super) fn write_user_plots(summary: &Summary, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let measured = summary
        .policies
        .iter()
        .any(|p| p.checkpoints.iter().any(|c| c.clicks.is_some()));
    if !measured {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for measure in MEASURES {
        files.extend(write_figure(&measure, summary, dir, measure.file)?);
    }
    Ok(files)
}
