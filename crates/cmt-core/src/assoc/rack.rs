//! RACK-TLP at the sender, per path (RFC 8985; Linux runs it per MPTCP subflow):
//! time-based loss detection on each SACK and when a path's reordering timer fires,
//! and the tail loss probe. Used with `recovery = "rack-tlp"` instead of RFC 9260's
//! missing-report rule (docs/algorithms.md §1.12, decision D52); the T3-rtx timer,
//! window reductions (one per window of a path), retransmission destinations and
//! everything else stay as they are.

use super::sack::AckScratch;
use super::Association;
use crate::config::Recovery;
use crate::event::Observer;
use crate::path::pto_at;
use crate::time::Time;
use crate::tsn::wire_tsn;
use crate::view::PathId;

impl<O: Observer> Association<O> {
    /// Whether RACK-TLP detects loss.
    pub(super) fn rack(&self) -> bool {
        self.cfg.recovery == Recovery::RackTlp
    }

    /// After a SACK was processed: the reordering window's DSACK rounds (SCTP's
    /// duplicate TSN reports), loss detection, and the probe timers of the paths it
    /// acknowledged data on (RFC 8985 §7.2: re-armed on each ack).
    pub(super) fn rack_on_sack(&mut self, now: Time, s: &AckScratch, dups: &[u32]) {
        self.reo_mult
            .on_sack(self.snd.cum_ack, !dups.is_empty(), self.snd.next_tsn);
        self.rack_detect(now);
        self.tlp_verdicts(now, dups);
        for d in 0..self.paths.len() {
            if s.path[d].saw_new_ack {
                self.paths[d].rack.tlp_out = false;
                self.arm_tlp(now, PathId(d), true);
            }
        }
    }

    /// RFC 8985 §6.2 step 5 on every path: each chunk in flight that was sent before
    /// the latest chunk delivered on its path is lost once `RACK.rtt + reo_wnd` has
    /// passed since it was sent; the earliest such time of the others arms the path's
    /// reordering timer.
    pub(super) fn rack_detect(&mut self, now: Time) {
        let mut lost: Vec<(usize, u64)> = Vec::new();
        let mut cands: Vec<u64> = Vec::new();
        for d in 0..self.paths.len() {
            let id = PathId(d);
            cands.clear();
            self.snd.on_path.push_all(id, self.snd.next_tsn, &mut cands);
            let p = &self.paths[d];
            let chunk = |tsn: u64| &self.snd.chunks[self.snd.index(tsn)];
            let dupthresh = cands
                .iter()
                .any(|&t| chunk(t).missing >= self.cfg.dupthresh);
            let recovering = p.recovery.recover.is_some_and(|r| r > self.snd.cum_ack);
            let reo = p
                .rack
                .reo_wnd(recovering, dupthresh, self.reo_mult.mult, p.rtt.srtt());
            let mut timer: Option<Time> = None;
            for &tsn in &cands {
                let c = chunk(tsn);
                if !c.in_flight || c.acked || c.rtx.is_some() {
                    continue;
                }
                match p.rack.lost_at(c.sent_at, tsn, reo) {
                    Some(at) if at <= now => lost.push((self.snd.index(tsn), tsn)),
                    Some(at) => timer = Some(timer.map_or(at, |t| t.min(at))),
                    None => {}
                }
            }
            self.paths[d].rack.timer = timer;
        }
        for &(i, _) in &lost {
            let c = &mut self.snd.chunks[i];
            c.in_flight = false;
            c.fast_done = true;
            let size = c.size();
            self.paths[c.path].out.flight -= size;
        }
        lost.sort_unstable_by_key(|&(_, tsn)| tsn);
        self.declare_losses(now, &lost);
    }

    /// RFC 8985 §7.4 (Linux `tcp_process_tlp_ack`): a probe whose chunk is reported
    /// duplicate found nothing lost; one acknowledged, with a chunk sent on its path
    /// after it delivered too and no duplicate report, repaired a loss, and the path's
    /// window is cut as for any loss (once per window: not below its recover point).
    fn tlp_verdicts(&mut self, now: Time, dups: &[u32]) {
        for d in 0..self.paths.len() {
            let Some((tsn, high)) = self.paths[d].rack.tlp_probe else {
                continue;
            };
            if dups.contains(&wire_tsn(tsn)) {
                self.paths[d].rack.tlp_probe = None;
                continue;
            }
            let acked = tsn <= self.snd.cum_ack || self.snd.chunks[self.snd.index(tsn)].acked;
            if !acked || self.paths[d].rack.fack <= high {
                continue;
            }
            self.paths[d].rack.tlp_probe = None;
            self.cut_once_per_window(now, PathId(d), tsn);
        }
    }

    /// Arms (or, on an ack, re-arms) path `path`'s tail loss probe while it has data in
    /// flight (RFC 8985 §7.2); on a send, only when none is armed.
    pub(super) fn arm_tlp(&mut self, now: Time, path: PathId, on_ack: bool) {
        if !self.rack() {
            return;
        }
        let mtu = self.cfg.mtu as u64;
        let p = &mut self.paths[path];
        if p.out.flight == 0 || p.rack.tlp_out {
            p.rack.tlp_at = None;
        } else if on_ack || p.rack.tlp_at.is_none() {
            let one = p.out.flight <= mtu;
            p.rack.tlp_at = Some(pto_at(now, p.rtt.srtt(), one, p.timers.t3()));
        }
    }

    /// The tail loss probe of `path` (RFC 8985 §7.3): two round trips without an ack
    /// while data is in flight. The chunk sent last on the path goes again, to the same
    /// path, whatever its window, and nothing is cut: the probe asks for an ack that
    /// lets RACK see what was lost. (When no earlier chunk was lost, this chunk was, or
    /// nothing was: its duplicate report then widens the reordering window.)
    pub(super) fn on_tlp(&mut self, path: PathId) {
        let mut cands: Vec<u64> = Vec::new();
        self.snd
            .on_path
            .push_all(path, self.snd.next_tsn, &mut cands);
        let last = cands
            .iter()
            .map(|&tsn| (self.snd.index(tsn), tsn))
            .filter(|&(i, _)| {
                let c = &self.snd.chunks[i];
                c.in_flight && !c.acked && c.rtx.is_none()
            })
            .max_by_key(|&(i, tsn)| (self.snd.chunks[i].sent_at, tsn));
        let Some((_, tsn)) = last else {
            return;
        };
        self.mark_probe(path, tsn);
        let p = &mut self.paths[path];
        p.rack.tlp_out = true;
        p.rack.tlp_probe = Some((tsn, self.snd.next_tsn - 1));
        self.stats.tail_loss_probes += 1;
    }
}
