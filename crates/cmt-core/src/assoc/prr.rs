//! Proportional Rate Reduction at the sender, per path (RFC 9937 as Linux runs it per
//! TCP connection, so per MPTCP subflow): a window cut starts a reduction that sets
//! the path's window on each SACK until every chunk the path had sent when it was cut
//! is acknowledged, and then leaves the window at the controller's target
//! (docs/algorithms.md §1.15, decision D55). The arithmetic is `path::Prr`'s.

use super::sack::AckScratch;
use super::Association;
use crate::event::Observer;
use crate::path::Prr;
use crate::time::Time;
use crate::view::PathId;

impl<O: Observer> Association<O> {
    /// Whether window cuts of `path` are spread by PRR: asked for, and neither QUIC's
    /// recovery nor a rate-based controller, which set the window their own way.
    pub(super) fn prr_applies(&self, path: PathId) -> bool {
        self.cfg.prr && !self.quic() && !self.paths[path].cc.is_rate_based()
    }

    /// After the controller cut `path`'s window from `prior` (`tcp_init_cwnd_reduction`):
    /// the reduction starts towards the controller's window, and until an ack sets it,
    /// the window is what is in flight plus the one packet of the retransmission.
    pub(super) fn prr_start(&mut self, path: PathId, prior: u64) {
        let mss = self.cfg.cwnd_unit();
        let p = &mut self.paths[path];
        let target = p.cc.cwnd();
        p.recovery.prr = Some(Prr::new(prior, target));
        p.cc.set_cwnd((p.out.flight + mss).min(prior.max(mss)));
    }

    /// At the end of a SACK, on every path in a reduction: the reduction ends once the
    /// path's oldest unacknowledged chunk is above its recover point, the window then
    /// at the target (`tcp_end_cwnd_reduction`); otherwise the window becomes what is
    /// in flight plus what PRR lets out for the bytes this SACK delivered on the path
    /// (`tcp_cwnd_reduction`).
    pub(super) fn prr_on_sack(&mut self, now: Time, s: &AckScratch) {
        let mss = self.cfg.cwnd_unit();
        for d in 0..self.paths.len() {
            let id = PathId(d);
            let Some(target) = self.paths[d].recovery.prr.as_ref().map(|r| r.target) else {
                continue;
            };
            let oldest = self.snd.on_path.first(id);
            let recover = self.paths[d].recovery.recover;
            let p = &mut self.paths[d];
            let cwnd = if oldest.is_none_or(|o| recover.is_none_or(|r| o > r)) {
                p.recovery.prr = None;
                Some(target)
            } else {
                let prr = p.recovery.prr.as_mut().expect("in a reduction");
                let a = &s.path[d];
                prr.on_ack(a.newly_bytes, p.out.flight, a.restart_t3, mss)
            };
            if let Some(cwnd) = cwnd.filter(|&c| c != p.cc.cwnd()) {
                p.cc.set_cwnd(cwnd);
                self.window_event(now, id, true);
            }
        }
    }
}
