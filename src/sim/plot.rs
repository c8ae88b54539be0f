//! Figures in the style of the papers: cumulative regret against steps on log-log axes with a
//! shaded standard-error band per policy, and accuracy against steps on a log x axis. Each is
//! written as SVG and PNG.
//!
//! Text needs a font file (plotters lays out labels with ab_glyph for both formats): the first
//! that exists of `$JOUST_FONT` and the DejaVu Sans paths of common distributions. On Debian it
//! comes from the `fonts-dejavu-core` package.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::summary::Summary;

/// Where DejaVu Sans lives on Debian/Ubuntu (`fonts-dejavu-core`), Fedora and Arch.
const FONT_PATHS: [&str; 4] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

pub(super) const FONT: &str = "sans-serif";

/// Matplotlib's default colour cycle, the palette of most of the papers' figures.
pub(super) const COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

pub(super) const SIZE: (u32, u32) = (960, 640);

/// Registers the font once per process; the error says how to install one.
pub(super) fn ensure_font() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let candidates: Vec<PathBuf> = std::env::var_os("JOUST_FONT")
                .map(PathBuf::from)
                .into_iter()
                .chain(FONT_PATHS.iter().map(PathBuf::from))
                .collect();
            let path = candidates.iter().find(|p| p.is_file()).ok_or_else(|| {
                format!(
                    "no font for the plots: install DejaVu Sans (Debian: apt-get install \
                     fonts-dejavu-core) or set JOUST_FONT to a .ttf file; looked in {}",
                    FONT_PATHS.join(", ")
                )
            })?;
            let bytes = std::fs::read(path)
                .map_err(|e| format!("cannot read font {}: {e}", path.display()))?;
            // plotters keeps fonts for the life of the process; this happens once.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            plotters::style::register_font(FONT, FontStyle::Normal, bytes)
                .map_err(|_| format!("{} is not a usable TrueType font", path.display()))
        })
        .clone()
}

/// Draws the regret figure on any backend.
fn draw_regret<DB: DrawingBackend>(
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
            Some(super::regret::RegretKind::Copeland) => "cumulative Copeland regret",
            Some(super::regret::RegretKind::NdcgUtility) => "cumulative NDCG@10 regret",
            _ => "cumulative regret",
        })
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .x_label_formatter(&|x| format!("{x:.0e}"))
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .draw()
        .map_err(err)?;
    for (i, p) in summary.policies.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
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
        let band: Vec<(f64, f64)> = upper.chain(lower).collect();
        chart
            .draw_series(std::iter::once(Polygon::new(
                band,
                colour.mix(0.2).filled(),
            )))
            .map_err(err)?;
        chart
            .draw_series(LineSeries::new(
                p.checkpoints
                    .iter()
                    .map(|c| (c.step as f64, clamp(c.regret_mean))),
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
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// Draws the accuracy figure on any backend.
fn draw_accuracy<DB: DrawingBackend>(
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
        let colour = COLOURS[i % COLOURS.len()];
        chart
            .draw_series(LineSeries::new(
                p.checkpoints.iter().map(|c| (c.step as f64, c.accuracy)),
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

/// Writes `regret.svg`, `regret.png`, `accuracy.svg` and `accuracy.png` into `dir`; returns
/// their paths.
pub fn write_plots(summary: &Summary, dir: &Path) -> Result<Vec<PathBuf>, String> {
    ensure_font()?;
    let path = |name: &str| dir.join(name);
    let files = [
        path("regret.svg"),
        path("regret.png"),
        path("accuracy.svg"),
        path("accuracy.png"),
    ];
    fn context(f: &Path) -> impl FnOnce(String) -> String + '_ {
        move |e| format!("cannot draw {}: {e}", f.display())
    }
    draw_regret(
        SVGBackend::new(&files[0], SIZE).into_drawing_area(),
        summary,
    )
    .map_err(context(&files[0]))?;
    draw_regret(
        BitMapBackend::new(&files[1], SIZE).into_drawing_area(),
        summary,
    )
    .map_err(context(&files[1]))?;
    draw_accuracy(
        SVGBackend::new(&files[2], SIZE).into_drawing_area(),
        summary,
    )
    .map_err(context(&files[2]))?;
    draw_accuracy(
        BitMapBackend::new(&files[3], SIZE).into_drawing_area(),
        summary,
    )
    .map_err(context(&files[3]))?;
    let mut written = files.to_vec();
    written.extend(super::plot_users::write_user_plots(summary, dir)?);
    Ok(written)
}
