//! The named parts of a path's sender state, each a small struct with the methods that
//! keep it consistent.

use crate::time::Time;

/// What occupies the path's window.
#[derive(Debug, Default)]
pub(crate) struct Outstanding {
    /// Bytes in flight.
    pub(crate) flight: u64,
    /// Bytes of chunks last sent on this path that are marked for retransmission and not
    /// resent yet (ns-2.35 keeps them in the path's outstanding bytes for new data).
    pub(crate) marked: u64,
    /// Copies of chunks whose latest transmission is on another path, in flight here:
    /// `(tsn, bytes)`. Never retransmitted; dropped on this path's T3 expiry.
    pub(crate) copies: Vec<(u64, u64)>,
}

/// Loss recovery and the loss intervals coupled controllers read.
#[derive(Debug, Default)]
pub(crate) struct Recovery {
    /// Fast-retransmit recovery point: reductions only for TSNs above it.
    pub(crate) recover: Option<u64>,
    /// ns-2.35 compatibility: the per-destination `uiHighestTsnSent` of
    /// `GetHighestOutstandingTsn`.
    pub(crate) ns2_highest: u64,
    /// Bytes newly acked on this path since its last congestion event.
    pub(crate) acked_since_loss: u64,
    /// Bytes acked between its last two congestion events.
    pub(crate) acked_prev_interval: u64,
    /// The Proportional Rate Reduction in progress (with `prr`), from a cut until
    /// every chunk the path had sent by then is acknowledged.
    pub(crate) prr: Option<super::Prr>,
}

impl Recovery {
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
}

/// CMT's cwnd update for changing cumulative ack point (CUC): the expected
/// pseudo-cumacks of the path.
#[derive(Debug)]
pub(crate) struct Cuc {
    /// Expected pseudo-cumack (lowest outstanding first-transmission TSN when it was
    /// last looked for). Sticky: looked for again only when `find_pseudo` is set.
    pub(crate) pseudo_cum: Option<u64>,
    /// Expected rtx-pseudo-cumack (the same for retransmitted TSNs).
    pub(crate) rtx_pseudo_cum: Option<u64>,
    /// Look for a new expected pseudo-cumack at the next SACK.
    pub(crate) find_pseudo: bool,
    /// Look for a new expected rtx-pseudo-cumack at the next SACK.
    pub(crate) find_rtx_pseudo: bool,
}

impl Default for Cuc {
    fn default() -> Self {
        Cuc {
            pseudo_cum: None,
            rtx_pseudo_cum: None,
            find_pseudo: true,
            find_rtx_pseudo: true,
        }
    }
}

/// Errors, timeouts and the loss-rate estimate.
#[derive(Debug, Default)]
pub(crate) struct LossStats {
    /// Consecutive errors (RFC 9260 §8.2).
    pub(crate) error_count: u32,
    /// T3-rtx timeouts so far.
    pub(crate) timeouts: u32,
    /// Time of the latest timeout.
    pub(crate) last_timeout: Option<Time>,
    /// EWMA (gain 1/8) of "a chunk sent here was marked for retransmission".
    pub(crate) loss_rate: f64,
    /// A loss rate configured from outside (ns-2's `set-destination-lossrate`); it
    /// replaces the estimate in what algorithms see.
    pub(crate) configured_loss: Option<f64>,
}

impl LossStats {
    /// Feeds the loss estimate: `lost` for a chunk marked for retransmission, else acked.
    pub(crate) fn sample(&mut self, lost: bool) {
        let x = if lost { 1.0 } else { 0.0 };
        self.loss_rate += (x - self.loss_rate) / 8.0;
    }

    /// The loss rate algorithms see: the configured one, else the estimate.
    pub(crate) fn visible(&self) -> f64 {
        self.configured_loss.unwrap_or(self.loss_rate)
    }
}

