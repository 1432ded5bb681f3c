//! QUIC's loss recovery at the sender, per path (Iyengar and Swett, RFC 9002, 2021), with
//! the multipath rules of multipath QUIC (Liu et al., draft-ietf-quic-multipath-19, 2026)
//! as picoquic runs them (`loss_recovery.c`: `picoquic_retransmit_needed_packet`,
//! `picoquic_retransmit_path_packet_queue`). Used with `recovery = "quic"` instead of
//! RFC 9260's missing reports and T3-rtx (docs/algorithms.md §1.14, decision D54):
//!
//! * every transmission gets a number on its path; an ack of the highest numbered one
//!   gives the path's round-trip sample (RFC 9002 §5.1), unless its chunk was sent more
//!   than once (Karn's rule: SCTP cannot tell which copy was acknowledged);
//! * a chunk is lost once a transmission three numbers later on its path was
//!   acknowledged, or 9/8 of a round trip after it was sent once a later one was
//!   (§6.1); a loss cuts the path's window once per recovery period, the period
//!   ending with the loss of a transmission sent after it began (§7.3.2);
//! * a probe timeout per path, from its latest transmission and doubled at each expiry,
//!   takes the T3-rtx timer's place (§6.2): alone, the path's oldest chunk goes again
//!   to probe it, with no cut; with another path usable, everything in flight on it is
//!   lost and goes to whichever path the retransmission policy names (picoquic);
//! * losses spanning three probe timeouts with nothing acknowledged between them are
//!   persistent congestion: the window falls to two packets (§7.6).

use super::sack::AckScratch;
use super::Association;
use crate::config::Recovery;
use crate::event::{Event, Observer, SendKind};
use crate::path::{backed_off, loss_delay, persistent_congestion_span, pto_period, Verdict};
use crate::time::{Duration, Time};
use crate::view::{PathId, PathState};

impl<O: Observer> Association<O> {
    /// Whether QUIC's loss recovery runs.
    pub(super) fn quic(&self) -> bool {
        self.cfg.recovery == Recovery::Quic
    }

    /// After a SACK's acks (RFC 9002 §5.1, §6.2.1): the highest numbered transmission
    /// newly acknowledged on a path raises its largest acknowledged and, doing so,
    /// gives its round-trip sample; any ack of the path's data ends its probe back-off.
    pub(super) fn quic_on_acks(&mut self, now: Time, s: &AckScratch) {
        for d in 0..self.paths.len() {
            if s.path[d].saw_new_ack {
                self.paths[d].quic.pto_count = 0;
            }
            let Some((seq, sent_at, once)) = s.path[d].top else {
                continue;
            };
            let rtt = now.saturating_since(sent_at);
            if self.paths[d].quic.on_acked(now, seq, rtt, once) && once {
                self.rtt_sample(now, PathId(d), rtt);
            }
        }
    }

    /// RFC 9002 §6.2.1's probe period of `path` before back-off, with the peer's
    /// delayed-ack time as `max_ack_delay`.
    fn pto_base(&self, path: PathId) -> Duration {
        let rtt = &self.paths[path].rtt;
        pto_period(
            rtt.srtt(),
            rtt.rttvar(),
            self.cfg.sack_delay,
            self.cfg.rto_initial,
        )
    }

    /// The probe timeout of `path` now: its period doubled per expiry, at most RTO.Max.
    pub(super) fn pto_duration(&self, path: PathId) -> Duration {
        let count = self.paths[path].quic.pto_count;
        backed_off(self.pto_base(path), count, self.cfg.rto_max)
    }

    /// Arms `path`'s probe timeout (in the T3-rtx slot) from its latest transmission
    /// while it has data in flight (RFC 9002 §6.2.1); a removed path's grace stays.
    pub(super) fn quic_arm_pto(&mut self, path: PathId) {
        let at = self.paths[path]
            .sending
            .last_data_sent
            .map(|t| t + self.pto_duration(path));
        let p = &mut self.paths[path];
        if p.state == PathState::Removed {
            return;
        }
        p.timers.set_t3(if p.out.flight == 0 { None } else { at });
    }

