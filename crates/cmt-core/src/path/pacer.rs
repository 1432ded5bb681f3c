//! The receiver-driven sender state of a path (Cao et al. 2015, CMT-Rev; MPTCP-rec
//! 2016; docs/algorithms.md §2.6): the advertised rate, the per-path sequence numbers and
//! round, and the token-bucket pacer that spreads a round's packets at that rate.

use crate::time::{Duration, Time};

/// Receiver-driven rate and pacing of one path.
#[derive(Debug, Default)]
pub(crate) struct RevSender {
    /// The rate the receiver advertised for this path, bytes/s.
    pub(crate) advertised_rate: Option<f64>,
    /// The next DATA packet's per-path sequence number.
    pub(crate) send_seq: u32,
    /// When the advert that opened the current round was applied, until the path's
    /// first packet of the round goes.
    pub(crate) round_opened: Option<Time>,
    /// The time the token bucket is empty again (None = not paced).
    pub(crate) pace_next: Option<Time>,
}

impl RevSender {
    /// The pacing rate in bytes/s: the advertised rate, or else a rate-based
    /// controller's (`cc_rate`), but never below two MTUs per SRTT, the allowance's
    /// floor (so a path with a tiny rate still carries the packets the receiver needs
    /// to measure it again).
    fn pace_rate(&self, mtu: u64, srtt: Option<Duration>, cc_rate: Option<f64>) -> Option<f64> {
        let r = self.advertised_rate.or(cc_rate).filter(|r| *r > 0.0)?;
        let floor = srtt.map_or(0.0, |s| 2.0 * mtu as f64 / s.as_secs_f64().max(1e-6));
        Some(r.max(floor))
    }

    /// Whether pacing lets a packet go at `now`: the bucket (depth 2·MTU) is not empty.
    pub(crate) fn paced_ok(
        &self,
        now: Time,
        mtu: u64,
        srtt: Option<Duration>,
        cc_rate: Option<f64>,
    ) -> bool {
        match (self.pace_next, self.pace_rate(mtu, srtt, cc_rate)) {
            (Some(t), Some(r)) => t <= now + Duration::from_secs_f64(2.0 * mtu as f64 / r),
            _ => true,
        }
    }

    /// Pacing book-keeping for `size` bytes sent at `now`.
    pub(crate) fn paced_send(
        &mut self,
        now: Time,
        size: u64,
        mtu: u64,
        srtt: Option<Duration>,
        cc_rate: Option<f64>,
    ) {
        if let Some(r) = self.pace_rate(mtu, srtt, cc_rate) {
            let depth = Duration::from_secs_f64(2.0 * mtu as f64 / r);
            let start = self.pace_next.map_or(now - depth, |t| t.max(now - depth));
            self.pace_next = Some(start + Duration::from_secs_f64(size as f64 / r));
        }
    }

    /// When a paced path may send again, if pacing is what holds it.
    pub(crate) fn pace_release(
        &self,
        now: Time,
        mtu: u64,
        srtt: Option<Duration>,
        cc_rate: Option<f64>,
    ) -> Option<Time> {
        match (self.pace_next, self.pace_rate(mtu, srtt, cc_rate)) {
            (Some(t), Some(r)) if !self.paced_ok(now, mtu, srtt, cc_rate) => {
                Some(t - Duration::from_secs_f64(2.0 * mtu as f64 / r))
            }
            _ => None,
        }
    }
}
