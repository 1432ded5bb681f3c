//! Receiver-side RTT and rate estimation per path: Cao et al. 2015, CMT-Rev §3.1 eq. 1–4 and MPTCP-rec 2016
//! §4.1 eq. 1–4 (SRC-rev / SRE-rev / DSRor; docs/algorithms.md §2.1, §2.3, §2.4).
//!
//! * RTT (eq. 1): a sample `R = t_{i+1} − t_i` from sending a rate advert to the first
//!   packet of the round it opened, less the time the sender held that packet. As
//!   printed: `RTT' = α·RTT + (1−α)·R`, α = 1/8, so the newest sample weighs 7/8 and
//!   RTT' is what the papers call it, "the current round trip time" — the RTT of TEAR's
//!   window/RTT rate. (RFC 4960's weighting, `(1−α)·RTT + α·R`, which the papers cite
//!   for α's value, is kept behind `rtt_literal = false`. It trails a growing or
//!   draining queue by about eight rounds, so `W/RTT'` overshot the path while the
//!   queue filled and undershot it after every cut while the queue drained: 0.95 of
//!   Reno's goodput on one clean path, against 0.98 as printed.)
//! * Rate (eq. 2), once per round (decision D1; the text says per packet):
//!   `rate = φ·rate + (1−φ)·S` below the loss threshold, `(1−ϑ)·rate + ϑ·S` above,
//!   φ = ϑ = 1/2, so both branches are the same EWMA (`per_packet` applies it at every
//!   packet, as the text says; the round end then only records the rate). Decision
//!   D2 for the sample:
//!   `S = W·L/RTT'` with `W` the emulated window at the round's end (TEAR's
//!   window/RTT rate, the only reading that lets the estimate probe upward);
//!   `sample_literal` gives the printed `S = (1/N)·(L/RTT')`.
//! * Smoothing before advertising (eq. 3–4, missing from the papers): decision D4,
//!   the weighted mean of the last 8 round rates with weights (1, 1, 1, 1, 0.8, 0.6,
//!   0.4, 0.2), newest first (RFC 5348's loss-interval weights, which TEAR uses) — but
//!   never above the current eq. 2 rate. Smoothing damps increases; it must not delay
//!   the answer to congestion, which both papers describe as eq. 2 halving the rate
//!   "same as CMT's AIMD-like behaviour". Unbounded, the mean kept about 95 % of the
//!   pre-loss rate in the first round after a cut, and the sender kept filling the
//!   queue (a lossy path took 1.07–1.21 × the Mathis rate, Reno 0.90–1.06 ×; with the
//!   bound 1.00–1.10 ×).
//! * No rate before the first round with an RTT sample has ended: the first sample `S`
//!   is the first rate, with no placeholder to average it with (a placeholder of one
//!   initial window per RTO.Initial held start-up back for about a second). Until then
//!   adverts leave the path out and the sender keeps its own slow start.

use std::collections::VecDeque;

/// Smoothing weights, newest first.
pub const WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// Estimator settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EstimatorConfig {
    /// RTT gain α (default 1/8).
    pub alpha: f64,
    /// Use eq. 1 as printed (default; `false`: RFC 4960's weighting).
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
            rtt_literal: true,
            phi: 0.5,
            theta: 0.5,
            plr_threshold: 0.05,
            sample_literal: false,
            per_packet: false,
        }
    }
}

/// What one round showed the receiver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Round {
    /// Emulated window at the round's end, packets.
    pub w: f64,
    /// Packets received in the round.
    pub n: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Holes seen in the round.
    pub lost: u64,
}

/// One path's estimates.
#[derive(Clone, Debug)]
pub struct RateEstimator {
    cfg: EstimatorConfig,
    /// RTT', seconds.
    pub rtt: Option<f64>,
    /// Rate after eq. 2, bytes/s (`None` before the first round with an RTT sample).
    pub rate: Option<f64>,
    /// Loss estimate (EWMA of per-round loss fractions).
    pub plr: f64,
    history: VecDeque<f64>,
}

