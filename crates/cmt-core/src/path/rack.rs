//! RACK-TLP's state of one path (Cheng, Cardwell, Dukkipati and Jha, "The RACK-TLP Loss
//! Detection Algorithm for TCP", RFC 8985, 2021), kept per path as Linux keeps it per
//! MPTCP subflow: a chunk is lost once a chunk sent *after* it on the same path has been
//! delivered and a reordering window has passed since it would have arrived
//! (time-based, not a count of missing reports), and a tail loss is probed for after
//! two smoothed round trips of silence instead of waiting for the retransmission
//! timeout. The association applies it with `recovery = "rack-tlp"` (docs/algorithms.md
//! §1.12, decision D52); the arithmetic here is pure and tested on its own.

use crate::time::{Duration, Time};

/// RFC 8985 §7.2's worst-case delayed-ack time, added to the probe timeout when one
/// packet is in flight (the receiver may hold its ack that long).
pub(crate) const WC_DEL_ACK: Duration = Duration::from_millis(200);

/// RFC 8985 §7.2: the probe timeout before any round trip was measured.
pub(crate) const PTO_NO_RTT: Duration = Duration::from_secs(1);

/// What RACK knows of one path.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rack {
    /// Send time and TSN of the most recently sent chunk delivered on this path
    /// (`RACK.xmit_ts`, `RACK.end_seq`).
    pub(crate) xmit: Option<(Time, u64)>,
    /// Round trip of that chunk (`RACK.rtt`).
    pub(crate) rtt: Duration,
    /// Smallest round trip of a chunk sent once and delivered (Linux's `tcp_min_rtt`,
    /// here over the whole association rather than a 5-minute window).
    pub(crate) min_rtt: Option<Duration>,
    /// Highest TSN delivered on this path (`RACK.fack`).
    pub(crate) fack: u64,
    /// A chunk was delivered below `fack` that was never resent: the path reorders.
    pub(crate) reordering_seen: bool,
    /// The reordering timer: when a chunk not yet lost would be.
    pub(crate) timer: Option<Time>,
    /// The tail loss probe timer.
    pub(crate) tlp_at: Option<Time>,
    /// A probe went and no ack of data on this path came since: no other probe until
    /// one does (RFC 8985 §7.3; the retransmission timer takes over).
    pub(crate) tlp_out: bool,
    /// The probe awaiting its verdict (RFC 8985 §7.4, `TLP.end_seq`): its TSN and the
    /// highest TSN sent when it went.
    pub(crate) tlp_probe: Option<(u64, u64)>,
}

impl Rack {
    /// A chunk sent at `sent_at` with `tsn` was delivered at `now` (RFC 8985 §6.2 steps
    /// 1–2). A resent chunk whose round trip reads below the path's minimum may have
    /// been acked for its first copy: it does not move RACK (the step's
    /// `RACK.rtt < min_rtt` test).
    pub(crate) fn on_delivered(&mut self, now: Time, sent_at: Time, tsn: u64, resent: bool) {
        if tsn < self.fack && !resent {
            self.reordering_seen = true;
        }
        self.fack = self.fack.max(tsn);
        let rtt = now.saturating_since(sent_at);
        if resent && self.min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        if !resent {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
        if self.xmit.is_none_or(|x| sent_after((sent_at, tsn), x)) {
            self.xmit = Some((sent_at, tsn));
            self.rtt = rtt;
        }
    }

    /// The reordering window (RFC 8985 §6.2 step 4): none while the path has not been
    /// seen to reorder and either it is recovering a loss already or `dupthresh`
    /// chunks were delivered above a missing one (the classic rule decides); otherwise
    /// `mult · min_rtt / 4`, at most SRTT.
    pub(crate) fn reo_wnd(
        &self,
        recovering: bool,
        dupthresh_reached: bool,
        mult: u32,
        srtt: Option<Duration>,
    ) -> Duration {
        if !self.reordering_seen && (recovering || dupthresh_reached) {
            return Duration::ZERO;
        }
        let Some(min) = self.min_rtt else {
            return Duration::ZERO;
        };
        let w = Duration::from_nanos(min.as_nanos() / 4 * u64::from(mult.max(1)));
        match srtt {
            Some(s) => w.min(s),
            None => w,
        }
    }

    /// When a chunk sent at `sent_at` with `tsn` counts as lost (RFC 8985 §6.2 step 5):
    /// only a chunk sent before the latest one delivered, `RACK.rtt + reo_wnd` after
    /// it was sent. `None`: nothing sent after it was delivered yet.
    pub(crate) fn lost_at(&self, sent_at: Time, tsn: u64, reo_wnd: Duration) -> Option<Time> {
        let x = self.xmit?;
        sent_after(x, (sent_at, tsn)).then(|| sent_at + self.rtt + reo_wnd)
    }
}

/// Whether `a` was sent after `b` (a later time, or the same time and a higher TSN:
/// RFC 8985's `RACK_sent_after`).
fn sent_after(a: (Time, u64), b: (Time, u64)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 > b.1)
}

/// The probe timeout (RFC 8985 §7.2): two smoothed round trips, plus the worst-case
/// delayed ack when one packet is in flight, 1 s before any round trip was measured;
/// never later than the retransmission timer would fire (`rto_at`).
pub(crate) fn pto_at(
    now: Time,
    srtt: Option<Duration>,
    one_packet: bool,
    rto_at: Option<Time>,
) -> Time {
    let pto = match srtt {
        Some(s) => {
            let two = Duration::from_nanos(s.as_nanos().saturating_mul(2));
            if one_packet {
                two + WC_DEL_ACK
            } else {
                two
            }
        }
        None => PTO_NO_RTT,
    };
    let at = now + pto;
    match rto_at {
        Some(r) => at.min(r),
        None => at,
    }
}