    /// RFC 9002 §6.1 on every path: each chunk in flight below its path's largest
    /// acknowledged is lost by the packet or the time threshold, or arms the path's
    /// loss timer; then the window cuts and persistent congestion (§7.6).
    pub(super) fn quic_detect(&mut self, now: Time) {
        let mut lost: Vec<(usize, u64)> = Vec::new();
        let mut cands: Vec<u64> = Vec::new();
        let mut collapse: Vec<PathId> = Vec::new();
        for d in 0..self.paths.len() {
            let id = PathId(d);
            cands.clear();
            self.snd.on_path.push_all(id, self.snd.next_tsn, &mut cands);
            let p = &self.paths[d];
            let delay = loss_delay(p.rtt.srtt(), p.quic.latest_rtt);
            let (mut timer, mut here) = (None::<Time>, Vec::new());
            for &tsn in &cands {
                let i = self.snd.index(tsn);
                let c = &self.snd.chunks[i];
                if !c.in_flight || c.acked || c.rtx.is_some() {
                    continue;
                }
                match p.quic.verdict(now, c.path_seq, c.sent_at, delay) {
                    Verdict::Lost => here.push((c.path_seq, c.sent_at, i, tsn)),
                    Verdict::LostAt(at) => timer = Some(timer.map_or(at, |t| t.min(at))),
                    Verdict::Unknown => {}
                }
            }
            // One loss timer per path: RACK's reordering timer's slot, which QUIC's
            // recovery leaves unused otherwise.
            self.paths[d].rack.timer = timer;
            for &(_, _, i, _) in &here {
                let c = &mut self.snd.chunks[i];
                c.in_flight = false;
                c.fast_done = true;
                self.paths[d].out.flight -= c.size();
            }
            if self.persistent_congestion(id, &mut here) {
                collapse.push(id);
            }
            lost.extend(here.iter().map(|&(_, _, i, tsn)| (i, tsn)));
        }
        lost.sort_unstable_by_key(|&(_, tsn)| tsn);
        self.declare_losses(now, &lost);
        for id in collapse {
            // RFC 9002 §7.6.2: `kMinimumWindow`, two packets.
            self.paths[id].cc.set_cwnd(2 * self.cfg.cwnd_unit());
            self.stats.persistent_congestion += 1;
            self.cwnd_event(now, id);
        }
    }

    /// RFC 9002 §7.6.2 for the chunks of `path` just found lost (`(number, sent, index,
    /// tsn)`, already out of flight): two of them sent after the path's first round-trip
    /// sample, further apart than three probe periods (without back-off), with every
    /// transmission numbered between them lost — none acknowledged, none still in
    /// flight.
    fn persistent_congestion(&self, path: PathId, lost: &mut [(u64, Time, usize, u64)]) -> bool {
        let p = &self.paths[path];
        let Some(first_rtt) = p.quic.first_rtt_at else {
            return false;
        };
        let span = persistent_congestion_span(self.pto_base(path));
        // Cheap test first: the losses must span that long at all.
        let sent = lost.iter().map(|l| l.1).filter(|&t| t >= first_rtt);
        let (min, max) = sent.fold((Time::MAX, Time::ZERO), |(a, b), t| (a.min(t), b.max(t)));
        if max.saturating_since(min) <= span {
            return false;
        }
        lost.sort_unstable_by_key(|l| l.0);
        let (lo, hi) = (lost[0].0, lost[lost.len() - 1].0);
        // Transmissions between them that break a run: acknowledged, or still in flight.
        let mut breaks: Vec<u64> = self
            .snd
            .chunks
            .iter()
            .filter(|c| c.path == path && c.path_seq > lo && c.path_seq < hi)
            .filter(|c| c.acked || c.in_flight)
            .map(|c| c.path_seq)
            .collect();
        breaks.sort_unstable();
        let mut b = breaks.iter().peekable();
        let mut start: Option<(u64, Time)> = None;
        for &(seq, sent, _, _) in lost.iter() {
            let mut broken = false;
            while b.peek().is_some_and(|&&x| x < seq) {
                b.next();
                broken = true;
            }
            if sent < first_rtt {
                start = None;
                continue;
            }
            let s = match start {
                Some(s) if !broken => s,
                _ => (seq, sent),
            };
            start = Some(s);
            if sent.saturating_since(s.1) > span {
                return true;
            }
        }
        false
    }

