//! Which local socket and remote address each path uses.

use std::net::{IpAddr, SocketAddr};

use cmt_core::PathId;

use crate::io::Sockets;

/// Which local socket and remote address each path uses, the peer's SCTP port, and the
/// path of each local socket's arrivals.
pub(super) struct Routes {
    /// The peer's SCTP port (RFC 6951: independent of its UDP ports).
    pub(super) peer_port: u16,
    /// Path i: (local socket index, remote address). Path 0 is the handshake's.
    pub(super) paths: Vec<(usize, SocketAddr)>,
    /// Path of the arrivals on each local socket (a socket without a path of its own
    /// reports to path 0: its packets still belong to the association).
    pub(super) of_local: Vec<usize>,
}

impl Routes {
    pub(super) fn new(locals: usize, paths: Vec<(usize, SocketAddr)>, peer_port: u16) -> Routes {
        let mut of_local = vec![0; locals];
        // A socket several paths share reports to the first of them.
        for (i, &(l, _)) in paths.iter().enumerate().rev() {
            of_local[l] = i;
        }
        Routes {
            peer_port,
            paths,
            of_local,
        }
    }
    pub(super) fn addresses(&self, socks: &Sockets) -> Vec<(SocketAddr, SocketAddr)> {
        let locals = socks.local_addrs();
        self.paths.iter().map(|&(l, r)| (locals[l], r)).collect()
    }
    /// Follows the peer: a packet of the association that came to `local` from `from`
    /// makes `from` that path's remote address. An accepting side only guesses its
    /// remotes from the INIT; behind a relay or a NAT the peer's packets come from
    /// elsewhere, and answers must go back the way they came.
    /// A source another path already goes to changes nothing (the peer added it).
    /// Returns the path whose remote changed, if one did.
    pub(super) fn latch(&mut self, local: usize, from: SocketAddr) -> Option<PathId> {
        let &k = self.of_local.get(local)?;
        if self.paths[k].0 == local && !self.paths.iter().any(|p| p.1 == from) {
            self.paths[k].1 = from;
            return Some(PathId(k));
        }
        None
    }
    /// The path of an arrival on `local` from `from`: the path between the two, else
    /// the local socket's path.
    pub(super) fn path_of(&self, local: usize, from: SocketAddr) -> PathId {
        let k = self.paths.iter().position(|&p| p == (local, from));
        PathId(k.unwrap_or_else(|| self.of_local.get(local).copied().unwrap_or(0)))
    }
    /// The first path to `remote`, if any.
    pub(super) fn to_remote(&self, remote: SocketAddr) -> Option<PathId> {
        self.paths.iter().position(|p| p.1 == remote).map(PathId)
    }
    /// Whether a path that is not removed goes to `remote`.
    pub(super) fn is_live_remote<O: cmt_core::Observer>(
        &self,
        remote: SocketAddr,
        assoc: &cmt_core::Association<O>,
    ) -> bool {
        (0..self.paths.len()).any(|i| {
            self.paths[i].1 == remote && assoc.path(PathId(i)).state != cmt_core::PathState::Removed
        })
    }
    /// A new path from socket `local` to `remote` (a local socket may carry several);
    /// returns its index.
    pub(super) fn push(&mut self, local: usize, remote: SocketAddr) -> usize {
        self.paths.push((local, remote));
        self.paths.len() - 1
    }
}

/// The paths of an accepted association, as (local socket index, remote address).
/// Path 0 is the handshake's: the local address the INIT arrived on and the INIT's
/// source (RFC 9260 §5.1.2: the source is one of the peer's addresses even when the
/// INIT does not list it). Every other local address, in order, takes the listed peer
/// address that shares the longest prefix with it (a WiFi address pairs with the
/// peer's address on the same network; ties go to the peer's order), on the port the
/// peer's packets came from. Locals left without a peer address of their family carry
/// no path; when the handshake came from a listed address (no relay or NAT between),
/// peer addresses left without a local get a path from the local sharing the longest
/// prefix with them (a phone's WiFi and LTE addresses to a server with one address: two
/// paths on the server's one socket).
pub fn pair_remotes(
    locals: &[SocketAddr],
    arrived_on: usize,
    from: SocketAddr,
    peer: &[IpAddr],
) -> Vec<(usize, SocketAddr)> {
    let mut free: Vec<IpAddr> = peer.iter().copied().filter(|a| *a != from.ip()).collect();
    let mut out = vec![(arrived_on, from)];
    for (i, l) in locals.iter().enumerate() {
        if i == arrived_on {
            continue;
        }
        let best = (0..free.len())
            .filter(|&j| free[j].is_ipv4() == l.is_ipv4())
            .max_by_key(|&j| (common_prefix(l.ip(), free[j]), usize::MAX - j));
        if let Some(j) = best {
            out.push((i, SocketAddr::new(free.remove(j), from.port())));
        }
    }
    // Only when the peer's packets come from an address it listed: behind a relay or a
    // NAT the listed addresses are not the ones that reach us.
    let direct = peer.contains(&from.ip());
    for a in free.into_iter().filter(|_| direct) {
        let nearest = (0..locals.len())
            .filter(|&i| locals[i].is_ipv4() == a.is_ipv4())
            .max_by_key(|&i| (common_prefix(locals[i].ip(), a), usize::MAX - i));
        if let Some(i) = nearest {
            out.push((i, SocketAddr::new(a, from.port())));
        }
    }
    out
}

