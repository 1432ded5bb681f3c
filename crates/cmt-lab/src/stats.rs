//! Descriptive statistics and confidence intervals (spec §13; seed 002 eq. 6).

/// Arithmetic mean (`None` for no samples).
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Sample standard deviation (n − 1 in the denominator; `None` below two samples).
pub fn sample_sd(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    (xs.len() >= 2)
        .then(|| (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt())
}

/// Half-width of the 95 % normal (z) interval of seed 002 eq. 6: `1.960 · SD/√n`.
pub fn ci95_z_half_width(xs: &[f64]) -> Option<f64> {
    Some(1.959_964 * sample_sd(xs)? / (xs.len() as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_values() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs), Some(5.0));
        // Σ(x−5)² = 32, /7.
        assert!((sample_sd(&xs).unwrap() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        let hw = ci95_z_half_width(&xs).unwrap();
        assert!((hw - 1.959_964 * (32.0f64 / 7.0).sqrt() / 8f64.sqrt()).abs() < 1e-12);
        assert_eq!(sample_sd(&[1.0]), None);
    }
}
