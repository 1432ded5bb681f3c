//! SACK processing at the sender: cumulative and gap acknowledgements, RTT samples,
//! cwnd growth, the peer window and T3-rtx restarts (loss detection is in `loss.rs`).
//!
//! Rules: RFC 9260 §6.2.1, §6.3, §7.2.1–7.2.2; CMT's CUC (Iyengar et al., ToN 2006) as
//! in ns-2.35 `sctp-cmt.cc`. T3-rtx follows RFC 9260 §6.3.2 rule R3: it is restarted
//! for a path only when a SACK acknowledges the earliest TSN outstanding on that path.
//! (Restarting on any new ack would let a lost fast retransmission stall the
//! association for as long as newer data keeps being acked.)
//!
//! With ns-2.35 compatibility (docs/ns2.md): partial_bytes_acked is counted as
//! `SendBufferDequeueUpTo` and `ProcessGapAckBlocks` count it, a chunk gap-acked
//! before but missing from a later SACK is taken back as outstanding
//! (`ProcessGapAckBlocks`), chunks marked for retransmission count against the peer
//! window (`ProcessSackChunk`), and Max.Burst switches on for good at the first
//! cumulative ack of a retransmitted chunk (`SendBufferDequeueUpTo`).

use super::send_queue::SendState;
use super::Association;
use crate::cc::{AckSignal, CcPathView};
use crate::event::{Event, Observer, SendKind};
use crate::packet::SackChunk;
use crate::path::Path;
use crate::time::Time;
use crate::tsn::unwrap_tsn;
use crate::view::{PathId, PathState};

mod newly;
mod uncovered;
use newly::newly_acked;
pub(super) use uncovered::uncovered;

/// Gap blocks from which a SACK's blocks are remembered with their bytes, for the next
/// SACK to skip those it repeats.
const MANY_BLOCKS: usize = 8;

/// Scratch of one SACK, kept between SACKs to avoid allocation.
#[derive(Default)]
pub(super) struct AckScratch {
    /// Per path.
    pub(super) path: Vec<PathAck>,
    cc_views: Vec<CcPathView>,
    /// TSNs a gap block acks for the first time.
    pub(super) newly: Vec<u64>,
    /// Chunks that may get a missing report (`loss.rs`).
    pub(super) candidates: Vec<u64>,
    /// Chunks this SACK marks for fast retransmission, `(index, tsn)`.
    pub(super) losses: Vec<(usize, u64)>,
    /// RACK-TLP detects loss: deliveries update each path's RACK state.
    rack: bool,
    /// QUIC detects loss: deliveries give its per-path largest acknowledged and its
    /// round-trip samples instead of RFC 9260's one timed chunk per round trip.
    quic: bool,
    /// A buffer for a SACK's gap blocks as TSN ranges.
    runs: Vec<(u64, u64)>,
    /// A buffer for the DATA chunk bytes of each of `runs`.
    run_bytes: Vec<u64>,
    /// RTT samples the SACK gave, `(path, ns)`, applied after the acks.
    rtts: Vec<(PathId, u64)>,
}

