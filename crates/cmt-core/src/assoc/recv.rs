//! Receiver half: the bounded receive buffer, in-order delivery and SACK generation.
//!
//! Rules: RFC 9260 §6.2 (a_rwnd, delayed SACK every 2nd packet or 200 ms, immediate
//! SACK on gaps and duplicates), §6.7; CMT's DAC (docs/algorithms.md §1.4): with DAC the receiver keeps
//! delaying SACKs when a gap exists and reports in the SACK flags how many DATA packets
//! arrived since the previous SACK.
//!
//! The application reads in-order data at once, so the buffer holds only out-of-order
//! chunks and `a_rwnd = rbuf − bytes held`. A new chunk that would make the buffer
//! exceed `rbuf` is dropped, except the next in-order chunk, which is delivered
//! immediately and never occupies the buffer.
//!
//! With ns-2.35 compatibility the receiver does what `SctpAgent::ProcessDataChunk` does:
//! it counts whole DATA chunks (header included) against the window and drops any chunk
//! that does not fit, the next in-order one and duplicates included, without a SACK.

use std::collections::VecDeque;

use super::Association;
use crate::event::{Event, Observer};
use crate::packet::{data_chunk_len, DataChunk, GapBlock, Payload, SackChunk};
use crate::time::Time;
use crate::tsn::{unwrap_tsn, wire_tsn};
use crate::tsn_window::TsnWindow;
use crate::view::PathId;

use super::tsn_runs::TsnRuns;

struct Held {
    payload: Payload,
    path: PathId,
    arrived: Time,
    /// Bytes it takes from the window.
    size: u32,
}

pub(super) struct RecvState {
    /// Highest TSN delivered in order.
    cum: u64,
    /// Chunks held out of order.
    ooo: TsnWindow<Held>,
    /// The TSNs of `ooo` as runs: the gap blocks.
    runs: TsnRuns,
    pub(super) held: u32,
    dups: Vec<u32>,
    pub(super) delivered: VecDeque<Payload>,
    /// Delivered data is kept in `delivered` for the application to read (see
    /// [`Association::discard_delivered`]).
    pub(super) keep_delivered: bool,
    /// Payload bytes in `delivered` the application has not read yet.
    pub(super) unread: u32,
    /// `unread` takes room in the receive buffer like chunks held out of order
    /// ([`Association::bound_by_reads`]).
    pub(super) bound_by_reads: bool,
    /// `unread` when the last SACK was built: the window it advertised lacked that.
    pub(super) unread_advertised: u32,
    pkts_since_sack: u32,
    pub(super) sack_now: bool,
    pub(super) sack_at: Option<Time>,
    sack_path: PathId,
    dup_in_packet: bool,
    immediate_in_packet: bool,
    /// ns-2 compatibility: a chunk of this packet was dropped for lack of room.
    dropped_in_packet: bool,
}

impl RecvState {
    /// Room left in a receive buffer of `rbuf` bytes: what neither the chunks held out
    /// of order nor (when bound by reads) the delivered data not read yet take.
    pub(super) fn free(&self, rbuf: u32) -> u32 {
        let unread = if self.bound_by_reads { self.unread } else { 0 };
        rbuf.saturating_sub(self.held.saturating_add(unread))
    }

    /// The application read `bytes` of delivered data. A SACK goes now to say the
    /// window opened (a window update) when the last SACK advertised at most half the
    /// buffer and the window is now at least twice that and at least min(half the
    /// buffer, one chunk) — Linux TCP's rule for a read that frees "lots" of space
    /// (`tcp_cleanup_rbuf`), with the receiver's silly-window threshold of RFC 1122
    /// §4.2.3.3. Without it a sender facing a closed window waits for its zero-window
    /// probe's timeout.
    pub(super) fn on_read(&mut self, bytes: u32, rbuf: u32, chunk: u32) {
        self.unread = self.unread.saturating_sub(bytes);
        if !self.bound_by_reads || self.unread >= self.unread_advertised {
            return; // nothing the last SACK withheld was read
        }
        let advertised = rbuf.saturating_sub(self.held.saturating_add(self.unread_advertised));
        let now = self.free(rbuf);
        if advertised <= rbuf / 2 && now >= 2 * advertised && now >= (rbuf / 2).min(chunk) {
            self.sack_now = true;
        }
    }

