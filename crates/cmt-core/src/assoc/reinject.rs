//! Reinjection as upstream Linux MPTCP does it (`reinject = "linux"`;
//! docs/algorithms.md §1.13, decision D53): data held up on one path is sent again on
//! another, besides the path's own retransmissions.
//!
//! Sources (Linux 6.x, `net/mptcp/protocol.c` and `net/mptcp/pm.c`):
//! - *The timer* (`mptcp_reset_rtx_timer`, `mptcp_set_timeout`): one per
//!   association, armed when data is sent and none is pending, restarted when the
//!   cumulative ack advances, stopped when everything sent is acknowledged and nothing
//!   waits. Its period is the longest time left on a non-stale path's tail loss probe
//!   (while one is armed) or T3-rtx timer, or RTO.Min when none runs (`TCP_RTO_MIN`).
//! - *On expiry* (`__mptcp_retrans`, `mptcp_subflow_get_retrans`): the first ACTIVE,
//!   non-stale path with nothing outstanding (a backup one only while no path has
//!   made progress for more than one period) gets a copy of the oldest
//!   unacknowledged data: the chunks of one data fragment, at most 32 KiB (Linux
//!   carves its fragments from 32 KiB pages). With write queues (`send_buffer =
//!   "linux"`) chunks of that fragment still waiting in another path's queue are taken
//!   out of it and given again instead (decision D58 (4)). Paths with data outstanding
//!   or queued have their stale count looked at instead.
//! - *Stale paths* (`mptcp_pm_subflow_chk_stale`, `mptcp_pm_subflows_chk_stale`):
//!   a path whose count of periods without hearing from the peer exceeds
//!   `stale_loss_cnt` (4), while another active path's count is below 3, is marked
//!   stale — no new data — and what it holds is copied to another path
//!   (`__mptcp_retransmit_pending_data`). Anything heard on it ends the mark. TCP
//!   keeps resending on a stale subflow, backing off, what was not acknowledged on
//!   it; once our copies are acknowledged the path holds nothing, so a stale path is
//!   sent a HEARTBEAT every RTO instead, backed off as each goes unanswered.
//!
//! Our decisions where one TSN space differs from MPTCP's two sequence spaces: a copy
//! is this core's copy (it frees its path's window when the chunk is acknowledged,
//! and is given up on that path's timeout, never retransmitted); the acknowledgement
//! of a chunk copied by reinjection is ambiguous and counts as no path's progress
//! (no window growth, no error reset, no RTT sample) — TCP would see none on the
//! stalled subflow, and crediting it let a dead path reopen its window; chunks already
//! gap-acknowledged are not copied (MPTCP's cumulative DATA_ACK cannot tell, ours
//! can); a stale path's chunks go to the first other ACTIVE non-stale path (Linux
//! hands its whole queue back to its scheduler, which with two paths is the same).

use super::send_queue::TxChunk;
use super::Association;
use crate::config::Reinject;
use crate::event::Observer;
use crate::time::{Duration, Time};
use crate::view::{PathId, PathState};

/// `stale_loss_cnt`'s default (`net.mptcp.stale_loss_cnt`).
const STALE_LOSS_CNT: u8 = 4;

/// Bytes of one of Linux's data fragments at most (a 32 KiB page fragment).
const FRAGMENT: u64 = 32 * 1024;

impl<O: Observer> Association<O> {
    fn reinjects(&self) -> bool {
        self.cfg.reinject == Reinject::Linux
    }

    /// `mptcp_set_timeout`: the longest time left on the retransmission-type timer of
    /// a path with no period without progress counted, or RTO.Min. A subflow's
    /// `icsk_timeout` holds its tail loss probe while one is armed and its RTO
    /// otherwise, so under RACK-TLP a busy path's probe time counts.
    fn reinject_period(&self, now: Time) -> Duration {
        self.paths
            .iter()
            .filter(|p| p.stale.count == 0)
            .filter_map(|p| p.rack.tlp_at.or(p.timers.t3()))
            .map(|t| t.saturating_since(now))
            .max()
            .filter(|&d| d > Duration::ZERO)
            .unwrap_or(self.cfg.rto_min)
    }

    /// Data was sent: the timer starts unless it runs.
    pub(super) fn reinject_on_send(&mut self, now: Time) {
        if self.reinjects() && self.reinject_at.is_none() {
            self.reinject_at = Some(now + self.reinject_period(now));
        }
    }

    /// A SACK was processed (`__mptcp_clean_una`): the timer stops when everything
    /// sent is acknowledged and nothing waits, and restarts when the cumulative ack
    /// advanced.
    pub(super) fn reinject_on_sack(&mut self, now: Time, advanced: bool) {
        if !self.reinjects() {
            return;
        }
        if self.all_acked() && !self.snd.has_new_data() {
            self.reinject_at = None;
        } else if advanced {
            self.reinject_at = Some(now + self.reinject_period(now));
        }
    }

    /// When the timer is due, if it runs.
    pub(super) fn reinject_deadline(&self) -> Option<Time> {
        self.reinject_at
    }

