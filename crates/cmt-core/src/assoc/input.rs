//! The packet input: verification tags (RFC 9260 §8.5, §8.5.1) and each chunk handed to
//! the half that handles it.

use super::Association;
use super::Lifecycle;
use crate::event::{Event, Observer};
use crate::packet::{hold_from_wire, Chunk, Packet};
use crate::time::Time;
use crate::view::PathId;
use crate::wire::chunk_type;

impl<O: Observer> Association<O> {
    /// A packet arrived on `path`.
    ///
    /// It must carry our verification tag — except an ABORT or SHUTDOWN COMPLETE with
    /// the T bit set, which carries the peer's tag reflected back by an endpoint that
    /// has no association for what we sent (RFC 9260 §8.4, §8.5.1 rules B and C: e.g.
    /// a peer that restarted). Anything else is counted and dropped.
    pub fn handle_packet(&mut self, now: Time, path: PathId, packet: Packet) {
        self.handle_packet_ecn(now, path, packet, false);
    }

    /// [`handle_packet`](Self::handle_packet) for a packet whose IP header says whether
    /// a queue marked it Congestion Experienced (`ce`): with ECN in use, a marked packet
    /// carrying DATA is echoed to the sender (RFC 9260 Appendix A).
    pub fn handle_packet_ecn(&mut self, now: Time, path: PathId, packet: Packet, ce: bool) {
        self.now = now;
        if packet.vtag != self.local_vtag {
            if packet.vtag == self.peer_vtag {
                self.on_reflected(now, packet);
            } else {
                self.stats.bad_vtag += 1;
            }
            return;
        }
        if path.0 >= self.paths.len() {
            self.stats.bogus_chunks += 1;
            return;
        }
        self.heard = now;
        self.paths[path].heard = Some(now);
        if ce {
            self.on_ce_mark(packet.chunks.iter().find_map(|c| match c {
                Chunk::Data(d) => Some(d.tsn),
                _ => None,
            }));
        }
        let mut had_data = false;
        let gap_before = self.rcv.has_gap();
        let mut chunks = packet.chunks;
        for chunk in chunks.drain(..) {
            had_data |= matches!(chunk, Chunk::Data(_));
            self.on_chunk(now, path, chunk);
        }
        crate::chunk_pool::give(chunks);
        self.rounds.pending = None;
        if had_data {
            self.after_data_packet(now, path, gap_before);
            if let Some(rx) = self.rev_rx.as_mut() {
                let free = self.rcv.free(self.cfg.rbuf) as u64;
                rx.note_buffer(free, self.cfg.mtu as u64);
            }
        }
        if self.rev_rx.as_ref().is_some_and(|r| r.advert_due) {
            self.rcv.sack_now = true;
        }
        self.new_opportunity();
    }

    /// One chunk of a packet under our tag.
    fn on_chunk(&mut self, now: Time, path: PathId, chunk: Chunk) {
        match chunk {
            Chunk::Data(d) => {
                if let (Some(rx), Some((round, seq, hold))) =
                    (self.rev_rx.as_mut(), self.rounds.pending.take())
                {
                    let (len, hold) = (d.payload.len() as u32, hold_from_wire(hold));
                    rx.on_packet(now, path, round, seq as u64, len, hold);
                }
                self.on_data(now, path, d);
            }
            Chunk::RoundInfo {
                round, seq, hold, ..
            } => self.rounds.pending = Some((round, seq, hold)),
            Chunk::RateAdvert { seq, rates } => self.on_rate_advert(now, seq, &rates),
            Chunk::Sack(s) => {
                if self.acks_unsent_data(s.cum_tsn) {
                    self.violation(now, path);
                } else {
                    self.on_sack(now, &s)
                }
                crate::chunk_pool::give_blocks(s.gap_blocks);
            }
            Chunk::Shutdown { cum_tsn } => {
                if self.acks_unsent_data(cum_tsn) {
                    self.violation(now, path);
                } else {
                    self.on_shutdown(now, path, cum_tsn)
                }
            }
            Chunk::ShutdownAck => self.on_shutdown_ack(now, path),
            Chunk::Ecne { lowest_tsn } => self.on_ecne(now, lowest_tsn),
            Chunk::Cwr { lowest_tsn } => self.on_cwr(lowest_tsn),
            Chunk::ShutdownComplete { reflected: false } => self.on_shutdown_complete(now),
            Chunk::Heartbeat(info) => self.ctrl.push_back((path, Chunk::HeartbeatAck(info))),
            Chunk::HeartbeatAck(info) => self.on_heartbeat_ack(now, info),
            Chunk::Asconf(c) => self.on_asconf(path, c),
            Chunk::AsconfAck(a) => self.on_asconf_ack(now, a),
            Chunk::Abort {
                cause,
                reflected: false,
            } => self.fail(now, Lifecycle::PeerAborted(cause)),
            // A peer's own heartbeat info: echo it verbatim (RFC 9260 §8.3).
            Chunk::Unknown {
                chunk_type: chunk_type::HEARTBEAT,
                value,
                ..
            } => self.ctrl.push_back((
                path,
                Chunk::Unknown {
                    chunk_type: chunk_type::HEARTBEAT_ACK,
                    flags: 0,
                    value,
                },
            )),
            c @ Chunk::Unknown {
                chunk_type: chunk_type::FILE_DIGEST | chunk_type::ARRIVALS,
                ..
            } => self.extension_in.push(c),
            // A T bit under our own tag (§8.5.1 B, C), and everything else.
            _ => self.stats.bogus_chunks += 1,
        }
    }

    /// A packet under the peer's tag: an ABORT or SHUTDOWN COMPLETE with the T bit set
    /// leading it is accepted (§8.5.1 B, C); anything else is a wrong tag.
    fn on_reflected(&mut self, now: Time, packet: Packet) {
        match packet.chunks.first() {
            Some(&Chunk::Abort {
                cause,
                reflected: true,
            }) => self.fail(now, Lifecycle::PeerAborted(cause)),
            Some(Chunk::ShutdownComplete { reflected: true }) => self.on_shutdown_complete(now),
            _ => self.stats.bad_vtag += 1,
        }
        self.new_opportunity();
    }

    /// Receiver-driven CMT, sender side: apply a newer advert's rates. The advert opens
    /// a new round on every path; each path's first packet of it reports how long it
    /// was held after now.
    fn on_rate_advert(&mut self, now: Time, seq: u32, rates: &[(u8, u32)]) {
        if self.rounds.latest_advert.is_some_and(|l| seq <= l) {
            return; // older than one applied: it travelled on a slower path
        }
        self.rounds.latest_advert = Some(seq);
        self.rounds.round = seq;
        self.rounds.adverts += 1;
        for p in &mut self.paths {
            p.rev.round_opened = Some(now);
        }
        let mtu = self.cfg.mtu as u64;
        for &(p, rate) in rates {
            let Some(path) = self.paths.get_mut(p as usize) else {
                self.stats.bogus_chunks += 1;
                continue;
            };
            path.rev.advertised_rate = Some(rate as f64);
            let srtt = path.rtt.srtt();
            path.cc.on_rate_advert(rate as f64, srtt, mtu);
            let ev = Event::RateAdvertApplied {
                path: PathId(p as usize),
                rate: rate as f64,
            };
            self.obs.event(now, &ev);
        }
    }
}
