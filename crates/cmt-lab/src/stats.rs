//! Statistics for reports (docs/algorithms.md §13): mean, sample SD, confidence intervals (Student-t
//! or the z interval of DB-CMT 2022 eq. 6), advantage (Cao et al. 2012, RTX_CSI eq. 2), impact degree
//! (Cao et al. 2012, RTX_CSI eq. 1), least-squares line and R² (DB-CMT 2022 eq. 7–8).

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::sweep::CiMethod;

/// Arithmetic mean (`None` for no samples). Equal samples give exactly their value (a
/// deterministic scenario's seeds print as `0` spread, not as rounding noise).
pub fn mean(xs: &[f64]) -> Option<f64> {
    let first = *xs.first()?;
    if xs.iter().all(|&x| x == first) {
        return Some(first);
    }
    Some(xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Sample standard deviation (n − 1 in the denominator; `None` below two samples).
pub fn sample_sd(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    (xs.len() >= 2).then(|| {
        let sd = (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt();
        // Samples equal up to rounding (a deterministic scenario's seeds) have no spread.
        if sd <= 1e-12 * m.abs() {
            0.0
        } else {
            sd
        }
    })
}

/// Half-width of the 95 % confidence interval of the mean: `q · SD/√n` with q the
/// Student-t quantile t(0.975, n − 1) or the normal 1.960 (DB-CMT 2022 eq. 6).
pub fn ci95_half_width(xs: &[f64], method: CiMethod) -> Option<f64> {
    let sd = sample_sd(xs)?;
    let n = xs.len() as f64;
    let q = match method {
        CiMethod::Z => 1.959_963_984_540_054,
        CiMethod::T => StudentsT::new(0.0, 1.0, n - 1.0).ok()?.inverse_cdf(0.975),
    };
    Some(q * sd / n.sqrt())
}

/// Cao et al. 2012, RTX_CSI eq. 2: how much better `a` is than the baseline `b`, in percent.
pub fn advantage_pct(a: f64, b: f64) -> Option<f64> {
    (b != 0.0).then(|| (a - b) / b * 100.0)
}

/// Cao et al. 2012, RTX_CSI eq. 1: relative change from the baseline `x` to `y`, in percent.
pub fn impact_degree_pct(x: f64, y: f64) -> Option<f64> {
    (x != 0.0).then(|| (x - y).abs() / x * 100.0)
}

/// A paired comparison: the per-seed differences of two grid points that share seeds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paired {
    /// Pairs.
    pub n: usize,
    /// Mean difference.
    pub mean: f64,
    /// Half-width of its 95 % CI (`None` below two pairs).
    pub ci: Option<f64>,
    /// Two-sided exact sign test: the probability, with no difference, of a split of
    /// positive and negative differences at least this uneven (zeros dropped; `None`
    /// when every difference is zero).
    pub sign_p: Option<f64>,
}

/// Statistics of the differences `diffs` (one per seed).
pub fn paired(diffs: &[f64], method: CiMethod) -> Option<Paired> {
    Some(Paired {
        n: diffs.len(),
        mean: mean(diffs)?,
        ci: ci95_half_width(diffs, method),
        sign_p: sign_test_p(
            diffs.iter().filter(|d| **d > 0.0).count(),
            diffs.iter().filter(|d| **d < 0.0).count(),
        ),
    })
}

/// Two-sided exact sign test for `pos` positive and `neg` negative differences:
/// `min(1, 2·P(X ≤ min(pos, neg)))` with `X ~ Binomial(pos + neg, 1/2)`.
pub fn sign_test_p(pos: usize, neg: usize) -> Option<f64> {
    use statrs::distribution::{Binomial, DiscreteCDF};
    let n = (pos + neg) as u64;
    if n == 0 {
        return None;
    }
    let tail = Binomial::new(0.5, n).ok()?.cdf(pos.min(neg) as u64);
    Some((2.0 * tail).min(1.0))
}

/// A least-squares line `y = slope·x + intercept` with its R².
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// b of DB-CMT 2022 eq. 7.
    pub slope: f64,
    /// a of DB-CMT 2022 eq. 7.
    pub intercept: f64,
    /// DB-CMT 2022 eq. 8: `1 − Σ(y − ŷ)²/Σ(y − ȳ)²` (1 when all y are equal and fitted).
    pub r2: f64,
}

/// Least squares over `(x, y)` points; `None` below two distinct x.
pub fn linear_fit(points: &[(f64, f64)]) -> Option<Fit> {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if points.len() < 2 || sxx == 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let ss_res: f64 = points
        .iter()
        .map(|p| (p.1 - (slope * p.0 + intercept)).powi(2))
        .sum();
    let ss_tot: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    let r2 = if ss_tot == 0.0 {
        1.0
    } else {
        1.0 - ss_res / ss_tot
    };
    Some(Fit {
        slope,
        intercept,
        r2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * (1.0 + b.abs())
    }

    #[test]
    fn mean_sd_and_both_intervals_by_hand() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs), Some(5.0));
        let sd = (32.0f64 / 7.0).sqrt(); // Σ(x−5)² = 32
        assert!(close(sample_sd(&xs).unwrap(), sd));
        assert!(close(
            ci95_half_width(&xs, CiMethod::Z).unwrap(),
            1.959_963_984_540_054 * sd / 8f64.sqrt()
        ));
        // t(0.975, 7) = 2.364624 (tables).
        let t = ci95_half_width(&xs, CiMethod::T).unwrap() / (sd / 8f64.sqrt());
        assert!((t - 2.364_624).abs() < 1e-5, "t quantile {t}");
        // n = 20 as in the papers: t(0.975, 19) = 2.093024.
        let twenty: Vec<f64> = (0..20).map(f64::from).collect();
        let t = ci95_half_width(&twenty, CiMethod::T).unwrap()
            / (sample_sd(&twenty).unwrap() / 20f64.sqrt());
        assert!((t - 2.093_024).abs() < 1e-5, "t quantile {t}");
        assert_eq!(sample_sd(&[1.0]), None);
        // Equal samples: exact mean, zero spread (sum/n would leave rounding noise).
        assert_eq!(mean(&[57.29; 3]), Some(57.29));
        assert_eq!(sample_sd(&[57.29; 3]), Some(0.0));
        assert_eq!(sample_sd(&[57.16, 57.16 + 1e-14, 57.16]), Some(0.0));
        assert_eq!(ci95_half_width(&[1.0], CiMethod::T), None);
    }

    #[test]
    fn paired_differences_and_the_sign_test_by_hand() {
        // 10 seeds, 9 better and 1 worse: P(X ≤ 1) = 11/1024, two-sided 22/1024.
        let d = [1.0, 2.0, 1.5, 0.5, 1.0, 2.0, 1.0, 0.5, 1.5, -1.0];
        let p = paired(&d, CiMethod::T).unwrap();
        assert_eq!(p.n, 10);
        assert!(close(p.mean, 1.0));
        assert!(close(p.sign_p.unwrap(), 22.0 / 1024.0));
        assert!(close(
            p.ci.unwrap(),
            ci95_half_width(&d, CiMethod::T).unwrap()
        ));
        // Balanced signs: p = 1; zeros are dropped; all zero: no test.
        assert!(close(sign_test_p(3, 3).unwrap(), 1.0));
        assert!(close(sign_test_p(5, 0).unwrap(), 2.0 / 32.0));
        assert_eq!(sign_test_p(0, 0), None);
        assert_eq!(paired(&[0.0, 0.0], CiMethod::T).unwrap().sign_p, None);
    }

    #[test]
    fn advantage_and_impact_degree_match_seed_001() {
        // Eq. 2: A = 1.2, B = 1.0 → 20 %.
        assert!(close(advantage_pct(1.2, 1.0).unwrap(), 20.0));
        assert!(close(advantage_pct(0.9, 1.0).unwrap(), -10.0));
        // Eq. 1: without background 4.0, with 3.0 → 25 %; symmetric in sign.
        assert!(close(impact_degree_pct(4.0, 3.0).unwrap(), 25.0));
        assert!(close(impact_degree_pct(4.0, 5.0).unwrap(), 25.0));
        assert_eq!(advantage_pct(1.0, 0.0), None);
    }

    #[test]
    fn least_squares_and_r2_by_hand() {
        // Exact line: slope 2, intercept 1, R² 1.
        let f = linear_fit(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]).unwrap();
        assert!(close(f.slope, 2.0) && close(f.intercept, 1.0) && close(f.r2, 1.0));
        // (1,1) (2,3) (3,2): x̄ = 2, ȳ = 2, Sxy = 1, Sxx = 2 → b = 0.5, a = 1;
        // residuals −0.5, 1, −0.5 → SSres = 1.5, SStot = 2 → R² = 0.25.
        let f = linear_fit(&[(1.0, 1.0), (2.0, 3.0), (3.0, 2.0)]).unwrap();
        assert!(close(f.slope, 0.5) && close(f.intercept, 1.0) && close(f.r2, 0.25));
        assert_eq!(linear_fit(&[(1.0, 1.0), (1.0, 2.0)]), None);
    }
}