/// Leading bits two addresses share (0 across address families).
pub(super) fn common_prefix(a: IpAddr, b: IpAddr) -> u32 {
    match (a, b) {
        (IpAddr::V4(a), IpAddr::V4(b)) => (u32::from(a) ^ u32::from(b)).leading_zeros(),
        (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a) ^ u128::from(b)).leading_zeros(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn sa(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }
    pub(super) fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    pub(super) fn the_handshake_pair_is_path_zero_and_other_locals_pair_by_network() {
        let locals = [sa("10.1.0.1:9"), sa("10.2.0.1:9"), sa("10.3.0.1:9")];
        // The INIT came to our second address from the peer's 10.2 address; the peer
        // lists its addresses in another order than ours.
        let peer = [ip("10.3.0.2"), ip("10.2.0.2"), ip("10.1.0.2")];
        let got = pair_remotes(&locals, 1, sa("10.2.0.2:7"), &peer);
        assert_eq!(
            got,
            vec![
                (1, sa("10.2.0.2:7")),
                (0, sa("10.1.0.2:7")),
                (2, sa("10.3.0.2:7"))
            ]
        );
    }

    #[test]
    pub(super) fn peer_addresses_beyond_our_locals_share_the_nearest_local() {
        // A server with one address; the phone's INIT lists its WiFi and LTE addresses.
        let locals = [sa("203.0.113.5:9")];
        let peer = [ip("192.168.1.20"), ip("10.64.0.7")];
        let got = pair_remotes(&locals, 0, sa("192.168.1.20:7"), &peer);
        assert_eq!(got, vec![(0, sa("192.168.1.20:7")), (0, sa("10.64.0.7:7"))]);
        // Arrivals are told apart by their source.
        let routes = Routes::new(1, got, 7);
        assert_eq!(routes.path_of(0, sa("10.64.0.7:7")), PathId(1));
        assert_eq!(routes.path_of(0, sa("192.168.1.20:7")), PathId(0));
    }

    #[test]
    pub(super) fn an_unlisted_source_still_makes_a_path_and_spare_locals_carry_none() {
        let locals = [sa("10.1.0.1:9"), sa("10.2.0.1:9")];
        let got = pair_remotes(&locals, 1, sa("192.0.2.7:7"), &[]);
        assert_eq!(got, vec![(1, sa("192.0.2.7:7"))]);
        let routes = Routes::new(2, got, 7);
        assert_eq!(routes.path_of(1, sa("192.0.2.7:7")), PathId(0));
        assert_eq!(
            routes.path_of(0, sa("192.0.2.7:7")),
            PathId(0),
            "a spare socket reports to path 0"
        );
    }

    #[test]
    pub(super) fn a_path_follows_the_address_its_packets_come_from() {
        let locals = [sa("127.0.0.1:9"), sa("127.0.0.2:9")];
        let peer = [ip("127.0.1.1"), ip("127.0.1.2")];
        // Behind relays: the INIT came from relay 0's address, not a listed one.
        let mut routes = Routes::new(2, pair_remotes(&locals, 0, sa("127.0.0.1:4000"), &peer), 7);
        routes.latch(1, sa("127.0.0.1:4001"));
        assert_eq!(
            routes.paths,
            vec![(0, sa("127.0.0.1:4000")), (1, sa("127.0.0.1:4001"))]
        );
        // A spare socket (no path) changes nothing.
        let mut one = Routes::new(2, vec![(1, sa("127.0.0.1:4001"))], 7);
        one.latch(0, sa("127.0.0.9:1"));
        assert_eq!(one.paths, vec![(1, sa("127.0.0.1:4001"))]);
    }
}
