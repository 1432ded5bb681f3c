//! The sender's state of one path (destination), built from named parts: RTT/RTO,
//! congestion control, what is outstanding, loss recovery, CMT's CUC pseudo-cumacks,
//! loss statistics, timers, send book-keeping and the receiver-driven rate and pacer.

mod pacer;
mod parts;
mod prr;
mod quic;
mod rack;
mod window;

pub(crate) use pacer::RevSender;
pub(crate) use parts::{Cuc, LossStats, Outstanding, Recovery, Sending, Stale, Timers};
pub(crate) use prr::Prr;
pub(crate) use quic::{
    backed_off, loss_delay, persistent_congestion_span, pto_period, QuicLoss, Verdict,
};
pub(crate) use rack::{pto_at, Rack, ReoWndMult};
pub(crate) use window::Window;

use crate::cc::CongestionControl;
use crate::rtt::RttEstimator;
use crate::time::Time;
use crate::view::{PathId, PathState, PathView};

/// Every path of an association, indexed by [`PathId`].
pub(crate) struct Paths(Vec<Path>);

impl Paths {
    pub(crate) fn new(paths: Vec<Path>) -> Self {
        Paths(paths)
    }
}

impl std::ops::Deref for Paths {
    type Target = [Path];
    fn deref(&self) -> &[Path] {
        &self.0
    }
}

impl std::ops::DerefMut for Paths {
    fn deref_mut(&mut self) -> &mut [Path] {
        &mut self.0
    }
}

impl std::ops::Index<PathId> for Paths {
    type Output = Path;
    fn index(&self, id: PathId) -> &Path {
        &self.0[id.0]
    }
}

impl std::ops::IndexMut<PathId> for Paths {
    fn index_mut(&mut self, id: PathId) -> &mut Path {
        &mut self.0[id.0]
    }
}

/// By position, where a loop counts paths (`for d in 0..n`).
impl std::ops::Index<usize> for Paths {
    type Output = Path;
    fn index(&self, i: usize) -> &Path {
        &self.0[i]
    }
}

impl std::ops::IndexMut<usize> for Paths {
    fn index_mut(&mut self, i: usize) -> &mut Path {
        &mut self.0[i]
    }
}

impl<'a> IntoIterator for &'a Paths {
    type Item = &'a Path;
    type IntoIter = std::slice::Iter<'a, Path>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a mut Paths {
    type Item = &'a mut Path;
    type IntoIter = std::slice::IterMut<'a, Path>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

/// Sender-side state of one path.
pub(crate) struct Path {
    pub(crate) state: PathState,
    pub(crate) rtt: RttEstimator,
    /// The congestion controller and its window.
    pub(crate) cc: Window,
    pub(crate) out: Outstanding,
    pub(crate) recovery: Recovery,
    /// RACK-TLP's state (used with `recovery = "rack-tlp"`).
    pub(crate) rack: Rack,
    /// QUIC's loss detection state (used with `recovery = "quic"`).
    pub(crate) quic: QuicLoss,
    pub(crate) cuc: Cuc,
    pub(crate) losses: LossStats,
    pub(crate) timers: Timers,
    pub(crate) sending: Sending,
    pub(crate) rev: RevSender,
    /// Capacity in bytes/s given by the embedder.
    pub(crate) capacity: Option<f64>,
    /// When a packet of the peer's last arrived on this path.
    pub(crate) heard: Option<Time>,
    /// A backup path: carries data only while no regular path is ACTIVE.
    pub(crate) backup: bool,
    /// Linux MPTCP's stale-subflow state (with `reinject = "linux"`).
    pub(crate) stale: Stale,
}

impl Path {
    /// Whether data may be sent to this path's address at all: it is verified and
    /// still there (neither unconfirmed nor removed), whatever its reachability.
    pub(crate) fn carries_data(&self) -> bool {
        !matches!(self.state, PathState::Unconfirmed | PathState::Removed)
    }

    pub(crate) fn new(rtt: RttEstimator, cc: Box<dyn CongestionControl>) -> Self {
        Path {
            state: PathState::Active,
            rtt,
            cc: Window::new(cc),
            out: Outstanding::default(),
            recovery: Recovery::default(),
            rack: Rack::default(),
            quic: QuicLoss::default(),
            cuc: Cuc::default(),
            losses: LossStats::default(),
            timers: Timers::default(),
            sending: Sending::default(),
            rev: RevSender::default(),
            capacity: None,
            heard: None,
            backup: false,
            stale: Stale::default(),
        }
    }

    /// Whether pacing lets a packet go at `now`.
    pub(crate) fn paced_ok(&self, now: Time, mtu: u64) -> bool {
        self.rev
            .paced_ok(now, mtu, self.rtt.srtt(), self.cc.pacing_rate())
    }

    /// Pacing book-keeping for `size` bytes sent at `now` (and a rate-based
    /// controller's sample of it, with what was in flight before it).
    pub(crate) fn paced_send(&mut self, now: Time, size: u64, mtu: u64) {
        self.cc.on_sent(now, size, self.out.flight);
        let srtt = self.rtt.srtt();
        let cc_rate = self.cc.pacing_rate();
        self.rev.paced_send(now, size, mtu, srtt, cc_rate);
    }

    /// When a paced path may send again, if pacing is what holds it.
    pub(crate) fn pace_release(&self, now: Time, mtu: u64) -> Option<Time> {
        self.rev
            .pace_release(now, mtu, self.rtt.srtt(), self.cc.pacing_rate())
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
        let occupied = self.out.flight + if hold_marked { self.out.marked } else { 0 };
        // A stale path looks potentially failed to the scheduler: no new data.
        let state = match self.state {
            PathState::Active if self.stale.is_stale(self.heard) => PathState::PotentiallyFailed,
            s => s,
        };
        PathView {
            id,
            state,
            cwnd,
            ssthresh: self.cc.ssthresh(),
            flight: self.out.flight,
            queued: 0,
            srtt: self.rtt.srtt(),
            rttvar: self.rtt.rttvar(),
            min_rtt: self.rtt.min_rtt(),
            max_srtt: self.rtt.max_srtt(),
            rto: self.rtt.rto(),
            timeouts: self.losses.timeouts,
            error_count: self.losses.error_count,
            last_timeout: self.losses.last_timeout,
            loss_rate: self.losses.visible(),
            capacity: self.capacity,
            advertised_rate: self.rev.advertised_rate,
            can_send: state == PathState::Active
                && occupied < cwnd
                && (max_burst == 0 || self.sending.burst_used < max_burst)
                && self.paced_ok(now, mtu),
        }
    }
}
