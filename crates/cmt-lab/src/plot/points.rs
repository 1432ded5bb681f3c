//! The points of a report's series: the metric's mean ± 95 % CI per grid point, or, for a
//! report with `relative_to`, each series' change against the baseline series, paired by
//! seed (the papers' "advantage", (A − B)/B: Cao et al. 2012, RTX_CSI eq. 2).

use std::collections::BTreeMap;

use super::chart::Point;
use crate::aggregate::Aggregate;
use crate::stats::{mean, paired};
use crate::sweep::{plain, Plan, ReportSpec};

/// Series key (the values of the axes that are neither x nor fixed) → points.
pub type SeriesPoints = BTreeMap<Vec<usize>, Vec<Point>>;

/// The points of report `r` with x axis `xi`; `x_of` places a value index of the x axis.
pub fn report_points(
    plan: &Plan,
    agg: &Aggregate,
    r: &ReportSpec,
    xi: usize,
    x_of: &dyn Fn(usize) -> f64,
) -> SeriesPoints {
    let mut series = SeriesPoints::new();
    let base = relative_base(plan, r);
    for s in agg.stats.iter().filter(|s| s.metric == r.y) {
        let Some(key) = plan.report_series(r, xi, &s.point) else {
            continue;
        };
        let point = match base {
            None => s.mean.map(|m| (m, s.ci)),
            Some((g, b)) if s.point[g] != b => {
                let mut at_base = s.point.clone();
                at_base[g] = b;
                relative_change(plan, agg, &r.y, &s.point, &at_base)
            }
            Some(_) => None,
        };
        if let Some((y, ci)) = point {
            series
                .entry(key)
                .or_default()
                .push((x_of(s.point[xi]), y, ci));
        }
    }
    series
}

/// The group axis and the value index of a report's `relative_to` baseline.
pub fn relative_base(plan: &Plan, r: &ReportSpec) -> Option<(usize, usize)> {
    let base = r.relative_to.as_ref()?;
    let g = plan
        .axes
        .iter()
        .position(|a| Some(&a.key) == r.group.as_ref())?;
    let b = plan.axes[g].values.iter().position(|v| plain(v) == *base)?;
    Some((g, b))
}

/// The change of `metric` at `point` against `at_base`, in percent of the baseline's mean
/// over the seeds both have, with the 95 % CI of the per-seed differences on the same
/// scale. `None` without common seeds or with a zero baseline.
fn relative_change(
    plan: &Plan,
    agg: &Aggregate,
    metric: &str,
    point: &[usize],
    at_base: &[usize],
) -> Option<(f64, Option<f64>)> {
    let base: BTreeMap<u64, f64> = agg.samples(at_base, metric)?.iter().copied().collect();
    let (diffs, bases): (Vec<f64>, Vec<f64>) = agg
        .samples(point, metric)?
        .iter()
        .filter_map(|(seed, a)| base.get(seed).map(|b| (a - b, *b)))
        .unzip();
    let scale = 100.0 / mean(&bases).filter(|m| *m != 0.0)?;
    let d = paired(&diffs, plan.ci)?;
    Some((d.mean * scale, d.ci.map(|h| h * scale.abs())))
}

#[cfg(test)]
mod tests {
    use super::report_points;
    use crate::aggregate::Aggregator;
    use crate::sweep::Plan;

    const BASE: &str = "seed = 1\nduration = \"1s\"\n[[links]]\nname = \"l\"\nrate = \"1Mbps\"\n\
                        delay = \"1ms\"\n[[paths]]\nname = \"p\"\nlinks = [\"l\"]\n";

    const SWEEP: &str = r#"
name = "rel"
base = "base.toml"
seeds = 3
[[axes]]
key = "association.scheduler"
values = ["round-robin", "minrtt"]
[[axes]]
key = "receiver.rbuf"
values = ["16KB", "64KB"]
[[reports]]
name = "r"
x = "receiver.rbuf"
y = "goodput_mbps"
group = "association.scheduler"
relative_to = "round-robin"
"#;

    #[test]
    fn a_relative_report_draws_the_paired_change_in_percent_of_the_baseline() {
        let dir = std::env::temp_dir().join(format!("cmtlab-points-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("base.toml"), BASE).unwrap();
        std::fs::write(dir.join("sweep.toml"), SWEEP).unwrap();
        let plan = Plan::load(&dir.join("sweep.toml")).unwrap();
        // Per seed 1, 2, 3 at 16 KB: round-robin 10, 12, 14; minRTT 11, 12, 16. The
        // differences 1, 0, 2 have mean 1 and SD 1, the baseline's mean is 12: +8.33 %
        // with a half-width of t(2) · 1/√3 · 100/12. At 64 KB minRTT is 10 % below on
        // every seed (21, 22, 23): −10 %, the differences' SD 0.1 over a mean of 22.
        let table = |p: &[usize], seed: u64| match (p[0], p[1]) {
            (0, 0) => [10.0, 12.0, 14.0][seed as usize - 1],
            (1, 0) => [11.0, 12.0, 16.0][seed as usize - 1],
            (0, 1) => 20.0 + seed as f64,
            _ => 0.9 * (20.0 + seed as f64),
        };
        let mut agg = Aggregator::new(&plan);
        for a in 0..2 {
            for b in 0..2 {
                for seed in 1..=3 {
                    let v = table(&[a, b], seed);
                    agg.add_values(&[a, b], seed, &|_| Some(v));
                }
            }
        }
        let agg = agg.finish();
        let series = report_points(&plan, &agg, &plan.reports[0], 1, &|x| x as f64);
        assert_eq!(series.len(), 1, "the baseline is not drawn: {series:?}");
        let points = &series[&vec![1]];
        let (x, y, ci) = points[0];
        assert_eq!(x, 0.0);
        assert!((y - 100.0 / 12.0).abs() < 1e-9, "{y}");
        let want = 4.302_652_729_911_275 / 3f64.sqrt() * 100.0 / 12.0;
        assert!((ci.unwrap() - want).abs() < 1e-6, "{ci:?} vs {want}");
        let (_, y, ci) = points[1];
        let want = 4.302_652_729_911_275 * 0.1 / 3f64.sqrt() * 100.0 / 22.0;
        assert!((y + 10.0).abs() < 1e-9, "{y}");
        assert!((ci.unwrap() - want).abs() < 1e-6, "{ci:?} vs {want}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
