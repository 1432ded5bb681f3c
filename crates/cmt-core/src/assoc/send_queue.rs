//! The send queue: chunks written by the application and not yet cumulatively
//! acknowledged, with their transmission state (RFC 9260 §6.1, §6.2).

use std::collections::{BTreeSet, VecDeque};

use crate::event::SendKind;
use crate::packet::{data_chunk_len, Payload};
use crate::sched::SchedContext;
use crate::time::Time;
use crate::view::{PathId, PathView};

use super::on_path::OnPath;
use super::write_queues::SubflowQueues;

/// A chunk sent and not yet cumulatively acknowledged.
pub(super) struct TxChunk {
    pub(super) payload: Payload,
    pub(super) len: u32,
    pub(super) ssn: u16,
    /// Path of the latest transmission.
    pub(super) path: PathId,
    pub(super) tx_count: u32,
    /// When its latest transmission left (RACK's send time).
    pub(super) sent_at: Time,
    /// Its latest transmission's number on its path (QUIC's packet number).
    pub(super) path_seq: u64,
    /// Gap-acknowledged (our receiver never reneges, so this is final).
    pub(super) acked: bool,
    /// Counted in its path's flight.
    pub(super) in_flight: bool,
    pub(super) missing: u32,
    /// Already fast-retransmitted once: never again.
    pub(super) fast_done: bool,
    /// Copied to another path by reinjection: its acknowledgement is ambiguous and
    /// credits no path (neither window growth nor liveness).
    pub(super) reinjected: bool,
    /// Not sent yet and waiting in the write queue of `path` (Linux MPTCP's subflow
    /// queues, [`SubflowQueues`]).
    pub(super) committed: bool,
    /// Marked for retransmission: why, and the chosen destination.
    pub(super) rtx: Option<(SendKind, PathId)>,
    /// DATA chunk bytes of every chunk given a TSN before this one: the bytes of a run
    /// of TSNs is a difference of two offsets.
    pub(super) offset: u64,
}

impl TxChunk {
    /// Bytes this chunk counts in flight and in cwnd arithmetic (DATA chunk length).
    pub(super) fn size(&self) -> u64 {
        data_chunk_len(self.len as usize) as u64
    }
}

/// What the scheduler sees for a chunk of `len` bytes.
pub(super) fn sched_context<'a>(
    views: &'a [PathView],
    snd: &SendState,
    adverts: u64,
    now: Time,
    (len, max): (u32, u32),
) -> SchedContext<'a> {
    SchedContext {
        now,
        paths: views,
        peer_rwnd: snd.peer_rwnd,
        chunk_len: len,
        queued_bytes: snd.queued_bytes(),
        chunks_available: snd.chunks_available(max),
        reserved: snd.reserved.len(),
        peer_awnd: snd.peer_awnd,
        adverts,
    }
}

/// TSN stretches shorter than this are looked up chunk by chunk
/// ([`SendState::not_acked_in`]).
const SHORT_STRETCH: u64 = 16;

pub(super) struct SendState {
    queue: VecDeque<Payload>,
    queued: u64,
    pub(super) backlog: bool,
    pub(super) next_tsn: u64,
    pub(super) next_ssn: u16,
    /// Highest cumulatively acknowledged TSN.
    pub(super) cum_ack: u64,
    /// TSNs `cum_ack + 1 ..` in order (added with [`push_chunk`](Self::push_chunk),
    /// removed with [`drop_first`](Self::drop_first), which keep `chunk_bytes`).
    pub(super) chunks: VecDeque<TxChunk>,
    /// User bytes in `chunks`.
    chunk_bytes: u64,
    /// TSNs marked for retransmission, in order.
    pub(super) rtx_marked: BTreeSet<u64>,
    /// TSNs given to chunks that are not sent yet (a path took a chunk further down the
    /// queue, `Scheduler::select_at`); they head the send queue.
    pub(super) reserved: BTreeSet<u64>,
    /// Reserved TSNs given to a path's write queue (`send_buffer = "linux"`).
    pub(super) subflows: SubflowQueues,
    /// Copies the scheduler asked for, `(tsn, path)`, in request order.
    pub(super) copy_queue: VecDeque<(u64, PathId)>,
    /// The sent, unacknowledged chunks of `chunks` by the path of their latest
    /// transmission.
    pub(super) on_path: OnPath,
    /// DATA chunk bytes given TSNs so far (the next chunk's `offset`).
    pub(super) assigned_bytes: u64,
    /// The TSN ranges the latest SACK's gap blocks covered, sorted: every chunk in them
    /// is acknowledged, so the next SACK looks for new acks only outside them.
    pub(super) gap_acked_runs: Vec<(u64, u64)>,
    /// The DATA chunk bytes of each of `gap_acked_runs`, when nothing was reserved
    /// (not sent yet) and the runs came in order; empty otherwise.
    pub(super) gap_run_bytes: Vec<u64>,

