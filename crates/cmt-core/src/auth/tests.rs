//! The RFC 4895 rules, each on hand-built packets: key derivation that both ends agree
//! on, signing and checking, and every way a chunk is discarded.

use bytes::Bytes;

use super::*;
use crate::packet::{Chunk, DataChunk, DataFlags, HeartbeatInfo, Payload, SackChunk};
use crate::wire::{decode, encode};

fn offer(random: u8, chunks: &[u8], hmacs: &[u16]) -> Offer {
    Offer {
        random: vec![random; RANDOM_LEN],
        chunks: chunks.to_vec(),
        hmacs: hmacs.to_vec(),
    }
}

/// Both ends of one association: (ours, theirs) as each derives it.
fn pair(key_a: &[u8], key_b: &[u8], a: &Offer, b: &Offer) -> (Session, Session) {
    (
        Session::new(key_a, a, b).expect("common HMAC"),
        Session::new(key_b, b, a).expect("common HMAC"),
    )
}

fn data(tsn: u32, bytes: &'static [u8]) -> Chunk {
    Chunk::Data(DataChunk {
        tsn,
        sid: 0,
        ssn: 0,
        ppid: 0,
        flags: DataFlags::from_bits(3),
        payload: Payload::Bytes(Bytes::from_static(bytes)),
    })
}

fn sack() -> Chunk {
    Chunk::Sack(SackChunk {
        cum_tsn: 7,
        a_rwnd: 65536,
        gap_blocks: vec![],
        dup_tsns: vec![],
        flags: 0,
    })
}

fn heartbeat() -> Chunk {
    Chunk::Heartbeat(HeartbeatInfo {
        path: 1,
        sent_ns: 5,
        nonce: 9,
    })
}

fn wire(chunks: Vec<Chunk>) -> Vec<u8> {
    let mut out = Vec::new();
    encode(&Packet { vtag: 42, chunks }, 5000, 5001, &mut out);
    out
}

/// Decodes `raw` (which must carry a valid CRC32c) and runs the receiver's check.
fn receive(s: &Session, raw: &[u8]) -> (Vec<Chunk>, Option<(usize, Rejection)>) {
    let mut p = decode(raw).expect("valid packet").packet;
    let r = s.check(raw, &mut p);
    (p.chunks, r.err())
}

fn types(chunks: &[Chunk]) -> Vec<u8> {
    chunks.iter().map(Chunk::chunk_type).collect()
}

#[test]
fn key_vectors_compare_as_numbers_and_equal_numbers_put_the_shorter_first() {
    use std::cmp::Ordering::*;
    assert_eq!(key_order(&[1, 0], &[0xff]), Greater, "256 > 255");
    assert_eq!(
        key_order(&[0, 5], &[5]),
        Greater,
        "equal value: shorter first"
    );
    assert_eq!(key_order(&[5], &[0, 5]), Less);
    assert_eq!(key_order(&[2, 3], &[2, 4]), Less);
    assert_eq!(key_order(&[7, 7], &[7, 7]), Equal);
}

#[test]
fn the_association_key_is_the_shared_key_then_the_smaller_then_the_larger_vector() {
    let (a, b) = (offer(9, &[0], &[3, 1]), offer(1, &[3], &[1]));
    let s = Session::new(b"k", &a, &b).unwrap();
    let mut want = b"k".to_vec();
    want.extend(b.key_vector()); // RANDOM 0x01… < RANDOM 0x09…
    want.extend(a.key_vector());
    assert_eq!(s.key, want);
    assert_eq!(
        Session::new(b"k", &b, &a).unwrap().key,
        want,
        "both ends agree"
    );
}

#[test]
fn the_key_vector_is_random_chunks_hmac_algo_with_headers_and_no_padding() {
    let o = offer(0xAA, &[0, 3, 0xB2], &[3, 1]);
    let v = o.key_vector();
    assert_eq!(&v[..4], &[0x80, 0x02, 0, 36]);
    assert_eq!(&v[36..43], &[0x80, 0x03, 0, 7, 0, 3, 0xB2]);
    assert_eq!(&v[43..], &[0x80, 0x04, 0, 8, 0, 3, 0, 1]);
    assert_eq!(Offer::from_key_vector(&v), Some(o.clone()));
    assert_eq!(Offer::from_params(&o.params()), Some(o));
}

#[test]
fn an_offer_needs_a_32_byte_random_and_sha1_among_its_algorithms() {
    let good = offer(1, &[], &[3, 1]);
    assert!(Offer::from_params(&good.params()).is_some());
    assert_eq!(Offer::from_params(&offer(1, &[], &[3]).params()), None);
    let mut short = good.clone();
    short.random.truncate(16);
    assert_eq!(Offer::from_params(&short.params()), None);
    assert_eq!(Offer::from_params(&[]), None);
}

