//! QUIC's loss detection state of one path (Iyengar and Swett, "QUIC Loss Detection and
//! Congestion Control", RFC 9002, 2021), kept per path as multipath QUIC keeps one
//! packet number space, RTT estimate and probe timeout per path (Liu et al.,
//! draft-ietf-quic-multipath-19, January 2026; picoquic does the same). A chunk
//! is lost once a chunk sent three transmissions after it on its path was acknowledged
//! (the packet threshold) or 9/8 of a round trip after it was sent, once a chunk sent
//! after it was acknowledged (the time threshold); a probe timeout replaces the
//! retransmission timer. The association applies it with `recovery = "quic"`
//! (docs/algorithms.md §1.14, decision D54); the arithmetic here is pure and tested on
//! its own.

use crate::time::{Duration, Time};

/// RFC 9002 §6.1.1 `kPacketThreshold`: transmissions acknowledged after a chunk before
/// it counts as lost.
pub(crate) const PACKET_THRESHOLD: u64 = 3;

/// RFC 9002 §6.1.2 `kGranularity`: the timer granularity, the least loss delay and the
/// least variance term of the probe timeout.
pub(crate) const GRANULARITY: Duration = Duration::from_millis(1);

/// RFC 9002 §6.2.2 `kInitialRtt`: the round trip assumed before any was measured.
pub(crate) const INITIAL_RTT: Duration = Duration::from_millis(333);

/// RFC 9002 §7.6.1 `kPersistentCongestionThreshold`: probe timeouts' worth of losses
/// that collapse the window.
pub(crate) const PERSISTENT_CONGESTION_THRESHOLD: u64 = 3;

/// What QUIC's loss detection knows of one path.
#[derive(Clone, Debug, Default)]
pub(crate) struct QuicLoss {
    /// The next transmission's number on this path (its packet number: every
    /// transmission, a retransmission too, gets a new one).
    pub(crate) next_seq: u64,
    /// The highest transmission number acknowledged on this path
    /// (`largest_acked_packet`).
    pub(crate) largest_acked: Option<u64>,
    /// The round trip of the latest ack that raised `largest_acked` (`latest_rtt`).
    pub(crate) latest_rtt: Option<Duration>,
    /// Probe timeouts since this path's data was last acknowledged (`pto_count`).
    pub(crate) pto_count: u32,
    /// When the path's first round trip was measured: persistent congestion counts
    /// only losses of chunks sent after it (RFC 9002 §7.6.2).
    pub(crate) first_rtt_at: Option<Time>,
    /// When the path's window was last cut (`congestion_recovery_start_time`): a loss
    /// of a transmission sent before it belongs to that recovery period.
    pub(crate) recovery_start: Option<Time>,
}

/// A chunk's fate under RFC 9002 §6.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Lost now, by the packet or the time threshold.
    Lost,
    /// Sent before the largest acknowledged: lost at this time unless acknowledged.
    LostAt(Time),
    /// Nothing sent after it was acknowledged yet.
    Unknown,
}

impl QuicLoss {
    /// The number of the next transmission on this path, counted.
    pub(crate) fn take_seq(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq += 1;
        s
    }

    /// An ack newly acknowledged transmission `seq`, sent `rtt` ago: it raises the
    /// largest acknowledged and, when `timed` (its chunk's only transmission), gives
    /// `latest_rtt` (RFC 9002 §5.1). Returns whether it raised it.
    pub(crate) fn on_acked(&mut self, now: Time, seq: u64, rtt: Duration, timed: bool) -> bool {
        if self.largest_acked.is_some_and(|l| l >= seq) {
            return false;
        }
        self.largest_acked = Some(seq);
        if timed {
            self.latest_rtt = Some(rtt);
            self.first_rtt_at.get_or_insert(now);
        }
        true
    }

    /// RFC 9002 §6.1: the verdict on transmission `seq`, sent at `sent_at`, with loss
    /// delay `delay` ([`loss_delay`]).
    pub(crate) fn verdict(&self, now: Time, seq: u64, sent_at: Time, delay: Duration) -> Verdict {
        let Some(largest) = self.largest_acked.filter(|&l| l > seq) else {
            return Verdict::Unknown;
        };
        let at = sent_at + delay;
        if largest - seq >= PACKET_THRESHOLD || at <= now {
            Verdict::Lost
        } else {
            Verdict::LostAt(at)
        }
    }
}

