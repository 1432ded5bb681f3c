//! Linux MPTCP's subflow write queues (`send_buffer = "linux"`; docs/algorithms.md
//! §1.16, decision D58): new data is given to a path when the path's own send buffer
//! has room, not when its window has, and waits in the path's queue until its window
//! lets it leave.
//!
//! Sources (Linux 6.x, `net/mptcp/protocol.c`): `__mptcp_push_pending` moves the
//! connection's pending data into the subflow `mptcp_subflow_get_send` picks, in bursts,
//! for as long as that subflow's socket has memory free (`sk_stream_memory_free`: its
//! queued and unacknowledged bytes below its `sk_sndbuf`, twice its largest window as
//! `tcp_sndbuf_expand` sizes it); TCP then sends from the subflow's write queue as its
//! window allows (`tcp_push`). The kernel's scheduler reads a subflow's queued memory
//! (`sk_wmem_queued`, sent and unsent bytes alike) for its linger time.
//!
//! The consequence: a slow path holds up to twice its window, and what waits in its
//! queue has its place in the stream already, so the receiver's hole behind that path
//! is older than its window alone would make it, and the connection's buffer fills
//! sooner. `ss -tmi` on a 5 Mbit/s subflow beside 50 and 20 Mbit/s ones showed 68 KB
//! unsent under a window of 27 packets while the fast subflow sat idle.
//!
//! Reconstruction: a queued chunk keeps its TSN. A path in TCP's Loss state keeps its
//! queue, as a Linux subflow does, and reinjection takes the oldest unacknowledged
//! data from it as from what was sent (`Association::release_queued`); a path that is
//! no longer ACTIVE, or is held in reserve, gives its whole queue back. Chunks given
//! back go first to whichever path takes data next. The queue's memory is counted in
//! DATA chunk bytes: Linux's queued packets are large (segmentation offload), so their
//! memory is about their payload (`ss -tm`: 105,384 bytes charged for 100,136 held).

use super::{Association, Transmit};
use crate::config::SendBuffer;
use crate::event::Observer;
use crate::packet::data_chunk_len;
use crate::time::Time;
use crate::view::{PathId, PathState, PathView};

impl<O: Observer> Association<O> {
    /// Whether new data goes through per-path write queues.
    pub(super) fn subflow_queues(&self) -> bool {
        self.cfg.send_buffer == SendBuffer::Linux
    }

    /// New data with write queues: queues of paths no longer ACTIVE are given back,
    /// pending data is given to paths while their buffers have room, and the
    /// oldest queued chunk whose path's window is open is sent.
    pub(super) fn poll_queued_data(&mut self, now: Time) -> Option<Transmit> {
        self.views_but = None;
        self.release_stuck_queues();
        self.fill_queues(now);
        self.send_from_queues(now)
    }

    /// Whether path `i`'s bytes in flight and queued are below its send buffer
    /// (`sk_stream_memory_free`).
    fn path_buffer_room(&self, i: usize) -> bool {
        let p = &self.paths[i];
        p.out.flight + self.snd.subflows.bytes(i) < self.subflow_buffer(p)
    }

    fn release_stuck_queues(&mut self) {
        for i in 0..self.snd.subflows.queues.len() {
            if self.snd.subflows.queues[i].is_empty() {
                continue;
            }
            if self.path_view(i).state == PathState::Active {
                continue;
            }
            for (tsn, _) in self.snd.subflows.take(i) {
                if let Some(c) = self.queued_chunk(tsn, i) {
                    c.committed = false;
                    self.snd.subflows.released += 1;
                }
            }
        }
    }

    /// Takes chunks `tsns` out of the write queues they wait in, to be given again
    /// (reinjection's share of what a stalled path holds unsent).
    pub(super) fn release_queued(&mut self, tsns: &[u64]) {
        for &tsn in tsns {
            let at = self.snd.index(tsn);
            let i = self.snd.chunks[at].path.0;
            if self.queued_chunk(tsn, i).is_none() {
                continue;
            }
            self.snd.chunks[at].committed = false;
            self.snd.subflows.remove(i, tsn);
            self.snd.subflows.released += 1;
        }
    }

    /// The chunk `tsn` if it still waits in path `i`'s queue.
    fn queued_chunk(&mut self, tsn: u64, i: usize) -> Option<&mut super::send_queue::TxChunk> {
        if tsn <= self.snd.cum_ack || !self.snd.reserved.contains(&tsn) {
            return None;
        }
        let at = self.snd.index(tsn);
        let c = self.snd.chunks.get_mut(at)?;
        (c.committed && c.path.0 == i && c.tx_count == 0 && !c.acked).then_some(c)
    }