/// What one SACK did to one path.
#[derive(Default)]
pub(super) struct PathAck {
    pub(super) newly_bytes: u64,
    /// Newly acked bytes that count toward partial_bytes_acked.
    pba_bytes: u64,
    /// Some chunk last sent on the path was newly acked (SFR).
    pub(super) saw_new_ack: bool,
    /// Some chunk newly acked was still outstanding on the path — in flight, not
    /// abandoned to a retransmission — so the path carried it recently.
    pub(super) saw_outstanding_ack: bool,
    /// ns-2.35's evidence that the path works (`SendBufferDequeueUpTo`,
    /// `ProcessGapAckBlocks`): a chunk cumulatively acked that was neither gap-acked
    /// before nor marked for a timeout retransmission — with CMT-PF only one sent once —
    /// or, with CMT-PF, a chunk sent once gap-acked while the path is potentially failed.
    pub(super) ns2_alive: bool,
    /// Highest TSN newly acked on the path (SFR's per-path HTNA).
    pub(super) highest: u64,
    /// Lowest TSN newly acked on the path (DAC).
    pub(super) lowest: u64,
    new_pseudo: bool,
    flight_before: u64,
    /// Earliest TSN in flight on the path before this SACK, looked up when the SACK
    /// first acks one of the path's chunks (`None` inside: not looked up yet). Until
    /// then nothing of the path's has changed, so it is what it was before the SACK.
    earliest: Option<Option<u64>>,
    /// The earliest TSN of the path was acked: restart its T3 (rule R3).
    pub(super) restart_t3: bool,
    /// QUIC: the transmission with the highest number newly acked on the path, when
    /// it was sent, and whether it was the chunk's only one (a round-trip sample).
    pub(super) top: Option<(u64, Time, bool)>,
    /// The latest send time among chunks sent once that were newly acked (HyStart's
    /// round trip of the ack).
    pub(super) newest_sent: Option<Time>,
}

impl AckScratch {
    fn reset(&mut self, paths: &[Path], cum: u64) {
        // Written over in place (the number of paths never changes).
        self.path.resize_with(paths.len(), PathAck::default);
        for (a, p) in self.path.iter_mut().zip(paths) {
            *a = PathAck {
                newly_bytes: 0,
                pba_bytes: 0,
                saw_new_ack: false,
                saw_outstanding_ack: false,
                ns2_alive: false,
                highest: cum,
                lowest: u64::MAX,
                new_pseudo: false,
                flight_before: p.out.flight,
                earliest: (p.out.flight == 0).then_some(None),
                restart_t3: false,
                top: None,
                newest_sent: None,
            };
        }
    }

    /// Looks up path `d`'s earliest TSN in flight, before the SACK changes any of the
    /// path's chunks (it is read only for paths whose chunks the SACK acks).
    fn note_earliest(&mut self, d: usize, snd: &SendState) {
        let a = &mut self.path[d];
        if a.earliest.is_none() {
            a.earliest = Some(snd.earliest_in_flight(PathId(d)));
        }
    }
}

impl<O: Observer> Association<O> {
    /// The caller has checked that the cumulative ack is for data sent
    /// (`acks_unsent_data`: a violation otherwise).
    pub(super) fn on_sack(&mut self, now: Time, sack: &SackChunk) {
        let cum = unwrap_tsn(self.snd.cum_ack, sack.cum_tsn);
        if cum < self.snd.cum_ack {
            return; // an older SACK overtaken by a newer one on another path
        }
        // Taken out (a pointer, not the buffers) so that helpers can take `&mut self`.
        let mut s = self.scratch.take().unwrap_or_default();
        s.reset(&self.paths, cum);
        s.rack = self.rack();
        s.quic = self.quic();
        let mut rtts = std::mem::take(&mut s.rtts);
        rtts.clear();
        let advanced = cum > self.snd.cum_ack;
        if self.ns2() {
            // ns-2 `FastRtx`: a destination's one-packet exemption lasts only for the
            // retransmissions right after the SACK that marked its chunk.
            self.snd.fast_exempt.iter_mut().for_each(|e| *e = false);
        }
        let mut newly_any = self.ack_cumulative(now, cum, &mut s, &mut rtts);
        let (newly_gap, reported) =
            self.ack_gap_blocks(now, cum, advanced, &sack.gap_blocks, &mut s, &mut rtts);
        newly_any |= newly_gap;
        if self.ns2() && self.snd.gap_acked_bytes > reported {
            self.renege_unreported(&s.runs);
        }
        self.release_copies(&mut s);
        for &(path, ns) in &rtts {
            self.rtt_sample(now, path, crate::time::Duration::from_nanos(ns));
        }
        s.rtts = rtts;
        if s.quic {
            self.quic_on_acks(now, &s);
        }
        if newly_any {
            self.assoc_errors = 0;
        }
        self.update_paths_after_ack(now, &s);
        self.grow_cwnds(now, &mut s, advanced);
        self.missing_reports(now, &mut s, sack.flags);
        if self.rack() {
            self.rack_on_sack(now, &s, &sack.dup_tsns);
        }
        if s.quic {
            self.quic_detect(now);
        }
        if self.cfg.prr {
            self.prr_on_sack(now, &s);
        }
        self.update_peer_rwnd(sack.a_rwnd, reported);
        for (i, p) in self.paths.iter_mut().enumerate() {
            if s.quic {
                break; // the probe timeout runs from each path's latest transmission
            }
            if p.out.flight == 0 {
                p.timers.set_t3(None);
            } else if p.state == PathState::Removed {
                // Its timer is the removal's grace (`remove_path`): acks do not move it.
            } else if s.path[i].restart_t3 || p.timers.t3().is_none() {
                p.timers.set_t3(Some(now + p.rtt.rto()));
            }
        }
        if s.quic {
            (0..self.paths.len()).for_each(|d| self.quic_arm_pto(PathId(d)));
        }
        self.scratch = Some(s);
        self.reinject_on_sack(now, advanced);
        // The index against the queue, in debug builds (the tests) while the queue is
        // short enough for a walk per SACK to stay cheap.
        #[cfg(debug_assertions)]
        if self.snd.chunks.len() <= 1024 {
            let cum = self.snd.cum_ack;
            let unacked = self.snd.chunks.iter().enumerate().filter(|(_, c)| !c.acked);
            let unacked = unacked.map(|(i, c)| (c.path, cum + 1 + i as u64, c.tx_count));
            self.snd.on_path.check(unacked);
        }
    }

