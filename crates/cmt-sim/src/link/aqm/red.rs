//! RED, random early detection (Floyd and Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1993), as ns-2.35 runs it: an exponentially
//! weighted average of the queue length, decayed over idle time; below `min_th` nothing
//! is dropped, between `min_th` and `max_th` an arriving packet is dropped with a
//! probability rising linearly to `max_p` and spread out by the count since the last
//! drop, and above `max_th` every arrival is dropped — or, with `gentle` (ns-2's
//! default since 2001), the probability rises on from `max_p` to 1 at `2 · max_th`.
//!
//! Unless given, the thresholds and the weight are configured from the link as ns-2.35
//! does by default (`thresh_ 0`, `maxthresh_ 0`, `q_weight_ -1`, after Floyd's note on
//! automatic configuration): with `C` the link's rate in 500-byte packets per second,
//! `min_th = max(5, C · 5 ms / 2)`, `max_th = 3 · min_th`, and
//! `weight = 1 − exp(−1 / (10 · RTT · C))` with `RTT = max(0.1 s, 3 · (delay + 1/C))`.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use cmt_core::{Duration, Time};

/// RED's parameters (packets of average queue; `None`: configured from the link as
/// ns-2.35 does, see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    /// Average queue length below which nothing is dropped.
    pub min_th: Option<f64>,
    /// Average queue length at which the drop probability reaches `max_p`.
    pub max_th: Option<f64>,
    /// Weight of each new sample in the average.
    pub weight: Option<f64>,
    /// Drop probability at `max_th` (ns-2's `1/linterm_`, 0.1).
    pub max_p: f64,
    /// Between `max_th` and `2 · max_th` the probability rises from `max_p` to 1
    /// instead of jumping to 1 (ns-2's `gentle_`, on).
    pub gentle: bool,
    /// ns-2's `wait_` (on): drops spread as `pb / (2 − count·pb)`, waiting about twice as
    /// long after a drop; off, the paper's `pb / (1 − count·pb)`.
    pub wait: bool,
    /// Mark ECN-capable packets Congestion Experienced instead of dropping them while
    /// the average is below `max_th` (RFC 3168 §7; ns-2's `setbit_`, off); above it
    /// they are dropped.
    pub ecn: bool,
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            min_th: None,
            max_th: None,
            weight: None,
            max_p: 0.1,
            gentle: true,
            wait: true,
            ecn: false,
        }
    }
}

/// RED's thresholds and weight for a link, as used.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resolved {
    /// Average queue length below which nothing is dropped.
    pub min_th: f64,
    /// Average queue length at which the drop probability reaches `max_p`.
    pub max_th: f64,
    /// Weight of each new sample in the average.
    pub weight: f64,
}

/// ns-2's `mean_pktsize_`: the packet size that turns the link's rate into packets.
const MEAN_PACKET: f64 = 500.0;
/// ns-2's `targetdelay_`.
const TARGET_DELAY: f64 = 0.005;

impl RedParams {
    /// The thresholds and weight on a link of `rate_bps` and propagation `delay`: those
    /// given, the rest as ns-2.35 configures them.
    pub fn resolve(&self, rate_bps: u64, delay: Duration) -> Resolved {
        let c = (rate_bps as f64 / (8.0 * MEAN_PACKET)).max(1e-9);
        let min_th = self.min_th.unwrap_or((TARGET_DELAY * c / 2.0).max(5.0));
        let max_th = self.max_th.unwrap_or(3.0 * min_th);
        let rtt = (3.0 * (delay.as_nanos() as f64 / 1e9 + 1.0 / c)).max(0.1);
        let weight = self.weight.unwrap_or(1.0 - (-1.0 / (10.0 * rtt * c)).exp());
        Resolved {
            min_th,
            max_th,
            weight,
        }
    }
}

/// The state of one RED queue.
#[derive(Clone, Debug)]
pub struct Red {
    params: RedParams,
    th: Resolved,
    /// The average queue length, packets.
    avg: f64,
    /// Arrivals since the last drop while the average was above `min_th` (`-1`: below).
    count: i64,
    /// When the queue last went empty (the average decays over the idle time).
    idle_since: Option<Time>,
    /// The time to send one 500-byte packet at the link's rate (ns-2's idle decay).
    packet_time: Duration,
    rng: ChaCha8Rng,
    /// Packets marked instead of dropped.
    pub(crate) marks: u64,
}