    /// Gives pending chunks, one at a time, to the path the scheduler picks among those
    /// whose buffers have room (`__mptcp_push_pending`), while the connection's buffer
    /// has room. Bounded: each round queues one chunk, and buffers are finite.
    fn fill_queues(&mut self, now: Time) {
        if self.snd.subflows.released == 0 && !self.snd.has_queued() {
            return; // nothing to give: no views to build
        }
        let max = self.cfg.max_payload();
        // Nothing is sent while queues fill: only the path given a chunk changes.
        let mut views = std::mem::take(&mut self.views);
        views.clear();
        views.extend((0..self.paths.len()).map(|i| self.queue_view(i)));
        self.views = views;
        loop {
            let released = self.first_released();
            if released.is_none() && !self.snd.has_queued() {
                return;
            }
            let len = match released {
                Some(tsn) => self.snd.chunks[self.snd.index(tsn)].len,
                None => self.snd.next_len(max),
            };
            // A released chunk is in the connection's buffer and the peer's window
            // already. New data goes to a queue only within the peer's window
            // (`mptcp_check_allowed_size`: Linux pushes nothing past its right edge).
            if released.is_none()
                && (!self.send_buffer_room(len as u64)
                    || self.snd.subflows.total() + data_chunk_len(len as usize) as u64
                        > self.snd.peer_rwnd)
            {
                return;
            }
            let ctx = super::send_queue::sched_context(
                &self.views,
                &self.snd,
                self.rounds.adverts,
                now,
                (len, max),
            );
            if std::mem::take(&mut self.sched_begin) {
                self.sched.begin(&ctx);
            }
            let Some((path, _)) = self.sched.select_at(&ctx) else {
                return;
            };
            if !self.views.get(path.0).is_some_and(|v| v.can_send) {
                return;
            }
            let tsn = match released {
                Some(tsn) => {
                    self.snd.subflows.released -= 1;
                    tsn
                }
                None => {
                    let tsn = self.new_chunk_at(self.snd.reserved.len(), max);
                    self.snd.reserved.insert(tsn);
                    tsn
                }
            };
            let at = self.snd.index(tsn);
            let c = &mut self.snd.chunks[at];
            c.committed = true;
            c.path = path;
            let size = c.size();
            self.snd.subflows.push(path.0, tsn, size);
            self.views[path.0] = self.queue_view(path.0);
            self.sched.on_sent(path, tsn, len);
        }
    }

    /// Path `i` as the scheduler sees it while queues fill: its queued bytes, and able
    /// to take data while it is ACTIVE, not in TCP's Loss state and its buffer has room.
    fn queue_view(&self, i: usize) -> PathView {
        let mut v = self.path_view(i);
        v.queued = self.snd.subflows.bytes(i);
        v.can_send =
            v.state == PathState::Active && !self.in_tcp_loss(i) && self.path_buffer_room(i);
        v
    }

    /// The first reserved chunk in no path's queue, while some are known.
    fn first_released(&mut self) -> Option<u64> {
        if self.snd.subflows.released == 0 {
            return None;
        }
        let cum = self.snd.cum_ack;
        let found = self.snd.reserved.iter().copied().find(|&t| {
            t > cum && {
                let c = &self.snd.chunks[self.snd.index(t)];
                !c.committed && c.tx_count == 0 && !c.acked
            }
        });
        if found.is_none() {
            self.snd.subflows.released = 0;
        }
        found
    }

    /// Sends the oldest queued chunk among the paths whose windows let them send now.
    fn send_from_queues(&mut self, now: Time) -> Option<Transmit> {
        loop {
            let mut best: Option<(u64, usize)> = None;
            for i in 0..self.snd.subflows.queues.len() {
                let Some(head) = self.snd.subflows.head(i) else {
                    continue;
                };
                if self.path_view(i).can_send && best.is_none_or(|(t, _)| head < t) {
                    best = Some((head, i));
                }
            }
            let (tsn, i) = best?;
            let Some(size) = self.queued_chunk(tsn, i).map(|c| c.size()) else {
                // No longer waiting (acknowledged by a bogus SACK, say).
                self.snd.subflows.pop(i);
                continue;
            };
            // With nothing in flight one chunk may go whatever the window (a zero
            // window probe). A chunk below one already sent fills a hole the peer's
            // window covered when the chunk was queued (Linux's window is a right edge
            // in the data sequence, which never retreats: what was queued within it
            // may always be sent); only new data beyond it waits for room.
            let fills_hole = tsn < self.snd.subflows.highest_sent;
            if !fills_hole && self.snd.peer_rwnd < size && self.total_flight() != 0 {
                self.set_blocked(now, true);
                return None;
            }
            self.set_blocked(now, false);
            self.snd.subflows.pop(i);
            self.snd.subflows.highest_sent = self.snd.subflows.highest_sent.max(tsn);
            self.snd.reserved.remove(&tsn);
            let at = self.snd.index(tsn);
            self.snd.chunks[at].committed = false;
            debug_assert_eq!(
                size,
                data_chunk_len(self.snd.chunks[at].len as usize) as u64
            );
            return Some(self.send_new_chunk(now, PathId(i), tsn));
        }
    }
}