#[test]
fn our_offer_never_lists_chunks_that_cannot_be_authenticated() {
    let cfg = AuthConfig {
        key: vec![1],
        chunks: vec![0, 1, 2, 14, 0x0F, 3, 0],
        required: true,
    };
    assert_eq!(Offer::local([0; RANDOM_LEN], &cfg).chunks, vec![0, 3]);
}

#[test]
fn a_signed_packet_passes_the_peers_check_and_loses_only_its_auth_chunk() {
    let (a, b) = (offer(1, &[0, 3], &[3, 1]), offer(2, &[0, 3], &[3, 1]));
    let (sa, sb) = pair(b"secret", b"secret", &a, &b);
    let mut raw = wire(vec![heartbeat(), sack(), data(8, b"hello")]);
    assert!(sa.sign(&mut raw));
    let decoded = decode(&raw).expect("CRC recomputed").packet;
    assert_eq!(
        types(&decoded.chunks),
        vec![4, 0x0F, 3, 0],
        "AUTH before the SACK"
    );
    let (chunks, rejected) = receive(&sb, &raw);
    assert_eq!(rejected, None);
    assert_eq!(types(&chunks), vec![4, 3, 0]);
    // The other direction with the same session pair.
    let mut back = wire(vec![sack()]);
    assert!(sb.sign(&mut back));
    assert_eq!(receive(&sa, &back).1, None);
}

#[test]
fn packets_without_required_chunks_are_not_signed() {
    let (a, b) = (offer(1, &[0, 3], &[3, 1]), offer(2, &[0, 3], &[3, 1]));
    let (sa, _) = pair(b"k", b"k", &a, &b);
    let mut raw = wire(vec![heartbeat()]);
    let before = raw.clone();
    assert!(!sa.sign(&mut raw));
    assert_eq!(raw, before);
}

#[test]
fn one_changed_byte_after_the_auth_chunk_discards_everything_it_covered() {
    let (a, b) = (offer(1, &[0, 3], &[3, 1]), offer(2, &[0, 3], &[3, 1]));
    let (sa, sb) = pair(b"k", b"k", &a, &b);
    let mut raw = wire(vec![heartbeat(), data(8, b"hello")]);
    sa.sign(&mut raw);
    let last = raw.len() - 4; // inside the user data (5 bytes + 3 padding)
    raw[last] ^= 1;
    let crc = crate::wire::checksum(&raw);
    raw[8..12].copy_from_slice(&crc.to_le_bytes());
    let (chunks, rejected) = receive(&sb, &raw);
    assert_eq!(rejected, Some((1, Rejection::BadHmac)));
    assert_eq!(
        types(&chunks),
        vec![4],
        "the HEARTBEAT before the AUTH stays"
    );
}

#[test]
fn a_different_endpoint_key_fails_every_packet() {
    let (a, b) = (offer(1, &[0, 3], &[3, 1]), offer(2, &[0, 3], &[3, 1]));
    let (sa, sb) = pair(b"right", b"wrong", &a, &b);
    let mut raw = wire(vec![data(1, b"x"), data(2, b"y")]);
    sa.sign(&mut raw);
    assert_eq!(receive(&sb, &raw).1, Some((2, Rejection::BadHmac)));
}

#[test]
fn required_chunks_without_an_auth_chunk_are_discarded_and_others_kept() {
    let (a, b) = (offer(1, &[0, 3], &[3, 1]), offer(2, &[0, 3], &[3, 1]));
    let (_, sb) = pair(b"k", b"k", &a, &b);
    let raw = wire(vec![heartbeat(), data(1, b"forged"), sack()]);
    let (chunks, rejected) = receive(&sb, &raw);
    assert_eq!(rejected, Some((2, Rejection::NotAuthenticated)));
    assert_eq!(types(&chunks), vec![4]);
}

#[test]
fn a_required_chunk_placed_before_the_auth_chunk_is_not_covered() {
    // An attacker puts a DATA chunk in front of a genuinely signed packet: the HMAC
    // still holds (it covers only what follows the AUTH chunk), the DATA is dropped.
    let (a, b) = (offer(1, &[0, 3], &[3, 1]), offer(2, &[0, 3], &[3, 1]));
    let (sa, sb) = pair(b"k", b"k", &a, &b);
    let mut raw = wire(vec![sack()]);
    assert!(sa.sign(&mut raw));
    let forged = wire(vec![data(1, b"forged")]);
    raw.splice(
        COMMON_HEADER_LEN..COMMON_HEADER_LEN,
        forged[COMMON_HEADER_LEN..].to_vec(),
    );
    let crc = crate::wire::checksum(&raw);
    raw[8..12].copy_from_slice(&crc.to_le_bytes());
    let (chunks, rejected) = receive(&sb, &raw);
    assert_eq!(rejected, Some((1, Rejection::NotAuthenticated)));
    assert_eq!(types(&chunks), vec![3], "the signed SACK stays");
}

