//! Which source addresses may speak for the peer (RFC 9260 §5.4, §8.4). An address is
//! trusted when it is one the peer gave (the handshake's source, the addresses its INIT
//! or INIT ACK listed, the remotes a sender addressed) or once a HEARTBEAT carrying a
//! fresh random nonce, sent to it, has come back from it. Until then its packets are
//! held, not delivered (so a sender's first packets behind a relay or NAT are not lost,
//! only delayed by one round trip), and nothing but the probe is sent to it. A party
//! that merely learned the verification tag and sends from an address of its own,
//! without answering the probe, never gets a byte into the association.
//!
//! What is held is bounded whatever arrives: at most [`HOLD`] packets per source,
//! [`MAX_PENDING`] unconfirmed sources and [`HOLD_BYTES`] bytes in all; a new source
//! beyond them evicts the one heard from first (its packets are dropped and counted),
//! and a source that leaves [`PROBES`] probes unanswered is forgotten a second after
//! the last. With authentication (RFC 4895), only packets a valid AUTH chunk covered
//! are held at all: a spoofer without the key costs no memory.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;

use bytes::Bytes;
use cmt_core::wire::{chunk_type, param_type};
use cmt_core::{Chunk, Packet, Time};

/// Packets held per unconfirmed source; more are dropped.
pub const HOLD: usize = 64;
/// Unconfirmed sources held at once.
pub const MAX_PENDING: usize = 64;
/// Bytes held for all unconfirmed sources together (each packet counted as its SCTP
/// bytes plus 128 of bookkeeping).
pub const HOLD_BYTES: usize = 1 << 20;
/// What a held packet costs besides its SCTP bytes (its chunk list and map entry).
pub const PER_PACKET: usize = 128;
/// Probes per source before it is given up (one per second at most, each in answer to
/// a packet from it).
pub const PROBES: u32 = 5;
const SECOND: u64 = 1_000_000_000;
/// Marks our probes' heartbeat info, so the core's own heartbeats are never mistaken
/// for them.
const MAGIC: &[u8; 12] = b"cmtlab-addr\0";

struct Pending {
    nonce: u64,
    /// When the source was first heard from (eviction order).
    since: Time,
    probed_at: Time,
    probes: u32,
    held: Vec<(usize, Packet)>,
    bytes: usize,
}

/// The sources of one association.
pub struct Trust {
    confirmed: BTreeSet<SocketAddr>,
    pending: BTreeMap<SocketAddr, Pending>,
    held_bytes: usize,
    /// Only packets a valid AUTH chunk covered may be held (RFC 4895 in use).
    authenticated_only: bool,
    /// Packets dropped from unconfirmed sources (unauthenticated, beyond a bound,
    /// evicted, or after the probes).
    pub dropped: u64,
    /// Unconfirmed sources evicted to keep within the bounds.
    pub evicted: u64,
}

/// What to do with an arrival.
#[derive(Default)]
pub struct Outcome {
    /// Packets to deliver now, with the local socket each arrived on.
    pub deliver: Vec<(usize, Packet)>,
    /// A probe (a HEARTBEAT chunk) to send to the source.
    pub probe: Option<Chunk>,
}

/// The heartbeat info parameter of a probe.
fn probe_value(nonce: u64) -> Bytes {
    let mut v = Vec::with_capacity(24);
    v.extend_from_slice(&param_type::HEARTBEAT_INFO.to_be_bytes());
    v.extend_from_slice(&24u16.to_be_bytes());
    v.extend_from_slice(MAGIC);
    v.extend_from_slice(&nonce.to_be_bytes());
    Bytes::from(v)
}

/// The nonce of an echoed probe.
fn echoed_nonce(p: &Packet) -> Option<u64> {
    p.chunks.iter().find_map(|c| match c {
        Chunk::Unknown {
            chunk_type: chunk_type::HEARTBEAT_ACK,
            value,
            ..
        } if value.len() == 24 && &value[4..16] == MAGIC => {
            Some(u64::from_be_bytes(value[16..24].try_into().ok()?))
        }
        _ => None,
    })
}

impl Trust {
    /// Trusts `known` from the start; with `authenticated_only`, holds only packets a
    /// valid AUTH chunk covered.
    pub fn new(known: impl IntoIterator<Item = SocketAddr>, authenticated_only: bool) -> Trust {
        Trust {
            confirmed: known.into_iter().collect(),
            pending: BTreeMap::new(),
            held_bytes: 0,
            authenticated_only,
            dropped: 0,
            evicted: 0,
        }
    }

    /// Whether `a` may speak for the peer.
    pub fn is_confirmed(&self, a: SocketAddr) -> bool {
        self.confirmed.contains(&a)
    }

    /// Bytes held for unconfirmed sources now (bounded by [`HOLD_BYTES`]).
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// Unconfirmed sources held now (bounded by [`MAX_PENDING`]).
    pub fn pending_sources(&self) -> usize {
        self.pending.len()
    }

