//! A study's timelines (`[[timelines]]`): in-order goodput over time of the runs that
//! differ along one axis of a sweep, at one seed, in one figure — what a failure or a
//! handover does to the delivered stream, and when each variant recovers. The sweep's
//! runs keep summaries only, so the few runs a timeline needs are simulated again.

use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

use crate::error::LabError;
use crate::plot::{draw, Chart, Series, Style};
use crate::sweep::{plain, Plan};

/// `[[timelines]]` of a study.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timeline {
    /// File name of the figure.
    pub name: String,
    /// Its title.
    pub title: String,
    /// The sweep whose runs it draws.
    pub sweep: String,
    /// Values of every axis but `group`.
    pub at: toml::Table,
    /// The axis whose values make the lines.
    pub group: String,
    /// The seed (default 1).
    #[serde(default)]
    pub seed: Option<u64>,
    /// What the figure shows, for the report.
    #[serde(default)]
    pub about: Option<String>,
}

/// Simulates the timeline's runs into `out/<name>/`, draws `out/<name>.png` and returns
/// the report's section for it.
pub(crate) fn draw_timeline(plan: &Plan, t: &Timeline, out: &Path) -> Result<String, String> {
    let gi = plan
        .axes
        .iter()
        .position(|a| a.key == t.group)
        .ok_or_else(|| format!("`{}` is not an axis of sweep `{}`", t.group, plan.name))?;
    let mut point = vec![0usize; plan.axes.len()];
    for (i, a) in plan.axes.iter().enumerate().filter(|(i, _)| *i != gi) {
        let v =
            t.at.get(&a.key)
                .ok_or_else(|| format!("`at` gives no value of axis `{}`", a.key))?;
        point[i] = a
            .values
            .iter()
            .position(|x| *x == v.to_string())
            .ok_or_else(|| format!("{v} is not a value of `{}`", a.key))?;
    }
    let seed = t.seed.unwrap_or(1);
    let mut series = Vec::new();
    for (vi, value) in plan.axes[gi].values.iter().enumerate() {
        point[gi] = vi;
        let run = plan
            .runs
            .iter()
            .find(|r| r.point == point && r.seed == seed)
            .ok_or_else(|| format!("the sweep has no run with seed {seed} at that point"))?;
        let mut sim = cmt_sim::Simulation::new(plan.scenario(run)?)?;
        sim.try_run(&mut |_| {})?;
        let name = plain(value);
        let dir = out.join(&t.name).join(crate::names::slug(&name));
        let summary = cmt_sim::Summary::of(&sim, 0.0);
        cmt_sim::write_outputs(&sim, &summary, &dir)
            .map_err(|e| format!("cannot write {}: {e}", dir.display()))?;
        series.push(Series {
            name,
            points: goodput_series(&dir.join("timeseries.csv"))?,
        });
    }
    let chart = Chart {
        title: t.title.clone(),
        x_label: "time (s)".into(),
        y_label: "in-order goodput per bin (Mbit/s)".into(),
        categories: None,
        series,
        style: Style::Lines,
        fits: Vec::new(),
        error_bars: None,
        paper: Vec::new(),
    };
    draw(&chart, &out.join(&t.name)).map_err(|e| e.to_string())?;
    let mut md = format!("### {}\n\n", t.title);
    if let Some(a) = &t.about {
        let _ = writeln!(md, "{a}\n");
    }
    let _ = writeln!(
        md,
        "Seed {seed}; one line per value of `{}`; the runs are in `timelines/{}/`.\n\n![{n}](timelines/{n}.png)\n",
        t.group,
        t.name,
        n = t.name
    );
    Ok(md)
}

/// `(t_s, goodput_mbps)` of a run's `timeseries.csv`.
fn goodput_series(path: &Path) -> Result<Vec<crate::plot::Point>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| format!("{}: no column `{name}`", path.display()))
    };
    let (t, g) = (col("t_s")?, col("goodput_mbps")?);
    Ok(lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let num = |i: usize| f.get(i).and_then(|x| x.parse().ok()).unwrap_or(0.0);
            (num(t), num(g), None)
        })
        .collect())
}

/// The report's section of every timeline, each drawn into `out/timelines/`.
pub(crate) fn section(
    timelines: &[Timeline],
    done: &[(Plan, crate::aggregate::Aggregate)],
    out: &Path,
    label: &str,
) -> Result<String, LabError> {
    if timelines.is_empty() {
        return Ok(String::new());
    }
    let mut md = "## Timelines\n\n".to_string();
    for t in timelines {
        let at = |e: String| LabError::at(label, format!("timeline `{}`: {e}", t.name));
        let (plan, _) = done
            .iter()
            .find(|(p, _)| p.name == t.sweep)
            .ok_or_else(|| at(format!("no sweep named `{}`", t.sweep)))?;
        md += &draw_timeline(plan, t, &out.join("timelines")).map_err(at)?;
    }
    Ok(md)
}
