//! Address changes told to the peer and learned from it (RFC 5061 ADD-IP / DEL-IP /
//! SET-PRIMARY, with the core's ASCONF bookkeeping, docs/algorithms.md §1.10).
//!
//! * Our side (either end: the sender's paths, the receiver's listening sockets): a
//!   path whose interface loses its address is removed at once and the peer is told to
//!   delete the address; one that gets an address is rebound to it and the peer told to
//!   add it — the path carries data only after the peer's ASCONF-ACK accepted it (RFC
//!   5061 §5.1) and a HEARTBEAT verified it. Without reconfiguration (a peer that does
//!   not support it) the path is added at once and the peer follows its packets' new
//!   source after a probe, as before.
//! * The peer's side: its ADD-IP makes a new path from the local address sharing the
//!   longest prefix with the new address (one of the [`SPARE_PATHS`] slots each end
//!   keeps, or the slot of a path deleted earlier to the same address), verified before
//!   it carries data; its DEL-IP removes every path to that address at once. Deleting
//!   the address the request came from, or the last one, is refused with RFC 5061's
//!   error causes. SET-PRIMARY is accepted and changes nothing (CMT uses every path);
//!   this end never sends it.

use std::net::{IpAddr, SocketAddr};

use cmt_core::addr_conf::{asconf_cause, AddrOp, AsconfResponse};
use cmt_core::setup::Established as SetupDone;
use cmt_core::wire::chunk_type;
use cmt_core::{Packet, PathId, PathState};

use super::Connection;
use crate::io::Sockets;
use crate::transfer::options::Options;
use crate::transfer::routes::common_prefix;

/// Path slots each end keeps (removed until used) for addresses its peer adds later.
pub const SPARE_PATHS: usize = 4;

/// Whether both ends may reconfigure: we offered it, the peer announced ASCONF and
/// ASCONF-ACK, and both require them authenticated (RFC 5061 §4.1.1).
pub(super) fn negotiated(o: &Options, est: &SetupDone) -> bool {
    let both = [chunk_type::ASCONF, chunk_type::ASCONF_ACK];
    o.reconfigure
        && both.iter().all(|t| est.peer_extensions.contains(t))
        && est
            .auth
            .as_ref()
            .is_some_and(|s| both.iter().all(|&t| s.peer_requires(t) && s.we_require(t)))
}

impl Connection {
    /// Paths follow their interfaces: one that lost its address is removed at once (its
    /// data in flight goes to the others); one that has an address again, or another one,
    /// gets a socket bound to it, and is added — after the peer accepted the address, when
    /// reconfiguration is in use.
    pub(super) fn follow_interfaces(&mut self, socks: &mut Sockets) {
        let now = socks.now();
        // A link that went down: its paths are out at once; one that came back: they are
        // probed now (the core decides what each path needs).
        for (socket, up) in self.watch.links_changed() {
            for i in (0..self.routes.paths.len()).filter(|&i| self.routes.paths[i].0 == socket) {
                if up {
                    self.assoc.link_up(now, PathId(i));
                } else {
                    self.assoc.link_down(now, PathId(i));
                }
            }
        }
        for c in self.watch.changes() {
            // The watch names sockets; a socket carries one path at the sender, any number
            // at the receiver.
            let ids: Vec<PathId> = (0..self.routes.paths.len())
                .filter(|&i| self.routes.paths[i].0 == c.path)
                .map(PathId)
                .collect();
            let old = socks.local_addrs()[c.path].ip();
            for &id in &ids {
                self.assoc.remove_path(now, id);
            }
            let mut adds = Vec::new();
            let reconfiguring = self.assoc.reconfiguration_enabled();
            if let Some(ip) = c.addr {
                if old != ip && socks.rebind(c.path, ip).is_err() {
                    continue; // not bindable (yet): the next change tries again
                }
                if reconfiguring && !self.addrs.announced.contains(&ip) {
                    self.addrs.pending.insert(ip, ids.clone());
                    adds.push(AddrOp::Add(ip));
                } else {
                    for &id in &ids {
                        self.assoc.add_path(now, id);
                    }
                }
            }
            if reconfiguring {
                let gone = self.addrs.announced.contains(&old) && {
                    let locals = socks.local_addrs();
                    let elsewhere = (0..locals.len()).any(|i| i != c.path && locals[i].ip() == old);
                    !elsewhere && c.addr != Some(old)
                };
                if gone {
                    self.addrs.gone.insert(old);
                }
                self.tell_peer(socks, adds, c.addr.and(ids.first().copied()));
            }
        }
    }

    /// Sends the peer `adds` and the deletions of addresses that are gone — but never the
    /// deletion of the last address the peer knows: in a handover (the only path's address
    /// gone, a new one coming) it waits for the new address and goes with its ADD-IP, in
    /// one ASCONF, named by the old address (the one the peer still knows). `via`: the
    /// path of the added address, which carries the ASCONF when no path carries data.
    fn tell_peer(&mut self, socks: &Sockets, mut ops: Vec<AddrOp>, via: Option<PathId>) {
        let locals = socks.local_addrs();
        let a = &mut self.addrs;
        let kept = |x: &IpAddr| !a.gone.contains(x) && locals.iter().any(|l| l.ip() == *x);
        let lookup = a.announced.iter().copied().find(kept);
        let lookup = lookup.or_else(|| a.gone.first().copied());
        if lookup.is_some_and(|l| kept(&l)) || !ops.is_empty() {
            for x in std::mem::take(&mut a.gone) {
                a.announced.remove(&x);
                ops.push(AddrOp::Delete(x));
            }
        }
        if let (Some(lookup), false) = (lookup, ops.is_empty()) {
            self.assoc.reconfigure(socks.now(), lookup, ops, via);
        }
    }

