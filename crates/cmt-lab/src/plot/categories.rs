//! Category names under the x axis of a chart. Each name sits centred under its slot;
//! when the widest does not fit one slot, names are wrapped to the width of two slots
//! and set on two alternating rows, so that no two overlap.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::wrap::wrap;

/// Height of the label area under the x axis when names take two rows, pixels.
pub(super) const CROWDED_AREA: u32 = 118;

const FONT_PX: u32 = 15;
/// Vertical distance between the two rows of names, pixels.
const ROW: i32 = 40;

/// Whether `names` need two rows in a plot area `plot_px` wide (the y axis's labels
/// and the margins taken off).
pub(super) fn crowded<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    names: &[String],
    plot_px: f64,
) -> bool {
    let font: TextStyle<'_> = ("sans-serif", FONT_PX).into_font().into();
    let slot = plot_px / names.len().max(1) as f64;
    names.iter().any(|n| {
        area.estimate_text_size(n, &font)
            .map_or(0.0, |(w, _)| w as f64)
            > slot - 6.0
    })
}

/// Draws the names under the axis of `c` (whose lowest y is `y0`), on two alternating
/// rows, each wrapped to two slots' width; `base` is the pixel origin of `area`, the
/// area the chart was built on.
pub(super) fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    c: &ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    names: &[String],
    y0: f64,
    base: (i32, i32),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let font: TextStyle<'_> = ("sans-serif", FONT_PX).into_font().into();
    let left = c.backend_coord(&(0.0, y0)).0;
    let right = c
        .backend_coord(&(names.len().saturating_sub(1) as f64, y0))
        .0;
    let slot = if names.len() > 1 {
        (right - left) as f64 / (names.len() - 1) as f64
    } else {
        200.0
    };
    // Characters of two slots, at the font's average width (a little over half its size).
    let chars = ((2.0 * slot - 8.0) / (FONT_PX as f64 * 0.55)).max(4.0) as usize;
    for (i, name) in names.iter().enumerate() {
        let (x, y) = c.backend_coord(&(i as f64, y0));
        let top = y - base.1 + 8 + ROW * (i % 2) as i32;
        for (k, line) in wrap(name, chars).iter().enumerate() {
            let w = area.estimate_text_size(line, &font)?.0 as i32;
            area.draw(&Text::new(
                line.clone(),
                (x - base.0 - w / 2, top + 17 * k as i32),
                font.clone(),
            ))?;
        }
    }
    Ok(())
}
