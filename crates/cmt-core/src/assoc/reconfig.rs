//! Dynamic address reconfiguration, the association's part (RFC 5061 §5): serial
//! numbers, one ASCONF outstanding at a time and its retransmission, the peer's
//! requests handed to the embedder in order, and the cached ASCONF-ACK for a repeated
//! request. Which addresses exist, and which path each one is, only the embedder knows
//! (the core names paths, not addresses): it asks for changes with
//! [`Association::reconfigure`], applies the peer's with
//! [`Association::take_address_requests`] / [`Association::answer_address_request`],
//! and learns the peer's verdicts from [`Association::take_address_results`].
//!
//! Serial numbers start at each side's initial TSN (RFC 5061 §4.3's rule). A request
//! that is not answered within its path's RTO is sent again, on another path that
//! carries data when there is one, with the timeout doubled each time (§5.1's T-4
//! timer); after `assoc_max_retrans` retransmissions its requests count as not applied
//! (decision D34: the association is not aborted for it — its own error counting does
//! that if the peer is really gone).

use std::collections::VecDeque;
use std::net::IpAddr;

use super::Association;
use crate::addr_conf::{
    asconf_cause, AddrOp, AsconfAckChunk, AsconfChunk, AsconfParam, AsconfResponse,
};
use crate::event::Observer;
use crate::packet::Chunk;
use crate::time::{Duration, Time};
use crate::view::{PathId, PathState};

/// The peer's ASCONF, for the embedder to apply and answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddrRequest {
    /// Its serial number (give it back to [`Association::answer_address_request`]).
    pub serial: u32,
    /// The path it arrived on (where its answer goes).
    pub path: PathId,
    /// The address that names the association in it.
    pub address: IpAddr,
    /// The requests, to apply in order.
    pub params: Vec<AsconfParam>,
}

/// Our ASCONF in flight.
#[derive(Debug)]
struct Outstanding {
    chunk: AsconfChunk,
    path: PathId,
    fallback: Option<PathId>,
    deadline: Time,
    retransmissions: u32,
}

/// Reconfiguration state (see the module's documentation).
#[derive(Debug)]
pub(super) struct Reconfig {
    enabled: bool,
    next_serial: u32,
    next_correlation: u32,
    queue: VecDeque<(IpAddr, Vec<AddrOp>, Option<PathId>)>,
    outstanding: Option<Outstanding>,
    /// The serial expected from the peer next.
    peer_next: u32,
    /// The answer to the peer's last applied request (serial `peer_next - 1`).
    cached_ack: Option<AsconfAckChunk>,
    requests: Vec<AddrRequest>,
    /// The peer's requests handed out and not yet answered, with their paths.
    unanswered: Vec<(u32, PathId)>,
    results: Vec<(AddrOp, Result<(), u16>)>,
}

impl Reconfig {
    pub(super) fn new(initial_tsn: u32, peer_initial_tsn: u32) -> Reconfig {
        Reconfig {
            enabled: false,
            next_serial: initial_tsn,
            next_correlation: 1,
            queue: VecDeque::new(),
            outstanding: None,
            peer_next: peer_initial_tsn,
            cached_ack: None,
            requests: Vec::new(),
            unanswered: Vec::new(),
            results: Vec::new(),
        }
    }

    /// When the outstanding request is due for retransmission.
    pub(super) fn deadline(&self) -> Option<Time> {
        self.outstanding.as_ref().map(|o| o.deadline)
    }
}

impl<O: Observer> Association<O> {
    /// Allows address reconfiguration: both ends announced ASCONF and ASCONF-ACK and
    /// authenticate them (RFC 5061 §4.1.1 forbids it otherwise). Until then
    /// [`reconfigure`](Self::reconfigure) refuses and the peer's ASCONFs are ignored.
    pub fn enable_reconfiguration(&mut self) {
        self.reconfig.enabled = true;
    }

    /// Whether [`enable_reconfiguration`](Self::enable_reconfiguration) was called.
    pub fn reconfiguration_enabled(&self) -> bool {
        self.reconfig.enabled
    }

    /// Asks the peer to apply `ops` (in order), in one ASCONF naming the association by
    /// `lookup` (one of our addresses the peer knows). The ASCONF goes on a path that
    /// carries data, or on `fallback` when none does (a handover: the only path's
    /// address is gone and the new one is what is being added). Requests go one ASCONF
    /// at a time; the peer's verdicts come from
    /// [`take_address_results`](Self::take_address_results). Returns `false` (and
    /// sends nothing) when reconfiguration is not enabled or `ops` is empty.
    pub fn reconfigure(
        &mut self,
        now: Time,
        lookup: IpAddr,
        ops: Vec<AddrOp>,
        fallback: Option<PathId>,
    ) -> bool {
        if !self.reconfig.enabled || ops.is_empty() {
            return false;
        }
        self.reconfig.queue.push_back((lookup, ops, fallback));
        self.send_next_asconf(now);
        true
    }

    /// Whether requests of ours are queued or await the peer's answer.
    pub fn reconfiguration_pending(&self) -> bool {
        self.reconfig.outstanding.is_some() || !self.reconfig.queue.is_empty()
    }

    /// The peer's verdict on each of our requests since the last call, in order:
    /// `Err(cause)` for a refused one ([`asconf_cause`]).
    pub fn take_address_results(&mut self) -> Vec<(AddrOp, Result<(), u16>)> {
        std::mem::take(&mut self.reconfig.results)
    }

