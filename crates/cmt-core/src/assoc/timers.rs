//! Timers: delayed SACK, T3-rtx per path, HEARTBEAT probing, idle cwnd decay.
//!
//! Rules: RFC 9260 §6.3.3 (T3-rtx expiry), §8.2–8.3 (error counters, heartbeats with
//! interval `RTO + HB.interval` jittered by ±50 % of RTO); CMT-PF (docs/algorithms.md §1.6): a timeout
//! moves an ACTIVE path to PF once its error count exceeds PFMR, PF paths are probed
//! every RTO and come back with `cwnd = pf_cwnd_mtus · MTU` on a HEARTBEAT-ACK.

use super::Lifecycle;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::Association;
use crate::cc::LossSignal;
use crate::config::Config;
use crate::event::{Event, Observer, SendKind};
use crate::packet::{Chunk, HeartbeatInfo};
use crate::path::Path;
use crate::time::{Duration, Time};
use crate::view::{PathId, PathState};

/// Time from the last activity to the next HEARTBEAT of an idle ACTIVE path. With
/// outage handling HB.interval is at most a quarter of the outage tolerance, so an idle
/// but healthy association is heard from well within it.
pub(super) fn hb_period(cfg: &Config, p: &Path, rng: &mut ChaCha8Rng) -> Duration {
    let rto = p.rtt.rto().as_nanos();
    let jitter = rng.gen_range(rto / 2..=rto + rto / 2);
    let interval = match cfg.outage {
        Some(o) => cfg
            .hb_interval
            .min(Duration::from_nanos(o.tolerance.as_nanos() / 4)),
        None => cfg.hb_interval,
    };
    interval + Duration::from_nanos(jitter)
}

