//! Per-path RTT estimation and RTO (RFC 9260 §6.3.1, docs/algorithms.md §1.2).

use crate::time::Duration;

/// SRTT / RTTVAR / RTO of one path, with RTO.Alpha = 1/8 and RTO.Beta = 1/4.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    rto: Duration,
    min_rtt: Option<Duration>,
    max_srtt: Option<Duration>,
    rto_min: Duration,
    rto_max: Duration,
}

impl RttEstimator {
    /// A path with no sample yet: RTO = RTO.Initial.
    pub fn new(rto_initial: Duration, rto_min: Duration, rto_max: Duration) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            rto: rto_initial,
            min_rtt: None,
            max_srtt: None,
            rto_min,
            rto_max,
        }
    }

    /// Feeds one RTT measurement (C1–C3 of RFC 9260 §6.3.1). Uses a real absolute
    /// value for `|SRTT − R|` (ns-2 truncates to an integer; docs/algorithms.md §1.2 says not to).
    pub fn sample(&mut self, r: Duration) {
        let r_ns = r.as_nanos() as i128;
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Duration::from_nanos(r.as_nanos() / 2);
            }
            Some(srtt) => {
                let s = srtt.as_nanos() as i128;
                let var = self.rttvar.as_nanos() as i128;
                let var = (3 * var + (s - r_ns).abs()) / 4;
                let s = (7 * s + r_ns) / 8;
                self.rttvar = Duration::from_nanos(var as u64);
                self.srtt = Some(Duration::from_nanos(s as u64));
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        self.max_srtt = Some(self.max_srtt.map_or(srtt, |m| m.max(srtt)));
        self.rto = self.clamp(srtt + self.rttvar * 4);
    }

    /// T3-rtx expiry or unanswered HEARTBEAT: `RTO = min(2·RTO, RTO.Max)`.
    pub fn back_off(&mut self) {
        self.rto = self.clamp(self.rto * 2);
    }

    /// As [`back_off`](Self::back_off), doubling no further than `cap` (an RTO already
    /// above it stays as it is): outage handling's bounded probe interval.
    pub fn back_off_within(&mut self, cap: Duration) {
        let doubled = self.clamp(self.rto * 2);
        self.rto = doubled.min(cap.max(self.rto));
    }

    fn clamp(&self, d: Duration) -> Duration {
        d.max(self.rto_min).min(self.rto_max)
    }

    /// Smoothed RTT, once a sample exists.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    /// RTT variation.
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    /// Current retransmission timeout.
    pub fn rto(&self) -> Duration {
        self.rto
    }
    /// Smallest RTT sample seen.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    /// Largest SRTT seen.
    pub fn max_srtt(&self) -> Option<Duration> {
        self.max_srtt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(
            Duration::from_secs(3),
            Duration::from_secs(1),
            Duration::from_secs(60),
        )
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = est();
        e.sample(Duration::from_millis(400));
        assert_eq!(e.srtt(), Some(Duration::from_millis(400)));
        assert_eq!(e.rttvar(), Duration::from_millis(200));
        // 400 + 4·200 = 1200 ms, above RTO.Min.
        assert_eq!(e.rto(), Duration::from_millis(1200));
    }

    #[test]
    fn later_samples_use_alpha_one_eighth_and_beta_one_quarter() {
        let mut e = est();
        e.sample(Duration::from_millis(400));
        e.sample(Duration::from_millis(800));
        // RTTVAR = 3/4·200 + 1/4·400 = 250; SRTT = 7/8·400 + 1/8·800 = 450.
        assert_eq!(e.rttvar(), Duration::from_millis(250));
        assert_eq!(e.srtt(), Some(Duration::from_millis(450)));
        assert_eq!(e.rto(), Duration::from_millis(1450));
    }

    #[test]
    fn rto_is_clamped_and_backs_off_to_max() {
        let mut e = est();
        e.sample(Duration::from_millis(10));
        assert_eq!(e.rto(), Duration::from_secs(1));
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
    }

    #[test]
    fn a_capped_back_off_stops_at_the_cap_and_leaves_a_longer_rto_alone() {
        let mut e = RttEstimator::new(
            Duration::from_secs(3),
            Duration::from_millis(200),
            Duration::from_secs(60),
        );
        e.sample(Duration::from_millis(20));
        assert_eq!(e.rto(), Duration::from_millis(200));
        let cap = Duration::from_secs(1);
        let steps: Vec<u64> = (0..4)
            .map(|_| {
                e.back_off_within(cap);
                e.rto().as_nanos() / 1_000_000
            })
            .collect();
        assert_eq!(steps, vec![400, 800, 1000, 1000]);
        let mut slow = RttEstimator::new(cap * 3, Duration::from_millis(200), cap * 60);
        slow.back_off_within(cap);
        assert_eq!(slow.rto(), cap * 3, "a 3 s RTO neither doubles nor shrinks");
    }
}