    pub(super) peer_rwnd: u64,
    /// The latest a_rwnd the peer advertised.
    pub(super) peer_awnd: u64,
    /// Per path: a fast retransmission may go out even with a full cwnd.
    pub(super) fast_exempt: Vec<bool>,
    /// Bytes (DATA chunk sizes) of the chunks in `chunks` that have been gap-acked.
    pub(super) gap_acked_bytes: u64,
    /// ns-2's `uiHighestTsnNewlyAcked`: kept across SACKs (used without SFR).
    pub(super) htna_ns2: u64,
    pub(super) blocked: bool,
}

impl SendState {
    pub(super) fn new(initial_tsn: u32, peer_rwnd: u32, num_paths: usize) -> Self {
        // Unwrapped TSNs start in the second 2^32 block so that `cum_ack = initial − 1`
        // never underflows.
        let first = (1u64 << 32) + initial_tsn as u64;
        SendState {
            queue: VecDeque::new(),
            queued: 0,
            backlog: false,
            next_tsn: first,
            next_ssn: 0,
            cum_ack: first - 1,
            chunks: VecDeque::new(),
            chunk_bytes: 0,
            rtx_marked: BTreeSet::new(),
            reserved: BTreeSet::new(),
            subflows: SubflowQueues::default(),
            copy_queue: VecDeque::new(),
            on_path: OnPath::new(num_paths),
            assigned_bytes: 0,
            gap_acked_runs: Vec::new(),
            gap_run_bytes: Vec::new(),

            peer_rwnd: peer_rwnd as u64,
            peer_awnd: peer_rwnd as u64,
            fast_exempt: vec![false; num_paths],
            gap_acked_bytes: 0,
            htna_ns2: 0,
            blocked: false,
        }
    }

    pub(super) fn enqueue(&mut self, data: Payload) {
        if !data.is_empty() {
            self.queued += data.len() as u64;
            self.queue.push_back(data);
        }
    }

    pub(super) fn has_new_data(&self) -> bool {
        self.backlog || !self.queue.is_empty() || !self.reserved.is_empty()
    }

    /// Data not yet given a TSN.
    pub(super) fn has_queued(&self) -> bool {
        self.backlog || !self.queue.is_empty()
    }

    pub(super) fn queued_bytes(&self) -> u64 {
        if self.backlog {
            u64::MAX
        } else {
            self.queued
        }
    }

    /// User bytes not acknowledged yet: queued, and in chunks not cumulatively acked.
    pub(super) fn unacked_bytes(&self) -> u64 {
        debug_assert_eq!(
            self.chunk_bytes,
            self.chunks.iter().map(|c| c.len as u64).sum::<u64>()
        );
        self.queued_bytes().saturating_add(self.chunk_bytes)
    }

    /// User bytes in chunks given a TSN and not cumulatively acknowledged.
    pub(super) fn chunk_bytes(&self) -> u64 {
        self.chunk_bytes
    }

    /// Appends a chunk that was just given the next TSN.
    pub(super) fn push_chunk(&mut self, c: TxChunk) {
        self.chunk_bytes += c.len as u64;
        self.chunks.push_back(c);
    }

    /// Drops the chunk after the cumulative ack point (the caller advances it).
    pub(super) fn drop_first(&mut self) {
        if let Some(c) = self.chunks.front() {
            self.chunk_bytes -= c.len as u64;
            self.chunks.pop_front();
        }
    }

    /// The index in `chunks` of `tsn` (which must be there).
    pub(super) fn index(&self, tsn: u64) -> usize {
        (tsn - self.cum_ack - 1) as usize
    }

    /// The earliest TSN in flight on `path` (T3-rtx rule R3, RFC 9260 §6.3.2): its
    /// lowest outstanding TSN unless that one was marked for retransmission.
    pub(super) fn earliest_in_flight(&self, path: PathId) -> Option<u64> {
        let in_flight = |t: u64| self.chunks[self.index(t)].in_flight;
        let first = self.on_path.first(path)?;
        if in_flight(first) {
            return Some(first);
        }
        self.on_path.on(path, first + 1..).find(|&t| in_flight(t))
    }

