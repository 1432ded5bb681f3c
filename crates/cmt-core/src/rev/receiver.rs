//! The receiver side of receiver-driven CMT (CMT-Rev's SRC-rev, Cao et al. 2015, CMT-Rev §3.1;
//! MPTCP-rec's DSRor, MPTCP-rec 2016 §4.1; docs/algorithms.md §2.1–2.4, §3.1): per path a TEAR-like window
//! ([`Tear`]), an RTT and rate estimate ([`RateEstimator`]), rounds delimited by the
//! round id the sender puts on every DATA packet, and the decision when to advertise.
//!
//! Rounds: the sender's round id is the sequence number of the latest advert it has
//! applied; the first packet on a path with a newer id closes that path's round,
//! gives an RTT sample (from sending that advert, less the time the sender held that
//! packet after the advert reached it, which the packet's ROUND-INFO reports) and opens
//! the next round. The papers' round id is 4 bits; ours is the advert's whole sequence
//! number (32 bits in ROUND-INFO). A 4-bit id aliases once a path holds packets longer
//! than 16 adverts — a queue of seconds on a degraded path, or a path that carried
//! nothing for a while — and then each sample was taken from the wrong advert: too
//! short when matched to the newest advert with the id (the path's rate went to three
//! times its capacity), or 16 adverts too long, for good, when matched forward from the
//! path's last round (RTT' grew to 4 s and three 4 Mbit/s paths carried 1.9 Mbit/s).
//! Adverts go out (bundled with a SACK, carrying the current rate of
//! every path that has one, so a lost SACK costs nothing but time): every RTT' of a
//! path, by a timer that re-arms itself, so that feedback goes on even when every advert
//! of a round is lost; when a path's arrival rate over the last round exceeds its
//! advertised rate by more than 10 % (our reading of "the sender exceeds the advertised
//! rate"); and on the first packet of a path, to start its rounds. No packet on a path
//! for a receiver RTO (RFC 4960's formula fed with the round RTT samples) is a TEAR
//! timeout.
//!
//! In slow start the emulated window is held at each round's end to twice the packets
//! the path delivered over the last RTT' (TFRC's slow-start rule, RFC 5348 §4.3, in
//! window form): a TCP sender's acks clock it that way, an emulated window has no such
//! clock. Without it, the window of one clean 10 Mbit/s path reached 1300 packets
//! while the rate was still climbing, and the first cut left it at 5 × the path's
//! capacity: seconds of losses and timeouts at start-up.

use super::estimator::{EstimatorConfig, RateEstimator, Round};
use super::tear::Tear;
use crate::rtt::RttEstimator;
use crate::time::{Duration, Time};
use crate::view::PathId;
use std::collections::VecDeque;

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
}

impl Default for RevConfig {
    fn default() -> Self {
        RevConfig {
            estimator: EstimatorConfig::default(),
            dupthresh: 3,
            tolerance: 1.1,
            initial_window: 3.0,
        }
    }
}

struct RevPath {
    tear: Tear,
    est: RateEstimator,
    rto: RttEstimator,
    /// The advert sequence number that opened the path's current round (−1: the
    /// round before any advert; `None` before the path's first packet).
    round: Option<i64>,
    round_bytes: u64,
    /// Delivery rate measurement: bytes received on the path so far, the start of the
    /// current measurement (time, bytes then) and the last rate measured, bytes/s,
    /// over at least one RTT'.
    delivered: u64,
    mark: Option<(Time, u64)>,
    x_recv: Option<f64>,
    /// The receive buffer held the sender back during this round.
    buffer_limited: bool,
    /// When the emulated window was last cut.
    last_cut: Option<Time>,
    timer: Option<Time>,
    silent_at: Option<Time>,
}

impl RevPath {
    /// Ends the current round: updates the rate; `true` when the sender went faster
    /// than the tolerance over its advertised rate (an advert is due).
    fn close_round(&mut self, now: Time, tolerance: f64) -> bool {
        self.measure_delivery(now);
        self.validate_slow_start();
        let before = self.est.advertised();
        self.est.end_round(Round {
            w: self.tear.w,
            n: self.tear.received,
            bytes: self.round_bytes,
            lost: self.tear.holes,
        });
        match (self.est.rtt.filter(|r| *r > 0.0), before) {
            (Some(rtt), Some(before)) => self.round_bytes as f64 / rtt > tolerance * before,
            _ => false,
        }
    }

