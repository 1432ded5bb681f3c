//! Which source addresses may speak for the peer (RFC 9260 §5.4, §8.4). An address is
//! trusted when it is one the peer gave (the handshake's source, the addresses its INIT
//! or INIT ACK listed, the remotes a sender addressed) or once a HEARTBEAT carrying a
//! fresh random nonce, sent to it, has come back from it. Until then its packets are
//! held, not delivered (so a sender's first packets behind a relay or NAT are not lost,
//! only delayed by one round trip), and nothing is answered to it. A party that merely
//! learned the verification tag and sends from an address of its own, without answering
//! the probe, never gets a byte into the association.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;

use bytes::Bytes;
use cmt_core::wire::{chunk_type, param_type};
use cmt_core::{Chunk, Packet, Time};

/// Packets held per unconfirmed source; more are dropped.
const HOLD: usize = 64;
/// Probes per source before it is given up (one per second).
const PROBES: u32 = 5;
/// Marks our probes' heartbeat info, so the core's own heartbeats are never mistaken
/// for them.
const MAGIC: &[u8; 12] = b"cmtlab-addr\0";

struct Pending {
    nonce: u64,
    probed_at: Time,
    probes: u32,
    held: Vec<(usize, Packet)>,
}

/// The sources of one association.
pub struct Trust {
    confirmed: BTreeSet<SocketAddr>,
    pending: BTreeMap<SocketAddr, Pending>,
    /// Packets dropped from unconfirmed sources (beyond the hold, or after the probes).
    pub dropped: u64,
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
    /// Trusts `known` from the start.
    pub fn new(known: impl IntoIterator<Item = SocketAddr>) -> Trust {
        Trust {
            confirmed: known.into_iter().collect(),
            pending: BTreeMap::new(),
            dropped: 0,
        }
    }

    /// Whether `a` may speak for the peer.
    pub fn is_confirmed(&self, a: SocketAddr) -> bool {
        self.confirmed.contains(&a)
    }

    /// A packet under the association's tag arrived from `from` on socket `local`.
    pub fn on_packet(&mut self, local: usize, from: SocketAddr, p: Packet, now: Time) -> Outcome {
        if self.confirmed.contains(&from) {
            return Outcome {
                deliver: vec![(local, p)],
                probe: None,
            };
        }
        if let Some(n) = echoed_nonce(&p) {
            if self.pending.get(&from).is_some_and(|pend| pend.nonce == n) {
                let pend = self.pending.remove(&from).expect("present");
                self.confirmed.insert(from);
                return Outcome {
                    deliver: pend.held,
                    probe: None,
                };
            }
            // An echo of a probe we did not send to this address: forged or misrouted.
            self.dropped += 1;
            return Outcome::default();
        }
        let pend = self.pending.entry(from).or_insert_with(|| Pending {
            nonce: rand::random(),
            probed_at: Time::ZERO,
            probes: 0,
            held: Vec::new(),
        });
        if pend.held.len() < HOLD {
            pend.held.push((local, p));
        } else {
            self.dropped += 1;
        }
        let due = pend.probes == 0
            || now.as_nanos().saturating_sub(pend.probed_at.as_nanos()) >= 1_000_000_000;
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
        let mut t = Trust::new([sa("127.0.0.1:5000")]);
        assert_eq!(
            t.on_packet(0, sa("127.0.0.1:5000"), data(), Time::ZERO)
                .deliver
                .len(),
            1
        );
        let stranger = sa("10.9.9.9:666");
        let o = t.on_packet(1, stranger, data(), Time::ZERO);
        assert!(o.deliver.is_empty());
        let probe = o.probe.expect("a probe goes to the new source");
        // More packets are held, not probed again within a second.
        let o = t.on_packet(1, stranger, data(), Time::from_nanos(10_000_000));
        assert!(o.deliver.is_empty() && o.probe.is_none());
        // A wrong nonce, or the right one from another address, releases nothing.
        assert!(t
            .on_packet(1, stranger, echo(&probe, 1), Time::ZERO)
            .deliver
            .is_empty());
        let other = sa("10.9.9.10:666");
        assert!(t
            .on_packet(1, other, echo(&probe, 0), Time::ZERO)
            .deliver
            .is_empty());
        assert!(!t.is_confirmed(stranger));
        // The echo of our probe from the source itself confirms it and releases both
        // held packets, in order, on the socket they came to.
        let o = t.on_packet(1, stranger, echo(&probe, 0), Time::ZERO);
        assert_eq!(o.deliver.len(), 2);
        assert!(o.deliver.iter().all(|(l, _)| *l == 1));
        assert!(t.is_confirmed(stranger));
    }

    #[test]
    fn an_unanswering_source_is_probed_five_times_and_holds_at_most_64_packets() {
        let mut t = Trust::new([]);
        let s = sa("10.0.0.1:1");
        let mut probes = 0;
        for i in 0..200u64 {
            let o = t.on_packet(0, s, data(), Time::from_nanos(i * 100_000_000));
            probes += o.probe.is_some() as u32;
        }
        assert_eq!(probes, 5);
        assert_eq!(t.dropped, 200 - 64);
    }
}
