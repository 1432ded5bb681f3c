//! SACK processing at the sender: cumulative and gap acknowledgements, RTT samples,
//! cwnd growth, missing reports and fast-retransmit marking.
//!
//! Rules: RFC 9260 §6.2.1, §6.3, §7.2.1–7.2.4; CMT's SFR, CUC and DAC as in ns-2.35
//! `sctp-cmt.cc` (spec §1.4). T3-rtx follows RFC 9260 §6.3.2 rule R3: it is restarted
//! for a path only when a SACK acknowledges the earliest TSN outstanding on that path.
//! (Restarting on any new ack would let a lost fast retransmission stall the
//! association for as long as newer data keeps being acked.)

use std::collections::VecDeque;

use super::send::TxChunk;
use super::Association;
use crate::cc::{AckSignal, CcPathView, LossSignal};
use crate::event::{Event, Observer, SendKind};
use crate::packet::SackChunk;
use crate::path::{Path, PathId, PathState};
use crate::time::Time;
use crate::tsn::unwrap_tsn;

/// Per-path scratch of one SACK, kept between SACKs to avoid allocation.
#[derive(Default)]
pub(super) struct AckScratch {
    newly_bytes: Vec<u64>,
    saw_new_ack: Vec<bool>,
    highest: Vec<u64>,
    lowest: Vec<u64>,
    new_pseudo: Vec<bool>,
    flight_before: Vec<u64>,
    /// Earliest TSN in flight on each path before this SACK.
    earliest: Vec<Option<u64>>,
    /// The earliest TSN of the path was acked: restart its T3 (rule R3).
    restart_t3: Vec<bool>,
    cc_views: Vec<CcPathView>,
}

impl AckScratch {
    fn reset(&mut self, paths: &[Path], chunks: &VecDeque<TxChunk>, cum_ack: u64, cum: u64) {
        let n = paths.len();
        self.newly_bytes.clear();
        self.newly_bytes.resize(n, 0);
        self.saw_new_ack.clear();
        self.saw_new_ack.resize(n, false);
        self.highest.clear();
        self.highest.resize(n, cum);
        self.lowest.clear();
        self.lowest.resize(n, u64::MAX);
        self.new_pseudo.clear();
        self.new_pseudo.resize(n, false);
        self.flight_before.clear();
        self.flight_before.extend(paths.iter().map(|p| p.flight));
        self.earliest.clear();
        self.earliest.resize(n, None);
        let mut missing = paths.iter().filter(|p| p.flight > 0).count();
        for (i, c) in chunks.iter().enumerate() {
            if missing == 0 {
                break;
            }
            if c.in_flight && self.earliest[c.path.0].is_none() {
                self.earliest[c.path.0] = Some(cum_ack + 1 + i as u64);
                missing -= 1;
            }
        }
        self.restart_t3.clear();
        self.restart_t3.resize(n, false);
    }
}

