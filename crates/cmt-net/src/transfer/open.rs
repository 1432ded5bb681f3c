//! Opening the established phase once the handshake is done, the same for both ends:
//! the association with the options' algorithms and what the peer agreed to (receiver-
//! driven rates, RFC 5061 reconfiguration with its spare path slots), the paths that
//! start removed, the trace, the interface watch and the addresses the peer knows. What
//! differs between the ends is what they hand over in an [`Opening`].

use std::net::IpAddr;

use cmt_core::setup::Established as SetupDone;
use cmt_core::PathId;
use cmt_sim::packet_trace::PacketTrace;

use super::addresses::Addresses;
use super::error::TransferError;
use super::established::Established;
use super::options::Options;
use super::reconfig::{self, SPARE_PATHS};
use super::routes::Routes;
use super::session::{association, negotiated_receiver_rates, start_trace, watch_interfaces};
use crate::io::Sockets;
use crate::trust::Trust;

/// What one end knows when its handshake is done.
pub(super) struct Opening {
    /// The handshake's outcome.
    pub(super) est: SetupDone,
    /// Which local socket and remote address each path uses (one path per entry).
    pub(super) routes: Routes,
    /// The sources that speak for the peer from the start.
    pub(super) trust: Trust,
    /// Datagrams refused during the handshake.
    pub(super) rejected: u64,
    /// Bytes of IP, UDP, SCTP common and SCTP-AUTH header in every packet.
    pub(super) overhead: u32,
    /// Paths whose interface has no address yet: they start removed (the sender's
    /// `--local` interfaces; none at a receiver).
    pub(super) absent: Vec<bool>,
    /// Per local socket, the address it is bound to (`None`: its interface has none
    /// yet), and how many sockets the interface watch may fill.
    pub(super) bound: (Vec<Option<IpAddr>>, usize),
    /// Our addresses the peer learned in the handshake.
    pub(super) announced: Vec<IpAddr>,
    /// The sending end (its trace records the windows).
    pub(super) sender: bool,
}

impl Established {
    /// The established phase of the association `op` describes; with whether
    /// receiver-driven rates were agreed.
    pub(super) fn open(
        socks: &Sockets,
        o: &Options,
        op: Opening,
        trace: Option<PacketTrace>,
    ) -> Result<(Established, bool), TransferError> {
        let Opening { est, routes, .. } = op;
        let n = routes.paths.len();
        let receiver_rates = negotiated_receiver_rates(o, &est);
        let reconfigure = reconfig::negotiated(o, &est);
        // Slots for addresses the peer adds later, removed until then.
        let spare = if reconfigure { SPARE_PATHS } else { 0 };
        let (local_vtag, peer_vtag) = (est.init.local_vtag, est.init.peer_vtag);
        let start = socks.now();
        let mut assoc = association(o, n + spare, est.init, receiver_rates, op.overhead, start)
            .map_err(TransferError::Setup)?;
        if reconfigure {
            assoc.enable_reconfiguration();
        }
        let absent = (0..n).filter(|&i| op.absent.get(i).copied().unwrap_or(false));
        for i in absent.chain(n..n + spare) {
            assoc.remove_path(start, PathId(i));
        }
        start_trace(&mut assoc, trace, &routes.addresses(socks), op.sender);
        let (bound, slots) = op.bound;
        let s = Established {
            assoc,
            routes,
            trust: op.trust,
            local_vtag,
            peer_vtag,
            rejected: op.rejected,
            start,
            watch: watch_interfaces(o, &bound, slots),
            addrs: Addresses::new(op.announced),
        };
        Ok((s, receiver_rates))
    }
}
