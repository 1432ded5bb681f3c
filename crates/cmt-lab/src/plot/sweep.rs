//! Figures of a sweep's reports: y (mean ± 95 % CI) against the x axis, one series per
//! combination of the other axes (usually the `group` axis).

use std::path::Path;

use super::chart::{draw, Chart, PaperMarks, Series, Style};
use super::points::report_points;
use crate::aggregate::{numeric, series_label, Aggregate};
use crate::error::LabError;
use crate::sweep::plain;
use crate::sweep::{CiMethod, Plan, PlotKind, ReportSpec};

/// A metric's axis label, in words, with its unit.
pub fn metric_label(m: &str) -> String {
    let named = match m {
        "goodput_mbps" => Some("goodput (Mbit/s)"),
        "throughput_mbps" => Some("throughput (Mbit/s)"),
        "goodput_of_bound" => Some("goodput / receive-buffer bound"),
        "timeouts" => Some("retransmission timeouts"),
        "fast_retransmits" => Some("fast retransmits"),
        "ftt_s" => Some("file transfer time (s)"),
        "rbuf_blocked_s" => Some("receive-buffer blocked time (s)"),
        "delay_ms.mean" => Some("mean one-way delay (ms)"),
        "transit_ms.mean" => Some("mean transit time (ms)"),
        "jitter_ms" => Some("jitter (ms)"),
        "reordering_latency_ms.mean" => Some("mean reordering latency (ms)"),
        "o3_tsn_peak" => Some("peak O3-TSN (TSNs)"),
        "loss_rate" => Some("packet loss rate (lost / sent DATA packets)"),
        "sent_packets" => Some("DATA packets sent"),
        "sent_bytes" => Some("user bytes sent"),
        "delivered_bytes" => Some("user bytes delivered"),
        "energy_j" => Some("radio energy (J)"),
        "energy_j_per_mb" => Some("radio energy per MB delivered (J/MB)"),
        "cost" => Some("cost of the metered paths"),
        _ => None,
    };
    if let Some(l) = named {
        return l.to_string();
    }
    // A per-path metric: the path's name and the metric in words.
    if let Some((path, field)) = m
        .strip_prefix("paths.")
        .and_then(|rest| rest.rsplit_once('.'))
    {
        let words = match field {
            "sent_bytes" => Some("user bytes sent"),
            "copy_bytes" => Some("bytes of redundant copies sent"),
            "retransmitted_bytes" => Some("bytes retransmitted"),
            "sent_packets" => Some("DATA packets sent"),
            "energy_j" => Some("radio energy (J)"),
            _ => None,
        };
        if let Some(w) = words {
            return format!("{w} on path {path}");
        }
    }
    let unit = if m.ends_with("_mbps") {
        " (Mbit/s)"
    } else if m.ends_with("_ms") || m.contains("_ms.") {
        " (ms)"
    } else if m.ends_with("_s") {
        " (s)"
    } else if m.ends_with("_bytes") {
        " (bytes)"
    } else {
        ""
    };
    format!("{m}{unit}")
}

/// An axis key in words, and the factor its numeric values are shown with (loss
/// probabilities in percent).
pub fn axis_label(key: &str) -> (String, f64) {
    let parts: Vec<&str> = key.split('.').collect();
    match parts.as_slice() {
        ["links", link, "loss"] => (format!("loss rate of link {link} (%)"), 100.0),
        ["links", link, "rate"] => (format!("rate of link {link}"), 1.0),
        ["links", link, "delay"] => (format!("delay of link {link}"), 1.0),
        ["links", link, "jitter"] => (format!("jitter of link {link}"), 1.0),
        ["receiver", "rbuf"] => ("receive buffer".into(), 1.0),
        ["file_size"] => ("file size".into(), 1.0),
        ["association", "scheduler"] => ("scheduler".into(), 1.0),
        ["association", "rtx"] => ("retransmission policy".into(), 1.0),
        ["association", "cc"] => ("congestion control".into(), 1.0),
        _ => (key.to_string(), 1.0),
    }
}