impl Red {
    /// A RED queue for a link of `rate_bps` and propagation `delay`.
    pub fn new(params: RedParams, rate_bps: u64, delay: Duration, rng: ChaCha8Rng) -> Red {
        Red {
            params,
            th: params.resolve(rate_bps, delay),
            avg: 0.0,
            count: -1,
            idle_since: Some(Time::ZERO),
            packet_time: Duration::transmission(MEAN_PACKET as u64, rate_bps.max(1)),
            rng,
            marks: 0,
        }
    }

    /// A packet arrives at a queue holding `queued` packets: whether RED drops it.
    pub fn drops(&mut self, now: Time, queued: usize) -> bool {
        let w = self.th.weight;
        match self.idle_since.take() {
            Some(since) if queued == 0 => {
                // As many empty-queue samples as packets could have been sent meanwhile.
                let m = now.saturating_since(since).as_nanos() as f64
                    / self.packet_time.as_nanos().max(1) as f64;
                self.avg *= (1.0 - w).powf(m);
            }
            _ => self.avg = (1.0 - w) * self.avg + w * queued as f64,
        }
        let (p, th) = (&self.params, &self.th);
        let pb = if self.avg < th.min_th {
            self.count = -1;
            return false;
        } else if self.avg < th.max_th {
            p.max_p * (self.avg - th.min_th) / (th.max_th - th.min_th)
        } else if p.gentle && self.avg < 2.0 * th.max_th {
            p.max_p + (1.0 - p.max_p) * (self.avg - th.max_th) / th.max_th
        } else {
            self.count = 0;
            return true;
        };
        self.count += 1;
        // Spread the drops out: the probability grows with the arrivals since the last.
        let counted = self.count as f64 * pb;
        let pa = match (counted < 1.0, p.wait) {
            (false, _) => 1.0,
            (true, true) => pb / (2.0 - counted),
            (true, false) => pb / (1.0 - counted),
        };
        if self.rng.gen::<f64>() < pa {
            self.count = 0;
            return true;
        }
        false
    }

    /// RED just chose to drop `pkt`: whether it marks it instead (ECN on, the packet
    /// ECN-capable and the average below `max_th`), counting the mark.
    pub(crate) fn marks<P: crate::link::Carried>(&mut self, pkt: &mut P) -> bool {
        if self.params.ecn && self.avg < self.th.max_th && pkt.ecn_capable() {
            pkt.mark_ce();
            self.marks += 1;
            return true;
        }
        false
    }

    /// The queue went empty at `now`.
    pub fn went_idle(&mut self, now: Time) {
        self.idle_since = Some(now);
    }

