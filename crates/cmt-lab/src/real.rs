//! A study's sweeps measured over real sockets (`cmtlab reproduce --real`): the grid
//! points and seeds a study's `[real]` section names are run one at a time by a runner
//! the caller provides (the `cmtlab` binary uses the real runtime behind loopback relays,
//! `cmt_net::replay`), aggregated like simulated runs, and put next to them in the claims
//! table. Results are saved per run, so an interrupted real sweep resumes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

use crate::aggregate::{Aggregate, Aggregator};
use crate::error::LabError;
use crate::report::sig;
use crate::sweep::plain;
use crate::sweep::write_atomic;
use crate::sweep::{Plan, RunSpec};

/// `[real]` of a study: which sweeps, seeds and grid points run over real sockets.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RealSpec {
    /// Sweep names (the `name` in the sweep files).
    pub sweeps: Vec<String>,
    /// Seeds per grid point: the sweep's first ones.
    pub seeds: usize,
    /// Only these values of these axes, e.g. `{ "association.scheduler" = ["japs"] }`
    /// (an axis a sweep does not have leaves that sweep alone).
    #[serde(default)]
    pub only: toml::Table,
}

/// Runs one scenario over real sockets (scratch files go to the directory given) and
/// returns its values by metric name.
pub type RealRunner<'a> =
    &'a (dyn Fn(&cmt_sim::Built, &Path) -> Result<BTreeMap<String, f64>, String> + Sync);

/// Whether `r` is a run the spec selects; errors name an axis or value that is not in
/// the sweep.
fn selected(spec: &RealSpec, plan: &Plan, r: &RunSpec) -> Result<bool, String> {
    if !plan.seeds.iter().take(spec.seeds).any(|s| *s == r.seed) {
        return Ok(false);
    }
    for (key, wanted) in &spec.only {
        // An axis this sweep does not have does not restrict it (run_all checks that
        // every key is an axis of some real sweep).
        let Some(a) = plan.axes.iter().position(|a| &a.key == key) else {
            continue;
        };
        let list = wanted
            .as_array()
            .ok_or_else(|| format!("[real] only: `{key}` must be a list of values"))?;
        let mut ok = false;
        for v in list {
            let text = v.to_string();
            if !plan.axes[a].values.contains(&text) {
                return Err(format!("[real] only: {text} is not a value of `{key}`"));
            }
            ok |= plan.axes[a].values[r.point[a]] == text;
        }
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Runs (or reads back) every selected run of `plan` into `out`; returns the aggregate.
fn run_plan(
    spec: &RealSpec,
    plan: &Plan,
    runner: RealRunner<'_>,
    out: &Path,
    progress: &(dyn Fn(&str, usize, usize) + Sync),
) -> Result<Aggregate, LabError> {
    let here = out.display().to_string();
    std::fs::create_dir_all(out.join("runs")).map_err(|e| LabError::at(&here, e))?;
    let mut runs = Vec::new();
    for r in &plan.runs {
        if selected(spec, plan, r).map_err(|e| LabError::at(&here, e))? {
            runs.push(r);
        }
    }
    let mut agg = Aggregator::new(plan);
    for (k, r) in runs.iter().enumerate() {
        let file = out.join("runs").join(format!("{}.json", r.id));
        let values: BTreeMap<String, f64> = match std::fs::read(&file) {
            Ok(b) => serde_json::from_slice(&b).map_err(|e| LabError::at(&here, e))?,
            Err(_) => {
                let built = plan.scenario(r).map_err(|e| LabError::at(&here, e))?;
                let v = runner(&built, &out.join("scratch")).map_err(|e| {
                    LabError::at(&here, format!("real run {} ({}): {e}", r.index, r.id))
                })?;
                let bytes = serde_json::to_vec(&v).map_err(|e| LabError::at(&here, e))?;
                write_atomic(&file, &bytes).map_err(|e| LabError::at(&here, e))?;
                v
            }
        };
        agg.add_values(&r.point, r.seed, &|m| values.get(m).copied());
        progress(&format!("{} (real)", plan.name), k + 1, runs.len());
    }
    Ok(agg.finish())
}

/// Runs the `[real]` sweeps of a study whose simulated sweeps are `done`.
pub fn run_all(
    spec: &RealSpec,
    done: &[(Plan, Aggregate)],
    runner: RealRunner<'_>,
    out: &Path,
    progress: &(dyn Fn(&str, usize, usize) + Sync),
) -> Result<Vec<(Plan, Aggregate)>, LabError> {
    let mut res = Vec::new();
    for key in spec.only.keys() {
        let known = done
            .iter()
            .filter(|(p, _)| spec.sweeps.contains(&p.name))
            .any(|(p, _)| p.axes.iter().any(|a| &a.key == key));
        if !known {
            return Err(LabError(format!(
                "[real] only: `{key}` is not an axis of any of the real sweeps"
            )));
        }
    }
    for name in &spec.sweeps {
        let (plan, _) = done.iter().find(|(p, _)| &p.name == name).ok_or_else(|| {
            LabError(format!(
                "[real] sweeps: no sweep named `{name}` in the study"
            ))
        })?;
        let agg = run_plan(spec, plan, runner, &out.join(name), progress)?;
        res.push((plan.clone(), agg));
    }
    Ok(res)
}

/// The report section: per real grid point, `metric` simulated (same grid point, all
/// seeds) and real, mean ± 95 % CI.
pub fn section(real: &[(Plan, Aggregate)], sim: &[(Plan, Aggregate)], metric: &str) -> String {
    let mut md = String::new();
    if real.is_empty() {
        return md;
    }
    let _ = writeln!(
        md,
        "## Simulated and real\n\nThe same grid points over real sockets: the real runtime \
         (`cmtlab send`/`recv`'s code) through loopback relays with the simulator's link \
         model. `{metric}`, mean ± 95 % CI (n runs).\n"
    );
    for (plan, ragg) in real {
        let Some((_, sagg)) = sim.iter().find(|(p, _)| p.name == plan.name) else {
            continue;
        };
        let _ = writeln!(md, "### `{}`\n", plan.name);
        let _ = writeln!(
            md,
            "| grid point | simulated | real | real / simulated |\n|---|---|---|---|"
        );
        for s in ragg.stats.iter().filter(|s| s.metric == metric) {
            let Some(rm) = s.mean else { continue };
            let sim = sagg
                .stats
                .iter()
                .find(|x| x.point == s.point && x.metric == metric);
            let point: Vec<String> = plan
                .axes
                .iter()
                .zip(&s.point)
                .map(|(a, &v)| plain(&a.values[v]))
                .collect();
            let fmt = |m: Option<f64>, ci: Option<f64>, n: usize| match (m, ci) {
                (Some(m), Some(ci)) => format!("{} ± {} ({n})", sig(m), sig(ci)),
                (Some(m), None) => format!("{} ({n})", sig(m)),
                _ => "–".into(),
            };
            let ratio = sim
                .and_then(|x| x.mean)
                .filter(|m| *m != 0.0)
                .map_or("–".into(), |m| format!("{:.2}", rm / m));
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} |",
                point.join(", "),
                sim.map_or("–".into(), |x| fmt(x.mean, x.ci, x.n)),
                fmt(s.mean, s.ci, s.n),
                ratio
            );
        }
        md.push('\n');
    }
    md
}