    pub(super) fn new(peer_initial_tsn: u32) -> Self {
        RecvState {
            cum: (1u64 << 32) + peer_initial_tsn as u64 - 1,
            ooo: TsnWindow::default(),
            runs: TsnRuns::default(),
            held: 0,
            dups: Vec::new(),
            delivered: VecDeque::new(),
            keep_delivered: true,
            unread: 0,
            bound_by_reads: false,
            unread_advertised: 0,
            pkts_since_sack: 0,
            sack_now: false,
            sack_at: None,
            sack_path: PathId(0),
            dup_in_packet: false,
            immediate_in_packet: false,
            dropped_in_packet: false,
        }
    }

    pub(super) fn cum(&self) -> u64 {
        self.cum
    }

    pub(super) fn has_gap(&self) -> bool {
        !self.ooo.is_empty()
    }
}

impl<O: Observer> Association<O> {
    /// From now on, delivered data not [`read`](Self::read) yet takes room in the
    /// receive buffer like data held out of order (RFC 9260 §6.2's flow control): an
    /// application that reads slowly closes the window instead of letting delivered
    /// data pile up without bound, and a read that opens it again sends a window update.
    /// For an embedder that may stop reading (a receiver writing to a pipe); without it
    /// delivered data frees its room at once, as in the simulator, and the embedder
    /// must read everything.
    pub fn bound_by_reads(&mut self) {
        self.rcv.bound_by_reads = true;
    }

    pub(super) fn on_data(&mut self, now: Time, path: PathId, d: DataChunk) {
        let ns2 = self.ns2();
        let r = &mut self.rcv;
        let tsn = unwrap_tsn(r.cum + 1, d.tsn);
        let bytes = d.payload.len() as u32;
        let size = if ns2 {
            data_chunk_len(bytes as usize) as u32
        } else {
            bytes
        };
        if ns2 && size > r.free(self.cfg.rbuf) {
            r.dropped_in_packet = true;
            self.obs
                .event(now, &Event::DataDropped { path, tsn, bytes });
            return;
        }
        r.immediate_in_packet |= d.flags.immediate;
        let duplicate = tsn <= r.cum || r.ooo.contains(tsn);
        self.obs.event(
            now,
            &Event::DataReceived {
                path,
                tsn,
                bytes,
                duplicate,
            },
        );
        if duplicate {
            if r.dups.len() < 64 {
                r.dups.push(d.tsn);
            }
            r.dup_in_packet = true;
            return;
        }
        if tsn == r.cum + 1 {
            r.cum = tsn;
            // A chunk that fills the hole at the front, releasing data held behind
            // it, is SACKed at once despite DAC when asked (RFC 5681 §4.2, decision
            // D59): a sender bounded by its send buffer waits for this SACK.
            if self.cfg.ack_filled_holes && r.ooo.contains(tsn + 1) {
                r.immediate_in_packet = true;
            }
            if r.keep_delivered {
                r.unread = r.unread.saturating_add(bytes);
                r.delivered.push_back(d.payload);
            }
            self.obs.event(
                now,
                &Event::Delivered {
                    tsn,
                    bytes,
                    path,
                    arrived: now,
                },
            );
            self.drain_in_order(now);
            return;
        }
        // Out of order: keep it only if it fits the buffer and can be reported.
        if size > r.free(self.cfg.rbuf) || tsn - r.cum > u16::MAX as u64 {
            self.obs
                .event(now, &Event::DataDropped { path, tsn, bytes });
            return;
        }
        r.held += size;
        r.runs.insert(tsn);
        r.ooo.insert(
            tsn,
            Held {
                payload: d.payload,
                path,
                arrived: now,
                size,
            },
        );
        let held = r.held;
        self.obs.event(now, &Event::RbufOccupancy { held });
    }

