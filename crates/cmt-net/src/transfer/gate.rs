//! The listening side's door, for the one-shot receiver and the serving one alike: a
//! parsed datagram of no association goes through `--peer`'s filter to the stateless
//! listener (INIT → INIT ACK with a signed cookie, a valid COOKIE ECHO → an
//! association), and what the listener answers goes only to unicast sources within the
//! [`ReplyLimit`] budget — but an answer no larger than what it answers (the INIT ACK
//! of a padded INIT) goes whatever the budget: it amplifies nothing. A serving receiver at its limit of associations answers an
//! INIT, or a COOKIE ECHO, with an ABORT ("Out of Resource") instead.

use std::net::SocketAddr;

use cmt_core::setup::{
    Established as SetupDone, ListenOutcome, Listener, SetupConfig, CAUSE_OUT_OF_RESOURCE,
};
use cmt_core::{Chunk, Packet};

use super::options::Options;
use crate::io::{Arrival, Sockets};
use crate::limit::{is_unicast, ReplyLimit};

/// What became of a datagram at the door.
pub(super) enum Passed {
    /// A valid COOKIE ECHO set up an association.
    Accepted(Accepted),
    /// An INIT, answered.
    Answered,
    /// Refused at the limit of associations (an ABORT told its sender).
    Busy,
    /// Anything else: malformed, from a source `--peer` does not allow, dropped, or
    /// answered as a packet of no association.
    Rejected,
}

/// The listener and its reply budget.
pub(super) struct Gate {
    listener: Listener,
    limit: ReplyLimit,
    /// Said with the ABORT that refuses a sender while busy, if anything.
    busy_reason: Option<String>,
}

impl Gate {
    pub(super) fn new(cfg: SetupConfig) -> Gate {
        Gate {
            listener: Listener::new(cfg, rand::random(), rand::random()),
            limit: ReplyLimit::default(),
            busy_reason: None,
        }
    }

    /// The resume offer INIT ACKs carry from now on (`None`: none).
    pub(super) fn set_offer(&mut self, offer: Option<crate::resume::Offer>) {
        self.listener
            .set_extra_params(offer.map(|o| o.param()).into_iter().collect());
    }

    /// What a sender refused while busy is told, with the ABORT's "Out of Resource".
    pub(super) fn set_busy_reason(&mut self, why: &str) {
        self.busy_reason = Some(why.to_string());
    }

    /// Passes arrival `a` (the datagram `socks` received last) through the door;
    /// `busy`: no association may be set up now.
    pub(super) async fn pass(
        &mut self,
        socks: &mut Sockets,
        o: &Options,
        a: &Arrival,
        busy: bool,
    ) -> Passed {
        let Ok(p) = &a.packet else {
            return Passed::Rejected;
        };
        if !o.receive.peers.is_empty() && !o.receive.peers.contains(&a.from.ip()) {
            return Passed::Rejected;
        }
        let init_tag = match p.chunks.first() {
            Some(Chunk::Init(i)) => Some(i.initiate_tag),
            _ => None,
        };
        if let (true, Some(tag)) = (busy, init_tag) {
            let abort = self.out_of_resource(tag);
            self.reply(socks, a, &abort).await;
            return Passed::Busy;
        }
        let now = socks.now();
        match self.listener.handle_datagram(now, socks.last_datagram(), p) {
            ListenOutcome::Reply(r) => {
                self.reply(socks, a, &r).await;
                match init_tag {
                    Some(_) => Passed::Answered,
                    None => Passed::Rejected,
                }
            }
            // (A COOKIE ECHO under a running association's tag went to it, not here.)
            ListenOutcome::Established(est, _) if busy => {
                let abort = self.out_of_resource(est.init.peer_vtag);
                self.reply(socks, a, &abort).await;
                Passed::Busy
            }
            ListenOutcome::Established(est, cookie_ack) => {
                Passed::Accepted(Accepted::new(est, a, cookie_ack))
            }
            ListenOutcome::Drop(_) => Passed::Rejected,
        }
    }

    /// Sends `r` back to `a`'s source: unicast only; within the budget, unless it is
    /// no larger than the datagram it answers (a padded INIT's INIT ACK: it amplifies
    /// nothing, so a spoofed flood that spent the budget cannot keep it from a sender).
    async fn reply(&mut self, socks: &mut Sockets, a: &Arrival, r: &Packet) {
        let bytes = r.wire_len() + crate::IPV6_UDP_OVERHEAD as usize;
        let free = r.wire_len() <= socks.last_datagram().len();
        if is_unicast(a.from.ip()) && (free || self.limit.allow(socks.now(), a.from.ip(), bytes)) {
            // A failing send is a lost reply: the peer retransmits.
            let _ = socks.send(a.local, a.from, a.src_port, r).await;
        }
    }

    /// An ABORT ("Out of Resource") under `tag`, with the busy reason if there is one.
    fn out_of_resource(&self, tag: u32) -> Packet {
        let mut chunks: Vec<Chunk> = self
            .busy_reason
            .as_deref()
            .map(super::digest::refusal_chunk)
            .into_iter()
            .collect();
        chunks.push(Chunk::Abort {
            cause: Some(CAUSE_OUT_OF_RESOURCE),
            reflected: false,
        });
        Packet { vtag: tag, chunks }
    }
}

/// An association the listener accepted.
pub(super) struct Accepted {
    pub(super) est: Box<SetupDone>,
    /// The local socket the COOKIE ECHO came to, and its source.
    pub(super) arrived_on: usize,
    pub(super) from: SocketAddr,
    /// The peer's SCTP port.
    pub(super) peer_port: u16,
    pub(super) cookie_ack: Packet,
}

impl Accepted {
    /// The association `est` the COOKIE ECHO of arrival `a` set up.
    pub(super) fn new(est: Box<SetupDone>, a: &Arrival, cookie_ack: Packet) -> Self {
        Accepted {
            est,
            arrived_on: a.local,
            from: a.from,
            peer_port: a.src_port,
            cookie_ack,
        }
    }
}
