//! The wire codec: every packet the core can build round-trips exactly, and no input —
//! random bytes, truncations, bit flips behind a valid checksum — makes the parser panic.

use bytes::Bytes;
use cmt_core::addr_conf::{AddrOp, AsconfAckChunk, AsconfChunk, AsconfParam, AsconfResponse};
use cmt_core::packet::{DataFlags, GapBlock, HeartbeatInfo, InitChunk, InitParam, SackChunk};
use cmt_core::wire::{decode, encode};
use cmt_core::{Chunk, Packet, Payload};
use proptest::prelude::*;

fn bytes(max: usize) -> impl Strategy<Value = Bytes> {
    prop::collection::vec(any::<u8>(), 0..max).prop_map(Bytes::from)
}

fn init() -> impl Strategy<Value = InitChunk> {
    let param = prop_oneof![
        any::<[u8; 4]>().prop_map(|o| InitParam::Ipv4(o.into())),
        any::<[u8; 16]>().prop_map(|o| InitParam::Ipv6(o.into())),
        bytes(64).prop_map(InitParam::StateCookie),
        prop::collection::vec(any::<u8>(), 0..6).prop_map(InitParam::SupportedExtensions),
        (0x9000u16..0xffff, bytes(12))
            .prop_map(|(ptype, value)| InitParam::Unknown { ptype, value }),
    ];
    (
        any::<u32>(),
        any::<u32>(),
        any::<u16>(),
        any::<u16>(),
        any::<u32>(),
        prop::collection::vec(param, 0..5),
    )
        .prop_map(
            |(initiate_tag, a_rwnd, outbound_streams, inbound_streams, initial_tsn, params)| {
                InitChunk {
                    initiate_tag,
                    a_rwnd,
                    outbound_streams,
                    inbound_streams,
                    initial_tsn,
                    params,
                }
            },
        )
}

fn address() -> impl Strategy<Value = std::net::IpAddr> {
    prop_oneof![
        any::<[u8; 4]>().prop_map(std::net::IpAddr::from),
        any::<[u8; 16]>().prop_map(std::net::IpAddr::from),
    ]
}

/// ASCONF and ASCONF-ACK (RFC 5061), with requests of every kind, unknown ones too.
fn asconf() -> impl Strategy<Value = Chunk> {
    let op = prop_oneof![
        address().prop_map(AddrOp::Add),
        address().prop_map(AddrOp::Delete),
        address().prop_map(AddrOp::SetPrimary),
        (0xC006u16..0xD000, prop::collection::vec(any::<u8>(), 0..12))
            .prop_map(|(ptype, value)| AddrOp::Other { ptype, value }),
    ];
    let param =
        (any::<u32>(), op.clone()).prop_map(|(correlation, op)| AsconfParam { correlation, op });
    // A refusal may copy the refused request; a success copies nothing.
    let refusal = prop::option::of((1u16..0xFFFF, prop::option::of(op)));
    let response = (any::<u32>(), refusal).prop_map(|(correlation, r)| AsconfResponse {
        correlation,
        error: r.as_ref().map(|x| x.0),
        refused: r.and_then(|x| x.1),
    });
    prop_oneof![
        (any::<u32>(), address(), prop::collection::vec(param, 0..4)).prop_map(
            |(serial, address, params)| Chunk::Asconf(AsconfChunk {
                serial,
                address,
                params
            })
        ),
        (any::<u32>(), prop::collection::vec(response, 0..4)).prop_map(|(serial, responses)| {
            Chunk::AsconfAck(AsconfAckChunk { serial, responses })
        }),
    ]
}

