//! The drawing that every figure of the report shares: the font, the palette and the size, the
//! [`Figure`] trait that draws one figure on any backend, [`write_figure`] that writes it as SVG
//! and PNG, and the two pieces every curve figure draws (a policy's curve with its band, the
//! legend). The figures themselves live in `plot.rs` (regret, accuracy, and `write_plots`, which
//! writes them all), `plot_decisions.rs` and `plot_users.rs`: each of them imports this module,
//! which imports none of them, so no figure's file imports back the one that writes it.
//!
//! Text needs a font file (plotters lays out labels with ab_glyph for both formats): the first
//! that exists of `$JOUST_FONT` and the DejaVu Sans paths of common distributions. On Debian it
//! comes from the `fonts-dejavu-core` package.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::{CoordTranslate, Shift};
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
const COLOURS: [RGBColor; 10] = [
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

const SIZE: (u32, u32) = (960, 640);

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

/// A figure drawn the same way on any backend.
pub(super) trait Figure {
    fn draw<DB: DrawingBackend>(
        &self,
        root: DrawingArea<DB, Shift>,
        summary: &Summary,
    ) -> Result<(), String>
    where
        DB::ErrorType: 'static;
}

/// Writes `figure` as `STEM.svg` and `STEM.png` into `dir`; returns the two paths.
pub(super) fn write_figure(
    figure: &impl Figure,
    summary: &Summary,
    dir: &Path,
    stem: &str,
) -> Result<Vec<PathBuf>, String> {
    let svg = dir.join(format!("{stem}.svg"));
    let png = dir.join(format!("{stem}.png"));
    let context = |f: &Path| {
        let shown = f.display().to_string();
        move |e: String| format!("cannot draw {shown}: {e}")
    };
    figure
        .draw(SVGBackend::new(&svg, SIZE).into_drawing_area(), summary)
        .map_err(context(&svg))?;
    figure
        .draw(BitMapBackend::new(&png, SIZE).into_drawing_area(), summary)
        .map_err(context(&png))?;
    Ok(vec![svg, png])
}

/// One policy's curve in its colour: the mean as a line, the standard-error band shaded when
/// there is one, and its legend entry. Returns the colour.
pub(super) fn draw_curve<DB, CT>(
    chart: &mut ChartContext<'_, DB, CT>,
    policy: usize,
    label: &str,
    line: Vec<(f64, f64)>,
    band: Option<Vec<(f64, f64)>>,
) -> Result<RGBColor, String>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    CT: CoordTranslate<From = (f64, f64)>,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let colour = COLOURS[policy % COLOURS.len()];
    if let Some(band) = band {
        chart
            .draw_series(std::iter::once(Polygon::new(
                band,
                colour.mix(0.2).filled(),
            )))
            .map_err(err)?;
    }
    chart
        .draw_series(LineSeries::new(line, colour.stroke_width(2)))
        .map_err(err)?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(2)));
    Ok(colour)
}

/// The legend box at `position`.
pub(super) fn draw_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .label_font((FONT, 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}
