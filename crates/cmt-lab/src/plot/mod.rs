//! Figures, written offline as SVG and PNG: sweep reports (x–y lines with CI error bars,
//! grouped bars with CI) and single-run time series (goodput per path, cwnd, O3-TSN,
//! receive-buffer occupancy).

mod categories;
mod chart;
mod points;
mod run;
mod sweep;
mod wrap;

pub use chart::{draw, Chart, Point, Series, Style};
pub use run::plot_run;
pub use sweep::plot_sweep;