    /// Starts round `round` and arms the advert timer one RTT' ahead.
    fn open_round(&mut self, now: Time, round: i64) {
        // One window cut per loss event: rounds end at every advert, so several can
        // fall within one RTT, where TCP (whose window TEAR emulates) cuts once.
        let rtt = self.est.rtt.map(|r| Duration::from_nanos((r * 1e9) as u64));
        let may_cut = match (self.last_cut, rtt) {
            (Some(t), Some(rtt)) => now.saturating_since(t) >= rtt,
            _ => true,
        };
        self.tear
            .on_round(std::mem::take(&mut self.buffer_limited), may_cut);
        self.round = Some(round);
        self.round_bytes = 0;
        self.timer = rtt.map(|r| now + r);
    }

    /// Closes a delivery-rate measurement once it spans one RTT'.
    fn measure_delivery(&mut self, now: Time) {
        let Some((t, bytes)) = self.mark else {
            self.mark = Some((now, self.delivered));
            return;
        };
        let span = now.saturating_since(t).as_secs_f64();
        if self.est.rtt.is_some_and(|rtt| span >= rtt && span > 0.0) {
            self.x_recv = Some((self.delivered - bytes) as f64 / span);
            self.mark = Some((now, self.delivered));
        }
    }

    /// In slow start a TCP sender is clocked by its acks: its window is at most twice
    /// what the path delivered in the last round trip. The emulated window has no such
    /// clock — it grows by every packet received while the sender paces at `W/RTT'`,
    /// and RTT' trails a growing queue — so at a round's end in slow start it is held
    /// to twice the packets (of the round's mean size) delivered over the last RTT'
    /// (TFRC's slow-start rule, RFC 5348 §4.3, in window form).
    fn validate_slow_start(&mut self) {
        let n = self.tear.received;
        if n == 0 || !self.tear.in_slow_start() {
            return;
        }
        if let (Some(x), Some(rtt)) = (self.x_recv, self.est.rtt) {
            let packet = self.round_bytes as f64 / n as f64;
            self.tear.limit(2.0 * x * rtt / packet);
        }
    }
}

/// The send times of the recent adverts.
#[derive(Default)]
struct AdvertLog {
    /// Sequence number of the oldest advert kept.
    first: i64,
    times: VecDeque<Time>,
}

impl AdvertLog {
    /// Adverts kept: a round id older than this many adverts gives no RTT sample.
    const KEEP: usize = 256;

    /// Records an advert sent at `now`; returns its sequence number.
    fn push(&mut self, now: Time) -> u32 {
        let seq = self.first + self.times.len() as i64;
        self.times.push_back(now);
        if self.times.len() > Self::KEEP {
            self.times.pop_front();
            self.first += 1;
        }
        seq as u32
    }

    /// When advert `seq` was sent, if it is kept.
    fn sent(&self, seq: i64) -> Option<Time> {
        let i = usize::try_from(seq - self.first).ok()?;
        self.times.get(i).copied()
    }
}

/// Per-association receiver-driven state.
pub struct RevReceiver {
    cfg: RevConfig,
    paths: Vec<RevPath>,
    adverts: AdvertLog,
    /// An advert should go out with the next SACK.
    pub advert_due: bool,
}

impl RevReceiver {
    /// State for `num_paths` paths.
    pub fn new(cfg: RevConfig, num_paths: usize) -> Self {
        let paths = (0..num_paths)
            .map(|_| RevPath {
                tear: Tear::new(cfg.initial_window, cfg.dupthresh),
                est: RateEstimator::new(cfg.estimator),
                rto: RttEstimator::new(
                    Duration::from_secs(3),
                    Duration::from_secs(1),
                    Duration::from_secs(60),
                ),
                round: None,
                round_bytes: 0,
                delivered: 0,
                mark: None,
                x_recv: None,
                buffer_limited: false,
                last_cut: None,
                timer: None,
                silent_at: None,
            })
            .collect();
        RevReceiver {
            cfg,
            paths,
            adverts: AdvertLog::default(),
            advert_due: false,
        }
    }

