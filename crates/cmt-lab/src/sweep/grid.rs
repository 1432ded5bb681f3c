//! The grid of a sweep: its axes (values, ranges or variants), seeds and CI method,
//! checked, and the cartesian product of the axes (first axis outermost).

use serde::{Deserialize, Serialize};

use super::spec::{flatten, AxisSpec, Seeds, SequentialSpec};
use crate::error::LabError;

/// Most seeds one sweep may list or count.
pub const MAX_SEEDS: u64 = 100_000;
/// Most runs (grid points × seeds) one sweep may plan.
pub const MAX_RUNS: u64 = 1_000_000;

/// One axis after expansion.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Axis {
    /// Dotted scenario key.
    pub key: String,
    /// Values in order, as TOML text (e.g. `"64KB"`, `0.01`).
    pub values: Vec<String>,
    /// For a variant axis: the overrides of each value (`KEY=VALUE`); empty for a plain
    /// axis, whose value `v` is the override `key=v`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<Vec<String>>,
}

impl Axis {
    /// The overrides that select value `v` of this axis.
    pub fn overrides(&self, v: usize) -> Vec<String> {
        match self.variants.get(v) {
            Some(set) => set.clone(),
            None => vec![format!("{}={}", self.key, self.values[v])],
        }
    }
}

/// Confidence-interval method.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub enum CiMethod {
    /// Student-t with n − 1 degrees of freedom.
    T,
    /// Normal quantile 1.960 (DB-CMT 2022 eq. 6).
    Z,
}

/// `seeds`: a count (1..=n), a list without repeats or a sequential target (its `max`
/// seeds), at most [`MAX_SEEDS`].
pub(super) fn seeds(seeds: Seeds, label: &str) -> Result<Vec<u64>, LabError> {
    Ok(match seeds {
        Seeds::Count(0) => return Err(LabError::at(label, "field `seeds`: at least one seed")),
        Seeds::Count(n) if n > MAX_SEEDS => {
            return Err(LabError::at(
                label,
                format!("field `seeds`: {n} seeds, at most {MAX_SEEDS}"),
            ))
        }
        Seeds::Count(n) => (1..=n).collect(),
        // A sequential sweep plans its largest seed set; which runs it needs is decided
        // as their results come in (by the sequential rule).
        Seeds::Sequential(s) => {
            check_sequential(&s, label)?;
            (1..=s.max).collect()
        }
        Seeds::List(v) if v.is_empty() => {
            return Err(LabError::at(label, "field `seeds`: at least one seed"))
        }
        Seeds::List(v) => {
            if let Some(d) = v.iter().enumerate().find(|(i, x)| v[..*i].contains(x)) {
                return Err(LabError::at(
                    label,
                    format!("field `seeds`: seed {} is listed twice", d.1),
                ));
            }
            if v.len() as u64 > MAX_SEEDS {
                return Err(LabError::at(
                    label,
                    format!("field `seeds`: {} seeds, at most {MAX_SEEDS}", v.len()),
                ));
            }
            v
        }
    })
}

/// `ci`: the confidence-interval method.
pub(super) fn ci_method(ci: Option<&str>, label: &str) -> Result<CiMethod, LabError> {
    Ok(match ci {
        None | Some("t") => CiMethod::T,
        Some("z") => CiMethod::Z,
        Some(o) => {
            return Err(LabError::at(
                label,
                format!("field `ci`: unknown method `{o}` (t or z)"),
            ))
        }
    })
}

/// `[[axes]]`: unique keys, each with values, a range or variants.
pub(super) fn axes(specs: &[AxisSpec], label: &str) -> Result<Vec<Axis>, LabError> {
    let mut axes: Vec<Axis> = Vec::with_capacity(specs.len());
    for (i, a) in specs.iter().enumerate() {
        if axes.iter().any(|x: &Axis| x.key == a.key) {
            return Err(LabError::at(
                label,
                format!("axes[{i}]: duplicate axis `{}`", a.key),
            ));
        }
        axes.push(axis(i, a, label)?);
    }
    Ok(axes)
}

