//! ARRIVALS: when and where the receiver got each DATA packet, returned to a sender
//! that asked (it announces the chunk type in its INIT; a receiver always does), so
//! that the sender alone can calibrate a model of the paths (`send --measure
//! --calibrate`) — what the receive timestamps of QUIC's ACK frames do
//! (draft-smith-quic-receive-ts), for SCTP.
//!
//! The receiver ([`Recorder`]) stamps each DATA packet as it reads it, with its own
//! clock, and attaches the records to its next SACK — each record to two SACKs, so
//! that one lost SACK loses none — and the latest to its SHUTDOWN ACK. The sender
//! ([`Collector`]) keeps them by their sequence number. Records a lost pair of SACKs
//! took with them are simply missing: a calibration leaves their packets unjudged.
//!
//! The chunk's value: the first record's sequence number (32 bits), the number of
//! address pairs (8 bits) and the pairs (the receiver's address the packet arrived at,
//! then the source it came from; each a family byte, 4 or 6, the address and the
//! port), then 12-byte records: the packet's first TSN (32 bits), its arrival in
//! microseconds since the receiver's association began (32 bits), its address pair
//! (8 bits), its DATA chunks (8 bits) and their user bytes (16 bits). Sequence numbers
//! and times are cut to 32 bits on the wire and restored by the sender.

use std::collections::{BTreeMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use cmt_core::tsn::unwrap_tsn;
use cmt_core::wire::chunk_type;
use cmt_core::{Association, Chunk, Observer, Packet};

/// Records one chunk carries at most: with its address pairs it stays under 1 KB, so a
/// SACK with room for it leaves it enough within a 1500-byte MTU.
const MAX_RECORDS: usize = 64;
/// Address pairs one chunk names at most (its records of other pairs wait).
const MAX_PAIRS: usize = 8;
/// SACKs each record goes with.
const COPIES: u8 = 2;
/// Records the receiver holds before it drops the oldest (a peer that stopped taking
/// SACKs cannot make it hold more).
const MAX_HELD: usize = 16 * MAX_RECORDS;
/// A record's bytes on the wire.
const RECORD_LEN: usize = 12;

/// One DATA packet's arrival at the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrivalRecord {
    /// Its place among the DATA packets the receiver recorded (from 0).
    pub seq: u64,
    /// The TSN of its first DATA chunk: as the wire has it (32 bits) at the receiver,
    /// unwrapped as the sender's core and trace number TSNs (64 bits) at the sender.
    pub tsn: u64,
    /// Microseconds since the receiver's association began, on the receiver's clock.
    pub at_us: u64,
    /// The receiver's address it arrived at.
    pub to: SocketAddr,
    /// The source address it came from, as the receiver saw it.
    pub from: SocketAddr,
    /// Its DATA chunks.
    pub chunks: u8,
    /// Their user bytes.
    pub bytes: u16,
}

/// The receiver's side: records each DATA packet and attaches them to SACKs.
pub(super) struct Recorder {
    /// Our local socket addresses, by socket index.
    locals: Vec<SocketAddr>,
    next_seq: u64,
    /// Records not yet sent [`COPIES`] times, oldest first, with the times sent.
    held: VecDeque<(ArrivalRecord, u8)>,
    /// Records in the chunk last attached to a SACK (the oldest held).
    attached: usize,
    /// A record arrived since the last chunk was made.
    fresh: bool,
}

impl Recorder {
    /// A recorder for a receiver whose socket `i` is bound to `locals[i]`.
    pub(super) fn new(locals: Vec<SocketAddr>) -> Self {
        Recorder {
            locals,
            next_seq: 0,
            held: VecDeque::new(),
            attached: 0,
            fresh: false,
        }
    }