impl<O: Observer> Association<O> {
    /// The earliest time at which [`handle_timeout`](Self::handle_timeout) must be called.
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.lifecycle != Lifecycle::Up || self.is_closed() {
            return None;
        }
        // The earliest of the armed timers, without a branch per timer: an unarmed one
        // counts as the latest possible time, and `armed` says whether any was.
        let (mut t, mut armed) = (Time::MAX, false);
        let mut take = |x: Option<Time>| {
            t = t.min(x.unwrap_or(Time::MAX));
            armed |= x.is_some();
        };
        take(self.rcv.sack_at);
        take(self.t2);
        take(self.cfg.outage.map(|o| self.heard + o.tolerance));
        take(self.reconfig.deadline());
        take(self.reinject_deadline());
        for p in &self.paths {
            take(p.timers.earliest());
            take(p.rack.timer);
            take(p.rack.tlp_at);
        }
        if let Some(rx) = &self.rev_rx {
            take(rx.poll_timeout());
        }
        // Pacing: wake up when a held-back path may send again, if there is data (a
        // path that never paced has nothing to release).
        if self.snd.has_new_data() || !self.snd.rtx_marked.is_empty() {
            let mtu = self.cfg.mtu as u64;
            for p in self.paths.iter().filter(|p| p.rev.pace_next.is_some()) {
                take(p.pace_release(self.now, mtu));
            }
        }
        armed.then_some(t)
    }

    /// Runs every timer that is due at `now`.
    pub fn handle_timeout(&mut self, now: Time) {
        self.now = now;
        if self
            .cfg
            .outage
            .is_some_and(|o| now >= self.heard + o.tolerance)
        {
            // Told, in case only the way back is broken: an ABORT on every path, best
            // effort (a peer that hears nothing of it is no worse off).
            for i in 0..self.paths.len() {
                let abort = Chunk::Abort {
                    cause: None,
                    reflected: false,
                };
                self.ctrl.push_back((PathId(i), abort));
            }
            self.fail(now, Lifecycle::PeerSilent);
            return;
        }
        if let Some(rx) = self.rev_rx.as_mut() {
            rx.handle_timeout(now);
            if rx.advert_due {
                self.rcv.sack_now = true;
            }
        }
        if self.reconfig.deadline().is_some_and(|t| t <= now) {
            self.on_asconf_timeout(now);
        }
        if self.reinject_deadline().is_some_and(|t| t <= now) {
            self.on_reinject_timer(now);
        }
        if self.rcv.sack_at.is_some_and(|t| t <= now) {
            self.rcv.sack_at = None;
            self.rcv.sack_now = true;
        }
        for i in 0..self.paths.len() {
            let id = PathId(i);
            if self.paths[i].rack.timer.is_some_and(|t| t <= now) {
                self.paths[i].rack.timer = None;
                if self.quic() {
                    self.quic_detect(now);
                } else {
                    self.rack_detect(now);
                }
            }
            if self.paths[i].rack.tlp_at.is_some_and(|t| t <= now) {
                self.paths[i].rack.tlp_at = None;
                self.on_tlp(id);
            }
            if self.paths[i].timers.t3().is_some_and(|t| t <= now) {
                self.paths[i].timers.set_t3(None);
                if self.quic() {
                    self.on_pto(now, id);
                } else {
                    self.on_t3_expiry(now, id);
                }
            }
            if self.paths[i]
                .timers
                .hb_pending()
                .is_some_and(|(_, t)| t <= now)
            {
                self.paths[i].timers.set_hb_pending(None);
                self.on_heartbeat_lost(now, id);
            }
            if self.paths[i].timers.hb_due().is_some_and(|t| t <= now) {
                self.on_heartbeat_due(now, id);
            }
            if self.paths[i].timers.decay_at().is_some_and(|t| t <= now) {
                self.on_decay_check(now, id);
            }
        }
        self.new_opportunity();
    }

    pub(super) fn count_error(&mut self, now: Time, id: PathId) {
        if !self.paths[id].carries_data() {
            return; // an address being verified, or gone: not a path failure
        }
        let p = &mut self.paths[id];
        p.losses.error_count += 1;
        let (errors, state) = (p.losses.error_count, p.state);
        self.assoc_errors += 1;
        if self.cfg.pf_enabled && state == PathState::Active && errors > self.cfg.pfmr {
            self.set_state(now, id, PathState::PotentiallyFailed);
            self.probe_now(id, now);
        }
        if errors > self.cfg.path_max_retrans && state != PathState::Inactive {
            self.set_state(now, id, PathState::Inactive);
            self.probe_now(id, now);
        }
        if self.assoc_errors > self.cfg.assoc_max_retrans && self.cfg.outage.is_none() {
            self.fail(now, Lifecycle::Failed);
        }
    }

    fn probe_now(&mut self, id: PathId, now: Time) {
        if self.cfg.heartbeats && self.paths[id].timers.hb_pending().is_none() {
            self.paths[id].timers.set_hb_due(Some(now));
        }
    }

    fn on_t3_expiry(&mut self, now: Time, id: PathId) {
        if self.paths[id].out.flight == 0 {
            return;
        }
        if self.paths[id].state == PathState::Removed {
            // The removal's round-trip wait is over (`remove_path`): what is still in
            // flight is moved to the other paths — not lost: no window cut, no error.
            return self.mark_in_flight(now, id, false);
        }
        let (mtu, min_ssthresh) = (self.cfg.cwnd_unit(), self.cfg.min_ssthresh());
        let ns2 = self.ns2();
        let p = &mut self.paths[id];
        p.losses.timeouts += 1;
        p.losses.last_timeout = Some(now);
        p.sending.rtt_probe = None;
        let loss = LossSignal {
            now,
            mtu,
            min_ssthresh,
            srtt: p.rtt.srtt(),
            min_rtt: p.rtt.min_rtt(),
            max_srtt: p.rtt.max_srtt(),
        };
        p.cc.on_timeout(&loss);
        p.recovery.loss_event();
        p.recovery.prr = None; // a timeout ends any reduction: the window is one packet
        if !ns2 {
            // ns-2 (`Timeout`) leaves the fast-retransmit recover point alone.
            p.recovery.recover = Some(self.snd.next_tsn - 1);
        }
        self.back_off(id);
        let rto = self.paths[id].rtt.rto();
        self.obs.event(now, &Event::Timeout { path: id, rto });
        self.cwnd_event(now, id);
        self.count_error(now, id);
        self.mark_in_flight(now, id, true);
        if self.in_tcp_loss(id.0) && self.paths[id].timers.hb_pending().is_none() {
            let rto = self.paths[id].rtt.rto();
            self.paths[id].timers.set_hb_due(Some(now + rto));
        }
    }

    /// Copies on path `id` are given up (their originals are retransmitted if lost);
    /// every chunk in flight on it is marked for retransmission — as lost after a
    /// timeout (`lost`), or moved off a path that is gone. Nothing to do when nothing
    /// is in flight there.
    pub(super) fn mark_in_flight(&mut self, now: Time, id: PathId, lost: bool) {
        if self.paths[id].out.flight == 0 {
            return;
        }
        let copies: u64 = self.paths[id].out.copies.drain(..).map(|(_, s)| s).sum();
        self.paths[id].out.flight -= copies;
        let in_flight: Vec<u64> = self
            .snd
            .on_path
            .on(id, ..)
            .filter(|&t| self.snd.chunks[self.snd.index(t)].in_flight)
            .collect();
        for tsn in in_flight {
            let i = self.snd.index(tsn);
            let c = &mut self.snd.chunks[i];
            c.in_flight = false;
            self.paths[id].out.flight -= c.size();
            if lost {
                self.paths[id].losses.sample(true);
            }
            let dest = self.choose_rtx_dest(now, id, tsn);
            self.snd.chunks[i].rtx = Some((SendKind::TimeoutRetransmit, dest));
            self.snd.rtx_marked.insert(tsn);
            self.paths[id].out.marked += self.snd.chunks[i].size();
        }
    }

    fn on_heartbeat_due(&mut self, now: Time, id: PathId) {
        let p = &self.paths[id];
        if !self.cfg.heartbeats || p.timers.hb_pending().is_some() || p.state == PathState::Removed
        {
            self.paths[id].timers.set_hb_due(None);
            return;
        }
        // A path in TCP's Loss state is probed once it holds nothing of its own (its
        // chunks acknowledged through copies elsewhere), as TCP's next timeout would
        // resend its head; until then it retransmits its own (`in_tcp_loss`).
        if self.in_tcp_loss(id.0) {
            if p.out.flight > 0 || p.out.marked > 0 {
                let rto = p.rtt.rto();
                self.paths[id].timers.set_hb_due(Some(now + rto));
                return;
            }
            return self.send_heartbeat(now, id);
        }
        // An ACTIVE path that carried data recently is not idle: look again later
        // (a stale one is probed now: `reinject`).
        if p.state == PathState::Active && !p.stale.is_stale(p.heard) {
            if let Some(last) = p.sending.last_data_sent {
                let next = last + hb_period(&self.cfg, p, &mut self.rng);
                if next > now {
                    self.paths[id].timers.set_hb_due(Some(next));
                    return;
                }
            }
        }
        self.send_heartbeat(now, id);
    }

    /// Sends a HEARTBEAT on path `id` now, timed out after its RTO.
    pub(super) fn send_heartbeat(&mut self, now: Time, id: PathId) {
        let nonce = self.rng.gen();
        let p = &mut self.paths[id];
        p.timers.set_hb_due(None);
        p.timers.set_hb_pending(Some((nonce, now + p.rtt.rto())));
        let info = HeartbeatInfo {
            path: id.0 as u16,
            sent_ns: now.as_nanos(),
            nonce,
        };
        self.ctrl.push_back((id, Chunk::Heartbeat(info)));
    }

    /// The RTO back-off of a timeout on path `id`: doubling up to RTO.Max, or with
    /// outage handling up to its probe interval.
    pub(super) fn back_off(&mut self, id: PathId) {
        let rtt = &mut self.paths[id].rtt;
        match self.cfg.outage {
            Some(o) => rtt.back_off_within(o.probe_interval),
            None => rtt.back_off(),
        }
    }

    fn on_heartbeat_lost(&mut self, now: Time, id: PathId) {
        self.back_off(id);
        self.count_error(now, id);
        let p = &self.paths[id];
        let due = match p.state {
            PathState::Removed => None,
            PathState::Active if !p.stale.is_stale(p.heard) && !self.in_tcp_loss(id.0) => {
                Some(now + hb_period(&self.cfg, p, &mut self.rng))
            }
            // PF, INACTIVE, unconfirmed and stale paths are probed every (backed-off)
            // RTO.
            _ => Some(now),
        };
        self.paths[id].timers.set_hb_due(due);
    }

    pub(super) fn on_heartbeat_ack(&mut self, now: Time, info: HeartbeatInfo) {
        let id = PathId(info.path as usize);
        let Some(p) = self.paths.get_mut(id.0) else {
            self.stats.bogus_chunks += 1;
            return;
        };
        if p.timers.hb_pending().map(|(n, _)| n) != Some(info.nonce) {
            return; // stale or forged
        }
        p.timers.set_hb_pending(None);
        p.losses.error_count = 0;
        self.assoc_errors = 0;
        let rtt = now.saturating_since(Time::from_nanos(info.sent_ns));
        self.rtt_sample(now, id, rtt);
        let state = self.paths[id].state;
        if state != PathState::Active {
            let outage = self.in_outage();
            if state == PathState::PotentiallyFailed {
                let cwnd = self.cfg.pf_cwnd_mtus as u64 * self.cfg.cwnd_unit();
                self.paths[id].cc.set_cwnd(cwnd);
                self.cwnd_event(now, id);
            }
            self.set_state(now, id, PathState::Active);
            if self.ns2() && matches!(state, PathState::PotentiallyFailed | PathState::Inactive) {
                // ns-2.35 (`ProcessChunk`, HEARTBEAT ACK of a PF or INACTIVE
                // destination): `TimeoutRtx` marks everything still outstanding there
                // for retransmission, to go out first.
                self.mark_in_flight(now, id, false);
            } else if self.cfg.outage.is_some() && !self.ns2() {
                // What it still holds was sent while it was down: resent now, as
                // what the other paths that are down hold (`on_return`).
                self.mark_in_flight(now, id, false);
                self.on_return(now, id, outage);
            }
        }
        let period = hb_period(&self.cfg, &self.paths[id], &mut self.rng);
        self.paths[id].timers.set_hb_due(Some(now + period));
    }

    fn on_decay_check(&mut self, now: Time, id: PathId) {
        let initial = self.cfg.initial_cwnd();
        let mtu = self.cfg.cwnd_unit();
        let p = &mut self.paths[id];
        let rto = p.rtt.rto();
        let idle_since = p.sending.last_data_sent.unwrap_or(self.start);
        if idle_since + rto > now {
            p.timers.set_decay_at(Some(idle_since + rto));
            return;
        }
        let before = p.cc.cwnd();
        p.cc.on_idle(mtu, initial);
        let after = p.cc.cwnd();
        p.timers
            .set_decay_at((after > initial).then_some(now + rto));
        if after != before {
            self.cwnd_event(now, id);
        }
    }
}