    /// The cumulative part: chunks up to `cum` leave the queue. Returns whether any was
    /// acked for the first time.
    fn ack_cumulative(
        &mut self,
        now: Time,
        cum: u64,
        s: &mut AckScratch,
        rtts: &mut Vec<(PathId, u64)>,
    ) -> bool {
        let ns2 = self.ns2();
        let mut newly_any = false;
        while self.snd.cum_ack < cum {
            // The chunk is read where it lies and dropped at the end: moving it out of
            // the queue first would copy it.
            let Some(c) = self.snd.chunks.front() else {
                break;
            };
            let tsn = self.snd.cum_ack + 1;
            let (d, size) = (c.path.0, c.size());
            let (acked, in_flight, marked) = (c.acked, c.in_flight, c.rtx.is_some());
            if ns2 && !acked {
                let timeout_marked = matches!(c.rtx, Some((SendKind::TimeoutRetransmit, _)));
                s.path[d].ns2_alive |= !timeout_marked && (!self.cfg.pf_enabled || c.tx_count == 1);
            }
            if !acked {
                s.note_earliest(d, &self.snd);
                self.snd.on_path.remove(c.path, tsn, c.tx_count);
                // ns-2 `SendBufferDequeueUpTo`: Max.Burst applies from the first
                // cumulative ack of a chunk no longer eligible for fast retransmission.
                self.burst_trigger |= c.fast_done || c.tx_count > 1;
                newly_acked(&mut self.paths, s, now, tsn, c, in_flight, rtts);
                // CUC: a newly cum-acked TSN that was never gap-acked counts as progress,
                // and the path's expected pseudo-cumacks must be looked for again.
                s.path[d].new_pseudo = true;
                let p = &mut self.paths[d];
                p.cuc.find_pseudo = true;
                p.cuc.find_rtx_pseudo = true;
                // ns-2 counts cumulatively acked bytes toward partial_bytes_acked only
                // while the path's outstanding bytes (marked chunks included) fill cwnd.
                if !ns2 || s.path[d].flight_before + p.out.marked >= p.cc.cwnd() {
                    s.path[d].pba_bytes += size;
                }
                self.snd.htna_ns2 = tsn;
                newly_any = true;
            }
            self.snd.drop_first();
            self.snd.cum_ack = tsn;
            if in_flight {
                self.paths[d].out.flight -= size;
            }
            if acked {
                self.snd.gap_acked_bytes -= size;
            }
            if marked {
                self.snd.rtx_marked.remove(&tsn);
                self.unmark_acked(d, size, s);
            }
        }
        newly_any
    }

