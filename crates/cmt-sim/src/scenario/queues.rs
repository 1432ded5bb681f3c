//! A link's queue discipline: the `aqm` and `aqm_params` keys of `[[links]]`.

use cmt_core::Duration;

use super::{params, BuildError, LinkSpec};
use crate::link::aqm::{Aqm, CodelParams, FqCodelParams, RedParams};

/// The discipline `l` names, with its parameters (each checked; unknown ones refused).
pub(super) fn aqm(l: &LinkSpec, f: &dyn Fn(&str) -> String) -> Result<Aqm, BuildError> {
    let at = f("aqm_params");
    let p = params(&l.aqm_params, &at)?;
    let bad = |e: cmt_core::ParamError| BuildError::new(at.clone(), e.0);
    let name = l.aqm.as_deref().unwrap_or("droptail");
    let known: &[&str] = match name {
        "droptail" => &[],
        "red" => &[
            "min_th", "max_th", "weight", "max_p", "gentle", "wait", "ecn",
        ],
        "codel" => &["target_ms", "interval_ms", "ecn"],
        "fq_codel" => &["target_ms", "interval_ms", "quantum", "ecn"],
        other => {
            return Err(BuildError::new(
                f("aqm"),
                format!("unknown `{other}` (droptail, red, codel, fq_codel)"),
            ))
        }
    };
    p.expect_only(name, known).map_err(bad)?;
    let codel = || -> Result<CodelParams, BuildError> {
        let d = CodelParams::default();
        let ms = |k: &str, v: Duration| -> Result<Duration, BuildError> {
            let x = p.number(k, v.as_nanos() as f64 / 1e6).map_err(bad)?;
            if !(x > 0.0 && x <= 10_000.0) {
                return Err(BuildError::new(
                    at.clone(),
                    format!("{k} {x}: give 0 to 10000 ms"),
                ));
            }
            Ok(Duration::from_nanos((x * 1e6) as u64))
        };
        Ok(CodelParams {
            target: ms("target_ms", d.target)?,
            interval: ms("interval_ms", d.interval)?,
            ecn: p.flag("ecn", d.ecn).map_err(bad)?,
        })
    };
    Ok(match name {
        "red" => Aqm::Red(red(&p, &at)?),
        "codel" => Aqm::Codel(codel()?),
        "fq_codel" => {
            let quantum = p.count("quantum", 1514).map_err(bad)?;
            if !(64..=65_535).contains(&quantum) {
                return Err(BuildError::new(
                    at,
                    format!("quantum {quantum}: give 64 to 65535 bytes"),
                ));
            }
            Aqm::FqCodel(FqCodelParams {
                codel: codel()?,
                quantum: quantum as u32,
            })
        }
        _ => Aqm::DropTail,
    })
}

/// RED's parameters: thresholds in packets (`0 < min_th < max_th` where both are
/// given; unset ones are configured from the link as ns-2.35 does), weight and `max_p`
/// in (0, 1], `gentle` and `wait` flags.
fn red(p: &cmt_core::Params, at: &str) -> Result<RedParams, BuildError> {
    let d = RedParams::default();
    let bad = |e: cmt_core::ParamError| BuildError::new(at.to_string(), e.0);
    let opt = |k: &str| -> Result<Option<f64>, BuildError> {
        match p.0.contains_key(k) {
            true => p.number(k, 0.0).map(Some).map_err(bad),
            false => Ok(None),
        }
    };
    let r = RedParams {
        min_th: opt("min_th")?,
        max_th: opt("max_th")?,
        weight: opt("weight")?,
        max_p: p.number("max_p", d.max_p).map_err(bad)?,
        gentle: p.flag("gentle", d.gentle).map_err(bad)?,
        wait: p.flag("wait", d.wait).map_err(bad)?,
        ecn: p.flag("ecn", d.ecn).map_err(bad)?,
    };
    let (lo, hi) = (
        r.min_th.unwrap_or(f64::MIN_POSITIVE),
        r.max_th.unwrap_or(f64::MAX),
    );
    if r.min_th.is_some_and(|x| !(x > 0.0 && x.is_finite()))
        || r.max_th.is_some_and(|x| !(x > 0.0 && x.is_finite()))
        || lo >= hi
    {
        return Err(BuildError::new(
            at.to_string(),
            format!(
                "min_th {} and max_th {}: give 0 < min_th < max_th",
                fmt(r.min_th),
                fmt(r.max_th)
            ),
        ));
    }
    for (k, v) in [("weight", r.weight), ("max_p", Some(r.max_p))] {
        if let Some(v) = v.filter(|v| !(*v > 0.0 && *v <= 1.0)) {
            return Err(BuildError::new(
                at.to_string(),
                format!("{k} {v}: give a number in (0, 1]"),
            ));
        }
    }
    Ok(r)
}

/// A threshold as given, or "auto".
fn fmt(x: Option<f64>) -> String {
    x.map_or("auto".into(), |x| x.to_string())
}