    /// The probe timeout of path `id` expired (RFC 9002 §6.2.4). It counts as a timeout
    /// of the path (error count, potentially-failed state, back-off) but cuts nothing.
    /// With another path usable, everything in flight on it is lost and goes where the
    /// retransmission policy says, cut once (picoquic's
    /// `picoquic_retransmit_path_packet_queue`); alone, its oldest chunk goes again on
    /// it as the probe, whatever its window.
    pub(super) fn on_pto(&mut self, now: Time, id: PathId) {
        if self.paths[id].out.flight == 0 {
            return;
        }
        if self.paths[id].state == PathState::Removed {
            return self.mark_in_flight(now, id, false);
        }
        let p = &mut self.paths[id];
        p.quic.pto_count += 1;
        p.losses.timeouts += 1;
        p.losses.last_timeout = Some(now);
        p.sending.rtt_probe = None;
        let rto = self.pto_duration(id);
        self.obs.event(now, &Event::Timeout { path: id, rto });
        self.count_error(now, id);
        let elsewhere =
            self.paths.iter().enumerate().any(|(j, q)| {
                j != id.0 && q.state == PathState::Active && !q.stale.is_stale(q.heard)
            });
        let in_flight = self.unacked_where(|c| c.path == id && c.in_flight, |_| true);
        if elsewhere {
            let latest = in_flight
                .iter()
                .map(|&t| self.snd.chunks[self.snd.index(t)].sent_at)
                .max();
            self.mark_in_flight(now, id, true);
            if let Some(sent_at) = latest {
                self.quic_cut(now, id, sent_at);
            }
        } else if let Some(&oldest) = in_flight
            .iter()
            .min_by_key(|&&t| self.snd.chunks[self.snd.index(t)].path_seq)
        {
            self.mark_probe(id, oldest);
        }
        self.quic_arm_pto(id);
    }

    /// A transmission sent on `path` at `sent_at` was lost: the window is cut unless
    /// it was sent before the path's current recovery period began (RFC 9002 §7.3.2:
    /// one reduction per period, a period ending with the first loss of a transmission
    /// sent after its start — a retransmission too, unlike RFC 9260's TSN recover
    /// point).
    pub(super) fn quic_cut(&mut self, now: Time, path: PathId, sent_at: Time) {
        let q = &mut self.paths[path].quic;
        if q.recovery_start.is_none_or(|s| sent_at > s) {
            q.recovery_start = Some(now);
            self.paths[path].recovery.recover = Some(self.snd.next_tsn - 1);
            self.fast_rtx_cut(now, path);
        }
    }

    /// Chunk `tsn`, in flight on `path`, goes again on `path` as a probe: out of
    /// flight, marked for retransmission there, one packet of it whatever the window.
    /// Nothing is declared lost and nothing is cut (RFC 8985 §7.3, RFC 9002 §6.2.4).
    pub(super) fn mark_probe(&mut self, path: PathId, tsn: u64) {
        let i = self.snd.index(tsn);
        let c = &mut self.snd.chunks[i];
        c.in_flight = false;
        c.rtx = Some((SendKind::FastRetransmit, path));
        let size = c.size();
        let p = &mut self.paths[path];
        p.out.flight -= size;
        p.out.marked += size;
        self.snd.rtx_marked.insert(tsn);
        self.snd.fast_exempt[path.0] = true;
    }
}
