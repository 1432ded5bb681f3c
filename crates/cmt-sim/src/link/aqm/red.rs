//! RED, random early detection (Floyd and Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1993), as ns-2 runs it: an exponentially weighted
//! average of the queue length, decayed over idle time; below `min_th` nothing is
//! dropped, between `min_th` and `max_th` an arriving packet is dropped with a
//! probability rising linearly to `max_p` and spread out by the count since the last
//! drop, and above `max_th` every arrival is dropped — or, with `gentle` (ns-2's
//! default since 2001), the probability rises on from `max_p` to 1 at `2 · max_th`.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use cmt_core::{Duration, Time};

/// RED's parameters, in packets (ns-2's classic defaults: `thresh_ 5`,
/// `maxthresh_ 15`, `q_weight_ 0.002`, `linterm_ 10`, `gentle_ true`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    /// Average queue length below which nothing is dropped.
    pub min_th: f64,
    /// Average queue length at which the drop probability reaches `max_p`.
    pub max_th: f64,
    /// Weight of each new sample in the average.
    pub weight: f64,
    /// Drop probability at `max_th`.
    pub max_p: f64,
    /// Between `max_th` and `2 · max_th` the probability rises from `max_p` to 1
    /// instead of jumping to 1.
    pub gentle: bool,
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            min_th: 5.0,
            max_th: 15.0,
            weight: 0.002,
            max_p: 0.1,
            gentle: true,
        }
    }
}

/// The state of one RED queue.
#[derive(Clone, Debug)]
pub struct Red {
    params: RedParams,
    /// The average queue length, packets.
    avg: f64,
    /// Arrivals since the last drop while the average was above `min_th` (`-1`: below).
    count: i64,
    /// When the queue last went empty (the average decays over the idle time).
    idle_since: Option<Time>,
    /// The time to send one typical packet at the link's rate.
    packet_time: Duration,
    rng: ChaCha8Rng,
}

impl Red {
    /// A RED queue for a link that sends a typical (1,500-byte) packet in `packet_time`.
    pub fn new(params: RedParams, packet_time: Duration, rng: ChaCha8Rng) -> Red {
        Red {
            params,
            avg: 0.0,
            count: -1,
            idle_since: Some(Time::ZERO),
            packet_time,
            rng,
        }
    }

    /// A packet arrives at a queue holding `queued` packets: whether RED drops it.
    pub fn drops(&mut self, now: Time, queued: usize) -> bool {
        let w = self.params.weight;
        match self.idle_since.take() {
            Some(since) if queued == 0 => {
                // As many empty-queue samples as packets could have been sent meanwhile.
                let m = now.saturating_since(since).as_nanos() as f64
                    / self.packet_time.as_nanos().max(1) as f64;
                self.avg *= (1.0 - w).powf(m);
            }
            _ => self.avg = (1.0 - w) * self.avg + w * queued as f64,
        }
        let p = &self.params;
        let pb = if self.avg < p.min_th {
            self.count = -1;
            return false;
        } else if self.avg < p.max_th {
            p.max_p * (self.avg - p.min_th) / (p.max_th - p.min_th)
        } else if p.gentle && self.avg < 2.0 * p.max_th {
            p.max_p + (1.0 - p.max_p) * (self.avg - p.max_th) / p.max_th
        } else {
            self.count = 0;
            return true;
        };
        self.count += 1;
        // Spread the drops out: the probability grows with the arrivals since the last.
        let spread = 1.0 - self.count as f64 * pb;
        let pa = if spread <= 0.0 { 1.0 } else { pb / spread };
        if self.rng.gen::<f64>() < pa {
            self.count = 0;
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

    fn red() -> Red {
        let t = Duration::from_micros(1200);
        Red::new(RedParams::default(), t, ChaCha8Rng::seed_from_u64(1))
    }

    #[test]
    fn below_min_th_nothing_is_dropped_and_far_above_everything_is() {
        let mut r = red();
        let now = Time::from_nanos(1_000_000);
        for _ in 0..10_000 {
            assert!(!r.drops(now, 4));
        }
        assert!(r.average() < 5.0);
        // Average pushed past 2 · max_th (gentle): every arrival dropped.
        let mut r = red();
        for _ in 0..10_000 {
            r.drops(now, 100);
        }
        assert!(r.average() > 30.0);
        assert!((0..100).all(|_| r.drops(now, 100)));
    }

    /// With the average held midway (10 packets: pb = 0.05), the spread-out drops fall
    /// on average every 1/(2·pb) arrivals: pa = pb/(1 − count·pb), count counted from 1
    /// after a drop, makes the gap uniform on 1..1/pb − 1 (each with probability
    /// pb/(1 − pb)), mean 10.
    #[test]
    fn midway_the_drops_come_every_half_inverse_probability_arrivals() {
        let mut r = red();
        r.avg = 10.0;
        r.params.weight = 0.0;
        let now = Time::from_nanos(1_000_000);
        let n = 200_000;
        let drops = (0..n).filter(|_| r.drops(now, 10)).count();
        let gap = n as f64 / drops as f64;
        assert!((gap - 10.0).abs() < 0.3, "mean gap {gap}");
    }

    #[test]
    fn an_idle_queue_forgets_its_average() {
        let mut r = red();
        r.avg = 12.0;
        r.went_idle(Time::ZERO);
        // One second idle at 1.2 ms a packet: 833 samples of (1 − 0.002).
        r.drops(Time::from_nanos(1_000_000_000), 0);
        let expect = 12.0 * (1.0f64 - 0.002).powf(1e9 / 1.2e6);
        assert!((r.average() - expect).abs() < 1e-9);
    }
}