    /// The gap ack blocks. Returns whether a chunk was acked for the first time and the
    /// bytes this SACK reports held at the receiver.
    fn ack_gap_blocks(
        &mut self,
        now: Time,
        cum: u64,
        advanced: bool,
        blocks: &[crate::packet::GapBlock],
        s: &mut AckScratch,
        rtts: &mut Vec<(PathId, u64)>,
    ) -> (bool, u64) {
        let (mut newly_any, mut reported) = (false, 0u64);
        let mut newly = std::mem::take(&mut s.newly);
        let before = std::mem::take(&mut self.snd.gap_acked_runs);
        let before_bytes = std::mem::take(&mut self.snd.gap_run_bytes);
        let mut runs = std::mem::take(&mut s.runs);
        runs.clear();
        let mut run_bytes = std::mem::take(&mut s.run_bytes);
        run_bytes.clear();
        // The leading blocks that repeat the previous SACK's runs (past those the
        // cumulative ack has covered since) ack nothing new and hold the bytes they
        // held then: with a large window most of a SACK's blocks are its predecessor's.
        // (Bytes are kept only for a SACK with many blocks — a few are cheaper to sum
        // again than to compare — and while every chunk is sent: none reserved.)
        let keep_bytes = blocks.len() >= MANY_BLOCKS && self.snd.reserved.is_empty();
        let mut repeated = 0;
        let mut gone = 0;
        if keep_bytes && before_bytes.len() == before.len() {
            gone = before.partition_point(|&(_, hi)| hi <= cum);
            let len = self.snd.chunks.len() as u64;
            repeated = blocks
                .iter()
                .zip(&before[gone..])
                .take_while(|&(b, &run)| {
                    let (start, end) = (b.start as u64, b.end as u64);
                    (1..=len).contains(&start)
                        && start <= end
                        && (cum + start, cum + end.min(len)) == run
                })
                .count();
            runs.extend_from_slice(&before[gone..gone + repeated]);
            run_bytes.extend_from_slice(&before_bytes[gone..gone + repeated]);
            reported = run_bytes.iter().sum();
        }
        // Where the previous SACK's runs reach the current block (blocks come in TSN
        // order, so this only moves forward; a bogus order starts it over).
        let mut cursor = gone + repeated.saturating_sub(1);
        for b in &blocks[repeated..] {
            if b.start == 0 || b.start > b.end {
                self.stats.bogus_chunks += 1;
                continue;
            }
            let len = self.snd.chunks.len();
            let first = b.start as usize - 1;
            if first >= len {
                continue;
            }
            let last = (b.end as usize - 1).min(len - 1);
            let bytes = self.snd.sent_bytes(first, last);
            reported += bytes;
            if keep_bytes {
                run_bytes.push(bytes);
            }
            let (lo, hi) = (cum + 1 + first as u64, cum + 1 + last as u64);
            runs.push((lo, hi));
            // The chunks of the block not acked before: only the stretches the previous
            // SACK's blocks did not cover can hold any.
            newly.clear();
            if runs.len() > 1 && runs[runs.len() - 2].0 > lo {
                cursor = 0;
            }
            while cursor < before.len() && before[cursor].1 < lo {
                cursor += 1;
            }
            if before.get(cursor).is_some_and(|&(s, e)| s <= lo && hi <= e) {
                continue; // inside one of the previous SACK's blocks: nothing new
            }
            for (from, to) in uncovered(lo, hi, &before[cursor..]) {
                self.snd.not_acked_in(from, to, &mut newly);
            }
            // Paths one after the other: usually one path's, already in order.
            if !newly.is_sorted() {
                newly.sort_unstable();
            }
            newly_any |= !newly.is_empty();
            self.ack_newly(now, &newly, advanced, s, rtts);
        }
        s.newly = newly;
        // Every kept byte count is what the queue says for its run (debug builds).
        #[cfg(debug_assertions)]
        if !run_bytes.is_empty() {
            assert_eq!(run_bytes.len(), runs.len(), "a byte count per run");
            for (&(lo, hi), &bytes) in runs.iter().zip(&run_bytes) {
                let (first, last) = (self.snd.index(lo), self.snd.index(hi));
                assert_eq!(bytes, self.snd.sent_bytes(first, last), "run {lo}..={hi}");
            }
        }
        if !runs.is_sorted() {
            runs.sort_unstable();
            run_bytes.clear();
        }
        self.snd.gap_acked_runs = runs;
        self.snd.gap_run_bytes = run_bytes;
        // The previous SACK's runs are done with: their buffers hold the next SACK's.
        s.runs = before;
        s.run_bytes = before_bytes;
        (newly_any, reported)
    }