/// A report's y-axis label: the metric's, or for a report relative to a baseline, the
/// change in the metric against it.
fn y_label(r: &ReportSpec) -> String {
    let label = metric_label(&r.y);
    let Some(base) = &r.relative_to else {
        return label;
    };
    let metric = label.split(" (").next().unwrap_or(&label);
    let group = r.group.as_deref().unwrap_or("");
    let words = value_words(group, base, &r.labels).unwrap_or_else(|| base.clone());
    format!("change in {metric} against {words} (%)")
}

/// An axis value in words: as the report's `labels` table says, else an algorithm's name.
fn value_words(axis: &str, value: &str, labels: &toml::Table) -> Option<String> {
    match labels.get(value).and_then(|l| l.as_str()) {
        Some(words) => Some(words.to_string()),
        None => algorithm_words(axis, value).map(str::to_string),
    }
}

/// An algorithm's name in words, for the axes that name one; `None` for other values.
pub fn algorithm_words(axis: &str, value: &str) -> Option<&'static str> {
    let words = match (axis, value) {
        ("association.scheduler", "round-robin") => "round-robin (CMT)",
        ("association.scheduler", "round-robin-strict") => "strict round-robin",
        ("association.scheduler", "minrtt") => "minRTT",
        ("association.scheduler", "blest") => "BLEST",
        ("association.scheduler", "ecf") => "ECF",
        ("association.scheduler", "daps") => "DAPS",
        ("association.scheduler", "japs") => "JAPS",
        ("association.scheduler", "cmt-qa") => "CMT-QA*",
        ("association.scheduler", "db-cmt") => "DB-CMT's D-DSP (least queued data)",
        ("association.scheduler", "weighted") => "weighted by cwnd/SRTT",
        ("association.scheduler", "redundant") => "redundant",
        ("association.scheduler", "cmt-rev") => "CMT-Rev (PAM-rev + DDS-rev)",
        ("association.scheduler", "mptcp-rec") => "MPTCP-rec (PCDer)",
        ("association.rtx", "rtx-cwnd") => "RTX-CWND",
        ("association.rtx", "rtx-ssthresh") => "RTX-SSTHRESH",
        ("association.rtx", "rtx-csi") => "RTX_CSI",
        ("association.rtx", "rtx-asap") => "RTX-ASAP",
        ("association.rtx", "rtx-same") => "RTX-SAME",
        ("association.rtx", "rtx-lossrate") => "RTX-LOSSRATE",
        ("association.rtx", "rtx-cl") => "RTX-CL",
        ("association.cc", "reno") => "Reno",
        ("association.cc", "lia") => "LIA",
        ("association.cc", "olia") => "OLIA",
        ("association.cc", "balia") => "BALIA",
        ("association.cc", "receiver") => "receiver-driven rates",
        ("association.cc", "db-cmt") => "DB-CMT (D-DSP growth + D-FRP)",
        ("association.cc", "a-cmt") => "A-CMT (D-DSP growth)",
        ("association.cc", "cmt-qa") => "CMT-QA*",
        _ => return None,
    };
    Some(words)
}