    /// The average queue length, packets.
    pub fn average(&self) -> f64 {
        self.avg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// ns-2's classic values (`thresh_ 5`, `maxthresh_ 15`, `q_weight_ 0.002`) on a link
    /// that sends a 500-byte packet in 0.4 ms (10 Mbit/s).
    fn red(wait: bool) -> Red {
        let p = RedParams {
            min_th: Some(5.0),
            max_th: Some(15.0),
            weight: Some(0.002),
            wait,
            ..RedParams::default()
        };
        let rng = ChaCha8Rng::seed_from_u64(1);
        Red::new(p, 10_000_000, Duration::from_millis(10), rng)
    }

    /// ns-2.35's automatic configuration on 10 Mbit/s, 10 ms: C = 2,500 packets/s, so
    /// min_th = max(5, 2,500 · 0.005 / 2) = 6.25, max_th = 18.75, RTT = max(0.1,
    /// 3 · (0.01 + 0.0004)) = 0.1 s, weight = 1 − exp(−1/2,500).
    #[test]
    fn the_automatic_configuration_is_ns2s() {
        let r = RedParams::default().resolve(10_000_000, Duration::from_millis(10));
        assert_eq!((r.min_th, r.max_th), (6.25, 18.75));
        assert!((r.weight - (1.0 - (-1.0f64 / 2500.0).exp())).abs() < 1e-15);
        // A slow link keeps 5 packets; a given threshold wins.
        let slow = RedParams::default().resolve(1_000_000, Duration::from_millis(10));
        assert_eq!((slow.min_th, slow.max_th), (5.0, 15.0));
        let given = RedParams {
            min_th: Some(20.0),
            ..RedParams::default()
        };
        assert_eq!(given.resolve(10_000_000, Duration::ZERO).max_th, 60.0);
    }

    #[test]
    fn below_min_th_nothing_is_dropped_and_far_above_everything_is() {
        let mut r = red(true);
        let now = Time::from_nanos(1_000_000);
        for _ in 0..10_000 {
            assert!(!r.drops(now, 4));
        }
        assert!(r.average() < 5.0);
        // Average pushed past 2 · max_th (gentle): every arrival dropped.
        let mut r = red(true);
        for _ in 0..10_000 {
            r.drops(now, 100);
        }
        assert!(r.average() > 30.0);
        assert!((0..100).all(|_| r.drops(now, 100)));
    }

    /// With the average held midway (10 packets: pb = 0.05) the gap between drops, in
    /// arrivals counted from 1 after a drop, is: with the paper's pb/(1 − count·pb),
    /// uniform on 1..19 (each pb/(1 − pb)), mean 10; with ns-2's `wait_`,
    /// pb/(2 − count·pb), each of 1..19 with pb/(2 − pb) and 20 (where count·pb reaches
    /// 1 and the drop is certain) with the rest, mean 190·pb/(2 − pb) + 20·(1 − 19·pb/(2
    /// − pb)) = 15.13.
    #[test]
    fn midway_the_drops_are_spread_as_the_paper_or_as_ns2_waits() {
        for (wait, mean) in [(false, 10.0), (true, 15.13)] {
            let mut r = red(wait);
            r.avg = 10.0;
            r.th.weight = 0.0;
            let now = Time::from_nanos(1_000_000);
            let n = 300_000;
            let drops = (0..n).filter(|_| r.drops(now, 10)).count();
            let gap = n as f64 / drops as f64;
            assert!((gap - mean).abs() < 0.3, "wait {wait}: mean gap {gap}");
        }
    }

    #[test]
    fn an_idle_queue_forgets_its_average() {
        let mut r = red(true);
        r.avg = 12.0;
        r.went_idle(Time::ZERO);
        // One second idle at 0.4 ms a packet: 2,500 samples of (1 − 0.002).
        r.drops(Time::from_nanos(1_000_000_000), 0);
        let expect = 12.0 * (1.0f64 - 0.002).powf(2500.0);
        assert!((r.average() - expect).abs() < 1e-9);
    }

    /// A test packet: ECN-capable or not, marked or not.
    struct Pkt(bool, bool);

    impl crate::link::Carried for Pkt {
        fn wire_size(&self) -> u32 {
            500
        }
        fn flow(&self) -> u32 {
            0
        }
        fn ecn_capable(&self) -> bool {
            self.0
        }
        fn mark_ce(&mut self) {
            self.1 = true;
        }
    }

    /// RFC 3168 §7: with ECN on, a drop RED chooses while the average is below max_th
    /// marks an ECN-capable packet instead; a packet without ECN is dropped as before,
    /// and at or above max_th every packet is dropped.
    #[test]
    fn with_ecn_red_marks_below_max_th_and_drops_above_it() {
        let mut r = red(true);
        r.params.ecn = true;
        let (mut ect, mut plain) = (Pkt(true, false), Pkt(false, false));
        r.avg = 10.0; // between min_th 5 and max_th 15
        assert!(r.marks(&mut ect) && ect.1);
        assert!(!r.marks(&mut plain) && !plain.1);
        r.avg = 15.0;
        let mut late = Pkt(true, false);
        assert!(!r.marks(&mut late) && !late.1);
        assert_eq!(r.marks, 1);
        r.params.ecn = false;
        r.avg = 10.0;
        assert!(!r.marks(&mut Pkt(true, false)));
    }
}