/// Axis `i`: its values (each once) and, for variants, their overrides.
fn axis(i: usize, a: &AxisSpec, label: &str) -> Result<Axis, LabError> {
    let mut variants = Vec::new();
    let values = match (&a.values, &a.range, &a.variants) {
        (Some(v), None, None) if !v.is_empty() => {
            let values: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            if let Some((_, d)) = values
                .iter()
                .enumerate()
                .find(|(j, x)| values[..*j].contains(x))
            {
                return Err(LabError::at(
                    label,
                    format!(
                        "axes[{i}] `{}`: value {d} is listed twice (each grid point \
                         would be run and counted twice)",
                        a.key
                    ),
                ));
            }
            values
        }
        (None, Some(r), None) => range_values(&a.key, r.from, r.to, r.step, label)?,
        (None, None, Some(vs)) if !vs.is_empty() => {
            let mut names: Vec<String> = Vec::with_capacity(vs.len());
            for v in vs {
                let name = toml::Value::String(v.name.clone()).to_string();
                if names.contains(&name) {
                    return Err(LabError::at(
                        label,
                        format!("axes[{i}] `{}`: duplicate variant {name}", a.key),
                    ));
                }
                names.push(name);
                variants.push(
                    flatten(&v.set)
                        .into_iter()
                        .map(|(k, x)| format!("{k}={x}"))
                        .collect(),
                );
            }
            names
        }
        _ => {
            return Err(LabError::at(
                label,
                format!(
                    "axes[{i}] `{}`: give exactly one of a non-empty `values`, \
                     a `range` or non-empty `variants`",
                    a.key
                ),
            ))
        }
    };
    Ok(Axis {
        key: a.key.clone(),
        values,
        variants,
    })
}

/// The grid times the seeds must stay within [`MAX_RUNS`].
pub(super) fn check_grid_size(axes: &[Axis], seeds: &[u64], label: &str) -> Result<(), LabError> {
    let runs = axes
        .iter()
        .try_fold(seeds.len() as u64, |n, a| {
            n.checked_mul(a.values.len() as u64)
        })
        .filter(|&n| n <= MAX_RUNS);
    match runs {
        None => Err(LabError::at(
            label,
            format!("the grid times the seeds is more than {MAX_RUNS} runs: split the sweep"),
        )),
        Some(0) => Err(LabError::at(
            label,
            "the sweep plans no runs (an axis without values, or no seeds)".to_string(),
        )),
        Some(_) => Ok(()),
    }
}

fn range_values(
    key: &str,
    from: f64,
    to: f64,
    step: f64,
    label: &str,
) -> Result<Vec<String>, LabError> {
    if step.is_nan() || step <= 0.0 || !from.is_finite() || !to.is_finite() || to < from {
        return Err(LabError::at(
            label,
            format!("axis `{key}`: range needs from ≤ to and step > 0"),
        ));
    }
    // In floating point first: a tiny step makes the count infinite, and a cast
    // would saturate (or wrap to zero runs).
    let count = ((to - from) / step + 1e-9).floor() + 1.0;
    if !count.is_finite() || count > 100_000.0 {
        return Err(LabError::at(
            label,
            format!("axis `{key}`: range has {count} values (at most 100000)"),
        ));
    }
    let n = count as usize;
    Ok((0..n)
        .map(|i| {
            let x = from + step * i as f64;
            let x = (x * 1e9).round() / 1e9; // 0.1 + 0.2 → 0.3
            toml::Value::Float(x).to_string()
        })
        .collect())
}

/// All index tuples of the axes, first axis outermost; one empty tuple without axes.
pub(super) fn cartesian(axes: &[Axis]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for a in axes {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..a.values.len()).map(move |v| {
                    let mut q = p.clone();
                    q.push(v);
                    q
                })
            })
            .collect();
    }
    out
}

/// Checks a `seeds = { … }` table.
fn check_sequential(s: &SequentialSpec, label: &str) -> Result<(), LabError> {
    let bad = |m: String| Err(LabError::at(label, format!("field `seeds`: {m}")));
    if s.min < 2 {
        return bad(format!(
            "min = {}: at least 2 seeds (a CI needs two)",
            s.min
        ));
    }
    if s.max < s.min {
        return bad(format!("max = {} is below min = {}", s.max, s.min));
    }
    if s.max > MAX_SEEDS {
        return bad(format!("max = {}: at most {}", s.max, MAX_SEEDS));
    }
    if s.batch == 0 {
        return bad("batch = 0: add at least one seed at a time".into());
    }
    s.half_width_fraction().map(|_| ()).or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_is_first_axis_outermost_and_ranges_are_clean() {
        let axes = vec![
            Axis {
                key: "a".into(),
                values: vec!["1".into(), "2".into()],
                variants: vec![],
            },
            Axis {
                key: "b".into(),
                values: vec!["x".into(), "y".into(), "z".into()],
                variants: vec![],
            },
        ];
        let c = cartesian(&axes);
        assert_eq!(c.len(), 6);
        assert_eq!(c[0], vec![0, 0]);
        assert_eq!(c[1], vec![0, 1]);
        assert_eq!(c[3], vec![1, 0]);
        let r = range_values("k", 0.01, 0.1, 0.01, "f").unwrap();
        assert_eq!(r.len(), 10);
        assert_eq!(r[2], "0.03");
        assert_eq!(r[9], "0.1");
        assert!(range_values("k", 1.0, 0.0, 0.1, "f").is_err());
    }
}