    /// The timer fired (`__mptcp_retrans`).
    pub(super) fn on_reinject_timer(&mut self, now: Time) {
        self.reinject_at = None;
        if self.all_acked() {
            if self.snd.has_new_data() {
                self.reinject_at = Some(now + self.reinject_period(now));
            }
            return;
        }
        if let Some(dest) = self.retrans_path() {
            // The oldest data not acknowledged, up to one fragment: copies of what
            // other paths sent, and, with write queues, what waits in another path's
            // queue (Linux's connection-level queue holds both; decision D58 (4)).
            let mut bytes = 0;
            let head = self.unacked_or_queued_where(
                |c| c.path != dest,
                |c| {
                    let first = bytes == 0;
                    bytes += c.len as u64;
                    first || bytes <= FRAGMENT
                },
            );
            let (sent, queued): (Vec<u64>, Vec<u64>) = head
                .into_iter()
                .partition(|&t| self.snd.chunks[self.snd.index(t)].tx_count > 0);
            self.queue_copies(dest, sent);
            self.release_queued(&queued);
        }
        self.reinject_at = Some(now + self.reinject_period(now));
    }

    /// `mptcp_subflow_get_retrans`: the first ACTIVE, non-stale path with nothing
    /// outstanding or queued; a backup one only if no busy path progressed for over a
    /// period. Busy paths have their stale count looked at.
    fn retrans_path(&mut self) -> Option<PathId> {
        let (mut pick, mut backup, mut min_stale) = (None, None, u8::MAX);
        for i in 0..self.paths.len() {
            let p = &self.paths[i];
            if p.state != PathState::Active {
                continue;
            }
            if p.stale.is_stale(p.heard) {
                continue;
            }
            // Nothing outstanding, and with write queues nothing waiting either
            // (`tcp_rtx_and_write_queues_empty`).
            if p.out.flight > 0 || p.out.marked > 0 || self.snd.subflows.bytes(i) > 0 {
                self.check_stale(PathId(i));
                min_stale = min_stale.min(self.paths[i].stale.count);
                continue;
            }
            if p.backup {
                backup = backup.or(Some(PathId(i)));
            } else {
                pick = pick.or(Some(PathId(i)));
            }
        }
        pick.or(backup.filter(|_| min_stale > 1))
    }

    /// `mptcp_pm_subflow_chk_stale`: one more period with data outstanding on `id`;
    /// past `stale_loss_cnt` of them without a word, and with another path doing
    /// better, the path is marked stale and its chunks copied elsewhere.
    fn check_stale(&mut self, id: PathId) {
        let heard = self.paths[id].heard;
        if !self.paths[id].stale.check(heard) || self.paths[id].stale.count <= STALE_LOSS_CNT {
            return;
        }
        let healthy = (STALE_LOSS_CNT - 1).max(1);
        let other = (0..self.paths.len()).map(PathId).find(|&j| {
            let q = &self.paths[j];
            j != id
                && q.state == PathState::Active
                && !q.stale.is_stale(q.heard)
                && q.stale.count < healthy
        });
        let Some(dest) = other else { return };
        self.paths[id].stale.on = true;
        // Probed by HEARTBEAT from now on, every (backed-off) RTO (`on_heartbeat_due`).
        if self.paths[id].timers.hb_pending().is_none() {
            let rto = self.paths[id].rtt.rto();
            self.paths[id].timers.set_hb_due(Some(self.now + rto));
        }
        let held = self.unacked_where(|c| c.path == id, |_| true);
        self.queue_copies(dest, held);
        self.new_opportunity();
    }

    /// Everything sent is acknowledged.
    fn all_acked(&self) -> bool {
        self.snd.cum_ack + 1 == self.snd.next_tsn
    }

    /// The TSNs of the chunks sent and not acknowledged that pass `which`, in TSN
    /// order, while `more` holds.
    pub(super) fn unacked_where(
        &self,
        which: impl Fn(&TxChunk) -> bool,
        more: impl FnMut(&TxChunk) -> bool,
    ) -> Vec<u64> {
        self.chunks_where(|c| c.tx_count > 0, which, more)
    }

    /// As [`Self::unacked_where`], with the chunks waiting in a path's write queue too.
    fn unacked_or_queued_where(
        &self,
        which: impl Fn(&TxChunk) -> bool,
        more: impl FnMut(&TxChunk) -> bool,
    ) -> Vec<u64> {
        self.chunks_where(|c| c.tx_count > 0 || c.committed, which, more)
    }

    fn chunks_where(
        &self,
        held: impl Fn(&TxChunk) -> bool,
        which: impl Fn(&TxChunk) -> bool,
        mut more: impl FnMut(&TxChunk) -> bool,
    ) -> Vec<u64> {
        self.snd
            .chunks
            .iter()
            .zip(self.snd.cum_ack + 1..)
            .filter(|(c, _)| !c.acked && held(c) && which(c))
            .take_while(|(c, _)| more(c))
            .map(|(_, tsn)| tsn)
            .collect()
    }

    /// Queues a copy of each of `tsns` for path `dest` (sent as its window allows).
    fn queue_copies(&mut self, dest: PathId, tsns: Vec<u64>) {
        for tsn in tsns {
            let i = self.snd.index(tsn);
            self.snd.chunks[i].reinjected = true;
            self.snd.copy_queue.push_back((tsn, dest));
            self.stats.reinjected += 1;
        }
    }
}