    /// Records packet `p`, read `at_us` after the association began on local socket
    /// `local` from `from`, if it carries DATA.
    pub(super) fn record(&mut self, at_us: u64, (local, from): (usize, SocketAddr), p: &Packet) {
        let mut data = p.chunks.iter().filter_map(|c| match c {
            Chunk::Data(d) => Some(d),
            _ => None,
        });
        let Some(first) = data.next() else { return };
        let (chunks, bytes) = data.fold((1u32, first.payload.len()), |(n, b), d| {
            (n + 1, b + d.payload.len())
        });
        let to = self.locals.get(local).copied().unwrap_or(from);
        self.held.push_back((
            ArrivalRecord {
                seq: self.next_seq,
                tsn: first.tsn as u64,
                at_us,
                to,
                from,
                chunks: chunks.min(255) as u8,
                bytes: bytes.min(u16::MAX as usize) as u16,
            },
            0,
        ));
        self.next_seq += 1;
        self.fresh = true;
        if self.held.len() > MAX_HELD {
            self.held.pop_front();
            self.attached = self.attached.saturating_sub(1);
        }
    }

    /// Before the core is polled: counts the records of a chunk a SACK took, and
    /// attaches the oldest held to the next SACK (and to the SHUTDOWN ACK).
    pub(super) fn attach<O: Observer>(&mut self, assoc: &mut Association<O>) {
        if self.attached > 0 && !assoc.sack_attachment_pending() {
            for (_, sent) in self.held.iter_mut().take(self.attached) {
                *sent += 1;
            }
            while self.held.front().is_some_and(|(_, sent)| *sent >= COPIES) {
                self.held.pop_front();
            }
            self.attached = 0;
            self.fresh = true;
        }
        if !self.fresh || self.held.is_empty() {
            return;
        }
        let recs: Vec<ArrivalRecord> = (self.held.iter().take(MAX_RECORDS))
            .map(|(r, _)| *r)
            .collect();
        let (chunk, n) = encode(&recs);
        self.attached = n;
        self.fresh = false;
        assoc.bundle_with(chunk_type::SHUTDOWN_ACK, chunk.clone());
        assoc.attach_to_next_sack(chunk);
    }
}

fn put_addr(v: &mut Vec<u8>, a: SocketAddr) {
    match a.ip() {
        IpAddr::V4(ip) => {
            v.push(4);
            v.extend(ip.octets());
        }
        IpAddr::V6(ip) => {
            v.push(6);
            v.extend(ip.octets());
        }
    }
    v.extend(a.port().to_be_bytes());
}

/// The ARRIVALS chunk of the first records of `recs` (consecutive sequence numbers)
/// that fit one, and how many it holds.
pub(super) fn encode(recs: &[ArrivalRecord]) -> (Chunk, usize) {
    let mut pairs: Vec<(SocketAddr, SocketAddr)> = Vec::new();
    let mut body = Vec::with_capacity(MAX_RECORDS * RECORD_LEN);
    let mut n = 0;
    for r in recs.iter().take(MAX_RECORDS) {
        let pair = match pairs.iter().position(|p| *p == (r.to, r.from)) {
            Some(i) => i,
            None if pairs.len() < MAX_PAIRS => {
                pairs.push((r.to, r.from));
                pairs.len() - 1
            }
            None => break,
        };
        body.extend((r.tsn as u32).to_be_bytes());
        body.extend((r.at_us as u32).to_be_bytes());
        body.extend([pair as u8, r.chunks]);
        body.extend(r.bytes.to_be_bytes());
        n += 1;
    }
    let first = recs.first().map_or(0, |r| r.seq as u32);
    let mut value = first.to_be_bytes().to_vec();
    value.push(pairs.len() as u8);
    for (to, from) in &pairs {
        put_addr(&mut value, *to);
        put_addr(&mut value, *from);
    }
    value.extend(body);
    let chunk = Chunk::Unknown {
        chunk_type: chunk_type::ARRIVALS,
        flags: 0,
        value: value.into(),
    };
    (chunk, n)
}

/// Reads an address written by [`put_addr`] at the front of `b`.
fn take_addr(b: &mut &[u8]) -> Option<SocketAddr> {
    let (&fam, rest) = b.split_first()?;
    let len = match fam {
        4 => 4,
        6 => 16,
        _ => return None,
    };
    let (ip, rest) = rest.split_at_checked(len)?;
    let (port, rest) = rest.split_at_checked(2)?;
    let ip = match fam {
        4 => IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(ip).ok()?)),
        _ => IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(ip).ok()?)),
    };
    *b = rest;
    Some(SocketAddr::new(ip, u16::from_be_bytes([port[0], port[1]])))
}

/// A record as the wire has it: sequence number and time cut to 32 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct WireRecord {
    seq: u32,
    at_us: u32,
    rec: ArrivalRecord,
}