/// A series' legend entry: the value alone when one axis makes the series ("RTX_CSI",
/// "64KB"), else "axis in words: value" pairs; loss probabilities in percent; algorithm
/// names in words, or as the report's `labels` table says.
fn legend_label(plan: &Plan, skip: &[usize], key: &[usize], labels: &toml::Table) -> String {
    let parts: Vec<(String, String)> = plan
        .axes
        .iter()
        .enumerate()
        .filter(|(a, _)| !skip.contains(a))
        .zip(key)
        .map(|((_, axis), &v)| {
            let (label, scale) = axis_label(&axis.key);
            let raw = plain(&axis.values[v]);
            let value = match (
                value_words(&axis.key, &raw, labels),
                numeric(&axis.values[v]),
            ) {
                (Some(words), _) => words,
                (None, Some(x)) if scale != 1.0 => format!("{} %", x * scale),
                _ => raw,
            };
            (label, value)
        })
        .collect();
    match parts.as_slice() {
        [(_, v)] => v.clone(),
        _ => parts
            .iter()
            .map(|(l, v)| format!("{l}: {v}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
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
                    crate::sweep::toml_text_to_json(v),
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
        let (x_label, scale) = axis_label(&r.x);
        let x_label = r.x_label.clone().unwrap_or(x_label);
        let skips = plan.report_skips(r, xi);
        let x_of = |xv: usize| {
            if categorical {
                xv as f64
            } else {
                numeric_x.as_ref().map_or(0.0, |n| n[xv] * scale)
            }
        };
        let series = report_points(plan, agg, r, xi, &x_of);
        let keys: Vec<Vec<usize>> = series.keys().cloned().collect();
        let names: Vec<String> = keys
            .iter()
            .map(|key| series_label(plan, &skips, key))
            .collect();
        let fits = if categorical || r.relative_to.is_some() {
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
            x_label,
            y_label: y_label(r),
            categories: categorical.then(|| xvals.iter().map(|v| plain(v)).collect()),
            series: series
                .into_iter()
                .map(|(key, points)| Series {
                    name: if plan.axes.len() > skips.len() {
                        legend_label(plan, &skips, &key, &r.labels)
                    } else {
                        String::new()
                    },
                    points,
                })
                .collect(),
            style,
            fits: fits
                .into_iter()
                .map(|(i, b, a)| (i, b / scale, a))
                .collect(),
            error_bars: Some(match plan.ci {
                CiMethod::T => "95 % CI (Student-t)".to_string(),
                CiMethod::Z => "95 % CI (normal)".to_string(),
            }),
            paper: paper_marks(plan, r, &skips, &keys, |text| {
                if categorical {
                    xvals.iter().position(|v| *v == text).map(|i| i as f64)
                } else {
                    numeric(text).map(|v| v * scale)
                }
            }),
        };
        draw(&chart, &dir.join(&r.name))?;
        files.push(format!("{}.png", r.name));
    }
    Ok(files)
}

/// A report's paper values as marks: x through `at_x` (values off the axis are left
/// out, as validation already refused them), the series they name found by the value of
/// the report's group axis in each series key.
fn paper_marks(
    plan: &Plan,
    r: &ReportSpec,
    skips: &[usize],
    keys: &[Vec<usize>],
    at_x: impl Fn(&str) -> Option<f64>,
) -> Vec<PaperMarks> {
    let group = r
        .group
        .as_ref()
        .and_then(|g| plan.axes.iter().position(|a| &a.key == g));
    let series_of = |name: &str| -> Option<usize> {
        let g = group?;
        let slot = (0..g).filter(|a| !skips.contains(a)).count();
        keys.iter().position(|k| {
            k.get(slot)
                .is_some_and(|&v| plain(&plan.axes[g].values[v]) == name)
        })
    };
    r.paper
        .tables()
        .iter()
        .map(|p| PaperMarks {
            label: p.label.clone(),
            series: p.series.as_deref().and_then(series_of),
            points: p
                .points
                .iter()
                .filter_map(|(x, y)| at_x(&x.to_string()).map(|x| (x, *y)))
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{axis_label, metric_label};

    #[test]
    fn axes_and_metrics_are_labelled_in_words_with_units_and_loss_in_percent() {
        assert_eq!(
            axis_label("links.s2-r3.loss"),
            ("loss rate of link s2-r3 (%)".to_string(), 100.0)
        );
        assert_eq!(axis_label("receiver.rbuf").0, "receive buffer");
        assert_eq!(axis_label("scheme").0, "scheme");
        assert_eq!(metric_label("goodput_mbps"), "goodput (Mbit/s)");
        assert_eq!(metric_label("ftt_s"), "file transfer time (s)");
        assert_eq!(
            metric_label("paths.a.cwnd_bytes"),
            "paths.a.cwnd_bytes (bytes)"
        );
        assert_eq!(metric_label("energy_j"), "radio energy (J)");
        assert_eq!(
            metric_label("paths.lte.sent_bytes"),
            "user bytes sent on path lte"
        );
    }
}
