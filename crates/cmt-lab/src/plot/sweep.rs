//! Figures of a sweep's reports: y (mean ± 95 % CI) against the x axis, one series per
//! combination of the other axes (usually the `group` axis).

use std::collections::BTreeMap;
use std::path::Path;

use super::chart::{draw, Chart, Point, Series, Style};
use crate::aggregate::{numeric, series_label, Aggregate};
use crate::error::LabError;
use crate::results::plain;
use crate::sweep::{Plan, PlotKind};

/// A metric's axis label with its unit.
pub fn metric_label(m: &str) -> String {
    let unit = if m.ends_with("_mbps") {
        "Mbit/s"
    } else if m.ends_with("_ms") || m.contains("_ms.") {
        "ms"
    } else if m.ends_with("_s") {
        "s"
    } else if m.ends_with("_bytes") {
        "bytes"
    } else if m == "goodput_of_bound" {
        "fraction"
    } else {
        "count"
    };
    format!("{m} ({unit})")
}

/// Draws every report of the plan into `dir`; returns the file names (PNG) for the report.
pub fn plot_sweep(plan: &Plan, agg: &Aggregate, dir: &Path) -> Result<Vec<String>, LabError> {
    let mut files = Vec::new();
    for r in &plan.reports {
        let xi = plan
            .axes
            .iter()
            .position(|a| a.key == r.x)
            .expect("validated axis");
        let xvals = &plan.axes[xi].values;
        // Plain numbers go on a numeric axis; values with units ("64KB") stay categories
        // so the labels read as written.
        let numeric_x: Option<Vec<f64>> = xvals
            .iter()
            .map(|v| {
                matches!(
                    crate::results::toml_text_to_json(v),
                    serde_json::Value::Number(_)
                )
                .then(|| numeric(v))
                .flatten()
            })
            .collect();
        let style = match r.kind.unwrap_or(PlotKind::Line) {
            PlotKind::Line => Style::Lines,
            PlotKind::Bar => Style::Bars,
        };
        let categorical = numeric_x.is_none() || style == Style::Bars;
        let skips = plan.report_skips(r, xi);
        let mut series: BTreeMap<Vec<usize>, Vec<Point>> = BTreeMap::new();
        for s in agg.stats.iter().filter(|s| s.metric == r.y) {
            let Some(mean) = s.mean else { continue };
            let Some(key) = plan.report_series(r, xi, &s.point) else {
                continue;
            };
            let xv = s.point[xi];
            let x = if categorical {
                xv as f64
            } else {
                numeric_x.as_ref().map_or(0.0, |n| n[xv])
            };
            series.entry(key).or_default().push((x, mean, s.ci));
        }
        let names: Vec<String> = series
            .keys()
            .map(|key| series_label(plan, &skips, key))
            .collect();
        let fits = if categorical {
            Vec::new()
        } else {
            agg.fits
                .iter()
                .filter(|f| f.report == r.name)
                .filter_map(|f| {
                    names
                        .iter()
                        .position(|n| *n == f.series)
                        .map(|i| (i, f.fit.slope, f.fit.intercept))
                })
                .collect()
        };
        let chart = Chart {
            title: r
                .title
                .clone()
                .unwrap_or_else(|| format!("{} vs {}", r.y, r.x)),
            x_label: r.x.clone(),
            y_label: metric_label(&r.y),
            categories: categorical.then(|| xvals.iter().map(|v| plain(v)).collect()),
            series: series
                .into_iter()
                .map(|(key, points)| Series {
                    name: if plan.axes.len() > skips.len() {
                        series_label(plan, &skips, &key)
                    } else {
                        String::new()
                    },
                    points,
                })
                .collect(),
            style,
            fits,
        };
        draw(&chart, &dir.join(&r.name))?;
        files.push(format!("{}.png", r.name));
    }
    Ok(files)
}