    /// The chunks `newly` gap-acked by a block (in TSN order): acked, out of flight and
    /// of the retransmission marks, their RTT and window book-keeping done.
    #[inline]
    fn ack_newly(
        &mut self,
        now: Time,
        newly: &[u64],
        advanced: bool,
        s: &mut AckScratch,
        rtts: &mut Vec<(PathId, u64)>,
    ) {
        let ns2 = self.ns2();
        for &tsn in newly {
            let idx = self.snd.index(tsn);
            s.note_earliest(self.snd.chunks[idx].path.0, &self.snd);
            let c = &mut self.snd.chunks[idx];
            let (d, size) = (c.path.0, c.size());
            if ns2 && c.tx_count == 1 && self.paths[d].state == PathState::PotentiallyFailed {
                s.path[d].ns2_alive = true;
            }
            self.snd.on_path.remove(c.path, tsn, c.tx_count);
            c.acked = true;
            self.snd.gap_acked_bytes += size;
            if self.cfg.rev.is_some() {
                // Receiver-driven CMT uses NR-SACK semantics (Natarajan et al.):
                // gap-acked data is non-renegable, so the sender's copy can go now.
                c.payload = crate::packet::Payload::Synthetic(c.len);
            }
            let outstanding = c.in_flight;
            if c.in_flight {
                c.in_flight = false;
                self.paths[d].out.flight -= size;
            }
            if c.rtx.take().is_some() {
                self.snd.rtx_marked.remove(&tsn);
                self.unmark_acked(d, size, s);
            }
            newly_acked(
                &mut self.paths,
                s,
                now,
                tsn,
                &self.snd.chunks[idx],
                outstanding,
                rtts,
            );
            self.snd.htna_ns2 = self.snd.htna_ns2.max(tsn);
            // ns-2 `ProcessGapAckBlocks` adds gap-acked bytes to partial_bytes_acked
            // from the path's new pseudo-cumack on (TSN order), or with CUC off once
            // the cumulative ack advanced.
            let counts = match (ns2, self.cfg.cuc) {
                (false, _) => true,
                (true, true) => s.path[d].new_pseudo,
                (true, false) => advanced,
            };
            if counts {
                s.path[d].pba_bytes += size;
            }
        }
    }

    /// A chunk marked for retransmission was acked before it was resent.
    fn unmark_acked(&mut self, path: usize, size: u64, s: &mut AckScratch) {
        self.paths[path].out.marked -= size;
        if self.ns2() {
            // ns-2's outstanding bytes still hold it when `AdjustCwnd` compares them
            // with cwnd.
            s.path[path].flight_before += size;
        }
    }
    /// Copies of chunks acknowledged now leave their paths' flight; an ack of data a
    /// path carried keeps its T3 from expiring.
    fn release_copies(&mut self, s: &mut AckScratch) {
        for (i, p) in self.paths.iter_mut().enumerate() {
            if p.out.copies.is_empty() {
                continue;
            }
            let chunks = &self.snd.chunks;
            let cum_now = self.snd.cum_ack;
            let before = p.out.copies.len();
            let mut freed = 0;
            p.out.copies.retain(|&(tsn, size)| {
                let acked = tsn <= cum_now
                    || chunks
                        .get((tsn - cum_now - 1) as usize)
                        .is_some_and(|c| c.acked);
                if acked {
                    freed += size;
                }
                !acked
            });
            if p.out.copies.len() != before {
                p.out.flight -= freed;
                s.path[i].restart_t3 = true;
            }
        }
    }

