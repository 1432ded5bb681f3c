//! One chart shape serves every figure: x–y series drawn as lines or grouped bars,
//! with optional 95 % CI error bars, over a numeric or a categorical x axis. Each
//! figure is written as SVG and PNG. Text uses the embedded DejaVu Sans, so no system
//! font is needed.
//!
//! Readability rules: the legend sits in its own panel right of the plot, never over
//! data; each series has its own colour, marker shape and dash pattern, and series
//! that share an x value are drawn side by side (a small horizontal offset), so two
//! identical series stay visible; the panel says what the error bars and dashed fits
//! are; values a paper prints are drawn as crosses, in the colour of the series they
//! belong to (on its bar in a bar chart) or black.

use std::path::Path;
use std::sync::Once;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::wrap::wrap;
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
    /// What the error bars are (e.g. "95 % CI, Student-t"), shown under the legend.
    pub error_bars: Option<String>,
    /// Values the paper prints, drawn as crosses, each set with its legend label.
    pub paper: Vec<PaperMarks>,
}

/// Values a paper prints: crosses in the colour of the series they belong to, or black.
#[derive(Clone, Debug)]
pub struct PaperMarks {
    /// Legend label.
    pub label: String,
    /// Index of the series whose colour the crosses take; black when none.
    pub series: Option<usize>,
    /// `(x, y)` points.
    pub points: Vec<(f64, f64)>,
}

impl PaperMarks {
    /// The crosses' colour: black on bars (a cross in the bar's own colour would vanish
    /// on it), else the series' colour, black when the values belong to none.
    fn color(&self, style: Style) -> RGBColor {
        match (style, self.series) {
            (Style::Bars, _) | (_, None) => BLACK,
            (_, Some(i)) => PALETTE[i % PALETTE.len()],
        }
    }

    /// Horizontal offset of the crosses: on bars, a series' values sit on its own bar
    /// (`n` series side by side in 0.8 of a category's width).
    fn offset(&self, style: Style, n: f64) -> f64 {
        match (style, self.series) {
            (Style::Bars, Some(i)) => -0.4 + 0.8 / n * (i as f64 + 0.5),
            _ => 0.0,
        }
    }
}

/// Width of the legend panel, pixels.
const LEGEND_W: u32 = 280;

/// Characters per line of a legend entry (15-pixel DejaVu Sans in the panel's width).
const LEGEND_CHARS: usize = 28;

const SIZE: (u32, u32) = (1100, 600);

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
    let paper = chart
        .paper
        .iter()
        .flat_map(|p| p.points.iter().map(|&(x, y)| (x, y, None)));
    let all: Vec<Point> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .chain(paper)
        .collect();
    let pts = all.iter();
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
    } else {
        // Room for the markers (and their side-by-side offsets) at both ends.
        let pad = 0.04 * (x1 - x0);
        (x0, x1) = (x0 - pad, x1 + pad);
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    (x0, x1, y0, y1 + 0.08 * (y1 - y0))
}

/// Marker shape of series `i` (circle, triangle, square, diamond, cross, repeating).
fn marker<DB: DrawingBackend>(
    i: usize,
    at: (i32, i32),
    color: RGBColor,
) -> DynElement<'static, DB, (i32, i32)> {
    let s = 5;
    let style = color.filled();
    match i % 5 {
        0 => Circle::new(at, s, style).into_dyn(),
        1 => TriangleMarker::new(at, s + 1, style).into_dyn(),
        2 => Rectangle::new([(at.0 - s, at.1 - s), (at.0 + s, at.1 + s)], style).into_dyn(),
        3 => Polygon::new(
            vec![
                (at.0, at.1 - s - 1),
                (at.0 + s + 1, at.1),
                (at.0, at.1 + s + 1),
                (at.0 - s - 1, at.1),
            ],
            style,
        )
        .into_dyn(),
        _ => Cross::new(at, s, color.stroke_width(2)).into_dyn(),
    }
}