    fn drain_in_order(&mut self, now: Time) {
        let r = &mut self.rcv;
        if r.ooo.is_empty() {
            return; // nothing held: nothing to deliver, no runs, the buffer unchanged
        }
        let before = r.held;
        while let Some(h) = r.ooo.remove(r.cum + 1) {
            r.cum += 1;
            let tsn = r.cum;
            let bytes = h.payload.len() as u32;
            r.held -= h.size;
            if r.keep_delivered {
                r.unread = r.unread.saturating_add(bytes);
                r.delivered.push_back(h.payload);
            }
            let ev = Event::Delivered {
                tsn,
                bytes,
                path: h.path,
                arrived: h.arrived,
            };
            self.obs.event(now, &ev);
        }
        let cum = self.rcv.cum;
        self.rcv.runs.remove_through(cum);
        if self.rcv.held != before {
            let held = self.rcv.held;
            self.obs.event(now, &Event::RbufOccupancy { held });
        }
    }

    /// Decides between an immediate and a delayed SACK after a packet with DATA.
    pub(super) fn after_data_packet(&mut self, now: Time, path: PathId, gap_before: bool) {
        let dac = self.cfg.dac;
        let ns2 = self.ns2();
        let r = &mut self.rcv;
        r.pkts_since_sack += 1;
        r.sack_path = path;
        // A packet that fills the last hole is acknowledged at once, as TCP does (RFC
        // 5681 §4.2); ns-2 (`ProcessChunk`) only SACKs at once while a hole remains.
        let gap = (gap_before && !ns2) || r.has_gap();
        if std::mem::take(&mut r.dropped_in_packet) {
            // ns-2 sends no SACK for a packet whose DATA it had to drop.
            r.dup_in_packet = false;
            r.immediate_in_packet = false;
            if r.sack_at.is_none() {
                r.sack_at = Some(now + self.cfg.sack_delay);
            }
            return;
        }
        let immediate = std::mem::take(&mut r.dup_in_packet)
            || std::mem::take(&mut r.immediate_in_packet)
            || (!dac && gap)
            || r.pkts_since_sack >= self.cfg.sack_freq;
        if immediate {
            r.sack_now = true;
        } else if r.sack_at.is_none() {
            r.sack_at = Some(now + self.cfg.sack_delay);
        }
    }

    /// Builds the SACK now due, resetting the delayed-ack state. Returns the path it
    /// goes on: the path of the latest DATA packet (RFC 9260 §6.4).
    pub(super) fn build_sack(&mut self, now: Time) -> (PathId, SackChunk) {
        // DAC's packet count (Iyengar et al. 2006). ns-2 counts packets only while it
        // delays SACKs (`ProcessChunk`), so without delayed SACKs its SACKs report 0
        // packets and a single-path SACK adds no missing report.
        let dac_count = self.cfg.dac && !(self.ns2() && self.cfg.sack_freq <= 1);
        let room = self.cfg.sack_entries();
        let r = &mut self.rcv;
        let mut gap_blocks = crate::chunk_pool::take_blocks();
        gap_blocks.extend(
            r.runs
                .iter()
                .take(self.cfg.max_gap_blocks.min(room))
                .map(|(s, e)| block(r.cum, s, e)),
        );
        // Duplicate TSNs fill what room the blocks left; the rest wait for later SACKs.
        let dups = r.dups.len().min(room - gap_blocks.len());
        let dup_tsns = r.dups.drain(..dups).collect();
        let sack = SackChunk {
            cum_tsn: wire_tsn(r.cum),
            a_rwnd: r.free(self.cfg.rbuf),
            gap_blocks,
            dup_tsns,
            flags: if dac_count {
                r.pkts_since_sack.min(3) as u8
            } else {
                0
            },
        };
        r.pkts_since_sack = 0;
        r.unread_advertised = r.unread;
        r.sack_now = false;
        r.sack_at = None;
        let path = r.sack_path;
        let ev = Event::SackSent {
            path,
            gap_blocks: sack.gap_blocks.len() as u16,
        };
        self.obs.event(now, &ev);
        (path, sack)
    }
}

fn block(cum: u64, start: u64, end: u64) -> GapBlock {
    GapBlock {
        start: (start - cum) as u16,
        end: (end - cum) as u16,
    }
}