    /// The peer window after this SACK (RFC 9260 §6.2.1 D.ii): a_rwnd minus the bytes
    /// still outstanding after processing it. That is what is in flight, plus what
    /// earlier SACKs gap-acked but this one does not report (`reported`): such a SACK is
    /// older than one already processed (it came over a slower path), its a_rwnd
    /// predates those chunks' arrival, so they still count against it. Treating them as
    /// acked would inflate the window by everything the faster paths delivered
    /// meanwhile and overrun the receiver.
    fn update_peer_rwnd(&mut self, a_rwnd: u32, reported: u64) {
        let unreported = self.snd.gap_acked_bytes.saturating_sub(reported);
        let mut outstanding = self.total_flight() + unreported;
        if self.ns2() {
            // ns-2 counts chunks marked for retransmission as outstanding until they are
            // resent (`ProcessSackChunk`, `TotalOutstanding`); RFC 9260 §6.2.1 C gives
            // their bytes back to the peer window.
            outstanding += self.marked_bytes();
        }
        self.snd.peer_awnd = a_rwnd as u64;
        self.snd.peer_rwnd = (a_rwnd as u64).saturating_sub(outstanding);
    }

    pub(super) fn rtt_sample(&mut self, now: Time, path: PathId, rtt: crate::time::Duration) {
        self.sched.on_rtt_sample(now, path, rtt);
        let est = &mut self.paths[path].rtt;
        est.sample(rtt);
        let ev = Event::RttSample {
            path,
            rtt,
            srtt: est.srtt().unwrap_or(rtt),
            rto: est.rto(),
        };
        self.obs.event(now, &ev);
    }

    /// cwnd growth per path: with CUC only when the path's pseudo-cumack advanced,
    /// without it only when the association's cum-ack advanced. A rate-based controller
    /// (BBR) hears of every byte newly acknowledged: its delivery-rate samples count
    /// them all.
    fn grow_cwnds(&mut self, now: Time, s: &mut AckScratch, advanced: bool) {
        s.cc_views.clear();
        s.cc_views
            .extend(self.paths.iter_mut().enumerate().map(|(i, p)| {
                p.recovery.acked_since_loss += s.path[i].newly_bytes;
                CcPathView {
                    id: PathId(i),
                    cwnd: p.cc.cwnd(),
                    srtt: p.rtt.srtt(),
                    loss_interval: p.recovery.loss_interval(),
                }
            }));
        for i in 0..self.paths.len() {
            let progress = if self.cfg.cuc {
                s.path[i].new_pseudo
            } else {
                advanced
            };
            if s.path[i].newly_bytes == 0 || !(progress || self.paths[i].cc.is_rate_based()) {
                continue;
            }
            if self.paths[i].recovery.prr.is_some() {
                continue; // PRR sets the window until the reduction ends
            }
            let p = &mut self.paths[i];
            let before = (p.cc.cwnd(), p.cc.ssthresh());
            let ack = AckSignal {
                now,
                bytes_acked: s.path[i].newly_bytes,
                pba_bytes: s.path[i].pba_bytes,
                flight_before: s.path[i].flight_before,
                mtu: self.cfg.cwnd_unit(),
                srtt: p.rtt.srtt(),
                min_rtt: p.rtt.min_rtt(),
                newest_sent: s.path[i].newest_sent,
            };
            p.cc.on_ack(&ack, &s.cc_views);
            if (p.cc.cwnd(), p.cc.ssthresh()) != before {
                self.cwnd_event(now, PathId(i));
            }
        }
    }
}