/// Dash pattern of series `i`: solid, long dashes, short dashes, shifted by one every
/// ten series, so series that share a colour (i and i + 10) differ in dash.
fn dash(i: usize) -> Option<(u32, u32)> {
    match (i + i / 10) % 3 {
        0 => None,
        1 => Some((10, 5)),
        _ => Some((3, 4)),
    }
}

/// Whether the chart has anything for a legend panel: named series, the paper's values,
/// error bars or fits to explain.
fn has_legend(chart: &Chart) -> bool {
    chart.series.iter().any(|s| !s.name.is_empty())
        || !chart.paper.is_empty()
        || chart.error_bars.is_some()
        || !chart.fits.is_empty()
}

fn render<DB: DrawingBackend>(chart: &Chart, root: DrawingArea<DB, Shift>) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let legend = has_legend(chart);
    let (plot, panel) = root.split_horizontally(SIZE.0 - if legend { LEGEND_W } else { 0 });
    let plot = draw_title(&chart.title, &plot).map_err(e)?;
    let (x0, x1, y0, y1) = bounds(chart);
    let plot_px = plot.dim_in_pixel().0 as f64 - 80.0 - 36.0;
    let crowded = chart
        .categories
        .as_ref()
        .is_some_and(|names| super::categories::crowded(&plot, names, plot_px));
    let label_area = if crowded {
        super::categories::CROWDED_AREA
    } else {
        55
    };
    let mut c = ChartBuilder::on(&plot)
        .margin(18)
        .x_label_area_size(label_area)
        .y_label_area_size(80)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(e)?;
    draw_mesh(chart, &mut c, crowded).map_err(e)?;
    // Markers are drawn on the plot area, whose origin sits below the title: backend
    // coordinates are made relative to it.
    let base = plot.get_base_pixel();
    let local = |(x, y): (i32, i32)| (x - base.0, y - base.1);
    let n = chart.series.len().max(1) as f64;
    // Side-by-side offset of series at the same x: 0.8 % of the x range per series.
    let dodge = |i: usize| (i as f64 - (n - 1.0) / 2.0) * 0.008 * (x1 - x0);
    for (i, s) in chart.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        for &(_, b, a) in chart.fits.iter().filter(|f| f.0 == i) {
            let ends = [(x0, b * x0 + a), (x1, b * x1 + a)];
            c.draw_series(DashedLineSeries::new(ends, 8, 6, color.stroke_width(1)))
                .map_err(e)?;
        }
        match chart.style {
            Style::Lines => {
                let sparse = s.points.len() <= 40;
                let dx = if sparse { dodge(i) } else { 0.0 };
                let pts: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0 + dx, p.1)).collect();
                c.draw_series(s.points.iter().filter_map(|p| {
                    p.2.map(|h| {
                        ErrorBar::new_vertical(
                            p.0 + dx,
                            p.1 - h,
                            p.1,
                            p.1 + h,
                            color.stroke_width(2),
                            10,
                        )
                    })
                }))
                .map_err(e)?;
                let width = if sparse { 2 } else { 1 };
                let style = color.stroke_width(width);
                match dash(i) {
                    None => {
                        c.draw_series(LineSeries::new(pts.clone(), style))
                            .map_err(e)?;
                    }
                    Some((on, off)) => {
                        c.draw_series(DashedLineSeries::new(pts.clone(), on, off, style))
                            .map_err(e)?;
                    }
                }
                if sparse {
                    let at: Vec<(f64, f64)> = pts.clone();
                    for p in at {
                        let px = local(c.backend_coord(&p));
                        plot.draw(&marker::<DB>(i, px, color)).map_err(e)?;
                    }
                }
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
                c.draw_series(bars).map_err(e)?;
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
    if let (true, Some(names)) = (crowded, &chart.categories) {
        super::categories::draw(&plot, &c, names, y0, base).map_err(e)?;
    }
    draw_paper_marks(chart, &c, &plot, base, (x0, x1)).map_err(e)?;
    if legend {
        draw_legend(chart, &panel).map_err(e)?;
    }
    root.present().map_err(e)?;
    Ok(())
}