/// The records of an ARRIVALS chunk, or `None` when `c` is not one or is malformed
/// (a forged or cut chunk is dropped whole).
pub(super) fn parse(c: &Chunk) -> Option<Vec<WireRecord>> {
    let Chunk::Unknown {
        chunk_type: chunk_type::ARRIVALS,
        value,
        ..
    } = c
    else {
        return None;
    };
    let mut b: &[u8] = value;
    let (first, rest) = b.split_at_checked(4)?;
    let first = u32::from_be_bytes(first.try_into().ok()?);
    let (&npairs, rest) = rest.split_first()?;
    b = rest;
    let mut pairs = Vec::with_capacity(npairs as usize);
    for _ in 0..npairs {
        pairs.push((take_addr(&mut b)?, take_addr(&mut b)?));
    }
    if !b.len().is_multiple_of(RECORD_LEN) {
        return None;
    }
    b.chunks_exact(RECORD_LEN)
        .enumerate()
        .map(|(i, r)| {
            let (to, from) = *pairs.get(r[8] as usize)?;
            let at_us = u32::from_be_bytes([r[4], r[5], r[6], r[7]]);
            Some(WireRecord {
                seq: first.wrapping_add(i as u32),
                at_us,
                rec: ArrivalRecord {
                    seq: 0,
                    tsn: u32::from_be_bytes([r[0], r[1], r[2], r[3]]) as u64,
                    at_us: 0,
                    to,
                    from,
                    chunks: r[9],
                    bytes: u16::from_be_bytes([r[10], r[11]]),
                },
            })
        })
        .collect()
}

/// The sender's side: the records the receiver returned, by sequence number.
#[derive(Default)]
pub(super) struct Collector {
    recs: BTreeMap<u64, ArrivalRecord>,
    /// The latest sequence number, time and TSN seen (what 32-bit values are unwrapped
    /// by, each to the nearest 64-bit value); no TSN before the first record.
    top: (u64, u64, Option<u64>),
}

impl Collector {
    /// Takes the records of `c` if it is an ARRIVALS chunk.
    pub(super) fn take(&mut self, c: &Chunk) {
        for w in parse(c).unwrap_or_default() {
            let seq = unwrap_tsn(self.top.0, w.seq);
            let at_us = unwrap_tsn(self.top.1, w.at_us);
            // The core numbers the TSNs of an association from 2^32 + its initial TSN.
            let wire = w.rec.tsn as u32;
            let tsn = unwrap_tsn(self.top.2.unwrap_or((1 << 32) + wire as u64), wire);
            self.top = (
                self.top.0.max(seq),
                self.top.1.max(at_us),
                Some(self.top.2.map_or(tsn, |t| t.max(tsn))),
            );
            self.recs.insert(
                seq,
                ArrivalRecord {
                    seq,
                    tsn,
                    at_us,
                    ..w.rec
                },
            );
        }
    }

    /// The records, by sequence number.
    pub(super) fn finish(self) -> Vec<ArrivalRecord> {
        self.recs.into_values().collect()
    }
}

