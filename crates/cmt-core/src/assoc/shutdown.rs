//! Graceful shutdown (RFC 9260 §9.2) and aborts on protocol violations (§9.1).
//!
//! `close()` stops new writes; once everything written is acknowledged the endpoint
//! sends SHUTDOWN (carrying its cumulative TSN ack) and runs T2-shutdown. The peer takes
//! the SHUTDOWN's cumulative ack as a SACK, finishes its own outstanding data, answers
//! SHUTDOWN ACK (under T2 too) and the first side closes with SHUTDOWN COMPLETE. T2
//! runs with the RTO of the path its chunk went on; after Association.Max.Retrans the
//! association fails — except while waiting for the final SHUTDOWN COMPLETE, when all
//! data has crossed and it closes instead, and with outage handling, when only the
//! outage tolerance ends the wait for a SHUTDOWN ACK. An association that closed or
//! failed sends nothing more.
//!
//! No path is special: a SHUTDOWN goes where the peer was heard from last among the
//! ACTIVE paths, a SHUTDOWN ACK answers on the path the SHUTDOWN came on (RFC 9260
//! §6.4), each retransmission tries another ACTIVE path (§9.2), and an ABORT goes out
//! on every path — so a path that died, the first one included, holds up nothing.

use super::Association;
use super::Lifecycle;
use crate::event::{Event, Observer};
use crate::packet::{Chunk, SackChunk};
use crate::time::Time;
use crate::tsn::wire_tsn;
use crate::view::{PathId, PathState};

/// Where a shutdown stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Closing {
    /// Established, not closing.
    #[default]
    Open,
    /// The application closed; data is still outstanding.
    Pending,
    /// SHUTDOWN sent, waiting for SHUTDOWN ACK.
    ShutdownSent,
    /// The peer asked to shut down; our data is still outstanding.
    Received,
    /// SHUTDOWN ACK sent, waiting for SHUTDOWN COMPLETE.
    AckSent,
    /// Closed gracefully.
    Closed,
}

impl<O: Observer> Association<O> {
    /// Graceful close: no more writes; the shutdown starts when all data is acked.
    pub fn close(&mut self) {
        self.views_but = None;
        if self.closing == Closing::Open {
            self.closing = Closing::Pending;
            self.snd.backlog = false;
        }
    }

    /// While `held`, the SHUTDOWN ACK that answers the peer's SHUTDOWN waits (the
    /// association stays [`Closing::Received`]): for an application that must finish
    /// with the data first — store it durably, say — and bundle what it found with the
    /// SHUTDOWN ACK ([`bundle_with`](Self::bundle_with)). The peer's T2 timer repeats
    /// its SHUTDOWN meanwhile.
    pub fn hold_shutdown_ack(&mut self, held: bool) {
        self.shutdown_ack_held = held;
    }

    /// Where the shutdown stands.
    pub fn closing(&self) -> Closing {
        self.closing
    }

    /// Closed gracefully.
    pub fn is_closed(&self) -> bool {
        self.closing == Closing::Closed
    }

    fn everything_acked(&self) -> bool {
        self.snd.unacked_bytes() == 0
    }

    fn shutdown_chunk(&self) -> Chunk {
        Chunk::Shutdown {
            cum_tsn: wire_tsn(self.rcv_cum()),
        }
    }

    /// Sends the shutdown chunks the state calls for (called before other output).
    pub(super) fn drive_shutdown(&mut self, now: Time) {
        let due = self.t2.is_some_and(|t| t <= now);
        match self.closing {
            Closing::Pending if self.everything_acked() => {
                self.closing = Closing::ShutdownSent;
                let path = self.control_path(None);
                self.send_t2(now, path, self.shutdown_chunk());
            }
            Closing::Received if self.everything_acked() && !self.shutdown_ack_held => {
                self.closing = Closing::AckSent;
                let path = match self.shutdown_from {
                    Some(p) => p,
                    None => self.control_path(None),
                };
                self.send_t2(now, path, Chunk::ShutdownAck);
            }
            Closing::ShutdownSent if due => self.retry_t2(now, self.shutdown_chunk()),
            Closing::AckSent if due => self.retry_t2(now, Chunk::ShutdownAck),
            _ => {}
        }
    }