    /// The peer's requests since the last call, in serial order. Each must be answered
    /// with [`answer_address_request`](Self::answer_address_request) once applied;
    /// until then a repetition of it is ignored.
    pub fn take_address_requests(&mut self) -> Vec<AddrRequest> {
        std::mem::take(&mut self.reconfig.requests)
    }

    /// Answers the peer's request `serial` with `responses` (one per refused request,
    /// successes optional): the ASCONF-ACK goes out on `path` — the path back to the
    /// request's source, which the request itself may have just added — or, without
    /// one, on the path the request came on, and is kept to answer a repetition.
    /// Unknown serials are ignored.
    pub fn answer_address_request(
        &mut self,
        serial: u32,
        path: Option<PathId>,
        responses: Vec<AsconfResponse>,
    ) {
        let r = &mut self.reconfig;
        let Some(i) = r.unanswered.iter().position(|&(s, _)| s == serial) else {
            return;
        };
        let (_, came_on) = r.unanswered.remove(i);
        let path = path.filter(|p| p.0 < self.paths.len()).unwrap_or(came_on);
        let r = &mut self.reconfig;
        let ack = AsconfAckChunk { serial, responses };
        r.cached_ack = Some(ack.clone());
        self.ctrl.push_back((path, Chunk::AsconfAck(ack)));
    }

    /// The peer's ASCONF: the next in order is handed to the embedder, the last one
    /// again is answered from the cache (RFC 5061 §5.2), anything else is dropped.
    pub(super) fn on_asconf(&mut self, path: PathId, c: AsconfChunk) {
        let r = &mut self.reconfig;
        if !r.enabled {
            self.stats.bogus_chunks += 1;
            return;
        }
        if c.serial == r.peer_next {
            r.peer_next = r.peer_next.wrapping_add(1);
            r.unanswered.push((c.serial, path));
            r.requests.push(AddrRequest {
                serial: c.serial,
                path,
                address: c.address,
                params: c.params,
            });
        } else if let Some(ack) = r.cached_ack.as_ref().filter(|a| a.serial == c.serial) {
            self.ctrl.push_back((path, Chunk::AsconfAck(ack.clone())));
        }
    }

    /// The peer's answer to our outstanding ASCONF (any other is stale and ignored).
    pub(super) fn on_asconf_ack(&mut self, now: Time, a: AsconfAckChunk) {
        let r = &mut self.reconfig;
        let Some(o) = r.outstanding.take_if(|o| o.chunk.serial == a.serial) else {
            return;
        };
        let outcomes = a.outcomes(&o.chunk.params);
        let ops = o.chunk.params.into_iter().map(|p| p.op);
        r.results.extend(ops.zip(outcomes));
        self.send_next_asconf(now);
    }

    /// Sends the next queued request when none is outstanding.
    fn send_next_asconf(&mut self, now: Time) {
        let r = &mut self.reconfig;
        if r.outstanding.is_some() {
            return;
        }
        let Some((address, ops, fallback)) = r.queue.pop_front() else {
            return;
        };
        let params = ops
            .into_iter()
            .map(|op| {
                let correlation = r.next_correlation;
                r.next_correlation = r.next_correlation.wrapping_add(1);
                AsconfParam { correlation, op }
            })
            .collect();
        let chunk = AsconfChunk {
            serial: r.next_serial,
            address,
            params,
        };
        r.next_serial = r.next_serial.wrapping_add(1);
        let path = self.asconf_path(None, fallback);
        let deadline = now + self.paths[path].rtt.rto();
        self.ctrl.push_back((path, Chunk::Asconf(chunk.clone())));
        self.reconfig.outstanding = Some(Outstanding {
            chunk,
            path,
            fallback,
            deadline,
            retransmissions: 0,
        });
    }

    /// Where an ASCONF goes: the first active path other than `avoid`, else the first
    /// path that carries data other than `avoid`, else `fallback`, `avoid` or path 0.
    fn asconf_path(&self, avoid: Option<PathId>, fallback: Option<PathId>) -> PathId {
        let ids = (0..self.paths.len()).map(PathId);
        let usable = |id: &PathId| Some(*id) != avoid && self.paths[*id].carries_data();
        ids.clone()
            .filter(usable)
            .find(|&id| self.paths[id].state == PathState::Active)
            .or_else(|| ids.clone().find(usable))
            .or(fallback.filter(|f| f.0 < self.paths.len()))
            .or(avoid)
            .unwrap_or(PathId(0))
    }

    /// T-4: the outstanding ASCONF is sent again, on another path when there is one,
    /// or given up after `assoc_max_retrans` retransmissions.
    pub(super) fn on_asconf_timeout(&mut self, now: Time) {
        let max = self.cfg.assoc_max_retrans;
        let Some(mut o) = self.reconfig.outstanding.take() else {
            return;
        };
        if o.retransmissions >= max {
            let failed = o.chunk.params.into_iter().map(|p| p.op);
            let failed = failed.map(|op| (op, Err(asconf_cause::NOT_APPLIED)));
            self.reconfig.results.extend(failed);
            self.send_next_asconf(now);
            return;
        }
        o.retransmissions += 1;
        o.path = self.asconf_path(Some(o.path), o.fallback);
        let rto = self.paths[o.path].rtt.rto();
        let backoff = rto
            .as_nanos()
            .saturating_mul(1 << o.retransmissions.min(16));
        o.deadline = now + Duration::from_nanos(backoff).min(self.cfg.rto_max);
        self.ctrl
            .push_back((o.path, Chunk::Asconf(o.chunk.clone())));
        self.reconfig.outstanding = Some(o);
    }
}