/// The receiver's packet trace (the CSV form of `recv --trace`: one `arrive` row per
/// DATA chunk) rebuilt from the `records` it returned: its paths numbered in the order
/// they first appear and named as the receiver names them, `local>remote` (the
/// address a packet arrived at, the source it came from). A calibration matches them
/// to the sender's paths by name, or, when a NAT or relay changed the addresses on the
/// way, by the TSNs each carried.
pub fn receiver_trace_csv(records: &[ArrivalRecord]) -> String {
    let mut out = cmt_sim::packet_trace::COLUMNS.join(",") + "\n";
    let mut pairs: Vec<(SocketAddr, SocketAddr)> = Vec::new();
    for r in records {
        let i = match pairs.iter().position(|p| *p == (r.to, r.from)) {
            Some(i) => i,
            None => {
                pairs.push((r.to, r.from));
                pairs.len() - 1
            }
        };
        let n = r.chunks.max(1) as u64;
        let (each, extra) = (r.bytes as u64 / n, r.bytes as u64 % n);
        let t = format!("{}.{:06}", r.at_us / 1_000_000, r.at_us % 1_000_000);
        for k in 0..n {
            let bytes = each + if k == 0 { extra } else { 0 };
            let (tsn, to, from) = (r.tsn + k, r.to, r.from);
            out += &format!("{t},receiver,{i},{to}>{from},data,arrive,,{tsn},{bytes},,\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(seq: u64, port: u16) -> ArrivalRecord {
        ArrivalRecord {
            seq,
            tsn: (1 << 32) + 1000 + seq % 1000,
            at_us: 5_000_000_000 + 100 * (seq % 1000),
            to: SocketAddr::from(([10, 1, 0, 2], 9899)),
            from: SocketAddr::new("fd00::1".parse().unwrap(), port),
            chunks: 1,
            bytes: 1200,
        }
    }

    #[test]
    fn records_cross_the_wire_and_their_32_bit_fields_are_restored() {
        let recs: Vec<_> = (4_294_967_290..4_294_967_300).map(|s| rec(s, 5)).collect();
        let (chunk, n) = encode(&recs);
        assert_eq!(n, 10);
        let mut c = Collector {
            top: (4_294_967_000, 5_000_000_000, None),
            ..Collector::default()
        };
        c.take(&chunk);
        assert_eq!(c.finish(), recs);
    }

    #[test]
    fn a_chunk_holds_at_most_its_records_and_address_pairs() {
        let many: Vec<_> = (0..100).map(|s| rec(s, 5)).collect();
        let (chunk, n) = encode(&many);
        assert_eq!(n, MAX_RECORDS);
        assert!(chunk.wire_len() < 1000, "{}", chunk.wire_len());
        // Each record from another port: a new pair each, until the table is full.
        let spread: Vec<_> = (0..20).map(|s| rec(s, s as u16)).collect();
        assert_eq!(encode(&spread).1, MAX_PAIRS);
    }

    #[test]
    fn a_cut_or_forged_chunk_yields_nothing() {
        let (chunk, _) = encode(&[rec(0, 5), rec(1, 5)]);
        let Chunk::Unknown { value, .. } = &chunk else {
            unreachable!()
        };
        // Sequence number, pair count, one pair (IPv4 then IPv6, with ports).
        let head = 4 + 1 + (1 + 4 + 2) + (1 + 16 + 2);
        for cut in 0..value.len() {
            let c = Chunk::Unknown {
                chunk_type: chunk_type::ARRIVALS,
                flags: 0,
                value: value.slice(..cut),
            };
            // Only a cut between whole records still reads, as fewer records.
            let whole = cut >= head && (cut - head) % RECORD_LEN == 0;
            let want = whole.then(|| (cut - head) / RECORD_LEN);
            assert_eq!(parse(&c).map(|v| v.len()), want, "cut at {cut}");
        }
        // A record naming a pair the table does not have.
        let mut bad = value.to_vec();
        let last = bad.len() - 4;
        bad[last] = 7;
        let c = Chunk::Unknown {
            chunk_type: chunk_type::ARRIVALS,
            flags: 0,
            value: bad.into(),
        };
        assert_eq!(parse(&c), None);
    }

    #[test]
    fn returned_records_become_the_receivers_trace() {
        let b = SocketAddr::from(([10, 1, 0, 2], 9899));
        let d = SocketAddr::from(([10, 2, 0, 2], 9899));
        let nat = SocketAddr::from(([192, 0, 2, 9], 7));
        let mut r = rec(0, 5);
        (r.to, r.from, r.chunks, r.at_us, r.bytes) = (d, nat, 2, 1_500_002, 1001);
        let mut other = rec(1, 5);
        other.to = b;
        let csv = receiver_trace_csv(&[r, other]);
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(rows[0], cmt_sim::packet_trace::COLUMNS.join(","));
        // Two chunks: two rows, the bytes split, the TSNs consecutive.
        assert_eq!(
            rows[1..],
            [
                "1.500002,receiver,0,10.2.0.2:9899>192.0.2.9:7,data,arrive,,4294968296,501,,",
                "1.500002,receiver,0,10.2.0.2:9899>192.0.2.9:7,data,arrive,,4294968297,500,,",
                "5000.000100,receiver,1,10.1.0.2:9899>[fd00::1]:5,data,arrive,,4294968297,1200,,",
            ]
        );
    }
}
