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
    /// The metrics the report's "Simulated and real" section puts side by side
    /// (default `goodput_mbps`; claims on real runs use any metric a real run has).
    #[serde(default = "default_metrics")]
    pub metrics: Vec<String>,
    /// Keep each real run's capture at the sender (`real/<sweep>/captures/<run id>.pcap`:
    /// every datagram, so tens of MB per run), to compare a real run's mechanism —
    /// heartbeats, timeouts, retransmissions — with the simulator's `--pcap`.
    #[serde(default)]
    pub capture: bool,
}

fn default_metrics() -> Vec<String> {
    vec!["goodput_mbps".into()]
}

impl RealSpec {
    /// Refuses, before anything runs, a metric a real run does not measure.
    pub fn check(&self) -> Result<(), String> {
        match self.metrics.iter().find(|m| !measured_for_real(m)) {
            Some(m) => Err(format!(
                "[real] metrics: `{m}` is not measured by a real run (it has goodput_mbps, \
                 ftt_s, delivered_bytes, paths.<name>.sent_packets and \
                 paths.<name>.retransmissions)"
            )),
            None => Ok(()),
        }
    }
}

/// Runs one scenario over real sockets (scratch files go to the first directory given;
/// the sender's capture to the file given, when one is) and returns its values by metric
/// name.
pub type RealRunner<'a> = &'a (dyn Fn(&cmt_sim::Built, &Path, Option<&Path>) -> Result<BTreeMap<String, f64>, String>
         + Sync);

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
    if spec.capture {
        std::fs::create_dir_all(out.join("captures")).map_err(|e| LabError::at(&here, e))?;
    }
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
                let capture = spec
                    .capture
                    .then(|| out.join("captures").join(format!("{}.pcap", r.id)));
                let v = runner(&built, &out.join("scratch"), capture.as_deref()).map_err(|e| {
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

/// Whether a real run measures `metric` (`cmt_net::replay::Replayed::metrics`).
fn measured_for_real(metric: &str) -> bool {
    matches!(metric, "goodput_mbps" | "ftt_s" | "delivered_bytes")
        || metric.strip_prefix("paths.").is_some_and(|rest| {
            rest.ends_with(".sent_packets") || rest.ends_with(".retransmissions")
        })
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

/// The report section: per real grid point, each of `metrics` simulated (same grid
/// point, all seeds) and real, mean ± 95 % CI.
pub fn section(
    real: &[(Plan, Aggregate)],
    sim: &[(Plan, Aggregate)],
    metrics: &[String],
) -> String {
    let mut md = String::new();
    if real.is_empty() {
        return md;
    }
    let names: Vec<String> = metrics.iter().map(|m| format!("`{m}`")).collect();
    let _ = writeln!(
        md,
        "## Simulated and real\n\nThe same grid points over real sockets: the real runtime \
         (`cmtlab send`/`recv`'s code) through loopback relays with the simulator's link \
         model. {}, mean ± 95 % CI (n runs that have the value: a timed run, or a \
         transfer whose association was lost, has no `ftt_s`).\n",
        names.join(", ")
    );
    for metric in metrics {
        for (plan, ragg) in real {
            if let Some((_, sagg)) = sim.iter().find(|(p, _)| p.name == plan.name) {
                md += &point_table(plan, ragg, sagg, metric);
            }
        }
    }
    md
}

/// One sweep's table of `metric`, simulated against real, per real grid point.
fn point_table(plan: &Plan, ragg: &Aggregate, sagg: &Aggregate, metric: &str) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "### `{}`: `{metric}`\n", plan.name);
    let _ = writeln!(
        md,
        "| grid point | simulated | real | real / simulated |\n|---|---|---|---|"
    );
    for s in ragg.stats.iter().filter(|s| s.metric == metric) {
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
        let ratio = match (s.mean, sim.and_then(|x| x.mean)) {
            (Some(r), Some(m)) if m != 0.0 => format!("{:.2}", r / m),
            _ => "–".into(),
        };
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
    md
}