    /// A DATA packet of `bytes` arrived on `path` with round id `round` (the advert
    /// sequence number the sender had applied, `u32::MAX` before any), per-path
    /// sequence number `seq` and the sender's hold time `hold` (`None`: longer than
    /// ROUND-INFO can say, so no RTT sample comes from it).
    pub fn on_packet(
        &mut self,
        now: Time,
        path: PathId,
        round: u32,
        seq: u64,
        bytes: u32,
        hold: Option<Duration>,
    ) {
        let Some(p) = self.paths.get_mut(path.0) else {
            return;
        };
        let round = if round == u32::MAX { -1 } else { round as i64 };
        if p.round.is_none_or(|current| round > current) {
            if p.round.is_none() {
                self.advert_due = true; // first packet: start the rounds
            }
            if let (Some(sent), Some(hold)) = (self.adverts.sent(round), hold) {
                let r = now.saturating_since(sent).saturating_sub(hold);
                if r > Duration::ZERO {
                    p.est.rtt_sample(r.as_secs_f64());
                    p.rto.sample(r);
                }
            }
            if p.round.is_some() && p.close_round(now, self.cfg.tolerance) {
                self.advert_due = true;
            }
            p.open_round(now, round);
        }
        let w_before = p.tear.w;
        p.tear.on_packet(seq);
        if p.tear.w < w_before {
            p.last_cut = Some(now);
        }
        p.round_bytes += bytes as u64;
        p.delivered += bytes as u64;
        p.est.on_packet(p.tear.w, p.tear.received, bytes);
        p.silent_at = Some(now + p.rto.rto());
    }

