//! HyStart, the slow-start exit Linux's CUBIC runs by default (Ha and Rhee, "Taming
//! the elephants: New TCP slow start", Computer Networks 55(9), 2011; Linux
//! `net/ipv4/tcp_cubic.c`, `hystart_update` and `cubictcp_acked`). docs/algorithms.md
//! §10.1, decision D56.
//!
//! Slow start ends (ssthresh = cwnd) before the first loss, on either of two signs that
//! the window has reached the path's capacity, checked once the window is at least 16
//! packets:
//! - *ACK train*: the acks of one round come back closely spaced (each within 2 ms of
//!   the last) for longer than half the minimum round trip (Linux halves it when the
//!   socket is not paced, as here) plus an allowance for segmentation offload of at most
//!   1 ms: the window already fills the path's pipe.
//! - *Delay increase*: the smallest round trip among a round's first eight samples
//!   exceeds the minimum by `clamp(min/8, 4 ms, 16 ms)`: a queue is building.
//!
//! A round ends when an ack covers data sent after the round began (Linux: `snd_una`
//! passing the `snd_nxt` of the round's start). A timeout starts everything again,
//! the minimum round trip included (`bictcp_reset`).

use crate::time::{Duration, Time};

/// `hystart_low_window`: no exit below this window, packets.
const LOW_WINDOW: u64 = 16;
/// `hystart_ack_delta_us`: acks this close belong to one train.
const ACK_DELTA: Duration = Duration::from_micros(2_000);
/// `HYSTART_MIN_SAMPLES`: samples that make a round's minimum round trip.
const MIN_SAMPLES: u8 = 8;
/// `HYSTART_DELAY_MIN` and `HYSTART_DELAY_MAX`: bounds of the delay-increase margin.
const DELAY_MIN: Duration = Duration::from_millis(4);
const DELAY_MAX: Duration = Duration::from_millis(16);
/// `sk_gso_max_size` (`GSO_LEGACY_MAX_SIZE`), bytes: what `hystart_ack_delay` allows
/// four of at the pacing rate.
const GSO_MAX: f64 = 65_536.0;

/// Which sign ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The acks of a round formed a train longer than half the minimum round trip.
    AckTrain,
    /// A round's minimum round trip rose above the path's minimum by the margin.
    Delay,
}

/// HyStart's state on one path.
#[derive(Clone, Debug, Default)]
pub struct HyStart {
    /// Smallest round trip seen (`delay_min`).
    delay_min: Option<Duration>,
    /// When the current round began (`round_start`); `None` before the first ack.
    round_start: Option<Time>,
    /// The last ack of the current train (`last_ack`).
    last_ack: Time,
    /// The smallest round trip of the current round (`curr_rtt`).
    curr_rtt: Option<Duration>,
    /// Samples counted toward `curr_rtt` (`sample_cnt`).
    samples: u8,
    /// Slow start was ended (`found`); cleared by a timeout.
    found: Option<Exit>,
}

impl HyStart {
    /// Whether slow start was ended, and by which sign.
    pub fn found(&self) -> Option<Exit> {
        self.found
    }

    /// A round trip sample outside slow start as well: it may lower the minimum.
    pub fn note_delay(&mut self, delay: Duration) {
        let d = delay.max(Duration::from_nanos(1_000));
        self.delay_min = Some(self.delay_min.map_or(d, |m| m.min(d)));
    }

    fn reset_round(&mut self, now: Time) {
        self.round_start = Some(now);
        self.last_ack = now;
        self.curr_rtt = None;
        self.samples = 0;
    }

    /// One ack in slow start at `now`, whose newest chunk acknowledged was sent at
    /// `sent_at` (a chunk sent once: its round trip is `now − sent_at`), with the window
    /// at `cwnd_pkts` packets and the path's pacing rate `pacing` (bytes/s, Linux's
    /// `sk_pacing_rate`; `None` before a round trip is known). Call [`note_delay`]
    /// first. Returns the sign that ends slow start now, if any.
    ///
    /// [`note_delay`]: Self::note_delay
    pub fn on_ack(
        &mut self,
        now: Time,
        sent_at: Time,
        cwnd_pkts: u64,
        pacing: Option<f64>,
    ) -> Option<Exit> {
        if self.found.is_some() {
            return None;
        }
        if self.round_start.is_none_or(|start| sent_at > start) {
            self.reset_round(now);
        }
        if cwnd_pkts < LOW_WINDOW {
            return None;
        }
        let delay = now.saturating_since(sent_at);
        let min = self.delay_min.unwrap_or(delay);
        let start = self.round_start.unwrap_or(now);
        if now.saturating_since(self.last_ack) <= ACK_DELTA {
            self.last_ack = now;
            let offload = pacing.filter(|r| *r > 0.0).map_or(Duration::ZERO, |r| {
                Duration::from_secs_f64(4.0 * GSO_MAX / r).min(Duration::from_millis(1))
            });
            // Not paced: the train need only be half as long.
            let threshold = Duration::from_nanos((min + offload).as_nanos() / 2);
            if now.saturating_since(start) > threshold {
                self.found = Some(Exit::AckTrain);
                return self.found;
            }
        }
        self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
        if self.samples < MIN_SAMPLES {
            self.samples += 1;
        } else {
            let margin = Duration::from_nanos(min.as_nanos() / 8).clamp(DELAY_MIN, DELAY_MAX);
            if self.curr_rtt.is_some_and(|c| c > min + margin) {
                self.found = Some(Exit::Delay);
            }
        }
        self.found
    }

