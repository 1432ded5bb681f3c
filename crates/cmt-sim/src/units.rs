//! Human-friendly quantities in scenario files: rates, durations, sizes, probabilities,
//! and "a..b" ranges drawn once per run (docs/algorithms.md §11.1, §12).

use std::fmt;

use cmt_core::Duration;
use serde::Deserialize;

/// A number or a string with a unit, as written in TOML.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Raw {
    /// Bare number.
    Num(f64),
    /// Text with a unit, or a range "a..b".
    Text(String),
}

impl fmt::Display for Raw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Raw::Num(x) => write!(f, "{x}"),
            Raw::Text(s) => write!(f, "{s:?}"),
        }
    }
}

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')
        })
        .unwrap_or(s.len());
    // "e" may start a unit; back off if the number does not parse.
    let (mut num, mut unit) = s.split_at(end);
    while !num.is_empty() && num.parse::<f64>().is_err() {
        let cut = num.len() - 1;
        (num, unit) = s.split_at(cut);
    }
    Some((num.parse().ok()?, unit.trim()))
}

/// The multiplier to bit/s of a rate unit. Bits are a lowercase `b` (`bps`, `bit/s`,
/// `bit`, `b/s`), bytes an uppercase `B` (`Bps`, `B/s`: × 8); the prefix `k`, `M` or `G`
/// (either case) is decimal, as rates are. Anything else — a bare `Mb` or `MB`, which
/// could be either — is refused.
fn rate_unit(unit: &str) -> Option<f64> {
    let (prefix, base) = match unit.chars().next() {
        Some(c) if unit.len() > 1 && "kKmMgG".contains(c) => (c, &unit[1..]),
        _ => (' ', unit),
    };
    let scale = match prefix.to_ascii_lowercase() {
        ' ' => 1.0,
        'k' => 1e3,
        'm' => 1e6,
        _ => 1e9,
    };
    let per_unit = match base {
        "" if prefix == ' ' => 1.0,
        "bps" | "bit/s" | "bit" | "b/s" => 1.0,
        "Bps" | "B/s" => 8.0,
        _ => return None,
    };
    Some(scale * per_unit)
}

/// A link rate in bits per second ("11Mbps", "2100kbps", "384kbit", "1.5MB/s" = 12 Mbit/s,
/// or a bare number in bit/s of at least 1000: below that the unit must be written).
pub fn parse_rate(raw: &Raw) -> Result<u64, String> {
    let (x, unit) = match raw {
        Raw::Num(x) => (*x, ""),
        Raw::Text(s) => split_number(s).ok_or_else(|| format!("invalid rate {raw}"))?,
    };
    if matches!(raw, Raw::Text(_)) && unit.is_empty() {
        return Err(format!(
            "invalid rate {raw}: give a unit (bps, kbps, Mbps, Gbps; bytes: Bps, kBps, MBps)"
        ));
    }
    if matches!(raw, Raw::Num(_)) && x.abs() < 1e3 {
        return Err(format!(
            "invalid rate {raw}: a bare number is bit/s, and that is below 1 kbit/s; \
             write the unit (e.g. \"{x}Mbps\", or \"{x}bps\" if that is meant)"
        ));
    }
    let mult = rate_unit(unit).ok_or_else(|| {
        format!(
            "invalid rate {raw}: unknown unit `{unit}` (bits: bps, kbps, Mbps, Gbps; \
             bytes: Bps, kBps, MBps, GBps or B/s, kB/s, MB/s, GB/s)"
        )
    })?;
    let bps = x * mult;
    if !bps.is_finite() || bps <= 0.0 {
        return Err(format!("invalid rate {raw}: must be positive"));
    }
    if bps < 1.0 {
        return Err(format!("invalid rate {raw}: below 1 bit/s"));
    }
    if bps > 1e15 {
        return Err(format!("invalid rate {raw}: above 1 Pbit/s"));
    }
    Ok(bps.round() as u64)
}

