//! Sender half: the send queue, the retransmission queue and `poll_transmit`.
//!
//! Rules: RFC 9260 §6.1 (when new data may be sent: `flight < cwnd` per path, peer window,
//! zero-window probe), §6.3.2 (T3-rtx start), Max.Burst per transmission opportunity;
//! CMT retransmissions to the destination chosen by the policy, with the one-packet
//! cwnd exemption of a fast retransmission (ns-2 `RTX_LIMIT_ONE_PACKET`, docs/algorithms.md §1.4).

use super::Lifecycle;

use super::send_queue::{sched_context, TxChunk};
use super::{Association, Transmit};
use crate::event::{Event, Observer, SendKind};
use crate::packet::{data_chunk_len, hold_to_wire, Chunk, DataChunk, DataFlags, Packet, Payload};
use crate::time::Time;
use crate::tsn::wire_tsn;
use crate::view::{PathId, PathState};

impl<O: Observer> Association<O> {
    /// Bytes written by the application and not sent yet (`u64::MAX` for a backlogged
    /// source): what a writer of a stream keeps short so that little waits here.
    pub fn unsent_bytes(&self) -> u64 {
        self.snd.queued_bytes()
    }

    /// The next packet to send, if any. Control chunks (SACK, HEARTBEAT, HEARTBEAT-ACK)
    /// first, then retransmissions, then new data chosen by the scheduler.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        self.now = now;
        // The path views stay good for the next scheduling decision only if nothing
        // but new data is sent in between.
        let mut reuse = self.views_but.take();
        if self.lifecycle == Lifecycle::Up {
            if self.closing != super::Closing::Open {
                reuse = None;
            }
            self.drive_shutdown(now);
        }
        if let Some(t) = self.poll_control(now) {
            return Some(t);
        }
        if self.lifecycle != Lifecycle::Up || self.is_closed() {
            return None;
        }
        if self.ensure_active_path(now) {
            reuse = None;
        }
        if !self.snd.rtx_marked.is_empty() {
            reuse = None;
            if let Some(t) = self.poll_retransmit(now) {
                return Some(t);
            }
        }
        if std::mem::take(&mut self.sched_copies) && self.sched.makes_copies() {
            reuse = None;
            self.ask_copies(now);
        }
        if !self.snd.copy_queue.is_empty() {
            reuse = None;
            if let Some(t) = self.poll_copy(now) {
                return Some(t);
            }
        }
        self.poll_new_data(now, reuse)
    }

    // `ask_copies`, `poll_copy` and `poll_retransmit` are kept out of line: they run
    // only with a scheduler that makes copies or chunks marked for retransmission, and
    // inlined into `poll_transmit` they made every call set up their large frame (2 %
    // more instructions on a loss-free run; BENCHMARKS.md, "Code placement").
    #[inline(never)]
    fn ask_copies(&mut self, now: Time) {
        self.refresh_views();
        let max = self.cfg.max_payload();
        let len = self.snd.next_len(max);
        let mut out = std::mem::take(&mut self.copy_buf);
        let ctx = sched_context(&self.views, &self.snd, self.rounds.adverts, now, (len, max));
        self.sched.copies(&ctx, &mut out);
        for (tsn, path) in out.drain(..) {
            if path.0 < self.paths.len() {
                self.snd.copy_queue.push_back((tsn, path));
            } else {
                self.stats.refused_choices += 1;
            }
        }
        self.copy_buf = out;
    }

    /// The first queued copy whose path has cwnd room; copies of chunks acknowledged,
    /// not yet sent, or already on that path are dropped.
    #[inline(never)]
    fn poll_copy(&mut self, now: Time) -> Option<Transmit> {
        let cum = self.snd.cum_ack;
        let mut i = 0;
        while i < self.snd.copy_queue.len() {
            let (tsn, dest) = self.snd.copy_queue[i];
            let chunk = tsn
                .checked_sub(cum + 1)
                .and_then(|k| self.snd.chunks.get(k as usize));
            let stale = match chunk {
                None => true,
                Some(c) => {
                    c.acked
                        || c.tx_count == 0
                        || c.path == dest
                        || self.paths[dest].out.copies.iter().any(|&(t, _)| t == tsn)
                }
            };
            if stale {
                self.snd.copy_queue.remove(i);
                continue;
            }
            let p = &self.paths[dest];
            if p.state != PathState::Active || p.out.flight >= p.cc.cwnd() {
                i += 1;
                continue;
            }
            self.snd.copy_queue.remove(i);
            let c = &self.snd.chunks[(tsn - cum - 1) as usize];
            let (len, size, ssn, payload) = (c.len, c.size(), c.ssn, c.payload.clone());
            // Karn: the original's RTT sample would be ambiguous now.
            for p in &mut self.paths {
                if matches!(p.sending.rtt_probe, Some((t, _)) if t == tsn) {
                    p.sending.rtt_probe = None;
                }
            }
            self.paths[dest].out.copies.push((tsn, size));
            self.on_data_sent(now, dest, size);
            let ev = Event::DataSent {
                path: dest,
                tsn,
                bytes: len,
                kind: SendKind::Copy,
            };
            self.obs.event(now, &ev);
            return Some(self.data_transmit(dest, tsn, ssn, payload));
        }
        None
    }

    fn packet(&self, chunk: Chunk) -> Packet {
        let mut chunks = crate::chunk_pool::take();
        chunks.push(chunk);
        Packet {
            vtag: self.peer_vtag,
            chunks,
        }
    }

    fn poll_control(&mut self, now: Time) -> Option<Transmit> {
        if self.rcv.sack_now {
            let (path, sack) = self.build_sack(now);
            let mut packet = self.packet(Chunk::Sack(sack));
            if let Some(rx) = self.rev_rx.as_mut().filter(|r| r.advert_due) {
                let (seq, rates) = rx.make_advert(now);
                packet.chunks.push(Chunk::RateAdvert { seq, rates });
            }
            if self.sack_attachment.is_some() {
                // Room for an ECN Echo, which may still go in front.
                let room = self.cfg.mtu.saturating_sub(self.cfg.ip_header_len + 12 + 8) as usize;
                let used: usize = packet.chunks.iter().map(Chunk::wire_len).sum();
                if let Some(c) = self
                    .sack_attachment
                    .take_if(|c| used + c.wire_len() <= room)
                {
                    packet.chunks.push(c);
                }
            }
            return Some(self.sack_transmit(path, packet));
        }
        let (path, chunk) = self.ctrl.pop_front()?;
        let t = chunk.chunk_type();
        let mut chunks = crate::chunk_pool::take();
        chunks.extend(
            self.bundled
                .iter()
                .filter(|(before, _)| *before == t)
                .map(|(_, c)| c.clone()),
        );
        chunks.push(chunk);
        let packet = Packet {
            vtag: self.peer_vtag,
            chunks,
        };
        Some(Transmit::plain(path, packet))
    }

    #[inline(never)]
    fn poll_retransmit(&mut self, now: Time) -> Option<Transmit> {
        let cum = self.snd.cum_ack;
        let mut from = 0;
        while let Some(&tsn) = self.snd.rtx_marked.range(from..).next() {
            from = tsn + 1;
            let i = (tsn - cum - 1) as usize;
            let Some((kind, mut dest)) = self.snd.chunks[i].rtx else {
                continue;
            };
            let ns2 = self.ns2();
            let quic = self.quic();
            if ns2
                || ((self.paths[dest].state != PathState::Active || self.standby(dest.0))
                    && self.rtx_candidates().iter().all(|&c| c != dest))
            {
                // ns-2 (`RtxMarkedChunks`, `SelectRtxDest`) chooses the destination
                // when the chunk is sent; we choose it when the chunk is marked, and
                // again only if that path stopped being a candidate.
                let orig = self.snd.chunks[i].path;
                dest = self.choose_rtx_dest(now, orig, tsn);
                self.snd.chunks[i].rtx = Some((kind, dest));
            }
            let p = &self.paths[dest];
            if !p.carries_data() {
                continue; // no verified address to send it to: wait for one
            }
            let exempt = (ns2 || kind == SendKind::FastRetransmit) && self.snd.fast_exempt[dest.0];
            if p.out.flight >= p.cc.cwnd() && !exempt {
                continue;
            }
            // ns-2 (`RtxMarkedChunks`, `SendMuch`) counts retransmissions against a
            // destination's Max.Burst after each packet: five go, new data shares it.
            if ns2 && self.burst_limit != 0 && p.sending.burst_used > self.burst_limit {
                continue;
            }
            if exempt {
                self.snd.fast_exempt[dest.0] = false;
            }
            let orig = self.snd.chunks[i].path;
            // RFC 9260 §7.2.4 (4) and §6.3.2 R1: retransmitting the earliest outstanding
            // chunk of a path restarts that path's T3-rtx timer; on the destination, the
            // timer restarts if the chunk becomes its earliest (ns-2 `RtxMarkedChunks`).
            let first_on_orig = self.first_outstanding_on(orig, i, false);
            let first_on_dest = self.first_outstanding_on(dest, i, true);
            self.paths[orig].out.marked -= self.snd.chunks[i].size();
            let seq = self.paths[dest].quic.take_seq();
            let c = &mut self.snd.chunks[i];
            self.snd.on_path.remove(orig, tsn, c.tx_count);
            c.path = dest;
            c.rtx = None;
            c.tx_count += 1;
            c.sent_at = now;
            c.path_seq = seq;
            self.snd.on_path.add(dest, tsn, c.tx_count);
            c.in_flight = true;
            c.missing = 0;
            let (len, size, ssn, payload) = (c.len, c.size(), c.ssn, c.payload.clone());
            self.snd.rtx_marked.remove(&tsn);
            // Karn: a retransmitted chunk never gives an RTT sample.
            for p in &mut self.paths {
                if matches!(p.sending.rtt_probe, Some((t, _)) if t == tsn) {
                    p.sending.rtt_probe = None;
                }
            }
            if orig != dest {
                // CUC: the chunk leaves its original path, which will never see it
                // acked; that path must look for new expected pseudo-cumacks or its
                // cwnd would stop growing for good (ns-2.35 `RtxMarkedChunks`).
                let o = &mut self.paths[orig];
                o.cuc.find_pseudo = true;
                o.cuc.find_rtx_pseudo = true;
            }
            let p = &mut self.paths[dest];
            if ns2 {
                p.sending.burst_used = p.sending.burst_used.saturating_add(1);
            }
            if p.cuc.find_rtx_pseudo {
                p.cuc.rtx_pseudo_cum = Some(tsn);
                p.cuc.find_rtx_pseudo = false;
            }
            if quic {
                // The probe timeout runs from each path's latest transmission.
                self.quic_arm_pto(orig);
            } else {
                if first_on_dest && p.timers.t3().is_some() {
                    p.timers.set_t3(Some(now + p.rtt.rto()));
                }
                let o = &mut self.paths[orig];
                if first_on_orig && o.out.flight > 0 && orig != dest {
                    o.timers.set_t3(Some(now + o.rtt.rto()));
                }
            }
            self.on_data_sent(now, dest, size);
            if !ns2 {
                // ns-2 counted the marked chunk in the peer window all along.
                self.snd.peer_rwnd = self.snd.peer_rwnd.saturating_sub(size);
            }
            let ev = Event::DataSent {
                path: dest,
                tsn,
                bytes: len,
                kind,
            };
            self.obs.event(now, &ev);
            return Some(self.data_transmit(dest, tsn, ssn, payload));
        }
        None
    }

    fn poll_new_data(&mut self, now: Time, reuse: Option<(Time, PathId)>) -> Option<Transmit> {
        if !self.snd.has_new_data() {
            self.set_blocked(now, false);
            return None;
        }
        if self.subflow_queues() {
            return self.poll_queued_data(now);
        }
        let max = self.cfg.max_payload();
        let len = self.snd.next_len(max);
        // With nothing in flight one chunk may go whatever the window (a zero window
        // probe).
        if self.snd.peer_rwnd < data_chunk_len(len as usize) as u64 && self.total_flight() != 0 {
            let any_room = self
                .paths
                .iter()
                .any(|p| p.state == PathState::Active && p.out.flight < p.cc.cwnd());
            self.set_blocked(now, any_room);
            return None;
        }
        self.set_blocked(now, false);
        if !self.send_buffer_room(len as u64) {
            return None;
        }
        self.refresh_views_for_new_data(reuse);
        let ctx = sched_context(&self.views, &self.snd, self.rounds.adverts, now, (len, max));
        let available = ctx.chunks_available;
        if std::mem::take(&mut self.sched_begin) {
            self.sched.begin(&ctx);
        }
        let (path, at) = self.sched.select_at(&ctx)?;
        if !self.views.get(path.0).is_some_and(|v| v.can_send) {
            self.stats.refused_choices += 1;
            return None;
        }
        // A position past the data there is names no chunk: nothing for that path now.
        if at >= available {
            self.stats.refused_choices += 1;
            return None;
        }
        let tsn = self.new_chunk_at(at, max);
        let t = self.send_new_chunk(now, path, tsn);
        self.sched
            .on_sent(path, tsn, self.snd.chunks[self.snd.index(tsn)].len);
        // Only this path's state changed since the views were made.
        self.views_but = Some((now, path));
        Some(t)
    }

    /// Sends chunk `tsn` (given a TSN, never sent) on `path` as new data.
    pub(super) fn send_new_chunk(&mut self, now: Time, path: PathId, tsn: u64) -> Transmit {
        let seq = self.paths[path].quic.take_seq();
        let at = self.snd.index(tsn);
        let c = &mut self.snd.chunks[at];
        c.path = path;
        c.tx_count = 1;
        c.sent_at = now;
        c.path_seq = seq;
        c.in_flight = true;
        let (len, ssn, payload) = (c.len, c.ssn, c.payload.clone());
        self.snd.on_path.add(path, tsn, 1);
        let p = &mut self.paths[path];
        p.sending.burst_used = p.sending.burst_used.saturating_add(1);
        if p.sending.rtt_probe.is_none() {
            p.sending.rtt_probe = Some((tsn, now));
        }
        if p.cuc.find_pseudo {
            p.cuc.pseudo_cum = Some(tsn);
            p.cuc.find_pseudo = false;
        }
        let size = data_chunk_len(len as usize) as u64;
        self.on_data_sent(now, path, size);
        self.snd.peer_rwnd = self.snd.peer_rwnd.saturating_sub(size);
        let ev = Event::DataSent {
            path,
            tsn,
            bytes: len,
            kind: SendKind::New,
        };
        self.obs.event(now, &ev);
        self.data_transmit(path, tsn, ssn, payload)
    }

    /// The TSN of the chunk at position `at` of the send queue (reserved chunks first,
    /// then queued data), giving TSNs to the chunks before it (the caller checked that
    /// the position holds a chunk). The chunk is left unsent (`tx_count` 0) for the
    /// caller.
    pub(super) fn new_chunk_at(&mut self, at: usize, max: u32) -> u64 {
        let reserved = self.snd.reserved.len();
        if at < reserved {
            let tsn = *self.snd.reserved.iter().nth(at).expect("at < reserved");
            self.snd.reserved.remove(&tsn);
            return tsn;
        }
        let mut skip = at - reserved;
        loop {
            let payload = self.snd.take(max);
            let tsn = self.snd.next_tsn;
            self.snd.next_tsn += 1;
            let ssn = self.snd.next_ssn;
            self.snd.next_ssn = self.snd.next_ssn.wrapping_add(1);
            let offset = self.snd.assigned_bytes;
            self.snd.assigned_bytes += data_chunk_len(payload.len()) as u64;
            self.snd.push_chunk(TxChunk {
                offset,
                len: payload.len() as u32,
                payload,
                ssn,
                path: PathId(0),
                tx_count: 0,
                acked: false,
                in_flight: false,
                missing: 0,
                fast_done: false,
                reinjected: false,
                committed: false,
                sent_at: Time::ZERO,
                path_seq: 0,
                rtx: None,
            });
            debug_assert!(skip == 0 || self.snd.has_queued(), "position past the data");
            if skip == 0 {
                return tsn;
            }
            self.snd.reserved.insert(tsn);
            skip -= 1;
        }
    }

    pub(super) fn total_flight(&self) -> u64 {
        self.paths.iter().map(|p| p.out.flight).sum()
    }

    /// Whether no chunk before position `i` is outstanding on `path`: sent there and
    /// neither acked nor (with `in_flight_only`) marked for retransmission.
    fn first_outstanding_on(&self, path: PathId, i: usize, in_flight_only: bool) -> bool {
        let tsn = self.snd.cum_ack + 1 + i as u64;
        !self
            .snd
            .on_path
            .on(path, ..tsn)
            .any(|t| !in_flight_only || self.snd.chunks[self.snd.index(t)].in_flight)
    }

    /// Bytes of the chunks marked for retransmission and not resent yet.
    pub(super) fn marked_bytes(&self) -> u64 {
        let cum = self.snd.cum_ack;
        self.snd
            .rtx_marked
            .iter()
            .filter_map(|&tsn| self.snd.chunks.get((tsn - cum - 1) as usize))
            .map(TxChunk::size)
            .sum()
    }

    /// Book-keeping common to new data and retransmissions on `path` (`size` in DATA
    /// chunk bytes).
    fn on_data_sent(&mut self, now: Time, path: PathId, size: u64) {
        let rto = self.paths[path].rtt.rto();
        let mtu = self.cfg.mtu as u64;
        let p = &mut self.paths[path];
        p.paced_send(now, size, mtu);
        p.out.flight += size;
        if let Some(prr) = &mut p.recovery.prr {
            prr.on_sent(size);
        }
        p.sending.last_data_sent = Some(now);
        p.sending.largest_cwnd = p.sending.largest_cwnd.max(p.cc.cwnd());
        if p.timers.t3().is_none() {
            p.timers.set_t3(Some(now + rto));
        }
        if self.cfg.idle_cwnd_decay && p.timers.decay_at().is_none() {
            p.timers.set_decay_at(Some(now + rto));
        }
        if self.quic() {
            self.quic_arm_pto(path);
        }
        self.arm_tlp(now, path, false);
        self.reinject_on_send(now);
    }

    /// A DATA packet; with receiver-driven CMT the round info goes first.
    fn data_transmit(&mut self, path: PathId, tsn: u64, ssn: u16, payload: Payload) -> Transmit {
        // RFC 7053: the stream's last chunk, once the application closed it, asks for an
        // immediate SACK (the one the close waits for).
        let last = self.cfg.sack_immediately
            && self.closing == super::shutdown::Closing::Pending
            && !self.snd.has_new_data()
            && tsn + 1 == self.snd.next_tsn;
        let data = Chunk::Data(DataChunk {
            tsn: wire_tsn(tsn),
            sid: 0,
            ssn,
            ppid: 0,
            flags: DataFlags {
                immediate: last,
                ..DataFlags::WHOLE
            },
            payload,
        });
        let mut packet = self.packet(data);
        if self.cfg.rev.is_some() {
            let now = self.now;
            let p = &mut self.paths[path];
            let seq = p.rev.send_seq;
            p.rev.send_seq = p.rev.send_seq.wrapping_add(1);
            // The first packet of a round on this path says how long it waited after
            // the advert that opened the round (the receiver's RTT sample excludes it).
            let hold = p
                .rev
                .round_opened
                .take()
                .map_or(0, |t| hold_to_wire(now.saturating_since(t)));
            let info = Chunk::RoundInfo {
                round: self.rounds.round,
                path: path.0 as u8,
                hold,
                seq,
            };
            packet.chunks.insert(0, info);
        }
        self.data_packet(path, packet)
    }

    pub(super) fn set_blocked(&mut self, now: Time, blocked: bool) {
        if self.snd.blocked != blocked {
            self.snd.blocked = blocked;
            self.obs.event(now, &Event::RwndBlocked { blocked });
        }
    }

    /// CMT-PF (docs/algorithms.md §1.6): when no path is ACTIVE but some are PF and data is waiting,
    /// reactivate the PF path with the fewest errors (ties: most recently PF, then
    /// random) with cwnd = 1 MTU.
    /// Returns whether it changed a path.
    fn ensure_active_path(&mut self, now: Time) -> bool {
        if !self.snd.has_new_data() && self.snd.rtx_marked.is_empty() {
            return false;
        }
        if self.paths.iter().any(|p| p.state == PathState::Active) {
            return false;
        }
        let pf: Vec<usize> = (0..self.paths.len())
            .filter(|&i| self.paths[i].state == PathState::PotentiallyFailed)
            .collect();
        let Some(min_err) = pf.iter().map(|&i| self.paths[i].losses.error_count).min() else {
            return false;
        };
        let best: Vec<usize> = pf
            .into_iter()
            .filter(|&i| self.paths[i].losses.error_count == min_err)
            .collect();
        let latest = best
            .iter()
            .map(|&i| self.paths[i].timers.pf_since)
            .max()
            .flatten();
        let best: Vec<usize> = best
            .into_iter()
            .filter(|&i| self.paths[i].timers.pf_since == latest)
            .collect();
        let pick = best[rand::Rng::gen_range(&mut self.rng, 0..best.len())];
        let (unit, quic) = (self.cfg.cwnd_unit(), self.quic());
        let p = &mut self.paths[pick];
        p.timers.set_hb_pending(None);
        if quic {
            // A probe timeout changes no window (RFC 9002 §6.2), and picoquic sends on
            // the least-retransmitting paths when all are: the probe timer runs on.
            self.set_state(now, PathId(pick), PathState::Active);
            return true;
        }
        p.timers.set_t3(None);
        p.cc.set_cwnd(unit);
        self.set_state(now, PathId(pick), PathState::Active);
        self.cwnd_event(now, PathId(pick));
        true
    }
}