    /// The retransmission timer expired (`cubictcp_state` on `TCP_CA_Loss`): the next
    /// slow start is watched again, from a new minimum.
    pub fn on_timeout(&mut self) {
        *self = HyStart::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_ms(ms: f64) -> Time {
        Time::ZERO + Duration::from_secs_f64(ms / 1000.0)
    }

    /// One round of `n` acks from `t0` ms, `gap` ms apart, each for a chunk sent one
    /// round trip of `rtt` ms before it; returns the first exit.
    fn round(h: &mut HyStart, t0: f64, n: usize, gap: f64, rtt: f64, cwnd: u64) -> Option<Exit> {
        (0..n).find_map(|i| {
            let now = t0 + gap * i as f64;
            let d = Duration::from_secs_f64(rtt / 1000.0);
            h.note_delay(d);
            h.on_ack(at_ms(now), at_ms(now - rtt), cwnd, None)
        })
    }

    #[test]
    fn a_queue_of_more_than_the_margin_ends_slow_start_by_delay() {
        // Minimum 40 ms: margin clamp(5 ms, 4, 16) = 5 ms. Acks 3 ms apart (no train).
        let mut h = HyStart::default();
        assert_eq!(round(&mut h, 0.0, 20, 3.0, 40.0, 20), None);
        // 44 ms: within the margin.
        assert_eq!(round(&mut h, 100.0, 20, 3.0, 44.0, 20), None);
        // 46 ms from the round's first sample on: the ninth sample decides.
        let mut h2 = h.clone();
        assert_eq!(
            round(&mut h2, 200.0, 8, 3.0, 46.0, 20),
            None,
            "eight samples"
        );
        assert_eq!(round(&mut h, 200.0, 9, 3.0, 46.0, 20), Some(Exit::Delay));
    }

    #[test]
    fn one_low_sample_in_a_round_keeps_slow_start() {
        // The round's minimum counts: one sample at the floor among high ones.
        let mut h = HyStart::default();
        round(&mut h, 0.0, 10, 3.0, 40.0, 20);
        h.note_delay(Duration::from_millis(40));
        assert_eq!(h.on_ack(at_ms(100.0), at_ms(60.0), 20, None), None);
        assert_eq!(round(&mut h, 103.0, 20, 3.0, 50.0, 20), None);
    }

    /// After a first round at 40 ms, a round of acks `gap` ms apart from 100 ms at
    /// `pacing`: how long after the round's start its train ended slow start, ms.
    fn train_exit(gap: f64, pacing: Option<f64>) -> Option<f64> {
        let mut h = HyStart::default();
        round(&mut h, 0.0, 5, 3.0, 40.0, 20);
        let exit = (0..200).map(|i| gap * i as f64).find(|&t| {
            let now = 100.0 + t;
            h.note_delay(Duration::from_millis(40));
            h.on_ack(at_ms(now), at_ms(now - 40.0), 20, pacing)
                .is_some()
        });
        assert_eq!(h.found(), exit.map(|_| Exit::AckTrain));
        exit
    }

    #[test]
    fn acks_closely_spaced_for_half_the_minimum_round_trip_end_slow_start() {
        // Minimum 40 ms, acks 1 ms apart: the first ack more than 20 ms into the round.
        assert_eq!(train_exit(1.0, None), Some(21.0));
    }

    #[test]
    fn a_gap_in_the_acks_breaks_the_train() {
        // Acks 2.5 ms apart never form a train, however long the round.
        let mut h = HyStart::default();
        assert_eq!(round(&mut h, 0.0, 40, 2.5, 40.0, 20), None);
    }

    #[test]
    fn nothing_ends_slow_start_below_sixteen_packets_and_a_timeout_rearms_it() {
        let mut h = HyStart::default();
        assert_eq!(round(&mut h, 0.0, 60, 1.0, 40.0, 15), None);
        assert_eq!(
            round(&mut h, 100.0, 60, 1.0, 40.0, 16),
            Some(Exit::AckTrain)
        );
        assert_eq!(round(&mut h, 200.0, 60, 1.0, 40.0, 16), None, "found holds");
        h.on_timeout();
        assert_eq!(h.found(), None);
        assert_eq!(
            round(&mut h, 300.0, 60, 1.0, 40.0, 16),
            Some(Exit::AckTrain)
        );
    }

    #[test]
    fn offload_allowance_lengthens_the_train_by_at_most_half_a_millisecond() {
        // At 100 Mbit/s pacing (12.5 MB/s) 4·64 KiB take 21 ms: capped at 1 ms, halved.
        // Threshold (40 + 1)/2 = 20.5 ms: the first ack past it is at 20.75 ms.
        assert_eq!(train_exit(0.25, Some(12.5e6)), Some(20.75));
    }
}
