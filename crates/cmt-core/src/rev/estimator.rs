//! Receiver-side RTT and rate estimation per path: seed 000 §3.1 eq. 1–4 and seed 004
//! §4.1 eq. 1–4 (SRC-rev / SRE-rev / DSRor; spec §2.1, §2.3, §2.4).
//!
//! * RTT (eq. 1): a sample `R = t_{i+1} − t_i` from sending a rate advert to the first
//!   packet of the round it opened. GAP resolution: `RTT' = (1−α)·RTT + α·R` with
//!   α = 1/8, RFC 4960's weighting; `rtt_literal` gives the printed
//!   `RTT' = α·RTT + (1−α)·R`.
//! * Rate (eq. 2), once per round (GAP resolution; the text says per packet):
//!   `rate = φ·rate + (1−φ)·S` below the loss threshold, `(1−ϑ)·rate + ϑ·S` above,
//!   φ = ϑ = 1/2, so both branches are the same EWMA (`per_packet` applies it at every
//!   packet, as the text says; the round end then only records the rate). GAP
//!   resolution for the sample:
//!   `S = W·L/RTT'` with `W` the emulated window at the round's end (TEAR's
//!   window/RTT rate, the only reading that lets the estimate probe upward);
//!   `sample_literal` gives the printed `S = (1/N)·(L/RTT')`.
//! * Smoothing before advertising (eq. 3–4, missing from the seeds): GAP resolution,
//!   the weighted mean of the last 8 round rates with weights (1, 1, 1, 1, 0.8, 0.6,
//!   0.4, 0.2), newest first (RFC 5348's loss-interval weights, which TEAR uses).
//! * Before the first RTT sample the rate is `initial_window / RTO.Initial` (there is
//!   no setup handshake in the simulator to time).

use std::collections::VecDeque;

/// Smoothing weights, newest first.
pub const WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// Estimator settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EstimatorConfig {
    /// RTT gain α (default 1/8).
    pub alpha: f64,
    /// Use eq. 1 as printed.
    pub rtt_literal: bool,
    /// φ (default 1/2).
    pub phi: f64,
    /// ϑ (default 1/2).
    pub theta: f64,
    /// Loss-rate threshold between the two branches (default 0.05).
    pub plr_threshold: f64,
    /// Use the printed sample `(1/N)·(L/RTT')`.
    pub sample_literal: bool,
    /// Apply eq. 2 at every packet instead of once per round.
    pub per_packet: bool,
}

impl Default for EstimatorConfig {
    fn default() -> Self {
        EstimatorConfig {
            alpha: 0.125,
            rtt_literal: false,
            phi: 0.5,
            theta: 0.5,
            plr_threshold: 0.05,
            sample_literal: false,
            per_packet: false,
        }
    }
}

/// One path's estimates.
#[derive(Clone, Debug)]
pub struct RateEstimator {
    cfg: EstimatorConfig,
    /// RTT', seconds.
    pub rtt: Option<f64>,
    /// Rate after eq. 2, bytes/s.
    pub rate: f64,
    /// Loss estimate (EWMA of per-round loss fractions).
    pub plr: f64,
    history: VecDeque<f64>,
}

impl RateEstimator {
    /// Starts at `initial_rate` bytes/s.
    pub fn new(cfg: EstimatorConfig, initial_rate: f64) -> Self {
        RateEstimator {
            cfg,
            rtt: None,
            rate: initial_rate,
            plr: 0.0,
            history: VecDeque::with_capacity(WEIGHTS.len()),
        }
    }

    /// Feeds an RTT sample `r` (seconds).
    pub fn rtt_sample(&mut self, r: f64) {
        let a = self.cfg.alpha;
        self.rtt = Some(match self.rtt {
            None => r,
            Some(old) if self.cfg.rtt_literal => a * old + (1.0 - a) * r,
            Some(old) => (1.0 - a) * old + a * r,
        });
    }

    fn update(&mut self, w: f64, n: u64, l: f64, rtt: f64) {
        let s = if self.cfg.sample_literal {
            (1.0 / n.max(1) as f64) * (l / rtt)
        } else {
            w * l / rtt
        };
        self.rate = if self.plr < self.cfg.plr_threshold {
            self.cfg.phi * self.rate + (1.0 - self.cfg.phi) * s
        } else {
            (1.0 - self.cfg.theta) * self.rate + self.cfg.theta * s
        };
    }

    /// A packet of `bytes` arrived, the `n`-th of its round, with emulated window `w`:
    /// eq. 2 per packet when `per_packet` is set.
    pub fn on_packet(&mut self, w: f64, n: u64, bytes: u32) {
        if let (true, Some(rtt)) = (self.cfg.per_packet, self.rtt.filter(|r| *r > 0.0)) {
            if bytes > 0 {
                self.update(w, n, bytes as f64, rtt);
            }
        }
    }

