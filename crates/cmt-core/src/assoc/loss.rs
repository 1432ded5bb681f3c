//! Loss detection at the sender: missing reports with CMT's SFR and DAC, fast-retransmit
//! marking, the choice of a retransmission destination and the window reduction, and the
//! search for new expected CUC pseudo-cumacks.
//!
//! Rules: RFC 9260 §7.2.4; SFR, CUC and DAC from Iyengar et al. (ToN 2006) as in
//! ns-2.35 `sctp-cmt.cc` `ProcessGapAckBlocks`; over several paths a retransmitted chunk
//! is not fast-retransmitted again (docs/algorithms.md D41). With ns-2.35 compatibility
//! (docs/ns2.md) the highest TSN newly acked survives SACKs that ack nothing new, the
//! one-packet exemption goes to the path the loss was seen on, and windows are cut as
//! `FastRtx` cuts them.

use super::on_path;
use super::sack::AckScratch;
use super::Association;
use crate::cc::LossSignal;
use crate::event::{Event, Observer, SendKind};
use crate::time::Time;
use crate::view::PathId;

impl<O: Observer> Association<O> {
    /// Missing reports (SFR + DAC), fast-retransmit marking, and the search for new
    /// expected CUC pseudo-cumacks on paths whose expected value was acked (ns-2.35
    /// `sctp-cmt.cc` ProcessGapAckBlocks; docs/algorithms.md §1.4). The expected value is sticky: a
    /// lost chunk keeps it until the chunk itself is acked, so cwnd does not grow while
    /// the loss is being recovered.
    pub(super) fn missing_reports(&mut self, now: Time, s: &mut AckScratch, flags: u8) {
        let ns2 = self.ns2();
        let acked_paths = s.path.iter().filter(|a| a.saw_new_ack).count();
        // Without SFR: the highest TSN newly acked by this SACK (RFC 9260 §7.2.4's
        // HTNA), or ns-2's `uiHighestTsnNewlyAcked`, which survives SACKs that ack
        // nothing new (`ProcessGapAckBlocks`).
        let htna = if ns2 {
            Some(self.snd.htna_ns2)
        } else {
            (0..self.paths.len())
                .filter(|&i| s.path[i].saw_new_ack)
                .map(|i| s.path[i].highest)
                .max()
        };
        // DAC's packet count; a peer that does not count sends 0, read as 1. ns-2 adds
        // the count as it is (`ProcessGapAckBlocks`), 0 included.
        let sack_pkts = ((flags & 0x3) as u32).max(u32::from(!ns2));
        let mut candidates = std::mem::take(&mut s.candidates);
        candidates.clear();
        for d in 0..self.paths.len() {
            let on = &self.snd.on_path;
            let (fresh, resent) = (on.first_fresh(PathId(d)), on.first_resent(PathId(d)));
            // CUC: a path that must look for its expected pseudo-cumacks takes its lowest
            // unacknowledged TSN sent once (retransmitted, for the rtx pseudo-cumack).
            let p = &mut self.paths[d];
            if p.cuc.find_pseudo {
                p.cuc.pseudo_cum = fresh;
                p.cuc.find_pseudo = fresh.is_none();
            }
            if p.cuc.find_rtx_pseudo {
                p.cuc.rtx_pseudo_cum = resent;
                p.cuc.find_rtx_pseudo = resent.is_none();
            }
            // The chunks that may be reported missing: with SFR those below the highest
            // TSN newly acked on their own path, a path with new acks; without, those
            // below the association's.
            let below = match (self.cfg.sfr, htna) {
                (true, _) if s.path[d].saw_new_ack => s.path[d].highest,
                (false, Some(h)) => h,
                _ => continue,
            };
            if let Some(lo) = on_path::lowest(fresh, resent) {
                on.push_below(PathId(d), lo, below, &mut candidates);
            }
        }
        // A chunk retransmitted for any reason is never fast-retransmitted again while
        // more than one path is in use (decision D41): with several paths a resent
        // chunk lies below TSNs its new path sent before it, and the acks of those
        // report it missing while its copy is still in flight. One path keeps RFC 9260
        // §7.2.4's rule (only a chunk already fast-retransmitted is excluded).
        let retransmitted_ineligible =
            ns2 || self.paths.iter().filter(|p| p.carries_data()).count() > 1;
        // RACK-TLP and QUIC decide otherwise; the counts still tell RACK when
        // `dupthresh` chunks were delivered above a missing one.
        let rack = self.rack() || self.quic();
        let mut losses = std::mem::take(&mut s.losses);
        losses.clear();
        for &tsn in &candidates {
            let i = self.snd.index(tsn);
            let c = &mut self.snd.chunks[i];
            if !c.in_flight {
                continue;
            }
            let d = c.path.0;
            // DAC; ns-2's lowest TSN acked on a path that saw no new ack is 0.
            let lowest = if ns2 && !s.path[d].saw_new_ack {
                0
            } else {
                s.path[d].lowest
            };
            c.missing += if !self.cfg.dac || acked_paths > 1 || lowest < tsn {
                1
            } else if acked_paths == 1 {
                sack_pkts
            } else {
                0
            };
            // ns-2 (`RtxMarkedChunks` sets `eIneligibleForFastRtx`) and FreeBSD's SCTP
            // with CMT (`no_fr_allowed`) do the same; RFC 9260 §7.2.4 excludes only a
            // chunk already fast retransmitted.
            let eligible = !c.fast_done && (!retransmitted_ineligible || c.tx_count == 1);
            if c.missing >= self.cfg.dupthresh && eligible && !rack {
                c.fast_done = true;
                c.in_flight = false;
                self.paths[d].out.flight -= c.size();
                losses.push((i, tsn));
            }
        }
        s.candidates = candidates;
        // Losses are handled in TSN order (destinations may draw random numbers).
        losses.sort_unstable_by_key(|&(_, tsn)| tsn);
        let any_loss = !losses.is_empty();
        self.declare_losses(now, &losses);
        s.losses = losses;
        if ns2 && any_loss {
            self.ns2_fast_rtx_cuts(now);
        }
    }

