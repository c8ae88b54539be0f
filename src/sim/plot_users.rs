//! li-2020 Figure 5's two panels for a `--letor` simulation: clicks per query on the shown list
//! and the NDCG@10 of the shown list against steps (log x axis), one line per policy with its
//! standard-error band. Written as `clicks.{svg,png}` and `ndcg.{svg,png}` when the summary has
//! the users' measures (never for `--matrix`).

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::plot::{COLOURS, FONT, SIZE, ensure_font};
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

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    summary: &Summary,
    measure: Measure,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(err)?;
    let points = |c: &Checkpoint| (measure.value)(c).filter(|m| m.mean.is_finite());
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
            format!("{}: {}", summary.source_label(), measure.title),
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
        .y_desc(measure.axis)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 16))
        .x_label_formatter(&|x| format!("{x:.0e}"))
        .draw()
        .map_err(err)?;
    for (i, p) in summary.policies.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
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
        chart
            .draw_series(std::iter::once(Polygon::new(
                band,
                colour.mix(0.2).filled(),
            )))
            .map_err(err)?;
        chart
            .draw_series(LineSeries::new(
                series.iter().map(|(x, m)| (*x, m.mean)),
                colour.stroke_width(2),
            ))
            .map_err(err)?
            .label(p.policy.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font((FONT, 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// Writes `clicks.svg`, `clicks.png`, `ndcg.svg` and `ndcg.png` into `dir` when the summary has
/// the users' measures; returns the paths written.
pub fn write_user_plots(summary: &Summary, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let measured = summary
        .policies
        .iter()
        .any(|p| p.checkpoints.iter().any(|c| c.clicks.is_some()));
    if !measured {
        return Ok(Vec::new());
    }
    ensure_font()?;
    let mut files = Vec::new();
    for measure in MEASURES {
        let svg = dir.join(format!("{}.svg", measure.file));
        let png = dir.join(format!("{}.png", measure.file));
        let context = |f: &Path| {
            let shown = f.display().to_string();
            move |e: String| format!("cannot draw {shown}: {e}")
        };
        draw(
            SVGBackend::new(&svg, SIZE).into_drawing_area(),
            summary,
            measure,
        )
        .map_err(context(&svg))?;
        draw(
            BitMapBackend::new(&png, SIZE).into_drawing_area(),
            summary,
            measure,
        )
        .map_err(context(&png))?;
        files.extend([svg, png]);
    }
    Ok(files)
}
