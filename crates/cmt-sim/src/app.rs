//! Application-limited use of a closed-loop flow: web-like request / response
//! (`[[traffic]] kind = "web"`, docs/algorithms.md §11.10). The flow sends one object,
//! waits until the receiver has it all — the object's flow completion time — then
//! thinks, and sends the next. Object sizes are Pareto-distributed: web file sizes are
//! heavy-tailed with a tail index near 1.1–1.2 (Crovella and Bestavros, "Self-Similarity
//! in World Wide Web Traffic: Evidence and Possible Causes", IEEE/ACM ToN 1997); think
//! times are exponential.

use cmt_core::{Duration, Time};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Largest object drawn, bytes: the Pareto tail is cut here (a bounded Pareto, as
/// workload generators such as SURGE bound theirs), which lowers the mean slightly.
pub const MAX_OBJECT: u64 = 100 << 20;

/// A web-like source's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WebModel {
    /// Mean object size, bytes (of the unbounded Pareto).
    pub object_mean: f64,
    /// Pareto shape (tail index) of object sizes, above 1; infinite: every object has
    /// the mean size.
    pub shape: f64,
    /// Mean think time between one object's completion and the next one's start.
    pub think: Duration,
}

impl WebModel {
    /// One object's size in bytes, at least 1 and at most [`MAX_OBJECT`].
    pub fn object(&self, rng: &mut ChaCha8Rng) -> u32 {
        let size = if self.shape.is_infinite() {
            self.object_mean
        } else {
            // Inverse transform: x_m / U^(1/a), with x_m = mean·(a − 1)/a.
            let xm = self.object_mean * (self.shape - 1.0) / self.shape;
            let u: f64 = 1.0 - rng.gen::<f64>(); // in (0, 1]
            xm / u.powf(1.0 / self.shape)
        };
        size.round().clamp(1.0, MAX_OBJECT as f64) as u32
    }

    /// One think time (exponential with the mean; zero when the mean is zero).
    pub fn think(&self, rng: &mut ChaCha8Rng) -> Duration {
        let u: f64 = 1.0 - rng.gen::<f64>();
        Duration::from_secs_f64(-u.ln() * self.think.as_secs_f64())
    }
}

/// A web-like flow's progress.
pub(crate) struct WebState {
    pub(crate) model: WebModel,
    pub(crate) rng: ChaCha8Rng,
    /// Bytes the receiver must have delivered when the current object is complete.
    pub(crate) target: u64,
    /// When the current object was handed to the sender (none while thinking).
    pub(crate) started: Option<Time>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Shape 2.5 has a finite variance: the sample mean of 200,000 draws lies within
    /// 2 % of the configured mean (the bound at 100 MB is never reached at this mean).
    #[test]
    fn pareto_objects_keep_their_mean_and_a_fixed_size_is_exact() {
        let m = WebModel {
            object_mean: 50_000.0,
            shape: 2.5,
            think: Duration::from_secs(1),
        };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 200_000;
        let sizes: Vec<u32> = (0..n).map(|_| m.object(&mut rng)).collect();
        let mean = sizes.iter().map(|&s| s as f64).sum::<f64>() / n as f64;
        assert!((mean / 50_000.0 - 1.0).abs() < 0.02, "mean {mean}");
        // The smallest is x_m = 30,000 bytes.
        assert!(sizes.iter().all(|&s| s >= 30_000));
        let think = (0..n).map(|_| m.think(&mut rng).as_secs_f64()).sum::<f64>() / n as f64;
        assert!((think - 1.0).abs() < 0.01, "think {think}");
        let fixed = WebModel {
            shape: f64::INFINITY,
            ..m
        };
        assert_eq!(fixed.object(&mut rng), 50_000);
    }
}