/// Accounting for a chunk acknowledged for the first time.
fn newly_acked(
    paths: &mut [Path],
    s: &mut AckScratch,
    now: Time,
    tsn: u64,
    c: &TxChunk,
    rtt_events: &mut Vec<(PathId, u64)>,
) {
    let d = c.path.0;
    paths[d].loss_sample(false);
    s.newly_bytes[d] += c.size();
    s.saw_new_ack[d] = true;
    s.highest[d] = s.highest[d].max(tsn);
    s.lowest[d] = s.lowest[d].min(tsn);
    if s.earliest[d] == Some(tsn) {
        s.restart_t3[d] = true;
    }
    let p = &mut paths[d];
    // CUC: acking the expected (rtx-)pseudo-cumack is progress; look for the next one.
    if p.pseudo_cum == Some(tsn) {
        s.new_pseudo[d] = true;
        p.find_pseudo = true;
    }
    if p.rtx_pseudo_cum == Some(tsn) {
        s.new_pseudo[d] = true;
        p.find_rtx_pseudo = true;
    }
    if let Some((probe, sent)) = p.rtt_probe {
        if probe == tsn && c.tx_count == 1 {
            p.rtt_probe = None;
            rtt_events.push((c.path, (now - sent).as_nanos()));
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
        let mut s = std::mem::take(&mut self.scratch);
        s.reset(&self.paths, &self.snd.chunks, self.snd.cum_ack, cum);
        let mut rtts = Vec::new();
        let mut newly_any = false;
        let advanced = cum > self.snd.cum_ack;

        // Cumulative part.
        while self.snd.cum_ack < cum {
            let Some(c) = self.snd.chunks.pop_front() else {
                break;
            };
            self.snd.cum_ack += 1;
            let tsn = self.snd.cum_ack;
            if !c.acked {
                self.burst_trigger |= c.tx_count > 1;
                newly_acked(&mut self.paths, &mut s, now, tsn, &c, &mut rtts);
                // CUC: a newly cum-acked TSN that was never gap-acked counts as progress,
                // and the path's expected pseudo-cumacks must be looked for again.
                s.new_pseudo[c.path.0] = true;
                let p = &mut self.paths[c.path.0];
                p.find_pseudo = true;
                p.find_rtx_pseudo = true;
                newly_any = true;
            }
            if c.in_flight {
                self.paths[c.path.0].flight -= c.size();
            }
            if c.rtx.is_some() {
                self.snd.rtx_marked.remove(&tsn);
            }
        }

        // Gap ack blocks.
        for b in &sack.gap_blocks {
            if b.start == 0 || b.start > b.end {
                self.stats.bogus_chunks += 1;
                continue;
            }
            for off in b.start..=b.end {
                let idx = off as usize - 1;
                let Some(c) = self.snd.chunks.get_mut(idx) else {
                    break;
                };
                if c.acked {
                    continue;
                }
                c.acked = true;
                if self.cfg.rev.is_some() {
                    // NR-SACK semantics (spec §2, seed 004): gap-acked data is
                    // non-renegable, so the sender's copy can go now.
                    c.payload = crate::packet::Payload::Synthetic(c.len);
                }
                if c.in_flight {
                    c.in_flight = false;
                    self.paths[c.path.0].flight -= c.size();
                }
                let tsn = cum + off as u64;
                if c.rtx.take().is_some() {
                    self.snd.rtx_marked.remove(&tsn);
                }
                let c = &self.snd.chunks[idx];
                self.burst_trigger |= c.tx_count > 1;
                newly_acked(&mut self.paths, &mut s, now, tsn, c, &mut rtts);
                newly_any = true;
            }
        }

        // Copies of chunks acknowledged now leave their paths' flight; an ack of data a
        // path carried keeps its T3 from expiring.
        for (i, p) in self.paths.iter_mut().enumerate() {
            if p.copies.is_empty() {
                continue;
            }
            let chunks = &self.snd.chunks;
            let cum_now = self.snd.cum_ack;
            let before = p.copies.len();
            let mut freed = 0;
            p.copies.retain(|&(tsn, size)| {
                let acked = tsn <= cum_now
                    || chunks
                        .get((tsn - cum_now - 1) as usize)
                        .is_some_and(|c| c.acked);
                if acked {
                    freed += size;
                }
                !acked
            });
            if p.copies.len() != before {
                p.flight -= freed;
                s.restart_t3[i] = true;
            }
        }

        for (path, ns) in rtts {
            self.rtt_sample(now, path, crate::time::Duration::from_nanos(ns));
        }
        if newly_any {
            self.assoc_errors = 0;
        }
        self.update_paths_after_ack(now, &s);
        self.grow_cwnds(now, &mut s, advanced);
        self.missing_reports(now, &mut s, sack.flags);

        let flight = self.total_flight();
        self.snd.peer_awnd = sack.a_rwnd as u64;
        self.snd.peer_rwnd = (sack.a_rwnd as u64).saturating_sub(flight);
        for (i, p) in self.paths.iter_mut().enumerate() {
            if p.flight == 0 {
                p.t3 = None;
            } else if s.restart_t3[i] || p.t3.is_none() {
                p.t3 = Some(now + p.rtt.rto());
            }
        }
        self.scratch = s;
    }

    pub(super) fn rtt_sample(&mut self, now: Time, path: PathId, rtt: crate::time::Duration) {
        self.sched.on_rtt_sample(now, path, rtt);
        let est = &mut self.paths[path.0].rtt;
        est.sample(rtt);
        let ev = Event::RttSample {
            path,
            rtt,
            srtt: est.srtt().unwrap_or(rtt),
            rto: est.rto(),
        };
        self.obs.event(now, &ev);
    }

    /// Error counters and PF/INACTIVE recovery for paths that got new acks (RFC 9260
    /// §8.2; spec §1.6 (b): PF → ACTIVE when a TSN transmitted once is acked).
    fn update_paths_after_ack(&mut self, now: Time, s: &AckScratch) {
        for i in 0..self.paths.len() {
            if !s.saw_new_ack[i] {
                continue;
            }
            self.paths[i].error_count = 0;
            if self.paths[i].state != PathState::Active {
                self.paths[i].hb_pending = None;
                self.set_state(now, PathId(i), PathState::Active);
            }
        }
    }

    /// cwnd growth per path: with CUC only when the path's pseudo-cumack advanced,
    /// without it only when the association's cum-ack advanced.
    fn grow_cwnds(&mut self, now: Time, s: &mut AckScratch, advanced: bool) {
        s.cc_views.clear();
        s.cc_views
            .extend(self.paths.iter_mut().enumerate().map(|(i, p)| {
                p.acked_since_loss += s.newly_bytes[i];
                CcPathView {
                    id: PathId(i),
                    cwnd: p.cc.cwnd(),
                    srtt: p.rtt.srtt(),
                    loss_interval: p.loss_interval(),
                }
            }));
        for i in 0..self.paths.len() {
            let progress = if self.cfg.cuc {
                s.new_pseudo[i]
            } else {
                advanced
            };
            if s.newly_bytes[i] == 0 || !progress {
                continue;
            }
            let p = &mut self.paths[i];
            let before = (p.cc.cwnd(), p.cc.ssthresh());
            let ack = AckSignal {
                now,
                bytes_acked: s.newly_bytes[i],
                flight_before: s.flight_before[i],
                mtu: self.cfg.mtu as u64,
                srtt: p.rtt.srtt(),
                min_rtt: p.rtt.min_rtt(),
            };
            p.cc.on_ack(&ack, &s.cc_views);
            if (p.cc.cwnd(), p.cc.ssthresh()) != before {
                self.cwnd_event(now, PathId(i));
            }
        }
    }

    /// Missing reports (SFR + DAC), fast-retransmit marking, and the search for new
    /// expected CUC pseudo-cumacks on paths whose expected value was acked (ns-2.35
    /// `sctp-cmt.cc` ProcessGapAckBlocks; spec §1.4). The expected value is sticky: a
    /// lost chunk keeps it until the chunk itself is acked, so cwnd does not grow while
    /// the loss is being recovered.
    fn missing_reports(&mut self, now: Time, s: &mut AckScratch, flags: u8) {
        let cum = self.snd.cum_ack;
        let acked_paths = s.saw_new_ack.iter().filter(|&&b| b).count();
        let htna = (0..self.paths.len())
            .filter(|&i| s.saw_new_ack[i])
            .map(|i| s.highest[i])
            .max();
        let sack_pkts = ((flags & 0x3) as u32).max(1);
        for p in &mut self.paths {
            if p.find_pseudo {
                p.pseudo_cum = None;
            }
            if p.find_rtx_pseudo {
                p.rtx_pseudo_cum = None;
            }
        }
        let mut losses: Vec<(usize, u64)> = Vec::new();
        for (i, c) in self.snd.chunks.iter_mut().enumerate() {
            if c.acked || c.tx_count == 0 {
                continue; // acknowledged, or reserved and not sent yet
            }
            let tsn = cum + 1 + i as u64;
            let d = c.path.0;
            let p = &mut self.paths[d];
            let (find, pc) = if c.tx_count == 1 {
                (&mut p.find_pseudo, &mut p.pseudo_cum)
            } else {
                (&mut p.find_rtx_pseudo, &mut p.rtx_pseudo_cum)
            };
            if *find {
                *pc = Some(tsn);
                *find = false;
            }
            if !c.in_flight {
                continue;
            }
            let qualifies = if self.cfg.sfr {
                s.saw_new_ack[d] && tsn < s.highest[d]
            } else {
                htna.is_some_and(|h| tsn < h)
            };
            if !qualifies {
                continue;
            }
            c.missing += if !self.cfg.dac || acked_paths > 1 || s.lowest[d] < tsn {
                1
            } else if acked_paths == 1 {
                sack_pkts
            } else {
                0
            };
            if c.missing >= self.cfg.dupthresh && !c.fast_done {
                c.fast_done = true;
                c.in_flight = false;
                self.paths[d].flight -= c.size();
                losses.push((i, tsn));
            }
        }
        for (i, tsn) in losses {
            let orig = self.snd.chunks[i].path;
            self.paths[orig.0].loss_sample(true);
            self.obs
                .event(now, &Event::FastRetransmit { path: orig, tsn });
            let p = &mut self.paths[orig.0];
            if matches!(p.rtt_probe, Some((t, _)) if t == tsn) {
                p.rtt_probe = None;
            }
            if p.recover.is_none_or(|r| tsn > r) {
                p.recover = Some(self.snd.next_tsn - 1);
                let loss = LossSignal {
                    now,
                    mtu: self.cfg.mtu as u64,
                    srtt: p.rtt.srtt(),
                    min_rtt: p.rtt.min_rtt(),
                    max_srtt: p.rtt.max_srtt(),
                };
                p.cc.on_fast_retransmit(&loss);
                p.loss_event();
                self.cwnd_event(now, orig);
            }
            let dest = self.choose_rtx_dest(now, orig, tsn);
            self.snd.chunks[i].rtx = Some((SendKind::FastRetransmit, dest));
            self.snd.rtx_marked.insert(tsn);
            self.snd.fast_exempt[dest.0] = true;
        }
    }
}