    /// A packet under the association's tag arrived from `from` on socket `local`;
    /// `authenticated`: a valid AUTH chunk covered it.
    pub fn on_packet(
        &mut self,
        local: usize,
        from: SocketAddr,
        p: Packet,
        now: Time,
        authenticated: bool,
    ) -> Outcome {
        if self.confirmed.contains(&from) {
            return Outcome {
                deliver: vec![(local, p)],
                probe: None,
            };
        }
        if self.authenticated_only && !authenticated {
            self.dropped += 1;
            return Outcome::default();
        }
        if let Some(n) = echoed_nonce(&p) {
            return self.on_echo(from, n);
        }
        if !self.pending.contains_key(&from) {
            self.make_room(now);
        }
        let size = p.wire_len() + PER_PACKET;
        self.evict_for(from, size);
        let pend = self.pending.entry(from).or_insert_with(|| Pending {
            nonce: rand::random(),
            since: now,
            probed_at: now,
            probes: 0,
            held: Vec::new(),
            bytes: 0,
        });
        if pend.held.len() < HOLD && self.held_bytes + size <= HOLD_BYTES {
            pend.held.push((local, p));
            pend.bytes += size;
            self.held_bytes += size;
        } else {
            self.dropped += 1;
        }
        let due =
            pend.probes == 0 || now.as_nanos().saturating_sub(pend.probed_at.as_nanos()) >= SECOND;
        let probe = (due && pend.probes < PROBES).then(|| {
            pend.probes += 1;
            pend.probed_at = now;
            Chunk::Unknown {
                chunk_type: chunk_type::HEARTBEAT,
                flags: 0,
                value: probe_value(pend.nonce),
            }
        });
        Outcome {
            deliver: Vec::new(),
            probe,
        }
    }

    /// Trusts `a` from now on (the peer named it in an authenticated ADD-IP, RFC 5061):
    /// returns the packets held for it, to deliver.
    pub fn confirm(&mut self, a: SocketAddr) -> Vec<(usize, Packet)> {
        self.confirmed.insert(a);
        self.remove(a).map(|p| p.held).unwrap_or_default()
    }

    /// An echo of a probe from `from`: confirms it when the nonce is the one sent there.
    fn on_echo(&mut self, from: SocketAddr, nonce: u64) -> Outcome {
        if self.pending.get(&from).is_some_and(|p| p.nonce == nonce) {
            let pend = self.remove(from).expect("present");
            self.confirmed.insert(from);
            return Outcome {
                deliver: pend.held,
                probe: None,
            };
        }
        // An echo of a probe we did not send to this address: forged or misrouted.
        self.dropped += 1;
        Outcome::default()
    }

    /// Before a new source is held: forgets sources whose probes went unanswered, and
    /// evicts the oldest while [`MAX_PENDING`] are held.
    fn make_room(&mut self, now: Time) {
        let expired: Vec<SocketAddr> = self
            .pending
            .iter()
            .filter(|(_, p)| {
                p.probes >= PROBES
                    && now.as_nanos().saturating_sub(p.probed_at.as_nanos()) >= SECOND
            })
            .map(|(a, _)| *a)
            .collect();
        for a in expired {
            self.drop_source(a);
        }
        while self.pending.len() >= MAX_PENDING {
            self.evict_oldest(None);
        }
    }

    /// Evicts the oldest sources other than `keep` until `size` more bytes fit.
    fn evict_for(&mut self, keep: SocketAddr, size: usize) {
        while self.held_bytes + size > HOLD_BYTES && self.evict_oldest(Some(keep)) {}
    }

    /// Evicts the source heard from first (other than `keep`); false if there is none.
    fn evict_oldest(&mut self, keep: Option<SocketAddr>) -> bool {
        let oldest = self
            .pending
            .iter()
            .filter(|(a, _)| Some(**a) != keep)
            .min_by_key(|(_, p)| p.since)
            .map(|(a, _)| *a);
        match oldest {
            Some(a) => {
                self.drop_source(a);
                self.evicted += 1;
                true
            }
            None => false,
        }
    }

    fn drop_source(&mut self, a: SocketAddr) {
        if let Some(p) = self.remove(a) {
            self.dropped += p.held.len() as u64;
        }
    }