impl RateEstimator {
    /// No RTT and no rate yet.
    pub fn new(cfg: EstimatorConfig) -> Self {
        RateEstimator {
            cfg,
            rtt: None,
            rate: None,
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
        self.rate = Some(match self.rate {
            None => s,
            Some(r) if self.plr < self.cfg.plr_threshold => {
                self.cfg.phi * r + (1.0 - self.cfg.phi) * s
            }
            Some(r) => (1.0 - self.cfg.theta) * r + self.cfg.theta * s,
        });
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

    /// Closes a round. Returns the new advertised rate.
    pub fn end_round(&mut self, round: Round) -> Option<f64> {
        let Round { w, n, bytes, lost } = round;
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
        if let Some(rate) = self.rate {
            if self.history.len() == WEIGHTS.len() {
                self.history.pop_back();
            }
            self.history.push_front(rate);
        }
        self.advertised()
    }

    /// `Rate_e`: the weighted mean of the recent round rates, but never above the
    /// current rate (the current rate before any round has ended; `None` before the
    /// first rate).
    pub fn advertised(&self) -> Option<f64> {
        if self.history.is_empty() {
            return self.rate;
        }
        let (num, den) = self
            .history
            .iter()
            .zip(WEIGHTS)
            .fold((0.0, 0.0), |(n, d), (r, w)| (n + w * r, d + w));
        let mean = num / den;
        Some(self.rate.map_or(mean, |r| mean.min(r)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rtt_reading_printed_and_rfc() {
        let mut e = RateEstimator::new(EstimatorConfig::default());
        e.rtt_sample(0.100);
        e.rtt_sample(0.180);
        // Printed (default): 1/8·100 + 7/8·180 = 170 ms.
        assert!((e.rtt.unwrap() - 0.170).abs() < 1e-12);
        let mut rfc = RateEstimator::new(EstimatorConfig {
            rtt_literal: false,
            ..Default::default()
        });
        rfc.rtt_sample(0.100);
        rfc.rtt_sample(0.180);
        // RFC: 7/8·100 + 1/8·180 = 110 ms.
        assert!((rfc.rtt.unwrap() - 0.110).abs() < 1e-12);
    }

    #[test]
    fn rounds_by_hand() {
        let mut e = RateEstimator::new(EstimatorConfig::default());
        // No RTT yet: no rate.
        assert_eq!(
            e.end_round(Round {
                w: 10.0,
                n: 10,
                bytes: 15_000,
                lost: 0
            }),
            None
        );
        e.rtt_sample(0.1);
        // S = W·L/RTT = 10·1500/0.1 = 150 000, the first rate as it is.
        assert!(
            (e.end_round(Round {
                w: 10.0,
                n: 10,
                bytes: 15_000,
                lost: 0
            })
            .unwrap()
                - 150_000.0)
                .abs()
                < 1e-6
        );
        // Next round S = 20·1500/0.1 = 300 000 → rate (150 000 + 300 000)/2 = 225 000;
        // advertised = (225 000 + 150 000)/2 with equal weights = 187 500.
        let adv = e
            .end_round(Round {
                w: 20.0,
                n: 20,
                bytes: 30_000,
                lost: 0,
            })
            .unwrap();
        assert!((adv - 187_500.0).abs() < 1e-6);
        // The literal sample: (1/N)·(L/RTT) = (1/10)·(1500/0.1) = 1500.
        let mut lit = RateEstimator::new(EstimatorConfig {
            sample_literal: true,
            ..Default::default()
        });
        lit.rtt_sample(0.1);
        assert!(
            (lit.end_round(Round {
                w: 10.0,
                n: 10,
                bytes: 15_000,
                lost: 0
            })
            .unwrap()
                - 1_500.0)
                .abs()
                < 1e-6
        );
    }

    #[test]
    fn per_packet_updates_apply_eq2_at_every_packet() {
        let mut e = RateEstimator::new(EstimatorConfig {
            per_packet: true,
            ..Default::default()
        });
        e.rtt_sample(0.1);
        // Packets of 1000 B with W = 10, 20: S = 100 000, 200 000; → 100 000 → 150 000.
        e.on_packet(10.0, 1, 1000);
        e.on_packet(20.0, 2, 1000);
        assert!((e.rate.unwrap() - 150_000.0).abs() < 1e-6);
        // The round end records it without another step.
        assert!(
            (e.end_round(Round {
                w: 20.0,
                n: 2,
                bytes: 2000,
                lost: 0
            })
            .unwrap()
                - 150_000.0)
                .abs()
                < 1e-6
        );
    }

    #[test]
    fn smoothing_weights_apply_newest_first_over_eight_rounds() {
        let mut e = RateEstimator::new(EstimatorConfig {
            phi: 0.0, // rate = S, to see the smoothing alone
            theta: 1.0,
            ..Default::default()
        });
        e.rtt_sample(1.0);
        for w in 1..=10 {
            e.end_round(Round {
                w: w as f64,
                n: 1,
                bytes: 1,
                lost: 0,
            }); // S = w
        }
        // Rates kept: 10, 9, …, 3 (newest first).
        let want: f64 = [10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0]
            .iter()
            .zip(WEIGHTS)
            .map(|(r, w)| r * w)
            .sum::<f64>()
            / WEIGHTS.iter().sum::<f64>();
        assert!((e.advertised().unwrap() - want).abs() < 1e-9);
    }

    #[test]
    fn a_window_cut_reaches_the_advert_in_the_round_it_ends() {
        let mut e = RateEstimator::new(EstimatorConfig::default());
        e.rtt_sample(0.1);
        for _ in 0..8 {
            e.end_round(Round {
                w: 100.0,
                n: 100,
                bytes: 150_000,
                lost: 0,
            });
        }
        assert!((e.advertised().unwrap() - 1.5e6).abs() < 1e-6);
        // The window halves: S = 50·1500/0.1 = 750 000, eq. 2 gives 1 125 000, while
        // the weighted mean of (1.125, 1.5 × 7) would still be 1.44 × 10⁶.
        let adv = e.end_round(Round {
            w: 50.0,
            n: 100,
            bytes: 150_000,
            lost: 3,
        });
        assert!((adv.unwrap() - 1_125_000.0).abs() < 1e-6, "{adv:?}");
        // Growth is smoothed: after eight rounds at W = 50, a round at W = 100 raises
        // eq. 2's rate to ≈ 1.125 × 10⁶ but the advert only to the weighted mean of
        // that and the ≈ 0.75–0.84 × 10⁶ before it, ≈ 0.82 × 10⁶.
        for _ in 0..8 {
            e.end_round(Round {
                w: 50.0,
                n: 100,
                bytes: 150_000,
                lost: 0,
            });
        }
        let adv = e.end_round(Round {
            w: 100.0,
            n: 100,
            bytes: 150_000,
            lost: 0,
        });
        let rate = e.rate.unwrap();
        assert!((rate / 1_125_000.0 - 1.0).abs() < 0.01, "{rate}");
        assert!((0.80e6..0.85e6).contains(&adv.unwrap()), "{adv:?}");
    }
}
