//! Per-path (per-destination) sender state and the read-only view given to algorithms.

use crate::cc::CongestionControl;
use crate::rtt::RttEstimator;
use crate::time::{Duration, Time};

/// Index of a path within an association (0-based, in configuration order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PathId(pub usize);

/// Reachability state of a destination (RFC 9260 §8.2, CMT-PF docs/algorithms.md §1.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathState {
    /// Usable for new data and retransmissions.
    Active,
    /// Potentially failed: one or more timeouts; probed with HEARTBEATs only.
    PotentiallyFailed,
    /// Failed: error count above Path.Max.Retrans.
    Inactive,
}

/// What schedulers and retransmission policies may read about a path.
#[derive(Clone, Debug)]
pub struct PathView {
    /// Which path.
    pub id: PathId,
    /// Reachability.
    pub state: PathState,
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Slow-start threshold, bytes.
    pub ssthresh: u64,
    /// Bytes in flight (sent, not acked, not marked for retransmission), counted as DATA
    /// chunk bytes (16-byte header and padding included).
    pub flight: u64,
    /// Smoothed RTT (None before the first sample).
    pub srtt: Option<Duration>,
    /// RTT variation.
    pub rttvar: Duration,
    /// Smallest RTT sample.
    pub min_rtt: Option<Duration>,
    /// Largest SRTT so far.
    pub max_srtt: Option<Duration>,
    /// Current RTO.
    pub rto: Duration,
    /// T3-rtx timeouts so far.
    pub timeouts: u32,
    /// Time of the latest timeout.
    pub last_timeout: Option<Time>,
    /// Loss rate: the configured one when set
    /// ([`Association::set_destination_loss_rate`](crate::Association::set_destination_loss_rate),
    /// docs/algorithms.md §1.5 "oracle"), else the estimate: EWMA (gain 1/8) of 0 per acked chunk and
    /// 1 per chunk marked for retransmission (docs/algorithms.md §1.5, "estimated"; decision D11).
    pub loss_rate: f64,
    /// The path's capacity in bytes/s when the embedder knows it
    /// ([`Association::set_destination_capacity`](crate::Association::set_destination_capacity));
    /// the simulator gives the slowest forward link's rate.
    pub capacity: Option<f64>,
    /// The rate the receiver advertised for the path, bytes/s (receiver-driven CMT).
    pub advertised_rate: Option<f64>,
    /// True if new data may go on this path now (ACTIVE, `flight < cwnd`, Max.Burst
    /// budget left). The peer window is checked by the core before asking.
    pub can_send: bool,
}

/// Sender-side state of one path.
pub(crate) struct Path {
    pub(crate) state: PathState,
    pub(crate) rtt: RttEstimator,
    pub(crate) cc: Box<dyn CongestionControl>,
    /// Bytes in flight.
    pub(crate) flight: u64,
    /// Bytes of chunks last sent on this path that are marked for retransmission and not
    /// resent yet (ns-2.35 keeps them in the path's outstanding bytes for new data).
    pub(crate) marked: u64,
    /// Consecutive errors (RFC 9260 §8.2).
    pub(crate) error_count: u32,
    /// Running T3-rtx timer.
    pub(crate) t3: Option<Time>,
    /// TSN and send time of the chunk being timed for an RTT sample.
    pub(crate) rtt_probe: Option<(u64, Time)>,
    /// Fast-retransmit recovery point: reductions only for TSNs above it.
    pub(crate) recover: Option<u64>,
    /// ns-2.35 compatibility: the per-destination `uiHighestTsnSent` of
    /// `GetHighestOutstandingTsn`.
    pub(crate) ns2_highest: u64,
    /// New-data packets sent in the current transmission opportunity.
    pub(crate) burst_used: u32,
    /// Last time data was sent on this path.
    pub(crate) last_data_sent: Option<Time>,
    /// Next idle cwnd decay check.
    pub(crate) decay_at: Option<Time>,
    /// When the next HEARTBEAT is due.
    pub(crate) hb_due: Option<Time>,
    /// Outstanding HEARTBEAT: nonce and the time it counts as unanswered.
    pub(crate) hb_pending: Option<(u64, Time)>,
    /// When the path entered PF.
    pub(crate) pf_since: Option<Time>,
    /// CUC: expected pseudo-cumack (lowest outstanding first-transmission TSN when it
    /// was last looked for). Sticky: looked for again only when `find_pseudo` is set.
    pub(crate) pseudo_cum: Option<u64>,
    /// CUC: expected rtx-pseudo-cumack (the same for retransmitted TSNs).
    pub(crate) rtx_pseudo_cum: Option<u64>,
    /// CUC: look for a new expected pseudo-cumack at the next SACK.
    pub(crate) find_pseudo: bool,
    /// CUC: look for a new expected rtx-pseudo-cumack at the next SACK.
    pub(crate) find_rtx_pseudo: bool,
    pub(crate) timeouts: u32,
    pub(crate) last_timeout: Option<Time>,
    pub(crate) loss_rate: f64,
    /// A loss rate configured from outside (ns-2's `set-destination-lossrate`); it
    /// replaces the estimate in [`PathView::loss_rate`].
    pub(crate) configured_loss: Option<f64>,
    /// Capacity in bytes/s given by the embedder.
    pub(crate) capacity: Option<f64>,
    /// Copies of chunks whose latest transmission is on another path, in flight here:
    /// `(tsn, bytes)`. Never retransmitted; dropped on this path's T3 expiry.
    pub(crate) copies: Vec<(u64, u64)>,
    /// Receiver-driven CMT: the rate the receiver advertised for this path, bytes/s.
    pub(crate) advertised_rate: Option<f64>,
    /// Receiver-driven CMT: the next DATA packet's per-path sequence number.
    pub(crate) send_seq: u32,
    /// Receiver-driven CMT: when the advert that opened the current round was applied,
    /// until the path's first packet of the round goes.
    pub(crate) round_opened: Option<Time>,
    /// Pacing: the time the path's token bucket is empty again (None = not paced).
    pub(crate) pace_next: Option<Time>,
    /// Bytes newly acked on this path since its last congestion event.
    pub(crate) acked_since_loss: u64,
    /// Bytes acked between its last two congestion events.
    pub(crate) acked_prev_interval: u64,
}

