//! The receiver side of receiver-driven CMT (CMT-Rev's SRC-rev, seed 000 §3.1;
//! MPTCP-rec's DSRor, seed 004 §4.1; spec §2.1–2.4, §3.1): per path a TEAR-like window
//! ([`Tear`]), an RTT and rate estimate ([`RateEstimator`]), rounds delimited by the
//! round id the sender puts on every DATA packet, and the decision when to advertise.
//!
//! Rounds: the sender's round id is the sequence number of the latest advert it has
//! seen (mod 16); the first packet on a path with a new id closes that path's round,
//! gives an RTT sample (from sending that advert) and opens the next round. Adverts go
//! out (bundled with a SACK, carrying every path's current rate, so a lost SACK costs
//! nothing but time): when a path's per-round timer of one RTT' fires; when a path's
//! arrival rate over the last round exceeds its advertised rate by more than 10 %
//! (GAP resolution of "the sender exceeds the advertised rate"); and on the first packet
//! of a path, to start its rounds. No packet on a path for a receiver RTO (RFC 4960's
//! formula fed with the round RTT samples) is a TEAR timeout.

use super::estimator::{EstimatorConfig, RateEstimator};
use super::tear::Tear;
use crate::path::PathId;
use crate::rtt::RttEstimator;
use crate::time::{Duration, Time};

/// Receiver settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RevConfig {
    /// RTT and rate estimation.
    pub estimator: EstimatorConfig,
    /// Packets after a hole that make it a loss (TEAR's dupthresh).
    pub dupthresh: u32,
    /// Arrival rate above `tolerance × advertised` triggers an advert (default 1.1).
    pub tolerance: f64,
    /// Initial emulated window, packets.
    pub initial_window: f64,
    /// Rate before any RTT sample, bytes/s.
    pub initial_rate: f64,
}

impl Default for RevConfig {
    fn default() -> Self {
        RevConfig {
            estimator: EstimatorConfig::default(),
            dupthresh: 3,
            tolerance: 1.1,
            initial_window: 3.0,
            initial_rate: 4380.0 / 3.0,
        }
    }
}

struct RevPath {
    tear: Tear,
    est: RateEstimator,
    rto: RttEstimator,
    rid: Option<u8>,
    round_bytes: u64,
    timer: Option<Time>,
    silent_at: Option<Time>,
}

/// Per-association receiver-driven state.
pub struct RevReceiver {
    cfg: RevConfig,
    paths: Vec<RevPath>,
    advert_seq: u32,
    advert_times: [Option<Time>; 16],
    /// An advert should go out with the next SACK.
    pub advert_due: bool,
}

impl RevReceiver {
    /// State for `num_paths` paths.
    pub fn new(cfg: RevConfig, num_paths: usize) -> Self {
        let paths = (0..num_paths)
            .map(|_| RevPath {
                tear: Tear::new(cfg.initial_window, cfg.dupthresh),
                est: RateEstimator::new(cfg.estimator, cfg.initial_rate),
                rto: RttEstimator::new(
                    Duration::from_secs(3),
                    Duration::from_secs(1),
                    Duration::from_secs(60),
                ),
                rid: None,
                round_bytes: 0,
                timer: None,
                silent_at: None,
            })
            .collect();
        RevReceiver {
            cfg,
            paths,
            advert_seq: 0,
            advert_times: [None; 16],
            advert_due: false,
        }
    }

    /// A DATA packet of `bytes` arrived on `path` with round id `rid` and per-path
    /// sequence number `seq`.
    pub fn on_packet(&mut self, now: Time, path: PathId, rid: u8, seq: u64, bytes: u32) {
        let Some(p) = self.paths.get_mut(path.0) else {
            return;
        };
        let rid = rid & 0x0f;
        if p.rid != Some(rid) {
            if p.rid.is_none() {
                self.advert_due = true; // first packet: start the rounds
            }
            if let Some(sent) = self.advert_times[rid as usize] {
                let r = now.saturating_since(sent);
                p.est.rtt_sample(r.as_secs_f64());
                p.rto.sample(r);
            }
            if p.rid.is_some() {
                let before = p.est.advertised();
                let (w, n, holes) = (p.tear.w, p.tear.received, p.tear.holes);
                p.est.end_round(w, n, p.round_bytes, holes);
                if let Some(rtt) = p.est.rtt.filter(|r| *r > 0.0) {
                    if p.round_bytes as f64 / rtt > self.cfg.tolerance * before {
                        self.advert_due = true;
                    }
                }
            }
            p.tear.on_round();
            p.rid = Some(rid);
            p.round_bytes = 0;
            p.timer = p
                .est
                .rtt
                .map(|r| now + Duration::from_nanos((r * 1e9) as u64));
        }
        p.tear.on_packet(seq);
        p.round_bytes += bytes as u64;
        p.est.on_packet(p.tear.w, p.tear.received, bytes);
        p.silent_at = Some(now + p.rto.rto());
    }