/// RFC 8985 §6.2 step 4's multiplier of the reordering window, kept per association:
/// raised by one for each round trip in which the peer reported a duplicate TSN (SCTP's
/// DSACK), back to 1 after 16 loss recoveries without one.
#[derive(Clone, Debug)]
pub(crate) struct ReoWndMult {
    pub(crate) mult: u32,
    /// Raised already in this round trip: until the cumulative ack passes this TSN.
    round_end: Option<u64>,
    /// Loss recoveries since it was last raised.
    recoveries: u32,
}

impl Default for ReoWndMult {
    fn default() -> Self {
        ReoWndMult {
            mult: 1,
            round_end: None,
            recoveries: 0,
        }
    }
}

impl ReoWndMult {
    /// A SACK with cumulative ack `cum`, reporting duplicates or not; `next_tsn` is the
    /// next TSN to be given (the round ends when it is acked).
    pub(crate) fn on_sack(&mut self, cum: u64, duplicates: bool, next_tsn: u64) {
        if self.round_end.is_some_and(|r| cum >= r) {
            self.round_end = None;
        }
        if duplicates && self.round_end.is_none() {
            self.mult = self.mult.saturating_add(1);
            self.round_end = Some(next_tsn);
            self.recoveries = 0;
        }
    }

    /// A loss recovery began.
    pub(crate) fn on_recovery(&mut self) {
        self.recoveries += 1;
        if self.recoveries >= 16 {
            self.mult = 1;
            self.recoveries = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::ZERO + Duration::from_millis(x)
    }

    fn d(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn a_chunk_is_lost_a_reordering_window_after_a_later_one_was_delivered() {
        // RFC 8985 §3.3's example: P1 and P2 sent at 0 and 10 ms, P2 delivered at 110
        // ms (RTT 100 ms). P1 is lost at 0 + 100 + reo_wnd, not at once.
        let mut r = Rack::default();
        r.on_delivered(ms(110), ms(10), 2, false);
        assert_eq!(
            (r.xmit, r.rtt, r.min_rtt),
            (Some((ms(10), 2)), d(100), Some(d(100)))
        );
        let w = r.reo_wnd(false, false, 1, Some(d(100)));
        assert_eq!(w, d(25), "min_rtt / 4");
        assert_eq!(r.lost_at(ms(0), 1, w), Some(ms(125)));
        // P3, sent after P2, is not judged yet.
        assert_eq!(r.lost_at(ms(20), 3, w), None);
        // Same send time: the TSN breaks the tie.
        assert_eq!(r.lost_at(ms(10), 1, w), Some(ms(135)));
        assert_eq!(r.lost_at(ms(10), 3, w), None);
    }

    #[test]
    fn the_window_closes_once_three_are_delivered_above_or_in_recovery_until_reordering_is_seen() {
        let mut r = Rack::default();
        assert_eq!(
            r.reo_wnd(false, false, 1, None),
            Duration::ZERO,
            "no round trip yet"
        );
        r.on_delivered(ms(40), ms(0), 1, false);
        let srtt = Some(d(60));
        assert_eq!(r.reo_wnd(false, false, 1, srtt), d(10), "min_rtt 40 ms / 4");
        assert_eq!(r.reo_wnd(false, true, 1, srtt), Duration::ZERO);
        assert_eq!(r.reo_wnd(true, false, 1, srtt), Duration::ZERO);
        r.on_delivered(ms(90), ms(50), 5, false);
        r.on_delivered(ms(95), ms(45), 4, false);
        assert!(r.reordering_seen, "TSN 4 delivered below fack 5");
        assert_eq!(r.reo_wnd(true, true, 1, srtt), d(10));
        // DSACK rounds widen it, up to SRTT.
        assert_eq!(r.reo_wnd(true, true, 3, srtt), d(30));
        assert_eq!(r.reo_wnd(true, true, 9, srtt), d(60));
    }

    #[test]
    fn a_resent_chunk_acked_faster_than_the_path_can_does_not_move_rack() {
        let mut r = Rack::default();
        r.on_delivered(ms(100), ms(0), 1, false);
        // Resent at 90 ms, acked at 100 ms: 10 ms < min_rtt 100 ms, so the ack was for
        // the first copy.
        r.on_delivered(ms(100), ms(90), 2, true);
        assert_eq!(r.xmit, Some((ms(0), 1)));
        // A resent chunk is no sign of reordering.
        assert!(!r.reordering_seen);
    }

    #[test]
    fn the_probe_timeout_is_two_round_trips_more_with_one_packet_and_never_after_the_rto() {
        assert_eq!(pto_at(ms(0), Some(d(50)), false, None), ms(100));
        assert_eq!(pto_at(ms(0), Some(d(50)), true, None), ms(300));
        assert_eq!(pto_at(ms(0), None, false, None), ms(1000));
        assert_eq!(pto_at(ms(0), Some(d(50)), true, Some(ms(200))), ms(200));
    }

    #[test]
    fn duplicates_raise_the_multiplier_once_per_round_and_sixteen_recoveries_reset_it() {
        let mut m = ReoWndMult::default();
        m.on_sack(10, true, 20);
        m.on_sack(12, true, 22);
        assert_eq!(m.mult, 2, "one raise per round");
        m.on_sack(20, true, 30);
        assert_eq!(m.mult, 3, "the round ended at TSN 20");
        for _ in 0..15 {
            m.on_recovery();
        }
        assert_eq!(m.mult, 3);
        m.on_recovery();
        assert_eq!(m.mult, 1);
    }
}
