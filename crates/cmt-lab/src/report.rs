//! `aggregate.csv`, `comparisons.csv` and `report.md` from an [`Aggregate`].

use std::fmt::Write as _;
use std::path::Path;

use crate::aggregate::Aggregate;
use crate::error::LabError;
use crate::sweep::plain;
use crate::sweep::{write_atomic, CiMethod, ComparisonKind, Plan, Selection, Sequential};

fn num(x: Option<f64>) -> String {
    x.map_or(String::new(), |v| format!("{v}"))
}

/// Four significant digits, for tables read by people.
pub fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.digits$}")
}

/// Writes `aggregate.csv` and `comparisons.csv`.
pub fn write_tables(plan: &Plan, agg: &Aggregate, out: &Path) -> Result<(), LabError> {
    let stats = agg.stats.iter().map(|s| {
        let (lo, hi) = match (s.mean, s.ci) {
            (Some(m), Some(c)) => (Some(m - c), Some(m + c)),
            _ => (None, None),
        };
        let cells = vec![
            s.metric.clone(),
            s.n.to_string(),
            num(s.mean),
            num(s.sd),
            num(lo),
            num(hi),
        ];
        (&s.point[..], cells)
    });
    let header = ["metric", "n", "mean", "sd", "ci95_low", "ci95_high"];
    write_table(plan, &header, stats, &out.join("aggregate.csv"))?;

    let comparisons = agg.comparisons.iter().map(|c| {
        let spec = &plan.comparisons[c.spec];
        let kind = match spec.kind {
            ComparisonKind::Advantage => "advantage",
            ComparisonKind::ImpactDegree => "impact-degree",
        };
        let cells = vec![
            spec.metric.clone(),
            kind.into(),
            spec.axis.clone(),
            plain(&spec.baseline.to_string()),
            num(c.pct),
        ];
        (&c.point[..], cells)
    });
    let header = ["metric", "kind", "axis", "baseline", "percent"];
    write_table(plan, &header, comparisons, &out.join("comparisons.csv"))
}

/// One CSV table: a column per sweep axis (the row's grid point), then `header`'s
/// columns; written atomically so an interrupted run never leaves half a table.
fn write_table<'a>(
    plan: &Plan,
    header: &[&str],
    rows: impl Iterator<Item = (&'a [usize], Vec<String>)>,
    path: &Path,
) -> Result<(), LabError> {
    let label = path.display().to_string();
    let err = |e: csv::Error| LabError::at(&label, e);
    let mut w = csv::Writer::from_writer(Vec::new());
    let numeric = crate::aggregate::labelled_numeric_axes(plan);
    let mut head: Vec<String> = plan.axes.iter().map(|a| a.key.clone()).collect();
    head.extend(
        numeric
            .iter()
            .map(|&a| format!("{}_value", plan.axes[a].key)),
    );
    head.extend(header.iter().map(|h| h.to_string()));
    w.write_record(&head).map_err(err)?;
    for (point, cells) in rows {
        let values = point
            .iter()
            .enumerate()
            .map(|(a, &v)| plain(&plan.axes[a].values[v]))
            .chain(crate::aggregate::numeric_axis_cells(plan, &numeric, point));
        w.write_record(values.chain(cells)).map_err(err)?;
    }
    let bytes = w.into_inner().map_err(|e| LabError::at(&label, e))?;
    write_atomic(path, &bytes).map_err(|e| LabError::at(&label, e))
}