/// A duration ("10ms", "1.5s", "250us", "2min", or a bare number of seconds; text
/// needs a unit, so that `"15"` is not silently 15 s).
pub fn parse_duration(raw: &Raw) -> Result<Duration, String> {
    let (x, unit) = match raw {
        Raw::Num(x) => (*x, "s"),
        Raw::Text(s) => split_number(s).ok_or_else(|| format!("invalid duration {raw}"))?,
    };
    if matches!(raw, Raw::Text(_)) && unit.is_empty() {
        return Err(format!(
            "invalid duration {raw}: give a unit (ns, us, ms, s, min); only a bare number \
             (not in quotes) is seconds"
        ));
    }
    let secs = match unit {
        "s" | "" => x,
        "ms" => x * 1e-3,
        "us" | "µs" => x * 1e-6,
        "ns" => x * 1e-9,
        "min" => x * 60.0,
        _ => {
            return Err(format!(
                "invalid duration {raw}: unknown unit `{unit}` (use ns, us, ms, s, min)"
            ))
        }
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("invalid duration {raw}: must not be negative"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A size in bytes ("64KB" = 65536, "10MB" = 10·2^20, "1500B", or a number of bytes).
/// Prefixes are binary (KB = KiB = 1024 B, as the papers' "64 KB" buffers); a unit
/// ending in a lowercase `b` ("64kb") reads as bits and is refused.
pub fn parse_size(raw: &Raw) -> Result<u64, String> {
    let (x, unit) = match raw {
        Raw::Num(x) => (*x, ""),
        Raw::Text(s) => split_number(s).ok_or_else(|| format!("invalid size {raw}"))?,
    };
    if unit.ends_with('b') {
        return Err(format!(
            "invalid size {raw}: `{unit}` reads as bits; sizes are bytes: B, KB (= KiB = \
             1024 B), MB, GB"
        ));
    }
    let mult = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 1.0,
        "KB" | "KIB" | "K" => 1024.0,
        "MB" | "MIB" | "M" => 1024.0 * 1024.0,
        "GB" | "GIB" | "G" => 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(format!(
                "invalid size {raw}: unknown unit `{unit}` (use B, KB, MB, GB)"
            ))
        }
    };
    let b = x * mult;
    if !b.is_finite() || b < 0.0 || b.fract() != 0.0 {
        return Err(format!(
            "invalid size {raw}: must be a whole, non-negative number of bytes"
        ));
    }
    Ok(b as u64)
}

/// A probability ("1%", "0.01").
pub fn parse_probability(raw: &Raw) -> Result<f64, String> {
    let p = match raw {
        Raw::Num(x) => *x,
        Raw::Text(s) => match s.trim().strip_suffix('%') {
            Some(pct) => {
                pct.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("invalid probability {raw}"))?
                    / 100.0
            }
            None => s
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("invalid probability {raw}"))?,
        },
    };
    if !(0.0..=1.0).contains(&p) {
        return Err(format!(
            "invalid probability {raw}: must be between 0 and 1 (0% and 100%)"
        ));
    }
    Ok(p)
}

/// A value that is fixed or drawn uniformly from `lo..hi` once per run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Spread<T> {
    /// Always this value.
    Fixed(T),
    /// Drawn uniformly per run.
    Uniform(T, T),
}

/// Parses "a..b" (a range) or a single value with `one`.
pub fn parse_spread<T: PartialOrd + Copy>(
    raw: &Raw,
    one: impl Fn(&Raw) -> Result<T, String>,
) -> Result<Spread<T>, String> {
    if let Raw::Text(s) = raw {
        if let Some((a, b)) = s.split_once("..") {
            let lo = one(&Raw::Text(a.to_string()))?;
            let hi = one(&Raw::Text(b.to_string()))?;
            if hi < lo {
                return Err(format!("invalid range {raw}: upper end below lower end"));
            }
            return Ok(Spread::Uniform(lo, hi));
        }
    }
    Ok(Spread::Fixed(one(raw)?))
}

