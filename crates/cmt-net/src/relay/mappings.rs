//! The senders one relayed path carries: each gets a socket of its own towards the
//! target (on a port the system picks), so the target's answers find their way back to
//! the sender they are for — what a NAT does. A mapping expires when it has carried
//! nothing for the path's `idle` time; at most `senders` exist at once, and datagrams of
//! a new sender beyond that are refused (counted), so a flood of spoofed sources costs
//! a bounded number of sockets.

use std::net::SocketAddr;

use cmt_core::{Duration, Time};

use crate::io::Udp;

/// One sender's mapping.
struct Entry {
    id: u64,
    sender: SocketAddr,
    last: Time,
}

/// The listening socket and the mappings' sockets, in one list the receive loop polls.
pub(super) struct Mappings {
    /// `socks[0]` listens for senders; `socks[1 + i]` is mapping i's socket towards the
    /// target.
    pub(super) socks: Vec<Udp>,
    entries: Vec<Entry>,
    next_id: u64,
    idle: Duration,
    max: usize,
    /// Where a mapping's socket binds (the target's family, any address, port 0).
    bind: SocketAddr,
}

/// What [`Mappings::of_sender`] found or made.
pub(super) enum Mapped {
    /// The sender's mapping (its id); `true` when made now.
    Id(u64, bool),
    /// The limit of mappings is reached: the datagram is refused.
    Full,
}

impl Mappings {
    /// Mappings behind the listening socket `front`, for a path to `target`.
    pub(super) fn new(front: Udp, target: SocketAddr, idle: Duration, max: usize) -> Self {
        let bind = if target.is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        };
        Mappings {
            socks: vec![front],
            entries: Vec::new(),
            next_id: 0,
            idle,
            max,
            bind: bind.parse().expect("literal"),
        }
    }

    /// The mapping of `sender`, made now when it has none (its socket bound); used at
    /// `now`.
    pub(super) fn of_sender(&mut self, sender: SocketAddr, now: Time) -> std::io::Result<Mapped> {
        if let Some(e) = self.entries.iter_mut().find(|e| e.sender == sender) {
            e.last = now;
            return Ok(Mapped::Id(e.id, false));
        }
        if self.entries.len() >= self.max {
            return Ok(Mapped::Full);
        }
        let sock = Udp::bind(self.bind)?;
        let id = self.next_id;
        self.next_id += 1;
        self.socks.push(sock);
        self.entries.push(Entry {
            id,
            sender,
            last: now,
        });
        Ok(Mapped::Id(id, true))
    }

    /// The mapping whose socket is `socks[i]` (i ≥ 1), marked used at `now`: its id.
    pub(super) fn by_socket(&mut self, i: usize, now: Time) -> Option<u64> {
        let e = self.entries.get_mut(i.checked_sub(1)?)?;
        e.last = now;
        Some(e.id)
    }

    /// Mapping `id`'s socket index and sender, while it exists.
    pub(super) fn get(&self, id: u64) -> Option<(usize, SocketAddr)> {
        let i = self.entries.iter().position(|e| e.id == id)?;
        Some((1 + i, self.entries[i].sender))
    }

    /// Removes the mappings idle for the idle time by `now` (their sockets close);
    /// returns how many. Only between receive batches: socket indices move.
    pub(super) fn expire(&mut self, now: Time) -> usize {
        let mut gone = 0;
        let mut i = 0;
        while i < self.entries.len() {
            if now.saturating_since(self.entries[i].last) >= self.idle {
                self.entries.remove(i);
                self.socks.remove(1 + i);
                gone += 1;
            } else {
                i += 1;
            }
        }
        gone
    }

    /// When the next mapping expires, if any exists.
    pub(super) fn next_expiry(&self) -> Option<Time> {
        self.entries.iter().map(|e| e.last + self.idle).min()
    }

    /// Mappings that exist now.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }
}