    /// The path for a control chunk that opens an exchange: among the ACTIVE paths
    /// (other than `avoid`, when another is ACTIVE) the one the peer was heard from
    /// last, the lowest-numbered on a tie; with no ACTIVE path, the path after `avoid`
    /// (every path gets its turn while none answers).
    pub(super) fn control_path(&self, avoid: Option<PathId>) -> PathId {
        let n = self.paths.len();
        let active = |i: usize| self.paths[i].state == PathState::Active;
        let latest = |ok: &dyn Fn(usize) -> bool| {
            (0..n)
                .filter(|&i| ok(i))
                .max_by_key(|&i| (self.paths[i].heard, std::cmp::Reverse(i)))
        };
        let other = |i: usize| Some(PathId(i)) != avoid;
        latest(&|i| active(i) && other(i))
            .or_else(|| latest(&active))
            .map(PathId)
            .unwrap_or_else(|| PathId(avoid.map_or(0, |a| (a.0 + 1) % n)))
    }

    fn send_t2(&mut self, now: Time, path: PathId, chunk: Chunk) {
        self.ctrl.push_back((path, chunk));
        self.t2_path = path;
        self.t2 = Some(now + self.paths[path].rtt.rto());
    }

    fn retry_t2(&mut self, now: Time, chunk: Chunk) {
        let last = self.t2_path;
        self.back_off(last);
        self.assoc_errors += 1;
        // With outage handling, only the outage tolerance ends the wait for a SHUTDOWN
        // ACK (the wait for the final SHUTDOWN COMPLETE keeps its limit).
        let patient = self.cfg.outage.is_some() && self.closing == Closing::ShutdownSent;
        if self.assoc_errors > self.cfg.assoc_max_retrans && !patient {
            self.t2 = None;
            if self.closing == Closing::AckSent {
                // Only the peer's SHUTDOWN COMPLETE is missing: it had sent everything
                // and we had acknowledged it all, and the peer may well be gone (its
                // COMPLETE lost on the way). RFC 9260 §9.2 destroys the TCB here; the
                // transfer itself is complete, so this is a close, not a failure.
                self.finish_close(now);
            } else {
                self.fail(now, Lifecycle::Failed);
            }
            return;
        }
        let path = self.control_path(Some(last));
        self.send_t2(now, path, chunk);
    }

    pub(super) fn on_shutdown(&mut self, now: Time, path: PathId, cum_tsn: u32) {
        self.shutdown_from = Some(path);
        let sack = SackChunk {
            cum_tsn,
            a_rwnd: self.snd.peer_awnd.min(u32::MAX as u64) as u32,
            ..SackChunk::default()
        };
        self.on_sack(now, &sack);
        match self.closing {
            Closing::Open | Closing::Pending => {
                self.closing = Closing::Received;
                self.snd.backlog = false;
            }
            // The peer repeats its SHUTDOWN: our SHUTDOWN ACK was lost. Answer again at
            // once, on the path this one came on, and restart T2.
            Closing::AckSent => self.send_t2(now, path, Chunk::ShutdownAck),
            _ => {}
        }
    }

    pub(super) fn on_shutdown_ack(&mut self, now: Time, path: PathId) {
        if matches!(self.closing, Closing::ShutdownSent | Closing::Pending) {
            self.ctrl
                .push_back((path, Chunk::ShutdownComplete { reflected: false }));
            self.finish_close(now);
        }
    }

    pub(super) fn on_shutdown_complete(&mut self, now: Time) {
        if self.closing == Closing::AckSent {
            self.finish_close(now);
        }
    }

    fn finish_close(&mut self, now: Time) {
        self.closing = Closing::Closed;
        self.t2 = None;
        for p in &mut self.paths {
            p.timers.set_t3(None);
            p.timers.set_hb_due(None);
            p.timers.set_hb_pending(None);
            p.timers.set_decay_at(None);
        }
        self.rcv.sack_at = None;
        self.obs.event(now, &Event::AssociationClosed);
    }

    /// Ends the association at once: an ABORT (with `cause`, if any) goes out on every
    /// path with the next transmits — one that arrives is enough, and a dead path must
    /// not swallow it — and nothing more after it (RFC 9260 §9.1).
    pub fn abort(&mut self, now: Time, cause: Option<u16>) {
        self.views_but = None;
        if self.lifecycle == Lifecycle::Up {
            for i in 0..self.paths.len() {
                let abort = Chunk::Abort {
                    cause,
                    reflected: false,
                };
                self.ctrl.push_back((PathId(i), abort));
            }
            self.fail(now, Lifecycle::Failed);
        }
    }

    /// A protocol violation by the peer: ABORT with cause 13 and fail (RFC 9260 §9.1).
    pub(super) fn violation(&mut self, now: Time, path: PathId) {
        self.ctrl.push_back((
            path,
            Chunk::Abort {
                cause: Some(crate::packet::CAUSE_PROTOCOL_VIOLATION),
                reflected: false,
            },
        ));
        self.stats.bogus_chunks += 1;
        // The ABORT still goes out: control chunks are sent first.
        self.fail(now, Lifecycle::PeerViolated);
    }
}