    /// Chunks found lost (`(index, tsn)`, in TSN order, already out of flight): each
    /// is reported, its path cut at most once per window (above the recover point),
    /// and it is marked for retransmission to the destination the policy chooses, one
    /// packet of which may go whatever that path's window.
    pub(super) fn declare_losses(&mut self, now: Time, losses: &[(usize, u64)]) {
        let ns2 = self.ns2();
        for &(i, tsn) in losses {
            let orig = self.snd.chunks[i].path;
            self.paths[orig].losses.sample(true);
            self.obs
                .event(now, &Event::FastRetransmit { path: orig, tsn });
            let p = &mut self.paths[orig];
            if matches!(p.sending.rtt_probe, Some((t, _)) if t == tsn) {
                p.sending.rtt_probe = None;
            }
            if let Some(prr) = &mut p.recovery.prr {
                prr.lost_since_ack = true;
            }
            if self.quic() {
                let sent_at = self.snd.chunks[i].sent_at;
                self.quic_cut(now, orig, sent_at);
            } else if !ns2 {
                self.cut_once_per_window(now, orig, tsn);
            }
            let dest = self.choose_rtx_dest(now, orig, tsn);
            self.snd.chunks[i].rtx = Some((SendKind::FastRetransmit, dest));
            self.snd.rtx_marked.insert(tsn);
            self.paths[orig].out.marked += self.snd.chunks[i].size();
            // RFC 9260 §7.2.4: one packet may go regardless of cwnd, to the destination
            // chosen; ns-2 (`FastRtx`) exempts the destination the loss was seen on.
            let exempt = if ns2 { orig } else { dest };
            self.snd.fast_exempt[exempt.0] = true;
        }
    }

    /// A loss of `tsn` on `path` cuts its window, at most once per window (RFC 9260
    /// §7.2.4): only for TSNs above the recover point, the highest TSN sent when the
    /// path was last cut.
    pub(super) fn cut_once_per_window(&mut self, now: Time, path: PathId, tsn: u64) {
        let p = &mut self.paths[path];
        if p.recovery.recover.is_none_or(|r| tsn > r) {
            p.recovery.recover = Some(self.snd.next_tsn - 1);
            self.fast_rtx_cut(now, path);
            if self.rack() {
                self.reo_mult.on_recovery();
            }
        }
    }

    /// The fast-retransmit window reduction of one path; with PRR, the start of a
    /// reduction spread over the next round trip.
    pub(super) fn fast_rtx_cut(&mut self, now: Time, path: PathId) {
        let prr = self.prr_applies(path);
        let p = &mut self.paths[path];
        let prior = p.cc.cwnd();
        let loss = LossSignal {
            now,
            mtu: self.cfg.cwnd_unit(),
            min_ssthresh: self.cfg.min_ssthresh(),
            srtt: p.rtt.srtt(),
            min_rtt: p.rtt.min_rtt(),
            max_srtt: p.rtt.max_srtt(),
        };
        p.cc.on_fast_retransmit(&loss);
        p.recovery.loss_event();
        if prr {
            self.prr_start(path, prior);
        }
        self.cwnd_event(now, path);
    }

    /// ns-2.35 `FastRtx`, run when a SACK marks chunks: every path with a chunk marked
    /// for retransmission (by this SACK or waiting from before, fast or timeout) above
    /// its recover point is cut once, and the recover point becomes
    /// `GetHighestOutstandingTsn` of the path.
    fn ns2_fast_rtx_cuts(&mut self, now: Time) {
        let cum = self.snd.cum_ack;
        let mut done = vec![false; self.paths.len()];
        let marked: Vec<u64> = self.snd.rtx_marked.iter().copied().collect();
        for tsn in marked {
            let d = self.snd.chunks[(tsn - cum - 1) as usize].path.0;
            if done[d] || self.paths[d].recovery.recover.is_some_and(|r| tsn <= r) {
                continue;
            }
            done[d] = true;
            self.fast_rtx_cut(now, PathId(d));
            self.paths[d].recovery.recover = Some(self.ns2_highest_outstanding(d));
        }
    }

    /// ns-2.35 `SctpCMTAgent::GetHighestOutstandingTsn`: the highest TSN last sent on
    /// the path and not marked for retransmission — unless that is below the value it
    /// returned the last time, in which case it returns the agent's `uiHighestTsnSent`,
    /// which the CMT agent never updates (0), so that the next loss cuts again.
    fn ns2_highest_outstanding(&mut self, d: usize) -> u64 {
        let cum = self.snd.cum_ack;
        let found = self
            .snd
            .chunks
            .iter()
            .rposition(|c| c.path.0 == d && c.rtx.is_none() && c.tx_count > 0)
            .map_or(0, |i| cum + 1 + i as u64);
        let p = &mut self.paths[d];
        if found < p.recovery.ns2_highest {
            0
        } else {
            p.recovery.ns2_highest = found;
            found
        }
    }
}