impl Path {
    pub(crate) fn new(rtt: RttEstimator, cc: Box<dyn CongestionControl>) -> Self {
        Path {
            state: PathState::Active,
            rtt,
            cc,
            flight: 0,
            marked: 0,
            error_count: 0,
            t3: None,
            rtt_probe: None,
            recover: None,
            ns2_highest: 0,
            burst_used: 0,
            last_data_sent: None,
            decay_at: None,
            hb_due: None,
            hb_pending: None,
            pf_since: None,
            pseudo_cum: None,
            rtx_pseudo_cum: None,
            find_pseudo: true,
            find_rtx_pseudo: true,
            timeouts: 0,
            last_timeout: None,
            loss_rate: 0.0,
            configured_loss: None,
            capacity: None,
            copies: Vec::new(),
            advertised_rate: None,
            send_seq: 0,
            round_opened: None,
            pace_next: None,
            acked_since_loss: 0,
            acked_prev_interval: 0,
        }
    }

    /// A congestion event (fast-retransmit reduction or timeout) closes a loss interval.
    pub(crate) fn loss_event(&mut self) {
        self.acked_prev_interval = self.acked_since_loss;
        self.acked_since_loss = 0;
    }

    /// OLIA's ℓ: bytes acked between the last two losses or since the last loss,
    /// whichever is larger.
    pub(crate) fn loss_interval(&self) -> u64 {
        self.acked_prev_interval.max(self.acked_since_loss)
    }

    /// Feeds the loss estimate: `lost` for a chunk marked for retransmission, else acked.
    pub(crate) fn loss_sample(&mut self, lost: bool) {
        let x = if lost { 1.0 } else { 0.0 };
        self.loss_rate += (x - self.loss_rate) / 8.0;
    }

    /// The pacing rate in bytes/s: the advertised rate, but never below two MTUs per
    /// SRTT, the allowance's floor (so a path with a tiny rate still carries the
    /// packets the receiver needs to measure it again).
    fn pace_rate(&self, mtu: u64) -> Option<f64> {
        let r = self.advertised_rate.filter(|r| *r > 0.0)?;
        let floor = self
            .rtt
            .srtt()
            .map_or(0.0, |s| 2.0 * mtu as f64 / s.as_secs_f64().max(1e-6));
        Some(r.max(floor))
    }

    /// Whether pacing lets a packet go at `now`: the bucket (depth 2·MTU) is not empty.
    pub(crate) fn paced_ok(&self, now: Time, mtu: u64) -> bool {
        match (self.pace_next, self.pace_rate(mtu)) {
            (Some(t), Some(r)) => t <= now + Duration::from_secs_f64(2.0 * mtu as f64 / r),
            _ => true,
        }
    }

    /// Pacing book-keeping for `size` bytes sent at `now`.
    pub(crate) fn paced_send(&mut self, now: Time, size: u64, mtu: u64) {
        if let Some(r) = self.pace_rate(mtu) {
            let depth = Duration::from_secs_f64(2.0 * mtu as f64 / r);
            let start = self.pace_next.map_or(now - depth, |t| t.max(now - depth));
            self.pace_next = Some(start + Duration::from_secs_f64(size as f64 / r));
        }
    }

    /// When a paced path may send again, if pacing is what holds it.
    pub(crate) fn pace_release(&self, now: Time, mtu: u64) -> Option<Time> {
        match (self.pace_next, self.pace_rate(mtu)) {
            (Some(t), Some(r)) if !self.paced_ok(now, mtu) => {
                Some(t - Duration::from_secs_f64(2.0 * mtu as f64 / r))
            }
            _ => None,
        }
    }

    /// What algorithms see. With `hold_marked` (ns-2.35 compatibility) chunks marked for
    /// retransmission still occupy the window for new data, as in ns-2's `SendMuch`.
    pub(crate) fn view(
        &self,
        id: PathId,
        max_burst: u32,
        now: Time,
        mtu: u64,
        hold_marked: bool,
    ) -> PathView {
        let cwnd = self.cc.cwnd();
        let occupied = self.flight + if hold_marked { self.marked } else { 0 };
        PathView {
            id,
            state: self.state,
            cwnd,
            ssthresh: self.cc.ssthresh(),
            flight: self.flight,
            srtt: self.rtt.srtt(),
            rttvar: self.rtt.rttvar(),
            min_rtt: self.rtt.min_rtt(),
            max_srtt: self.rtt.max_srtt(),
            rto: self.rtt.rto(),
            timeouts: self.timeouts,
            last_timeout: self.last_timeout,
            loss_rate: self.configured_loss.unwrap_or(self.loss_rate),
            capacity: self.capacity,
            advertised_rate: self.advertised_rate,
            can_send: self.state == PathState::Active
                && occupied < cwnd
                && (max_burst == 0 || self.burst_used < max_burst)
                && self.paced_ok(now, mtu),
        }
    }
}
