//! One chart shape serves every figure: x–y series drawn as lines or grouped bars,
//! with optional 95 % CI error bars, over a numeric or a categorical x axis. Each
//! figure is written as SVG and PNG. Text uses the embedded DejaVu Sans, so no system
//! font is needed.

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::LabError;

/// A point: x, y, and the half-width of its 95 % CI if any.
pub type Point = (f64, f64, Option<f64>);

/// One series of points.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Points in x order.
    pub points: Vec<Point>,
}

/// How the series are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Lines with markers.
    Lines,
    /// Grouped bars (x values are category indexes).
    Bars,
}

/// A figure.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Title.
    pub title: String,
    /// x-axis label, with unit.
    pub x_label: String,
    /// y-axis label, with unit.
    pub y_label: String,
    /// Names of categories when x is categorical (x = 0, 1, …).
    pub categories: Option<Vec<String>>,
    /// Series.
    pub series: Vec<Series>,
    /// Lines or bars.
    pub style: Style,
    /// Least-squares lines `(series index, slope, intercept)`, drawn dashed.
    pub fits: Vec<(usize, f64, f64)>,
}

const SIZE: (u32, u32) = (960, 600);

/// Tableau 10: distinguishable, print-safe colours on white.
const PALETTE: [RGBColor; 10] = [
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

/// A tick label: at most three decimals, trailing zeros dropped ("0.5", "20", "1.25").
fn tick(x: f64) -> String {
    let s = if x.abs() >= 1000.0 || x == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}
static FONT: Once = Once::new();

fn register_font() {
    FONT.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../../assets/DejaVuSans.ttf");
        // The bytes are a valid TrueType font shipped with the crate.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, bytes);
    });
}

/// Writes `<stem>.svg` and `<stem>.png`.
pub fn draw(chart: &Chart, stem: &Path) -> Result<(), LabError> {
    register_font();
    let label = stem.display().to_string();
    let svg = stem.with_extension("svg");
    let png = stem.with_extension("png");
    render(chart, SVGBackend::new(&svg, SIZE).into_drawing_area())
        .map_err(|e| LabError::at(&label, e))?;
    render(chart, BitMapBackend::new(&png, SIZE).into_drawing_area())
        .map_err(|e| LabError::at(&label, e))?;
    Ok(())
}

fn bounds(chart: &Chart) -> (f64, f64, f64, f64) {
    let pts = chart.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, 0.0f64, f64::MIN);
    for &(x, y, e) in pts {
        let e = e.unwrap_or(0.0);
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y - e);
        y1 = y1.max(y + e);
    }
    if x0 > x1 {
        (x0, x1, y1) = (0.0, 1.0, 1.0);
    }
    if chart.categories.is_some() || chart.style == Style::Bars {
        (x0, x1) = (x0 - 0.5, x1 + 0.5);
    } else if x0 == x1 {
        (x0, x1) = (x0 - 1.0, x1 + 1.0);
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    (x0, x1, y0, y1 + 0.08 * (y1 - y0))
}

fn render<DB: DrawingBackend>(chart: &Chart, root: DrawingArea<DB, Shift>) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let (x0, x1, y0, y1) = bounds(chart);
    let mut c = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", 24))
        .margin(18)
        .x_label_area_size(55)
        .y_label_area_size(80)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(e)?;
    let cats = chart.categories.clone();
    let fmt_x = move |x: &f64| match &cats {
        Some(names) => {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                names.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        }
        None => tick(*x),
    };
    let mut mesh = c.configure_mesh();
    mesh.x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .axis_desc_style(("sans-serif", 18))
        .label_style(("sans-serif", 15))
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&|y| tick(*y));
    if let Some(names) = &chart.categories {
        mesh.x_labels(names.len() * 2 + 1);
    }
    mesh.draw().map_err(e)?;
    let n = chart.series.len().max(1) as f64;
    for (i, s) in chart.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        for &(_, b, a) in chart.fits.iter().filter(|f| f.0 == i) {
            let ends = [(x0, b * x0 + a), (x1, b * x1 + a)];
            c.draw_series(DashedLineSeries::new(ends, 8, 6, color.stroke_width(1)))
                .map_err(e)?;
        }
        let name = s.name.clone();
        let legend =
            move |(x, y): (i32, i32)| Rectangle::new([(x, y - 6), (x + 18, y + 6)], color.filled());
        match chart.style {
            Style::Lines => {
                c.draw_series(s.points.iter().filter_map(|p| {
                    p.2.map(|h| {
                        ErrorBar::new_vertical(
                            p.0,
                            p.1 - h,
                            p.1,
                            p.1 + h,
                            color.stroke_width(2),
                            10,
                        )
                    })
                }))
                .map_err(e)?;
                if s.points.len() <= 40 {
                    c.draw_series(
                        s.points
                            .iter()
                            .map(|p| Circle::new((p.0, p.1), 4, color.filled())),
                    )
                    .map_err(e)?;
                }
                let width = if s.points.len() <= 40 { 2 } else { 1 };
                let line = LineSeries::new(
                    s.points.iter().map(|p| (p.0, p.1)),
                    color.stroke_width(width),
                );
                c.draw_series(line).map_err(e)?.label(name).legend(legend);
            }
            Style::Bars => {
                let w = 0.8 / n;
                let off = -0.4 + w * (i as f64 + 0.5);
                let bars = s.points.iter().map(|p| {
                    Rectangle::new(
                        [(p.0 + off - w * 0.45, 0.0), (p.0 + off + w * 0.45, p.1)],
                        color.filled(),
                    )
                });
                c.draw_series(bars).map_err(e)?.label(name).legend(legend);
                c.draw_series(s.points.iter().filter_map(|p| {
                    p.2.map(|h| {
                        ErrorBar::new_vertical(
                            p.0 + off,
                            p.1 - h,
                            p.1,
                            p.1 + h,
                            BLACK.stroke_width(2),
                            10,
                        )
                    })
                }))
                .map_err(e)?;
            }
        }
    }
    if chart.series.len() > 1 || chart.series.first().is_some_and(|s| !s.name.is_empty()) {
        c.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 16))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(e)?;
    }
    root.present().map_err(e)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::tick;

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick(0.5), "0.5");
        assert_eq!(tick(20.0), "20");
        assert_eq!(tick(1.25), "1.25");
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(65536.0), "65536");
        assert_eq!(tick(-0.0001), "0");
    }
}
