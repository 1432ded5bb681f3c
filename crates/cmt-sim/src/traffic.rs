//! Open-loop background traffic (docs/algorithms.md §11.3–11.6): CBR, Poisson, Pareto on/off with
//! ns-2 semantics, and the RTX_CSI paper's VBR generator (docs/algorithms.md §11.5, decision D15 (docs/algorithms.md)).
//! Packets follow a chain of links to a sink; the offered load is a bit rate, fixed or
//! a fraction of the first link's rate, possibly drawn once per run.

use cmt_core::{Duration, Time};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};

/// Packet sizes of a source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sizes {
    /// Always this many bytes.
    Fixed(u32),
    /// The Internet mix of Cao et al. 2015, CMT-Rev §4.1 (after CMT-QA): 50 % 44 B, 25 % 576 B, 25 % 1500 B.
    Mix,
    /// Uniform integers in `[min, max]` (the RTX_CSI paper's VBR: 100–200 B).
    Uniform(u32, u32),
}

impl Sizes {
    /// Mean size in bytes.
    pub fn mean(&self) -> f64 {
        match *self {
            Sizes::Fixed(s) => s as f64,
            Sizes::Mix => 0.5 * 44.0 + 0.25 * 576.0 + 0.25 * 1500.0,
            Sizes::Uniform(a, b) => (a as f64 + b as f64) / 2.0,
        }
    }
    fn draw(&self, rng: &mut ChaCha8Rng) -> u32 {
        match *self {
            Sizes::Fixed(s) => s,
            Sizes::Mix => match rng.gen_range(0..4) {
                0 | 1 => 44,
                2 => 576,
                _ => 1500,
            },
            Sizes::Uniform(a, b) => rng.gen_range(a..=b),
        }
    }
}

/// The arrival process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pattern {
    /// Constant bit rate: gap = 8·size/rate.
    Cbr,
    /// Exponential gaps with the mean of the rate.
    Poisson,
    /// ns-2 `Application/Traffic/Pareto`: bursts at the peak rate whose packet counts and
    /// idle times are Pareto-distributed with `shape`; mean burst and idle durations as
    /// given; peak = rate·(burst + idle)/burst so that the mean is `rate`.
    Pareto {
        /// Mean burst duration.
        burst: Duration,
        /// Mean idle duration.
        idle: Duration,
        /// Pareto shape (ns-2 default 1.5).
        shape: f64,
    },
    /// The RTX_CSI paper's VBR (decision D15 in docs/algorithms.md): every `interval` the current rate is redrawn uniformly in
    /// [0.5, 1.5]·rate; gap = 8·size/current rate.
    Vbr {
        /// Rate redraw interval (the RTX_CSI paper: 200 ms).
        interval: Duration,
    },
}

/// One source's state.
pub struct Source {
    pattern: Pattern,
    sizes: Sizes,
    /// Mean offered rate, bits/s.
    pub rate_bps: f64,
    stop: Time,
    rng: ChaCha8Rng,
    burst_left: u64,
    vbr_rate: f64,
    vbr_next: Time,
}

fn secs(d: f64) -> Duration {
    Duration::from_secs_f64(d)
}

/// `Pareto(scale, shape) = scale·U^(−1/shape)` (ns-2 `tools/rng.h`).
fn pareto(rng: &mut ChaCha8Rng, scale: f64, shape: f64) -> f64 {
    let u: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
    scale * u.powf(-1.0 / shape)
}

impl Source {
    /// A source offering `rate_bps` on average until `stop`.
    pub fn new(pattern: Pattern, sizes: Sizes, rate_bps: f64, stop: Time, rng: ChaCha8Rng) -> Self {
        Source {
            pattern,
            sizes,
            rate_bps,
            stop,
            rng,
            burst_left: 0,
            vbr_rate: rate_bps,
            vbr_next: Time::ZERO,
        }
    }

    /// The packet to send at `now` (its size) and when the next one goes, if before the stop.
    pub fn emit(&mut self, now: Time) -> (u32, Option<Time>) {
        let size = self.sizes.draw(&mut self.rng);
        if self.rate_bps <= 0.0 {
            return (size, None);
        }
        let gap = match self.pattern {
            Pattern::Cbr => secs(8.0 * size as f64 / self.rate_bps),
            Pattern::Poisson => {
                let mean = 8.0 * self.sizes.mean() / self.rate_bps;
                secs(Exp::new(1.0 / mean).map_or(mean, |e| e.sample(&mut self.rng)))
            }
            Pattern::Pareto { burst, idle, shape } => {
                let (b, i) = (burst.as_secs_f64(), idle.as_secs_f64());
                let peak = self.rate_bps * (b + i) / b.max(1e-12);
                let interval = 8.0 * size as f64 / peak;
                if self.burst_left > 1 {
                    self.burst_left -= 1;
                    secs(interval)
                } else {
                    // Start a new burst after an idle period (ns-2 `next_interval`).
                    let burst_pkts = b * peak / (8.0 * self.sizes.mean());
                    let p1 = burst_pkts * (shape - 1.0) / shape;
                    self.burst_left = pareto(&mut self.rng, p1, shape).round().max(1.0) as u64;
                    let p2 = i * (shape - 1.0) / shape;
                    secs(interval + pareto(&mut self.rng, p2, shape))
                }
            }
            Pattern::Vbr { interval } => {
                while now >= self.vbr_next {
                    self.vbr_rate = self.rate_bps * self.rng.gen_range(0.5..=1.5);
                    self.vbr_next += interval.max(Duration::from_nanos(1));
                }
                secs(8.0 * size as f64 / self.vbr_rate)
            }
        };
        let next = now + gap;
        (size, (next < self.stop).then_some(next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    /// Bits offered over `[0, secs)` as a fraction of the target rate.
    fn offered(pattern: Pattern, sizes: Sizes, secs_total: u64, seed: u64) -> f64 {
        let stop = Time::ZERO + Duration::from_secs(secs_total);
        let mut s = Source::new(pattern, sizes, 2e6, stop, stream(seed, "t"));
        let (mut t, mut bits) = (Some(Time::ZERO), 0.0);
        while let Some(now) = t {
            let (size, next) = s.emit(now);
            bits += 8.0 * size as f64;
            t = next;
        }
        bits / (2e6 * secs_total as f64)
    }

    #[test]
    fn cbr_poisson_and_vbr_offer_their_rate() {
        assert!((offered(Pattern::Cbr, Sizes::Fixed(1000), 60, 1) - 1.0).abs() < 0.001);
        assert!((offered(Pattern::Poisson, Sizes::Mix, 60, 1) - 1.0).abs() < 0.02);
        let vbr = Pattern::Vbr {
            interval: Duration::from_millis(200),
        };
        assert!((offered(vbr, Sizes::Uniform(100, 200), 60, 1) - 1.0).abs() < 0.02);
    }

    #[test]
    fn the_size_mix_has_the_seeds_proportions() {
        let mut rng = stream(3, "m");
        let n = 100_000;
        let small = (0..n).filter(|_| Sizes::Mix.draw(&mut rng) == 44).count();
        assert!((small as f64 / n as f64 - 0.5).abs() < 0.01);
        assert!((Sizes::Mix.mean() - 541.0).abs() < 1e-9);
    }
}