/// The path's timers. The deadlines are set through their setters, which keep the
/// earliest of them at hand: the association's next timeout is asked for after every
/// event, and reading one field per path instead of four keeps that cheap as paths are
/// added.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    /// Running T3-rtx timer.
    t3: Option<Time>,
    /// Next idle cwnd decay check.
    decay_at: Option<Time>,
    /// When the next HEARTBEAT is due.
    hb_due: Option<Time>,
    /// Outstanding HEARTBEAT: nonce and the time it counts as unanswered.
    hb_pending: Option<(u64, Time)>,
    /// The earliest of the four deadlines above.
    earliest: Option<Time>,
    /// When the path entered PF.
    pub(crate) pf_since: Option<Time>,
}

impl Timers {
    /// Running T3-rtx timer.
    pub(crate) fn t3(&self) -> Option<Time> {
        self.t3
    }
    /// Next idle cwnd decay check.
    pub(crate) fn decay_at(&self) -> Option<Time> {
        self.decay_at
    }
    /// When the next HEARTBEAT is due.
    pub(crate) fn hb_due(&self) -> Option<Time> {
        self.hb_due
    }
    /// Outstanding HEARTBEAT: nonce and the time it counts as unanswered.
    pub(crate) fn hb_pending(&self) -> Option<(u64, Time)> {
        self.hb_pending
    }
    /// The earliest deadline of the path (T3, decay, heartbeat due or unanswered).
    pub(crate) fn earliest(&self) -> Option<Time> {
        self.earliest
    }
    /// Starts (`Some`) or stops (`None`) the T3-rtx timer.
    pub(crate) fn set_t3(&mut self, t: Option<Time>) {
        self.t3 = t;
        self.refresh();
    }
    /// Sets or clears the next idle cwnd decay check.
    pub(crate) fn set_decay_at(&mut self, t: Option<Time>) {
        self.decay_at = t;
        self.refresh();
    }
    /// Sets or clears when the next HEARTBEAT is due.
    pub(crate) fn set_hb_due(&mut self, t: Option<Time>) {
        self.hb_due = t;
        self.refresh();
    }
    /// Records or clears the outstanding HEARTBEAT.
    pub(crate) fn set_hb_pending(&mut self, p: Option<(u64, Time)>) {
        self.hb_pending = p;
        self.refresh();
    }
    /// Recomputes the earliest deadline after a change.
    fn refresh(&mut self) {
        let at = [
            self.t3,
            self.decay_at,
            self.hb_due,
            self.hb_pending.map(|(_, t)| t),
        ];
        self.earliest = at.into_iter().flatten().min();
    }
}

/// Book-keeping of what the path sent.
#[derive(Debug, Default)]
pub(crate) struct Sending {
    /// TSN and send time of the chunk being timed for an RTT sample.
    pub(crate) rtt_probe: Option<(u64, Time)>,
    /// New-data packets sent in the current transmission opportunity.
    pub(crate) burst_used: u32,
    /// Last time data was sent on this path.
    pub(crate) last_data_sent: Option<Time>,
    /// The largest congestion window data was sent under (bytes): what Linux sizes a
    /// subflow's send buffer by (`send_buffer = "linux"`).
    pub(crate) largest_cwnd: u64,
}

/// Linux MPTCP's view of a subflow making no progress (`mptcp_pm_subflow_chk_stale`),
/// kept with `reinject = "linux"`.
#[derive(Debug, Default)]
pub(crate) struct Stale {
    /// Reinjection periods in a row that found data outstanding and nothing heard.
    pub(crate) count: u8,
    /// What `heard` was when the count started.
    pub(crate) mark: Option<Time>,
    /// Marked stale: no new data until something is heard on the path again.
    pub(crate) on: bool,
}

impl Stale {
    /// Whether the path is stale now: marked, and nothing heard since
    /// (`mptcp_subflow_active`).
    pub(crate) fn is_stale(&self, heard: Option<Time>) -> bool {
        self.on && self.mark == heard
    }

    /// One reinjection period found data outstanding on the path; true when the count
    /// grew (nothing heard since it started), false when it started or was reset.
    pub(crate) fn check(&mut self, heard: Option<Time>) -> bool {
        if self.count == 0 {
            self.mark = heard;
            self.count = 1;
            false
        } else if self.mark == heard {
            self.count = self.count.saturating_add(1);
            true
        } else {
            *self = Stale::default();
            false
        }
    }
}