/// RFC 9002 §6.1.2: `max(kTimeThreshold · max(smoothed_rtt, latest_rtt), kGranularity)`
/// with `kTimeThreshold = 9/8`; `kInitialRtt` stands in for a round trip not measured.
pub(crate) fn loss_delay(srtt: Option<Duration>, latest: Option<Duration>) -> Duration {
    let rtt = match (srtt, latest) {
        (Some(s), Some(l)) => s.max(l),
        (Some(r), None) | (None, Some(r)) => r,
        (None, None) => INITIAL_RTT,
    };
    Duration::from_nanos(rtt.as_nanos() / 8 * 9).max(GRANULARITY)
}

/// RFC 9002 §6.2.1's probe timeout before back-off:
/// `smoothed_rtt + max(4 · rttvar, kGranularity) + max_ack_delay`, and `initial`
/// before any round trip was measured (RFC 9002 §6.2.2: about 1 s from `kInitialRtt`).
pub(crate) fn pto_period(
    srtt: Option<Duration>,
    rttvar: Duration,
    max_ack_delay: Duration,
    initial: Duration,
) -> Duration {
    match srtt {
        Some(s) => s + (rttvar * 4).max(GRANULARITY) + max_ack_delay,
        None => initial,
    }
}

/// The probe timeout after `count` expiries: doubled each time (RFC 9002 §6.2.1),
/// never above `max`.
pub(crate) fn backed_off(period: Duration, count: u32, max: Duration) -> Duration {
    let factor = 1u64 << count.min(30);
    Duration::from_nanos(period.as_nanos().saturating_mul(factor)).min(max)
}

/// RFC 9002 §7.6.1: losses spanning longer than this are persistent congestion.
pub(crate) fn persistent_congestion_span(period: Duration) -> Duration {
    Duration::from_nanos(
        period
            .as_nanos()
            .saturating_mul(PERSISTENT_CONGESTION_THRESHOLD),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }
    fn at(n: u64) -> Time {
        Time::ZERO + ms(n)
    }

    #[test]
    fn the_packet_threshold_is_three_transmissions() {
        let mut q = QuicLoss::default();
        assert!(q.on_acked(at(100), 5, ms(50), true));
        let long = ms(10_000);
        // 5 − 2 = 3 acknowledged after it: lost however recent.
        assert_eq!(q.verdict(at(100), 2, at(99), long), Verdict::Lost);
        // 5 − 3 = 2: waits for the time threshold.
        assert_eq!(
            q.verdict(at(100), 3, at(99), long),
            Verdict::LostAt(at(99) + long)
        );
        // Not below the largest acknowledged: nothing known.
        assert_eq!(q.verdict(at(100), 6, at(99), long), Verdict::Unknown);
        // A late ack of an older transmission does not lower it.
        assert!(!q.on_acked(at(101), 4, ms(1), true));
        // A resent chunk's ack raises it, but gives no round trip.
        assert!(q.on_acked(at(102), 7, ms(1), false));
        assert_eq!(q.latest_rtt, Some(ms(50)));
    }

    #[test]
    fn the_time_threshold_is_nine_eighths_of_the_larger_round_trip() {
        assert_eq!(loss_delay(Some(ms(80)), Some(ms(40))), ms(90));
        assert_eq!(loss_delay(Some(ms(40)), Some(ms(80))), ms(90));
        assert_eq!(
            loss_delay(None, None),
            Duration::from_nanos(333_000_000 / 8 * 9)
        );
        // Never below the granularity.
        assert_eq!(
            loss_delay(Some(Duration::from_micros(100)), None),
            GRANULARITY
        );
        let mut q = QuicLoss::default();
        q.on_acked(at(200), 2, ms(80), true);
        let d = loss_delay(Some(ms(80)), q.latest_rtt);
        assert_eq!(q.verdict(at(189), 1, at(100), d), Verdict::LostAt(at(190)));
        assert_eq!(q.verdict(at(190), 1, at(100), d), Verdict::Lost);
    }

    #[test]
    fn the_probe_timeout_doubles_and_has_its_floors() {
        let p = pto_period(Some(ms(100)), ms(10), ms(25), ms(1000));
        assert_eq!(p, ms(165));
        // A variance below the granularity counts as the granularity.
        assert_eq!(
            pto_period(Some(ms(100)), Duration::ZERO, ms(25), ms(1000)),
            ms(126)
        );
        assert_eq!(pto_period(None, ms(10), ms(25), ms(1000)), ms(1000));
        assert_eq!(backed_off(p, 0, ms(60_000)), ms(165));
        assert_eq!(backed_off(p, 1, ms(60_000)), ms(330));
        assert_eq!(backed_off(p, 3, ms(60_000)), ms(1320));
        assert_eq!(backed_off(p, 40, ms(60_000)), ms(60_000));
        assert_eq!(persistent_congestion_span(p), ms(495));
    }
}