/// A number for plotting and regression from a scenario value: bare numbers as they
/// are, sizes in bytes ("64KB" → 65536), rates in bit/s, durations in seconds,
/// percentages as fractions. `None` for text that is none of these (e.g. a name).
pub fn numeric(raw: &Raw) -> Option<f64> {
    match raw {
        Raw::Num(x) => Some(*x),
        Raw::Text(s) if s.trim().ends_with('%') => parse_probability(raw).ok(),
        Raw::Text(_) => parse_size(raw)
            .map(|b| b as f64)
            .or_else(|_| parse_rate(raw).map(|r| r as f64))
            .or_else(|_| parse_duration(raw).map(|d| d.as_secs_f64()))
            .ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Raw {
        Raw::Text(s.into())
    }

    #[test]
    fn rates_with_units() {
        assert_eq!(parse_rate(&t("11Mbps")), Ok(11_000_000));
        assert_eq!(parse_rate(&t("2100 kbps")), Ok(2_100_000));
        assert_eq!(parse_rate(&Raw::Num(384000.0)), Ok(384_000));
        assert!(parse_rate(&t("-5Mbps")).unwrap_err().contains("positive"));
        assert!(parse_rate(&t("5 furlongs"))
            .unwrap_err()
            .contains("unknown unit"));
    }

    #[test]
    fn byte_rates_are_bytes_and_ambiguous_units_are_refused() {
        // An uppercase B is a byte: 8 bits, never silently one.
        assert_eq!(parse_rate(&t("1MB/s")), Ok(8_000_000));
        assert_eq!(parse_rate(&t("1MBps")), Ok(8_000_000));
        assert_eq!(parse_rate(&t("250kB/s")), Ok(2_000_000));
        assert_eq!(parse_rate(&t("1Mbit/s")), Ok(1_000_000));
        assert_eq!(parse_rate(&t("1 Gbps")), Ok(1_000_000_000));
        for bad in ["1Mb", "1MB", "1M", "1mbPS", "1 Mbytes"] {
            assert!(
                parse_rate(&t(bad)).unwrap_err().contains("unknown unit"),
                "{bad}"
            );
        }
        assert!(parse_rate(&t("0.5bps"))
            .unwrap_err()
            .contains("below 1 bit/s"));
        assert!(parse_rate(&Raw::Num(1e300)).unwrap_err().contains("above"));
    }

    #[test]
    fn durations_sizes_and_probabilities() {
        assert_eq!(parse_duration(&t("10ms")), Ok(Duration::from_millis(10)));
        assert_eq!(
            parse_duration(&Raw::Num(1.5)),
            Ok(Duration::from_millis(1500))
        );
        assert_eq!(parse_size(&t("64KB")), Ok(65536));
        assert_eq!(parse_size(&t("1e3")), Ok(1000));
        assert_eq!(parse_probability(&t("1.5%")), Ok(0.015));
        assert!(parse_probability(&t("150%")).is_err());
    }

    #[test]
    fn numeric_values_of_scenario_quantities() {
        assert_eq!(numeric(&t("64KB")), Some(65536.0));
        assert_eq!(numeric(&t("10Mbps")), Some(10e6));
        assert_eq!(numeric(&t("20ms")), Some(0.02));
        assert_eq!(numeric(&t("5%")), Some(0.05));
        assert_eq!(numeric(&Raw::Num(3.0)), Some(3.0));
        assert_eq!(numeric(&t("round-robin")), None);
    }

    #[test]
    fn ranges_parse_both_ends_and_reject_inverted_ones() {
        assert_eq!(
            parse_spread(&t("10ms..20ms"), parse_duration),
            Ok(Spread::Uniform(
                Duration::from_millis(10),
                Duration::from_millis(20)
            ))
        );
        assert_eq!(
            parse_spread(&t("1%..2%"), parse_probability),
            Ok(Spread::Uniform(0.01, 0.02))
        );
        assert!(parse_spread(&t("2%..1%"), parse_probability).is_err());
    }
}