    /// Appends the TSNs in `lo ..= hi` (within the queue) not acknowledged yet to
    /// `out`: those sent (indexed by path) and, which only a bogus SACK can ack, those
    /// not sent yet. A short stretch (a SACK usually adds a TSN or two to a gap block)
    /// is read from the queue itself, in TSN order; a longer one from the paths'
    /// bitmaps, which skip acknowledged TSNs 64 at a time.
    pub(super) fn not_acked_in(&self, lo: u64, hi: u64, out: &mut Vec<u64>) {
        if lo > hi {
            return;
        }
        if hi - lo < SHORT_STRETCH {
            // Every chunk of the queue has a TSN: sent, or reserved (not sent yet).
            let chunks = self.chunks.range(self.index(lo)..=self.index(hi));
            out.extend(
                (lo..=hi)
                    .zip(chunks)
                    .filter(|(_, c)| !c.acked)
                    .map(|(t, _)| t),
            );
            return;
        }
        self.on_path.all_in(lo, hi, out);
        if !self.reserved.is_empty() {
            out.extend(
                self.reserved
                    .range(lo..=hi)
                    .filter(|&&t| !self.chunks[self.index(t)].acked),
            );
        }
    }

    /// DATA chunk bytes of the sent chunks at indexes `first ..= last` of `chunks`.
    #[inline]
    pub(super) fn sent_bytes(&self, first: usize, last: usize) -> u64 {
        let (a, b) = (&self.chunks[first], &self.chunks[last]);
        let all = b.offset + b.size() - a.offset;
        let (lo, hi) = (
            self.cum_ack + 1 + first as u64,
            self.cum_ack + 1 + last as u64,
        );
        if self.reserved.is_empty() {
            return all;
        }
        let unsent: u64 = self
            .reserved
            .range(lo..=hi)
            .map(|&t| self.chunks[self.index(t)].size())
            .sum();
        all - unsent
    }

    pub(super) fn next_len(&self, max: u32) -> u32 {
        match self.queue.front() {
            Some(p) => (p.len() as u32).min(max),
            None => max,
        }
    }

    /// Chunks not sent yet, reserved ones included, that the queue holds when chunks
    /// carry at most `max` bytes (`usize::MAX` for a backlogged sender).
    pub(super) fn chunks_available(&self, max: u32) -> usize {
        if self.backlog {
            return usize::MAX;
        }
        let queued: u64 = self
            .queue
            .iter()
            .map(|p| (p.len() as u64).div_ceil(max.max(1) as u64))
            .sum();
        self.reserved.len().saturating_add(queued as usize)
    }

    pub(super) fn take(&mut self, max: u32) -> Payload {
        match self.queue.pop_front() {
            Some(p) => {
                let (head, rest) = p.split_at(max as usize);
                if let Some(rest) = rest {
                    self.queue.push_front(rest);
                }
                self.queued -= head.len() as u64;
                head
            }
            None => Payload::Synthetic(max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A queue of 300 chunks after the cumulative ack, pseudo-randomly sent on three
    /// paths (first transmissions and retransmissions), reserved (not sent) or
    /// gap-acked.
    fn queue() -> SendState {
        let mut s = SendState::new(1000, 65536, 3);
        let mut x: u64 = 11;
        for _ in 0..300 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let tsn = s.next_tsn;
            s.next_tsn += 1;
            let (path, tx_count) = (PathId((x >> 33) as usize % 3), (x >> 40) as u32 % 3);
            let acked = tx_count > 0 && (x >> 50).is_multiple_of(3);
            if tx_count == 0 {
                s.reserved.insert(tsn);
            } else if !acked {
                s.on_path.add(path, tsn, tx_count);
            }
            s.push_chunk(TxChunk {
                payload: Payload::Synthetic(100),
                len: 100,
                ssn: 0,
                path,
                tx_count,
                acked,
                in_flight: tx_count > 0 && !acked,
                missing: 0,
                fast_done: false,
                reinjected: false,
                committed: false,
                sent_at: Time::ZERO,
                path_seq: 0,
                rtx: None,
                offset: 0,
            });
        }
        s
    }

    /// Short stretches (read chunk by chunk) and long ones (read from the paths'
    /// bitmaps) give the same TSNs: every chunk in the stretch not acknowledged, sent
    /// or reserved, in TSN order.
    #[test]
    fn not_acked_in_gives_each_unacked_tsn_of_a_stretch_in_order() {
        let s = queue();
        let first = s.cum_ack + 1;
        for (a, b) in [
            (0, 0),
            (0, 15),
            (3, 18),
            (10, 9),
            (0, 299),
            (40, 140),
            (290, 299),
        ] {
            let (lo, hi) = (first + a, first + b);
            let mut got = Vec::new();
            s.not_acked_in(lo, hi, &mut got);
            got.sort_unstable();
            let want: Vec<u64> = (lo..=hi).filter(|&t| !s.chunks[s.index(t)].acked).collect();
            assert_eq!(got, want, "{a}..={b}");
            if hi >= lo && hi - lo < SHORT_STRETCH {
                let mut again = Vec::new();
                s.on_path.all_in(lo, hi, &mut again);
                again.extend(s.reserved.range(lo..=hi).copied());
                again.sort_unstable();
                assert_eq!(again, want, "{a}..={b} from the bitmaps");
            }
        }
    }
}
