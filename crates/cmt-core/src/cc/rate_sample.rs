//! Delivery-rate samples for rate-based congestion control (Cheng, Cardwell, Hassas
//! Yeganeh and Jacobson, "Delivery Rate Estimation", draft-cheng-iccrg-delivery-rate-
//! estimation; docs/algorithms.md §10.2): each packet sent remembers how much had been
//! delivered and when; when it is acknowledged, the bytes delivered since then over the
//! longer of its send and acknowledgement intervals is one sample of the path's rate,
//! and the time since it was sent one sample of its round trip.
//!
//! The core acknowledges bytes, not packets, to a controller; packets are matched to
//! what is acknowledged in the order they were sent (decision D50), and those no longer
//! in flight (lost, or acknowledged without counting) are forgotten at the next send.

use std::collections::VecDeque;

use crate::time::{Duration, Time};

/// What one packet remembered when it left.
#[derive(Clone, Copy, Debug)]
struct Sent {
    /// Bytes sent on the path up to and including this packet.
    end: u64,
    sent_time: Time,
    /// Bytes delivered when it left, and when the latest of them was.
    delivered: u64,
    delivered_time: Time,
    /// When the flight it belongs to began (the first packet sent after the path
    /// last had nothing in flight, or the latest packet acknowledged before it).
    first_sent_time: Time,
}

/// One rate sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// Delivery rate, bytes/s.
    pub rate: f64,
    /// Round trip of the packet the sample ends with.
    pub rtt: Duration,
    /// Bytes delivered when that packet left (round counting starts from it).
    pub prior_delivered: u64,
}

/// The sampler of one path.
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    sent: VecDeque<Sent>,
    total_sent: u64,
    /// Bytes acknowledged on the path so far.
    pub delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
}

impl RateSampler {
    /// A packet of `bytes` leaves at `now` with `flight` bytes (before it) in flight.
    pub fn on_sent(&mut self, now: Time, bytes: u64, flight: u64) {
        // Whatever was sent before the flight's oldest byte has left the network.
        let gone = self.total_sent.saturating_sub(flight);
        while self.sent.front().is_some_and(|s| s.end <= gone) {
            self.sent.pop_front();
        }
        if flight == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        self.total_sent += bytes;
        self.sent.push_back(Sent {
            end: self.total_sent,
            sent_time: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
        });
    }

    /// `bytes` more were acknowledged at `now`: the sample the newest packet they
    /// complete gives, unless its interval is shorter than `min_rtt` (an
    /// acknowledgement compressed in time would overstate the rate).
    pub fn on_ack(
        &mut self,
        now: Time,
        bytes: u64,
        min_rtt: Option<Duration>,
    ) -> Option<RateSample> {
        if bytes == 0 {
            return None;
        }
        self.delivered += bytes;
        self.delivered_time = now;
        let mut newest = None;
        while self.sent.front().is_some_and(|s| s.end <= self.delivered) {
            newest = self.sent.pop_front();
        }
        let p = newest?;
        self.first_sent_time = p.sent_time;
        let send_elapsed = p.sent_time.saturating_since(p.first_sent_time);
        let ack_elapsed = now.saturating_since(p.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        let rtt = now.saturating_since(p.sent_time);
        if interval == Duration::ZERO || min_rtt.is_some_and(|m| interval < m) {
            return None;
        }
        Some(RateSample {
            rate: (self.delivered - p.delivered) as f64 / interval.as_secs_f64(),
            rtt,
            prior_delivered: p.delivered,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::ZERO + Duration::from_millis(x)
    }

    /// A path that delivers 1,000 bytes per ms, acknowledged 10 ms after sending: the
    /// samples read 1 MB/s and 10 ms once the pipe is full.
    #[test]
    fn a_steady_pipe_samples_its_rate_and_round_trip() {
        let mut s = RateSampler::default();
        let mut samples = Vec::new();
        for t in 0..100u64 {
            s.on_sent(ms(t), 1000, 10_000u64.min(t * 1000));
            if t >= 10 {
                samples.extend(s.on_ack(ms(t), 1000, None));
            }
        }
        let last = samples.last().expect("samples");
        assert!((last.rate - 1e6).abs() < 1.0, "{last:?}");
        assert_eq!(last.rtt, Duration::from_millis(10));
    }

    /// Acknowledgements that bunch up (all of a window at once) do not read as a rate
    /// above the send rate: the send interval bounds it.
    #[test]
    fn a_compressed_ack_does_not_overstate_the_rate() {
        let mut s = RateSampler::default();
        for t in 0..10u64 {
            s.on_sent(ms(t), 1000, t * 1000);
        }
        let r = s.on_ack(ms(50), 10_000, None).expect("a sample");
        // 10,000 bytes over the 50 ms since the flight began.
        assert!((r.rate - 200_000.0).abs() < 1.0, "{r:?}");
    }
}