    fn remove(&mut self, a: SocketAddr) -> Option<Pending> {
        let p = self.pending.remove(&a)?;
        self.held_bytes -= p.bytes;
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn data() -> Packet {
        Packet {
            vtag: 7,
            chunks: vec![Chunk::CookieAck],
        }
    }

    fn echo(probe: &Chunk, nonce_delta: u64) -> Packet {
        let Chunk::Unknown { value, .. } = probe else {
            panic!("probe")
        };
        let mut v = value.to_vec();
        let n = u64::from_be_bytes(v[16..24].try_into().unwrap()) + nonce_delta;
        v[16..24].copy_from_slice(&n.to_be_bytes());
        Packet {
            vtag: 7,
            chunks: vec![Chunk::Unknown {
                chunk_type: chunk_type::HEARTBEAT_ACK,
                flags: 0,
                value: Bytes::from(v),
            }],
        }
    }

    #[test]
    fn a_new_source_is_held_and_probed_and_only_the_right_nonce_releases_it() {
        let mut t = Trust::new([sa("127.0.0.1:5000")], false);
        assert_eq!(
            t.on_packet(0, sa("127.0.0.1:5000"), data(), Time::ZERO, false)
                .deliver
                .len(),
            1
        );
        let stranger = sa("10.9.9.9:666");
        let o = t.on_packet(1, stranger, data(), Time::ZERO, false);
        assert!(o.deliver.is_empty());
        let probe = o.probe.expect("a probe goes to the new source");
        // More packets are held, not probed again within a second.
        let o = t.on_packet(1, stranger, data(), Time::from_nanos(10_000_000), false);
        assert!(o.deliver.is_empty() && o.probe.is_none());
        // A wrong nonce, or the right one from another address, releases nothing.
        assert!(t
            .on_packet(1, stranger, echo(&probe, 1), Time::ZERO, false)
            .deliver
            .is_empty());
        let other = sa("10.9.9.10:666");
        assert!(t
            .on_packet(1, other, echo(&probe, 0), Time::ZERO, false)
            .deliver
            .is_empty());
        assert!(!t.is_confirmed(stranger));
        // The echo of our probe from the source itself confirms it and releases both
        // held packets, in order, on the socket they came to.
        let o = t.on_packet(1, stranger, echo(&probe, 0), Time::ZERO, false);
        assert_eq!(o.deliver.len(), 2);
        assert!(o.deliver.iter().all(|(l, _)| *l == 1));
        assert!(t.is_confirmed(stranger));
    }

    #[test]
    fn an_unanswering_source_is_probed_five_times_and_holds_at_most_64_packets() {
        let mut t = Trust::new([], false);
        let s = sa("10.0.0.1:1");
        let mut probes = 0;
        for i in 0..200u64 {
            let o = t.on_packet(0, s, data(), Time::from_nanos(i * 100_000_000), false);
            probes += o.probe.is_some() as u32;
        }
        assert_eq!(probes, 5);
        assert_eq!(t.dropped, 200 - 64);
    }

    fn big(bytes: usize) -> Packet {
        Packet {
            vtag: 7,
            chunks: vec![Chunk::Unknown {
                chunk_type: 0x3F,
                flags: 0,
                value: Bytes::from(vec![0u8; bytes]),
            }],
        }
    }

    #[test]
    fn ten_thousand_spoofed_sources_hold_at_most_the_bounds_and_evict_the_oldest() {
        let mut t = Trust::new([], false);
        let mut most = (0, 0);
        for i in 0..10_000u32 {
            let s = SocketAddr::from(([10, (i >> 16) as u8, (i >> 8) as u8, i as u8], 9));
            for k in 0..64u64 {
                let now = Time::from_nanos(u64::from(i) * 1_000 + k);
                t.on_packet(0, s, big(8_000), now, false);
            }
            most = (most.0.max(t.held_bytes()), most.1.max(t.pending_sources()));
        }
        assert!(most.0 <= HOLD_BYTES && most.1 <= MAX_PENDING, "{most:?}");
        // The bytes bound, not the count, binds at 8 KB packets: the newest sources
        // are the ones still held.
        assert!(t.evicted >= 10_000 - MAX_PENDING as u64);
        let newest = SocketAddr::from(([10, 0, 39, 15], 9));
        assert!(t.pending.contains_key(&newest));
        assert!(!t
            .pending
            .contains_key(&SocketAddr::from(([10, 0, 0, 0], 9))));
    }

    #[test]
    fn a_source_that_never_answers_is_forgotten_a_second_after_its_last_probe() {
        let mut t = Trust::new([], false);
        let s = sa("10.0.0.1:1");
        for i in 0..5u64 {
            t.on_packet(0, s, data(), Time::from_nanos(i * SECOND), false);
        }
        assert_eq!(t.pending_sources(), 1);
        // Another source arrives 1 s after the fifth probe: the first is gone.
        t.on_packet(
            0,
            sa("10.0.0.2:1"),
            data(),
            Time::from_nanos(5 * SECOND),
            false,
        );
        assert_eq!(t.pending_sources(), 1);
        assert!(!t.pending.contains_key(&s));
        assert_eq!(t.held_bytes(), data().wire_len() + PER_PACKET);
    }

    #[test]
    fn with_authentication_only_covered_packets_are_held() {
        let mut t = Trust::new([sa("127.0.0.1:5000")], true);
        let spoofed = sa("10.9.9.9:666");
        let o = t.on_packet(0, spoofed, data(), Time::ZERO, false);
        assert!(o.deliver.is_empty() && o.probe.is_none());
        assert_eq!((t.pending_sources(), t.held_bytes(), t.dropped), (0, 0, 1));
        // A confirmed source's packets pass whatever they carry.
        let o = t.on_packet(0, sa("127.0.0.1:5000"), data(), Time::ZERO, false);
        assert_eq!(o.deliver.len(), 1);
        // A signed packet from a new address is held and probed.
        let o = t.on_packet(0, spoofed, data(), Time::ZERO, true);
        assert!(o.probe.is_some() && t.pending_sources() == 1);
    }
}