    /// The peer's answers to our requests: an accepted address's path is added.
    pub(super) fn take_results(&mut self, socks: &Sockets) {
        let now = socks.now();
        for (op, result) in self.assoc.take_address_results() {
            let AddrOp::Add(ip) = op else { continue };
            let Some(ids) = self.addrs.pending.remove(&ip) else {
                continue;
            };
            if result.is_ok() {
                self.addrs.announced.insert(ip);
            }
            for id in ids {
                let still = socks.local_addrs()[self.routes.paths[id.0].0].ip() == ip;
                if result.is_ok() && still {
                    self.assoc.add_path(now, id);
                }
            }
        }
    }

    /// Applies the peer's requests (which came from `from`) in order and answers each. An
    /// added address is trusted as a source from then on (the request was authenticated);
    /// returns the packets that were held for it, to deliver, with their source.
    pub(super) fn apply_requests(
        &mut self,
        socks: &Sockets,
        from: SocketAddr,
    ) -> Vec<(usize, SocketAddr, Packet)> {
        let mut released = Vec::new();
        for req in self.assoc.take_address_requests() {
            let port = from.port();
            let mut responses = Vec::new();
            for p in &req.params {
                match (self.apply(socks, from, &p.op), &p.op) {
                    (None, AddrOp::Add(ip)) => {
                        let added = SocketAddr::new(*ip, port);
                        let held = self.trust.confirm(added);
                        released.extend(held.into_iter().map(|(l, p)| (l, added, p)));
                    }
                    (None, _) => {}
                    (Some(cause), _) => responses.push(AsconfResponse::refusal(p, cause)),
                }
            }
            // Back to the request's source, on the path a request may just have added.
            let back = self.routes.to_remote(from);
            self.assoc
                .answer_address_request(req.serial, back, responses);
        }
        released
    }

    /// One request: `None` when applied, else the error cause it is refused with.
    /// `from`: the request's source (its UDP port is the peer's for every address).
    fn apply(&mut self, socks: &Sockets, from: SocketAddr, op: &AddrOp) -> Option<u16> {
        let s = self;
        let now = socks.now();
        let port = from.port();
        let live = |s: &Connection, i: usize| s.assoc.path(PathId(i)).state != PathState::Removed;
        match op {
            AddrOp::Add(ip) => {
                // Unicast only; the wildcard form ("the packet's source") is not supported.
                if !crate::limit::is_unicast(*ip) {
                    return Some(asconf_cause::NO_AUTHORIZATION);
                }
                let to = |i: usize, s: &Connection| s.routes.paths[i].1.ip() == *ip;
                if (0..s.routes.paths.len()).any(|i| to(i, s) && live(s, i)) {
                    return None; // known already
                }
                let locals = socks.local_addrs();
                let Some(local) = nearest_local(&locals, *ip) else {
                    return Some(asconf_cause::RESOURCE_SHORTAGE);
                };
                let remote = SocketAddr::new(*ip, port);
                let id = match (0..s.routes.paths.len()).find(|&i| to(i, s)) {
                    Some(i) => i,
                    None if s.routes.paths.len() < s.assoc.num_paths() => {
                        s.routes.push(local, remote)
                    }
                    None => return Some(asconf_cause::RESOURCE_SHORTAGE),
                };
                s.routes.paths[id] = (local, remote);
                s.assoc.add_path(now, PathId(id));
                None
            }
            AddrOp::Delete(ip) => {
                let doomed: Vec<usize> = (0..s.routes.paths.len())
                    .filter(|&i| s.routes.paths[i].1.ip() == *ip && live(s, i))
                    .collect();
                if *ip == from.ip() {
                    return Some(asconf_cause::DELETE_SOURCE_ADDRESS);
                }
                let left =
                    (0..s.routes.paths.len()).filter(|&i| live(s, i) && !doomed.contains(&i));
                if !doomed.is_empty() && left.count() == 0 {
                    return Some(asconf_cause::DELETE_LAST_ADDRESS);
                }
                for i in doomed {
                    s.assoc.remove_path(now, PathId(i));
                }
                None
            }
            // Every path carries data under CMT: a preferred one changes nothing.
            AddrOp::SetPrimary(_) => None,
            AddrOp::Other { .. } => Some(asconf_cause::UNRECOGNIZED_PARAMETER),
        }
    }
}

/// The local socket whose address shares the longest prefix with `ip` (same family).
fn nearest_local(locals: &[SocketAddr], ip: IpAddr) -> Option<usize> {
    (0..locals.len())
        .filter(|&i| locals[i].is_ipv4() == ip.is_ipv4())
        .max_by_key(|&i| (common_prefix(locals[i].ip(), ip), usize::MAX - i))
}