    /// Closes a round: `w` emulated window and `n` packets received in it, `bytes`
    /// their size, `lost` holes seen. Returns the new advertised rate.
    pub fn end_round(&mut self, w: f64, n: u64, bytes: u64, lost: u64) -> f64 {
        let Some(rtt) = self.rtt.filter(|r| *r > 0.0) else {
            return self.advertised();
        };
        if n + lost > 0 {
            let frac = lost as f64 / (n + lost) as f64;
            self.plr += (frac - self.plr) / 8.0;
        }
        let l = if n > 0 { bytes as f64 / n as f64 } else { 0.0 };
        if l > 0.0 && !self.cfg.per_packet {
            self.update(w, n, l, rtt);
        }
        if self.history.len() == WEIGHTS.len() {
            self.history.pop_back();
        }
        self.history.push_front(self.rate);
        self.advertised()
    }

    /// `Rate_e`: the weighted mean of the recent round rates (the current rate before
    /// any round has ended).
    pub fn advertised(&self) -> f64 {
        if self.history.is_empty() {
            return self.rate;
        }
        let (num, den) = self
            .history
            .iter()
            .zip(WEIGHTS)
            .fold((0.0, 0.0), |(n, d), (r, w)| (n + w * r, d + w));
        num / den
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rtt_reading_rfc_and_literal() {
        let mut e = RateEstimator::new(EstimatorConfig::default(), 1000.0);
        e.rtt_sample(0.100);
        e.rtt_sample(0.180);
        // RFC: 7/8·100 + 1/8·180 = 110 ms.
        assert!((e.rtt.unwrap() - 0.110).abs() < 1e-12);
        let mut l = RateEstimator::new(
            EstimatorConfig {
                rtt_literal: true,
                ..Default::default()
            },
            1000.0,
        );
        l.rtt_sample(0.100);
        l.rtt_sample(0.180);
        // Printed: 1/8·100 + 7/8·180 = 170 ms.
        assert!((l.rtt.unwrap() - 0.170).abs() < 1e-12);
    }

    #[test]
    fn rounds_by_hand() {
        let mut e = RateEstimator::new(EstimatorConfig::default(), 10_000.0);
        // No RTT yet: nothing changes.
        assert_eq!(e.end_round(10.0, 10, 15_000, 0), 10_000.0);
        e.rtt_sample(0.1);
        // S = W·L/RTT = 10·1500/0.1 = 150 000; rate = (10 000 + 150 000)/2 = 80 000.
        assert!((e.end_round(10.0, 10, 15_000, 0) - 80_000.0).abs() < 1e-6);
        // Next round S = 20·1500/0.1 = 300 000 → rate 190 000; advertised =
        // (190 000 + 80 000)/2 with equal weights = 135 000.
        assert!((e.end_round(20.0, 20, 30_000, 0) - 135_000.0).abs() < 1e-6);
        // The literal sample: (1/N)·(L/RTT) = (1/10)·(1500/0.1) = 1500.
        let mut lit = RateEstimator::new(
            EstimatorConfig {
                sample_literal: true,
                ..Default::default()
            },
            10_000.0,
        );
        lit.rtt_sample(0.1);
        assert!((lit.end_round(10.0, 10, 15_000, 0) - 5_750.0).abs() < 1e-6);
    }

    #[test]
    fn per_packet_updates_apply_eq2_at_every_packet() {
        let mut e = RateEstimator::new(
            EstimatorConfig {
                per_packet: true,
                ..Default::default()
            },
            0.0,
        );
        e.rtt_sample(0.1);
        // Two packets of 1000 B with W = 10: S = 100 000 each; 0 → 50 000 → 75 000.
        e.on_packet(10.0, 1, 1000);
        e.on_packet(10.0, 2, 1000);
        assert!((e.rate - 75_000.0).abs() < 1e-6);
        // The round end records it without another step.
        assert!((e.end_round(10.0, 2, 2000, 0) - 75_000.0).abs() < 1e-6);
    }

    #[test]
    fn smoothing_weights_apply_newest_first_over_eight_rounds() {
        let mut e = RateEstimator::new(
            EstimatorConfig {
                phi: 0.0, // rate = S, to see the smoothing alone
                theta: 1.0,
                ..Default::default()
            },
            0.0,
        );
        e.rtt_sample(1.0);
        for w in 1..=10 {
            e.end_round(w as f64, 1, 1, 0); // S = w
        }
        // Rates kept: 10, 9, …, 3 (newest first).
        let want: f64 = [10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0]
            .iter()
            .zip(WEIGHTS)
            .map(|(r, w)| r * w)
            .sum::<f64>()
            / WEIGHTS.iter().sum::<f64>();
        assert!((e.advertised() - want).abs() < 1e-9);
    }
}