/// The values a paper prints, as crosses with a white halo over the data. On lines, a
/// series' values sit beside the others' (2 % of the x range apart), so values several
/// series have at one x stay apart; on bars, on their series' bar.
fn draw_paper_marks<DB: DrawingBackend>(
    chart: &Chart,
    c: &ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    plot: &DrawingArea<DB, Shift>,
    base: (i32, i32),
    (x0, x1): (f64, f64),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let n = chart.series.len().max(1) as f64;
    for marks in &chart.paper {
        let dx = match (chart.style, marks.series) {
            (Style::Lines, Some(i)) => (i as f64 - (n - 1.0) / 2.0) * 0.02 * (x1 - x0),
            _ => marks.offset(chart.style, n),
        };
        let color = marks.color(chart.style);
        for p in &marks.points {
            let (x, y) = c.backend_coord(&(p.0 + dx, p.1));
            let px = (x - base.0, y - base.1);
            plot.draw(&Cross::new(px, 8, WHITE.stroke_width(6)))?;
            plot.draw(&Cross::new(px, 7, color.stroke_width(3)))?;
        }
    }
    Ok(())
}

/// Axes, ticks and their labels; category names on the x axis of a bar chart, unless
/// they are `crowded` (then [`super::categories::draw`] sets them).
fn draw_mesh<DB: DrawingBackend>(
    chart: &Chart,
    c: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    crowded: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let cats = chart.categories.clone().filter(|_| !crowded);
    let blank = crowded;
    let fmt_x = move |x: &f64| match &cats {
        _ if blank => String::new(),
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
    mesh.draw()
}

/// The title, centred and wrapped to the plot's width (never clipped); returns the area
/// left below it.
fn draw_title<DB: DrawingBackend>(
    title: &str,
    plot: &DrawingArea<DB, Shift>,
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    let font: TextStyle<'_> = ("sans-serif", 22).into_font().into();
    let width = plot.dim_in_pixel().0 as i32 - 36;
    // Narrow the line until the widest one fits, as measured in the font.
    let mut max = 80;
    let lines = loop {
        let lines = wrap(title, max);
        let widest = lines
            .iter()
            .map(|l| {
                plot.estimate_text_size(l, &font)
                    .map_or(0, |(w, _)| w as i32)
            })
            .max()
            .unwrap_or(0);
        if widest <= width || max <= 20 {
            break lines;
        }
        max -= 4;
    };
    let line_h = 28;
    for (i, line) in lines.iter().enumerate() {
        let w = plot.estimate_text_size(line, &font)?.0 as i32;
        let x = (plot.dim_in_pixel().0 as i32 - w) / 2;
        plot.draw(&Text::new(
            line.clone(),
            (x, 12 + line_h * i as i32),
            font.clone(),
        ))?;
    }
    let top = 12 + line_h as u32 * lines.len() as u32;
    Ok(plot.split_vertically(top).1)
}

/// A legend entry's words beside its symbol at row `y`, wrapped to the panel; returns
/// the next entry's row.
fn legend_words<DB: DrawingBackend>(
    panel: &DrawingArea<DB, Shift>,
    words: &str,
    mut y: i32,
) -> Result<i32, DrawingAreaErrorKind<DB::ErrorType>> {
    let font = ("sans-serif", 15).into_font();
    for line in wrap(words, LEGEND_CHARS) {
        panel.draw(&Text::new(line, (46, y - 8), font.clone()))?;
        y += 18;
    }
    Ok(y + 6)
}

/// The legend panel: one row per series (colour, dash and marker as drawn), the paper's
/// values, then what the error bars and dashed lines are.
fn draw_legend<DB: DrawingBackend>(
    chart: &Chart,
    panel: &DrawingArea<DB, Shift>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let small = ("sans-serif", 13).into_font();
    let mut y = 40;
    let named = chart.series.len() > 1 || chart.series.iter().any(|s| !s.name.is_empty());
    for (i, s) in chart.series.iter().enumerate().filter(|_| named) {
        let color = PALETTE[i % PALETTE.len()];
        match chart.style {
            Style::Bars => {
                panel.draw(&Rectangle::new([(8, y - 6), (38, y + 6)], color.filled()))?
            }
            Style::Lines => {
                let seg = [(8, y), (38, y)];
                match dash(i) {
                    None => panel.draw(&PathElement::new(seg, color.stroke_width(2)))?,
                    Some((on, off)) => {
                        let (on, off) = (on as i32, off as i32);
                        let mut x = 8;
                        while x < 38 {
                            let end = (x + on).min(38);
                            panel.draw(&PathElement::new(
                                [(x, y), (end, y)],
                                color.stroke_width(2),
                            ))?;
                            x = end + off;
                        }
                    }
                }
                panel.draw(&marker::<DB>(i, (23, y), color))?;
            }
        }
        y = legend_words(panel, &s.name, y)?;
    }
    for marks in &chart.paper {
        let color = marks.color(chart.style);
        panel.draw(&Cross::new((23, y), 7, color.stroke_width(3)))?;
        y = legend_words(panel, &marks.label, y)?;
    }
    y += 8;
    let mut notes = Vec::new();
    if let Some(eb) = &chart.error_bars {
        notes.push(format!("error bars: {eb}"));
    }
    if !chart.fits.is_empty() {
        notes.push("thin dashed: least-squares fit".to_string());
    }
    for note in notes {
        panel.draw(&Text::new(note, (8, y), small.clone()))?;
        y += 20;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{dash, render, tick, wrap, Chart, Series, Style, PALETTE, SIZE};
    use plotters::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn long_titles_and_labels_wrap_at_word_boundaries_without_losing_words() {
        let text = "Fig. 10: average FTT vs file size on the CASE-1 paths with PLR 2 % / 10 %, \
                    twenty runs per point, least-squares lines";
        let lines = wrap(text, 28);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| l.chars().count() <= 28), "{lines:?}");
        assert_eq!(
            lines.join(" "),
            text.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }

    #[test]
    fn a_title_wider_than_the_plot_is_drawn_on_several_lines_inside_it() {
        super::register_font();
        let title = "word ".repeat(60);
        let chart = Chart {
            title: title.clone(),
            x_label: "x".into(),
            y_label: "y".into(),
            categories: None,
            series: vec![Series {
                name: "s".into(),
                points: vec![(0.0, 1.0, None), (1.0, 2.0, None)],
            }],
            style: Style::Lines,
            fits: Vec::new(),
            error_bars: None,
            paper: Vec::new(),
        };
        let mut svg = String::new();
        render(
            &chart,
            SVGBackend::with_string(&mut svg, SIZE).into_drawing_area(),
        )
        .unwrap();
        // Title lines are the <text> elements made only of the word "word".
        let lines: Vec<&str> = svg
            .split("<text")
            .skip(1)
            .filter(|t| {
                let body = t
                    .split('>')
                    .nth(1)
                    .unwrap_or("")
                    .split('<')
                    .next()
                    .unwrap_or("");
                !body.is_empty() && body.split_whitespace().all(|w| w == "word")
            })
            .collect();
        assert!(
            lines.len() >= 2,
            "one line cannot hold 60 words: {}",
            lines.len()
        );
        let words: usize = lines
            .iter()
            .map(|t| {
                t.split('>')
                    .nth(1)
                    .unwrap()
                    .split('<')
                    .next()
                    .unwrap()
                    .split_whitespace()
                    .count()
            })
            .sum();
        assert_eq!(words, 60, "every word of the title is drawn");
        for t in &lines {
            let x: f64 = t
                .split("x=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(x >= 0.0, "a title line starts left of the figure: {t}");
        }
    }

    #[test]
    fn series_differ_in_marker_and_dash_as_well_as_colour() {
        // Two series that coincide must still be told apart without colour: within any
        // five consecutive series the markers differ, and no two of the first 30 share
        // colour, marker and dash at once.
        let style = |i: usize| {
            let c = PALETTE[i % PALETTE.len()];
            ((c.0, c.1, c.2), i % 5, dash(i))
        };
        let all: BTreeSet<_> = (0..30).map(style).collect();
        assert_eq!(all.len(), 30);
        for i in 0..30 {
            assert_ne!(
                dash(i),
                dash(i + 1),
                "neighbours {i} and {} share a dash",
                i + 1
            );
        }
    }

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