    /// The receive buffer has `free` bytes left after a packet: below two full
    /// packets (`mtu`) the sender is held back by it, not by the paths, and every path's
    /// current round is marked as such (window validation applies to it).
    pub fn note_buffer(&mut self, free: u64, mtu: u64) {
        if free < 2 * mtu {
            self.paths.iter_mut().for_each(|p| p.buffer_limited = true);
        }
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
                // Re-arm: if this advert is lost too, the next one still goes.
                p.timer = p
                    .est
                    .rtt
                    .map(|r| now + Duration::from_nanos((r * 1e9) as u64));
                self.advert_due = true;
            }
            if p.silent_at.is_some_and(|t| t <= now) {
                p.tear.on_timeout();
                p.rto.back_off();
                p.silent_at = Some(now + p.rto.rto());
            }
        }
    }

    /// The rates to advertise now, `(path, bytes/s)` for every path that has one,
    /// recording the advert's send time. Returns the advert's sequence number and the
    /// rates.
    pub fn make_advert(&mut self, now: Time) -> (u32, Vec<(u8, u32)>) {
        let seq = self.adverts.push(now);
        self.advert_due = false;
        let rates = self
            .paths
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                let r = p.est.advertised()?;
                Some((i as u8, r.clamp(0.0, u32::MAX as f64) as u32))
            })
            .collect();
        (seq, rates)
    }

    /// Current advertised rate of a path, bytes/s (`None` before its first).
    pub fn rate(&self, path: PathId) -> Option<f64> {
        self.paths.get(path.0).and_then(|p| p.est.advertised())
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

    const NO_HOLD: Option<Duration> = Some(Duration::ZERO);
    /// The round id of packets sent before any advert.
    const BEFORE: u32 = u32::MAX;

    #[test]
    fn rounds_give_rtt_samples_and_rates_and_adverts_follow_the_timer() {
        let mut r = RevReceiver::new(RevConfig::default(), 1);
        // First packet (the sender has seen no advert yet): advert due,
        // with no rate in it yet.
        r.on_packet(ms(0), PathId(0), BEFORE, 0, 1000, NO_HOLD);
        assert!(r.advert_due);
        let (seq, rates) = r.make_advert(ms(0));
        assert_eq!((seq, rates.len()), (0, 0));
        // Packets sent before any advert keep coming; round 0 starts 100 ms after it.
        r.on_packet(ms(10), PathId(0), BEFORE, 1, 1000, NO_HOLD);
        r.on_packet(ms(100), PathId(0), 0, 2, 1000, NO_HOLD);
        // RTT' = 100 ms. The closed round had 2 packets, W = 3 + 2 = 5 at its end:
        // S = 5·1000/0.1 = 50 000, the first rate (no placeholder to average with).
        assert!((r.rate(PathId(0)).unwrap() - 50_000.0).abs() < 1e-6);
        assert_eq!(r.make_advert(ms(100)).1, vec![(0, 50_000)]);
        // The per-round timer fires one RTT' after the round started, and re-arms.
        r.advert_due = false;
        assert_eq!(r.poll_timeout(), Some(ms(200)));
        r.handle_timeout(ms(200));
        assert!(r.advert_due);
        r.advert_due = false;
        assert_eq!(r.poll_timeout(), Some(ms(300)));
        r.handle_timeout(ms(300));
        assert!(
            r.advert_due,
            "a lost advert is followed by another one RTT' later"
        );
    }

    #[test]
    fn the_senders_hold_time_is_taken_out_of_the_rtt_sample() {
        let mut r = RevReceiver::new(RevConfig::default(), 1);
        r.on_packet(ms(0), PathId(0), BEFORE, 0, 1000, NO_HOLD);
        r.make_advert(ms(0));
        // The first packet of round 0 arrives 150 ms after the advert, but the sender
        // held it 50 ms (its window was full): the path's RTT is 100 ms.
        r.on_packet(
            ms(150),
            PathId(0),
            0,
            1,
            1000,
            Some(Duration::from_millis(50)),
        );
        assert_eq!(r.poll_timeout(), Some(ms(250)));
        // A hold too long for ROUND-INFO gives no sample at all.
        let mut r = RevReceiver::new(RevConfig::default(), 1);
        r.on_packet(ms(0), PathId(0), BEFORE, 0, 1000, NO_HOLD);
        r.make_advert(ms(0));
        r.on_packet(ms(9000), PathId(0), 0, 1, 1000, None);
        assert_eq!(r.rate(PathId(0)), None);
    }

    #[test]
    fn a_sender_above_its_advertised_rate_triggers_an_advert() {
        let mut r = RevReceiver::new(RevConfig::default(), 1);
        r.on_packet(ms(0), PathId(0), BEFORE, 0, 1000, NO_HOLD);
        r.make_advert(ms(0));
        r.on_packet(ms(100), PathId(0), 0, 1, 1000, NO_HOLD); // RTT' 100 ms
        r.make_advert(ms(100));
        r.advert_due = false;
        // Round 0 carries 40 packets in 100 ms = 400 kB/s, far above the 40 kB/s
        // advertised (W = 4 over 100 ms): the round's end triggers an advert.
        for s in 2..42 {
            r.on_packet(ms(100 + s), PathId(0), 0, s, 1000, NO_HOLD);
        }
        assert!(!r.advert_due);
        r.on_packet(ms(200), PathId(0), 1, 42, 1000, NO_HOLD);
        assert!(r.advert_due);
    }

    #[test]
    fn silence_for_a_receiver_rto_is_a_tear_timeout() {
        let mut r = RevReceiver::new(RevConfig::default(), 1);
        for s in 0..5 {
            r.on_packet(ms(s), PathId(0), BEFORE, s, 1000, NO_HOLD);
        }
        assert_eq!(r.window(PathId(0)), Some(8.0));
        // RTO.Initial 3 s without a sample.
        r.handle_timeout(ms(4 + 3000));
        assert_eq!(r.window(PathId(0)), Some(1.0));
    }

    #[test]
    fn in_slow_start_the_window_is_held_to_twice_what_the_path_delivers() {
        // A path that delivers 10 packets of 1000 B per 100 ms round trip, whatever the
        // sender is told: TCP's ack clock would hold its window near 2 × 10. Without
        // validation the emulated window grows by every packet received (10 a round)
        // and, after 20 rounds, would be 3 + 200.
        let mut r = RevReceiver::new(RevConfig::default(), 1);
        let mut seq = 0;
        for k in 0..20u64 {
            r.make_advert(ms(100 * k));
            for j in 0..10 {
                r.on_packet(
                    ms(100 * k + 100 + 10 * j),
                    PathId(0),
                    k as u32,
                    seq,
                    1000,
                    NO_HOLD,
                );
                seq += 1;
            }
        }
        let w = r.window(PathId(0)).unwrap();
        assert!((20.0..=31.0).contains(&w), "window {w}");
        // The advertised rate follows: at most twice the 100 kB/s delivered.
        let rate = r.rate(PathId(0)).unwrap();
        assert!(rate <= 2.0 * 100_000.0 * 1.01, "rate {rate}");
    }

    #[test]
    fn a_path_that_holds_packets_longer_than_16_adverts_gets_its_true_rtt() {
        let mut r = RevReceiver::new(RevConfig::default(), 2);
        r.on_packet(ms(0), PathId(0), BEFORE, 0, 1000, NO_HOLD);
        for k in 0..=20 {
            r.make_advert(ms(10 * k));
        }
        // A packet sent in round 2 (advert at 20 ms) arrives at 500 ms: 480 ms, the
        // first sample, so RTT' = 480 ms and the advert timer is due one RTT' later.
        // (A 4-bit round id would have matched it to advert 18, sent at 180 ms.)
        r.on_packet(ms(500), PathId(0), 2, 1, 1000, NO_HOLD);
        assert_eq!(r.poll_timeout(), Some(ms(980)));
        // A packet of an older round than the path's current one opens no round.
        r.on_packet(ms(510), PathId(0), 1, 2, 1000, NO_HOLD);
        assert_eq!(r.poll_timeout(), Some(ms(980)));
    }
}