    /// The earliest receiver timer.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.paths
            .iter()
            .flat_map(|p| [p.timer, p.silent_at])
            .flatten()
            .min()
    }

    /// Runs the timers due at `now`.
    pub fn handle_timeout(&mut self, now: Time) {
        for p in &mut self.paths {
            if p.timer.is_some_and(|t| t <= now) {
                p.timer = None;
                self.advert_due = true;
            }
            if p.silent_at.is_some_and(|t| t <= now) {
                p.tear.on_timeout();
                p.rto.back_off();
                p.silent_at = Some(now + p.rto.rto());
            }
        }
    }

    /// The rates to advertise now (bytes/s per path), recording the advert's send time.
    /// Returns the advert's sequence number and the rates.
    pub fn make_advert(&mut self, now: Time) -> (u32, Vec<u32>) {
        let seq = self.advert_seq;
        self.advert_seq = self.advert_seq.wrapping_add(1);
        self.advert_times[(seq & 0x0f) as usize] = Some(now);
        self.advert_due = false;
        let rates = self
            .paths
            .iter()
            .map(|p| p.est.advertised().clamp(0.0, u32::MAX as f64) as u32)
            .collect();
        (seq, rates)
    }

    /// Current advertised rate of a path, bytes/s.
    pub fn rate(&self, path: PathId) -> Option<f64> {
        self.paths.get(path.0).map(|p| p.est.advertised())
    }

    /// Current emulated window of a path, packets.
    pub fn window(&self, path: PathId) -> Option<f64> {
        self.paths.get(path.0).map(|p| p.tear.w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_nanos(x * 1_000_000)
    }

    #[test]
    fn rounds_give_rtt_samples_and_rates_and_adverts_follow_the_timer() {
        let mut r = RevReceiver::new(RevConfig::default(), 1);
        // First packet (round id 15: the sender has seen no advert yet): advert due.
        r.on_packet(ms(0), PathId(0), 15, 0, 1000);
        assert!(r.advert_due);
        let (seq, rates) = r.make_advert(ms(0));
        assert_eq!((seq, rates.len()), (0, 1));
        // Packets of round 15 keep coming; then round 0 starts 100 ms after the advert.
        r.on_packet(ms(10), PathId(0), 15, 1, 1000);
        r.on_packet(ms(100), PathId(0), 0, 2, 1000);
        // RTT' = 100 ms. The closed round had 2 packets, W = 3 + 2 = 5 at its end:
        // S = 5·1000/0.1 = 50 000; rate = (1460 + 50 000)/2.
        let want = (4380.0 / 3.0 + 50_000.0) / 2.0;
        assert!((r.rate(PathId(0)).unwrap() - want).abs() < 1e-6);
        // The per-round timer fires one RTT' after the round started.
        r.advert_due = false;
        assert_eq!(r.poll_timeout(), Some(ms(200)));
        r.handle_timeout(ms(200));
        assert!(r.advert_due);
    }

    #[test]
    fn a_sender_above_its_advertised_rate_triggers_an_advert() {
        let mut r = RevReceiver::new(RevConfig::default(), 1);
        r.on_packet(ms(0), PathId(0), 15, 0, 1000);
        r.make_advert(ms(0));
        r.on_packet(ms(100), PathId(0), 0, 1, 1000); // RTT' 100 ms
        r.make_advert(ms(100));
        r.advert_due = false;
        // Round 0 carries 40 packets in 100 ms = 400 kB/s, far above the ~25 kB/s
        // advertised: the round's end triggers an advert.
        for s in 2..42 {
            r.on_packet(ms(100 + s), PathId(0), 0, s, 1000);
        }
        assert!(!r.advert_due);
        r.on_packet(ms(200), PathId(0), 1, 42, 1000);
        assert!(r.advert_due);
    }

    #[test]
    fn silence_for_a_receiver_rto_is_a_tear_timeout() {
        let mut r = RevReceiver::new(RevConfig::default(), 1);
        for s in 0..5 {
            r.on_packet(ms(s), PathId(0), 15, s, 1000);
        }
        assert_eq!(r.window(PathId(0)), Some(8.0));
        // RTO.Initial 3 s without a sample.
        r.handle_timeout(ms(4 + 3000));
        assert_eq!(r.window(PathId(0)), Some(1.0));
    }
}
