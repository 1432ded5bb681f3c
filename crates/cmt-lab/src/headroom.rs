//! How far from the best possible: for each scenario of a sweep (its grid points with the
//! algorithm axes left out), the best configuration's goodput as a fraction of the
//! congestion-control-aware bound (docs/metrics.md), with the receive-buffer bound's
//! fraction beside it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::error::LabError;
use crate::results::read_run;
use crate::stats::{ci95_half_width, mean};
use crate::sweep::Plan;

/// The best configuration of one scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Headroom {
    /// The scenario's axis values (`key=value, …`; empty when every axis is an algorithm).
    pub scenario: String,
    /// The algorithm axis values of the best configuration (highest mean goodput).
    pub best: String,
    /// Its congestion control.
    pub cc: String,
    /// Its mean goodput, Mbit/s.
    pub goodput_mbps: f64,
    /// Mean congestion-control-aware bound over its runs, Mbit/s.
    pub cc_bound_mbps: f64,
    /// Mean per-run fraction of that bound, with its 95 % CI half-width.
    pub of_cc_bound: (f64, Option<f64>),
    /// Mean per-run fraction of the receive-buffer bound.
    pub of_rbuf_bound: f64,
    /// Runs behind the numbers.
    pub n: usize,
}

/// Whether axis `a` chooses algorithms rather than the network or the workload: a key
/// under `association.`, or a variant axis whose overrides all are.
fn is_algorithm_axis(plan: &Plan, a: usize) -> bool {
    let axis = &plan.axes[a];
    if axis.variants.is_empty() {
        return axis.key.starts_with("association.");
    }
    axis.variants
        .iter()
        .flatten()
        .all(|o| o.starts_with("association."))
}

/// `key=value` labels of the axes `which` of `point`.
fn label(plan: &Plan, point: &[usize], which: &[usize]) -> String {
    which
        .iter()
        .map(|&a| {
            format!(
                "{}={}",
                plan.axes[a].key,
                crate::sweep::plain(&plan.axes[a].values[point[a]])
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Per-run (goodput, cc bound, fraction of it, fraction of the rbuf bound) of a point,
/// and the point's congestion control.
type Runs = (Vec<(f64, f64, f64, f64)>, String);

/// The best configuration of every scenario of `plan`, from the runs in `runs_dir`.
pub fn headroom(plan: &Plan, runs_dir: &Path) -> Result<Vec<Headroom>, LabError> {
    let (algo, scen): (Vec<usize>, Vec<usize>) =
        (0..plan.axes.len()).partition(|&a| is_algorithm_axis(plan, a));
    // scenario key → configuration point → runs
    let mut groups: BTreeMap<Vec<usize>, BTreeMap<Vec<usize>, Runs>> = BTreeMap::new();
    for r in crate::sweep::chosen_runs(plan, runs_dir)?.0 {
        let s = read_run(runs_dir, &r.id)?.summary;
        let key: Vec<usize> = scen.iter().map(|&a| r.point[a]).collect();
        groups
            .entry(key)
            .or_default()
            .entry(r.point.clone())
            .or_insert_with(|| (Vec::new(), s.cc.clone()))
            .0
            .push((
                s.goodput_mbps,
                s.cc_bound_mbps,
                s.goodput_of_cc_bound,
                s.goodput_of_bound,
            ));
    }
    let mut out = Vec::new();
    for configs in groups.values() {
        let col = |runs: &Runs, f: fn(&(f64, f64, f64, f64)) -> f64| -> Vec<f64> {
            runs.0.iter().map(f).collect()
        };
        let best = configs.iter().max_by(|a, b| {
            let ga = mean(&col(a.1, |r| r.0)).unwrap_or(0.0);
            let gb = mean(&col(b.1, |r| r.0)).unwrap_or(0.0);
            // Ties go to the first configuration in grid order.
            ga.total_cmp(&gb).then_with(|| b.0.cmp(a.0))
        });
        let Some((point, runs)) = best else { continue };
        let fractions = col(runs, |r| r.2);
        out.push(Headroom {
            scenario: label(plan, point, &scen),
            best: label(plan, point, &algo),
            cc: runs.1.clone(),
            goodput_mbps: mean(&col(runs, |r| r.0)).unwrap_or(0.0),
            cc_bound_mbps: mean(&col(runs, |r| r.1)).unwrap_or(0.0),
            of_cc_bound: (
                mean(&fractions).unwrap_or(0.0),
                ci95_half_width(&fractions, plan.ci),
            ),
            of_rbuf_bound: mean(&col(runs, |r| r.3)).unwrap_or(0.0),
            n: runs.0.len(),
        });
    }
    Ok(out)
}

/// The report section: one table per sweep.
pub fn section(sweeps: &[(String, Vec<Headroom>)]) -> String {
    let mut md = String::from(
        "## How far from the best possible\n\nPer scenario (grid point without the algorithm axes), the configuration with the highest mean goodput and its goodput as a fraction of the congestion-control-aware bound: what one standard (Reno) sender could sustain on each path under its loss (with the growth during recovery that CMT's CUC allows), within what background traffic left of its capacity, filled under the receive buffer (docs/metrics.md). The receive-buffer bound's fraction, which ignores loss, is beside it. For controllers that halve their window on loss (reno, and the coupled lia, olia, balia) the bound holds: a fraction whose CI lay above 100 % would mean the model is wrong. Controllers that do not (DB-CMT's D-FRP, which scales the window by RTTmin/SRTT and so barely reduces it on random loss; CMT-QA*; receiver-driven rates) can exceed it, and the table shows by how much.\n\n",
    );
    for (name, rows) in sweeps {
        let _ = writeln!(md, "### {name}\n");
        let _ = writeln!(md, "| scenario | best configuration | cc | goodput (Mbit/s) | cc-aware bound (Mbit/s) | of the cc-aware bound | of the rbuf bound | runs |\n|---|---|---|---|---|---|---|---|");
        for h in rows {
            let ci = h
                .of_cc_bound
                .1
                .map_or(String::new(), |c| format!(" ± {:.1}", 100.0 * c));
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.3} | {:.3} | {:.1}{ci} % | {:.1} % | {} |",
                if h.scenario.is_empty() {
                    "—"
                } else {
                    &h.scenario
                },
                if h.best.is_empty() { "—" } else { &h.best },
                h.cc,
                h.goodput_mbps,
                h.cc_bound_mbps,
                100.0 * h.of_cc_bound.0,
                100.0 * h.of_rbuf_bound,
                h.n
            );
        }
        md.push('\n');
    }
    md
}
