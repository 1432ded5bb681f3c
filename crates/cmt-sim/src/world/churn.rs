//! Paths that come and go, told to the peer as a real stack would: a scenario's path
//! events become RFC 5061 ASCONF exchanges on the simulated wire (docs/algorithms.md
//! §1.10). A removed path stops at once at the sender, which sends DEL-IP; the
//! receiver stops using it when that arrives. An added path is announced with ADD-IP
//! (sent on the new path itself when no other carries data) and carries data only
//! after the receiver's ASCONF-ACK and a HEARTBEAT, as the runtime does — so a
//! scheduler studied under churn sees the round trips a handover really costs.
//!
//! Path `i` has the address 10.x.y.1 at the sender and 10.x.y.2 at the receiver
//! (x.y: `i` in two bytes); the addresses only name paths in the ASCONFs.

use std::net::{IpAddr, Ipv4Addr};

use cmt_core::addr_conf::{asconf_cause, AddrOp, AsconfResponse};
use cmt_core::{PathId, PathState};

use super::Simulation;
use crate::ids::EndpointId;

/// Path `i`'s address at `side`.
pub(super) fn address(i: usize, side: EndpointId) -> IpAddr {
    let host = if side == EndpointId::SENDER { 1 } else { 2 };
    Ipv4Addr::new(10, (i >> 8) as u8, i as u8, host).into()
}

/// The path an address names (either side's).
fn path_of(ip: IpAddr) -> Option<usize> {
    match ip {
        IpAddr::V4(v) => {
            let o = v.octets();
            (o[0] == 10).then(|| (o[1] as usize) << 8 | o[2] as usize)
        }
        IpAddr::V6(_) => None,
    }
}

impl Simulation {
    /// The sender learns that path `path`'s address was added or removed.
    pub(super) fn path_event(&mut self, path: usize, added: bool) {
        let now = self.now;
        let ours = address(path, EndpointId::SENDER);
        let assoc = &mut self.ends[EndpointId::SENDER].assoc;
        if !added {
            assoc.remove_path(now, PathId(path));
        }
        // The request names the association by an address the receiver knows.
        let known = (0..assoc.num_paths())
            .find(|&i| i != path && assoc.path(PathId(i)).state != PathState::Removed)
            .map_or(ours, |i| address(i, EndpointId::SENDER));
        let (op, via) = match added {
            true => (AddrOp::Add(ours), Some(PathId(path))),
            false => (AddrOp::Delete(ours), None),
        };
        // Without reconfiguration (no churn declared), an added path is used at once.
        if !assoc.reconfigure(now, known, vec![op], via) && added {
            assoc.add_path(now, PathId(path));
        }
    }

    /// After a packet reached `side`: the peer's requests are applied to this side's
    /// paths and answered; the peer's answers to ours add the paths it accepted.
    pub(super) fn follow_reconfiguration(&mut self, side: EndpointId) {
        let now = self.now;
        let assoc = &mut self.ends[side].assoc;
        if !assoc.reconfiguration_enabled() {
            return;
        }
        for req in assoc.take_address_requests() {
            let mut responses = Vec::new();
            for p in &req.params {
                let path = match p.op {
                    AddrOp::Add(ip) | AddrOp::Delete(ip) => path_of(ip),
                    _ => continue,
                };
                let Some(id) = path.filter(|&i| i < assoc.num_paths()).map(PathId) else {
                    responses.push(AsconfResponse::refusal(p, asconf_cause::RESOURCE_SHORTAGE));
                    continue;
                };
                if matches!(p.op, AddrOp::Add(_)) {
                    assoc.add_path(now, id);
                    continue;
                }
                let others = (0..assoc.num_paths())
                    .any(|i| i != id.0 && assoc.path(PathId(i)).state != PathState::Removed);
                if others {
                    assoc.remove_path(now, id);
                } else {
                    let cause = asconf_cause::DELETE_LAST_ADDRESS;
                    responses.push(AsconfResponse::refusal(p, cause));
                }
            }
            assoc.answer_address_request(req.serial, None, responses);
        }
        for (op, result) in assoc.take_address_results() {
            if let (AddrOp::Add(ip), Ok(())) = (op, result) {
                if let Some(i) = path_of(ip).filter(|&i| i < assoc.num_paths()) {
                    assoc.add_path(now, PathId(i));
                }
            }
        }
    }
}