fn chunk() -> impl Strategy<Value = Chunk> {
    let hb = (any::<u16>(), any::<u64>(), any::<u64>()).prop_map(|(path, sent_ns, nonce)| {
        HeartbeatInfo {
            path,
            sent_ns,
            nonce,
        }
    });
    prop_oneof![
        (
            any::<u32>(),
            any::<u16>(),
            any::<u16>(),
            any::<u32>(),
            0u8..16,
            prop::collection::vec(any::<u8>(), 1..200)
        )
            .prop_map(|(tsn, sid, ssn, ppid, f, p)| Chunk::Data(
                cmt_core::packet::DataChunk {
                    tsn,
                    sid,
                    ssn,
                    ppid,
                    flags: DataFlags::from_bits(f),
                    payload: Payload::Bytes(Bytes::from(p)),
                }
            )),
        init().prop_map(Chunk::Init),
        init().prop_map(Chunk::InitAck),
        bytes(100).prop_map(|cookie| Chunk::CookieEcho { cookie }),
        Just(Chunk::CookieAck),
        (
            any::<u32>(),
            any::<u32>(),
            prop::collection::vec((any::<u16>(), any::<u16>()), 0..20),
            prop::collection::vec(any::<u32>(), 0..8),
            any::<u8>()
        )
            .prop_map(
                |(cum_tsn, a_rwnd, g, dup_tsns, flags)| Chunk::Sack(SackChunk {
                    cum_tsn,
                    a_rwnd,
                    gap_blocks: g
                        .into_iter()
                        .map(|(start, end)| GapBlock { start, end })
                        .collect(),
                    dup_tsns,
                    flags,
                })
            ),
        hb.clone().prop_map(Chunk::Heartbeat),
        hb.prop_map(Chunk::HeartbeatAck),
        any::<u32>().prop_map(|cum_tsn| Chunk::Shutdown { cum_tsn }),
        Just(Chunk::ShutdownAck),
        any::<u32>().prop_map(|lowest_tsn| Chunk::Ecne { lowest_tsn }),
        any::<u32>().prop_map(|lowest_tsn| Chunk::Cwr { lowest_tsn }),
        any::<bool>().prop_map(|reflected| Chunk::ShutdownComplete { reflected }),
        (prop::option::of(any::<u16>()), any::<bool>())
            .prop_map(|(cause, reflected)| Chunk::Abort { cause, reflected }),
        (any::<u32>(), any::<u8>(), any::<u16>(), any::<u32>()).prop_map(
            |(round, path, hold, seq)| {
                Chunk::RoundInfo {
                    round,
                    path,
                    hold,
                    seq,
                }
            }
        ),
        (
            any::<u32>(),
            prop::collection::vec((any::<u8>(), any::<u32>()), 0..8)
        )
            .prop_map(|(seq, rates)| Chunk::RateAdvert { seq, rates }),
        asconf(),
        // Unknown chunk types the core does not interpret (not the ones it does).
        (0x40u8..0xB0, any::<u8>(), bytes(40))
            .prop_filter("ASCONF-ACK is interpreted", |(t, _, _)| *t != 0x80)
            .prop_map(|(chunk_type, flags, value)| {
                Chunk::Unknown {
                    chunk_type,
                    flags,
                    value,
                }
            }),
    ]
}

fn packet() -> impl Strategy<Value = Packet> {
    (any::<u32>(), prop::collection::vec(chunk(), 0..6))
        .prop_map(|(vtag, chunks)| Packet { vtag, chunks })
}

/// Rewrites the checksum so that a mutated packet reaches the chunk parser.
fn fix_crc(buf: &mut [u8]) {
    if buf.len() >= 12 {
        buf[8..12].fill(0);
        let crc = crc32c::crc32c(buf);
        buf[8..12].copy_from_slice(&crc.to_le_bytes());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_packet_round_trips_exactly(p in packet(), sp in any::<u16>(), dp in any::<u16>()) {
        let mut out = Vec::new();
        encode(&p, sp, dp, &mut out);
        prop_assert_eq!(out.len(), p.wire_len());
        let d = decode(&out).unwrap();
        prop_assert_eq!((d.src_port, d.dst_port), (sp, dp));
        prop_assert_eq!(d.packet, p);
    }

    #[test]
    fn random_bytes_never_panic(buf in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = decode(&buf);
        let mut fixed = buf.clone();
        fix_crc(&mut fixed);
        let _ = decode(&fixed);
    }

    #[test]
    fn truncated_and_mutated_packets_are_errors_or_parse_never_panic(p in packet(), cut in any::<prop::sample::Index>(), flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let mut out = Vec::new();
        encode(&p, 1, 2, &mut out);
        // Any strict prefix fails the checksum or the header check.
        let n = cut.index(out.len());
        prop_assert!(decode(&out[..n]).is_err());
        // Bit flips behind a repaired checksum: an error or some packet, never a panic.
        let mut m = out.clone();
        for (i, x) in flips {
            let i = i.index(m.len());
            m[i] ^= x;
        }
        fix_crc(&mut m);
        let _ = decode(&m);
    }
}