#[test]
fn an_unknown_key_id_or_algorithm_discards_the_covered_chunks() {
    let (a, b) = (offer(1, &[0], &[3, 1]), offer(2, &[0], &[3, 1]));
    let (sa, sb) = pair(b"k", b"k", &a, &b);
    for (at, value) in [(4, 1u16), (6, 2u16)] {
        let mut raw = wire(vec![data(1, b"x")]);
        sa.sign(&mut raw);
        raw[COMMON_HEADER_LEN + at..COMMON_HEADER_LEN + at + 2]
            .copy_from_slice(&value.to_be_bytes());
        let crc = crate::wire::checksum(&raw);
        raw[8..12].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(
            receive(&sb, &raw).1,
            Some((1, Rejection::UnknownKeyOrAlgorithm)),
            "field at {at} set to {value}"
        );
    }
}

#[test]
fn a_peer_that_lists_only_sha1_gets_sha1_and_a_28_byte_auth_chunk() {
    let (a, b) = (offer(1, &[0], &[3, 1]), offer(2, &[0], &[1]));
    let (sa, sb) = pair(b"k", b"k", &a, &b);
    assert_eq!(sa.send_algorithm(), HmacAlgo::Sha1);
    assert_eq!(sa.overhead(), 28);
    assert_eq!(sb.send_algorithm(), HmacAlgo::Sha256);
    let mut raw = wire(vec![data(1, b"x")]);
    let before = raw.len();
    sa.sign(&mut raw);
    assert_eq!(raw.len(), before + 28);
    assert_eq!(receive(&sb, &raw).1, None);
}

#[test]
fn debug_output_never_shows_a_key() {
    let cfg = AuthConfig::with_key(b"top-secret".to_vec());
    assert!(!format!("{cfg:?}").contains("top-secret"));
    let (a, b) = (offer(1, &[0], &[3, 1]), offer(2, &[0], &[3, 1]));
    let s = Session::new(b"top-secret", &a, &b).unwrap();
    assert!(!format!("{s:?}").contains("116, 111, 112"), "{s:?}");
}

#[test]
fn only_a_valid_auth_chunk_that_covers_a_chunk_marks_a_packet_authenticated() {
    let (a, b) = (offer(1, &[0, 3], &[3, 1]), offer(2, &[0, 3], &[3, 1]));
    let (sa, sb) = pair(b"k", b"k", &a, &b);
    let check = |raw: &[u8]| {
        let mut p = decode(raw).unwrap().packet;
        sb.check(raw, &mut p)
    };
    let mut signed = wire(vec![heartbeat(), sack()]);
    sa.sign(&mut signed);
    assert_eq!(check(&signed), Ok(true));
    // Nothing required, nothing signed: kept, but not from a key holder.
    assert_eq!(check(&wire(vec![heartbeat()])), Ok(false));
    // A valid AUTH chunk that covers nothing proves nothing either.
    let mut alone = wire(vec![heartbeat(), sack()]);
    sa.sign(&mut alone);
    let auth_len = sa.overhead();
    let sack_at = alone.len() - sack().wire_len();
    alone.truncate(sack_at);
    assert_eq!(alone.len() - auth_len, wire(vec![heartbeat()]).len());
    let crc = crate::wire::checksum(&alone);
    alone[8..12].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(check(&alone), Ok(false));
}

#[test]
fn a_key_requires_every_chunk_that_changes_state_and_nothing_rfc_4895_forbids() {
    let cfg = AuthConfig::with_key(vec![1]);
    let listed = Offer::local([0; RANDOM_LEN], &cfg).chunks;
    use chunk_type as t;
    for c in [
        t::DATA,
        t::SACK,
        t::HEARTBEAT,
        t::HEARTBEAT_ACK,
        t::ABORT,
        t::SHUTDOWN,
        t::SHUTDOWN_ACK,
        t::ERROR,
        t::COOKIE_ECHO,
        t::COOKIE_ACK,
        t::FILE_DIGEST,
        t::ROUND_INFO,
        t::RATE_ADVERT,
    ] {
        assert!(listed.contains(&c) && cfg.requires(c), "chunk type {c}");
    }
    for c in NEVER_AUTHENTICATED {
        assert!(!listed.contains(&c), "chunk type {c} may not be listed");
    }
}