/// The Markdown report.
pub fn markdown(plan: &Plan, sel: &Selection, agg: &Aggregate, figures: &[String]) -> String {
    let mut md = String::new();
    let points = plan.runs.len() / plan.seeds.len().max(1);
    let ci = match plan.ci {
        CiMethod::T => "Student-t",
        CiMethod::Z => "normal (z = 1.960)",
    };
    let _ = writeln!(md, "# Sweep `{}`\n", plan.name);
    match &plan.sequential {
        None => {
            let _ = writeln!(
                md,
                "{} runs: {} grid point(s) × {} seed(s), base scenario `{}`. Means with 95 % confidence intervals ({ci}).\n",
                plan.runs.len(),
                points,
                plan.seeds.len(),
                plan.base_name
            );
        }
        Some(rule) => {
            let _ = writeln!(
                md,
                "{} runs: {} grid point(s), base scenario `{}`. Means with 95 % confidence intervals ({ci}).\n\n{}\n",
                sel.runs.len(),
                points,
                plan.base_name,
                sequential_note(plan, rule, sel)
            );
        }
    }
    for a in &plan.axes {
        let vals: Vec<String> = a.values.iter().map(|v| plain(v)).collect();
        let _ = writeln!(md, "- `{}`: {}", a.key, vals.join(", "));
    }
    let _ = writeln!(md);
    for m in &agg.metrics {
        let _ = writeln!(md, "## {m}\n");
        let mut head: Vec<String> = plan.axes.iter().map(|a| format!("`{}`", a.key)).collect();
        head.extend(["n", "mean", "± 95 % CI", "SD"].map(String::from));
        let _ = writeln!(md, "| {} |", head.join(" | "));
        let _ = writeln!(md, "|{}", "---|".repeat(head.len()));
        for s in agg.stats.iter().filter(|s| &s.metric == m) {
            let mut row: Vec<String> = s
                .point
                .iter()
                .enumerate()
                .map(|(a, &v)| plain(&plan.axes[a].values[v]))
                .collect();
            row.push(s.n.to_string());
            row.push(s.mean.map_or("–".into(), sig));
            row.push(s.ci.map_or("–".into(), sig));
            row.push(s.sd.map_or("–".into(), sig));
            let _ = writeln!(md, "| {} |", row.join(" | "));
        }
        let _ = writeln!(md);
    }
    if !agg.comparisons.is_empty() {
        let _ = writeln!(md, "## Comparisons\n");
        let _ = writeln!(md, "Advantage = (A − B)/B (Cao et al. 2012, RTX_CSI eq. 2); impact degree = |x − y|/x (Cao et al. 2012, RTX_CSI eq. 1); B and x are the baseline.\n");
        let _ = writeln!(md, "| comparison | grid point | percent |\n|---|---|---|");
        for c in &agg.comparisons {
            let s = &plan.comparisons[c.spec];
            let kind = match s.kind {
                ComparisonKind::Advantage => "advantage",
                ComparisonKind::ImpactDegree => "impact degree",
            };
            let what = format!(
                "{kind} of {} vs `{}` = {}",
                s.metric,
                s.axis,
                plain(&s.baseline.to_string())
            );
            let pct = c.pct.map_or("–".into(), |p| format!("{} %", sig(p)));
            let _ = writeln!(md, "| {what} | {} | {pct} |", plan.point_label(&c.point));
        }
        let _ = writeln!(md);
    }
    if !agg.fits.is_empty() {
        let _ = writeln!(
            md,
            "## Least-squares lines\n\ny = b·x + a through the group means (DB-CMT 2022 eq. 7–8).\n"
        );
        let _ = writeln!(
            md,
            "| report | series | b (slope) | a (intercept) | R² |\n|---|---|---|---|---|"
        );
        for f in &agg.fits {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {:.3} |",
                f.report,
                f.series,
                sig(f.fit.slope),
                sig(f.fit.intercept),
                f.fit.r2
            );
        }
        let _ = writeln!(md);
    }
    if !figures.is_empty() {
        let _ = writeln!(md, "## Figures\n");
        for f in figures {
            let _ = writeln!(md, "![{f}]({f})\n");
        }
    }
    md
}

/// What a sequential sweep's stopping rule was and what it did.
fn sequential_note(plan: &Plan, rule: &Sequential, sel: &Selection) -> String {
    let used: Vec<usize> = sel.seeds.values().copied().collect();
    let (lo, hi) = (
        used.iter().min().copied().unwrap_or(0),
        used.iter().max().copied().unwrap_or(0),
    );
    let n_claims = rule.claims.len();
    let precision = rule.half_width.map(|hw| {
        format!(
            "where a 95 % CI half-width was above {} % of its scale — the mean of {} at that \
             point, or the per-seed differences of a comparison it takes part in, relative to \
             the compared-with mean —",
            (hw * 1e6).round() / 1e4,
            rule.metrics
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", "),
        )
    });
    let undecided = "still undecided (within 1.5 CI half-widths of a boundary that decides it)";
    let rule_text = match precision {
        Some(p) if n_claims == 0 => p,
        Some(p) => {
            format!("{p} and at each grid point of one of its {n_claims} claims {undecided}")
        }
        None if n_claims > 0 => {
            format!("of one of the sweep's {n_claims} claims while that claim was {undecided}")
        }
        None => "(no precision target, no claim)".into(),
    };
    let mut note = format!(
        "Seeds by sequential replication: every grid point ran seeds 1–{}, then {} more at a \
         time at each grid point {rule_text}, up to {} seeds. Grid points used {lo}–{hi} seeds \
         (the `n` columns).",
        rule.min, rule.batch, rule.max,
    );
    if sel.at_max.is_empty() {
        note += if rule.half_width.is_some() {
            " Every estimate reached the target."
        } else {
            " Every claim was decided before the maximum."
        };
    } else {
        let shown: Vec<String> = sel
            .at_max
            .iter()
            .take(8)
            .map(|p| format!("[{}]", plan.point_label(p)))
            .collect();
        let more = sel.at_max.len().saturating_sub(shown.len());
        let _ = write!(
            note,
            " {} grid point(s) stopped at {} seeds with an estimate still unsettled: {}{}.",
            sel.at_max.len(),
            rule.max,
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    note
}
