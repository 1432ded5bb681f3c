//! Round trips, hand-built packets and malformed inputs.

use ::bytes::Bytes;

use super::*;
use crate::packet::{Chunk, DataChunk, DataFlags, InitChunk, InitParam, Payload};

fn data(tsn: u32, bytes: &[u8]) -> Chunk {
    Chunk::Data(DataChunk {
        tsn,
        sid: 0,
        ssn: 7,
        ppid: 51,
        flags: DataFlags::WHOLE,
        payload: Payload::Bytes(Bytes::copy_from_slice(bytes)),
    })
}

#[test]
fn a_data_packet_by_hand() {
    let p = Packet {
        vtag: 0x0102_0304,
        chunks: vec![data(9, b"abc")],
    };
    let mut out = Vec::new();
    encode(&p, 9899, 9900, &mut out);
    assert_eq!(out.len(), p.wire_len());
    assert_eq!(&out[..8], &[0x26, 0xAB, 0x26, 0xAC, 1, 2, 3, 4]);
    // DATA: type 0, flags B|E = 3, length 16 + 3 = 19, padded to 20.
    assert_eq!(&out[12..16], &[0, 3, 0, 19]);
    assert_eq!(&out[28..31], b"abc");
    assert_eq!(out[31], 0);
    assert_eq!(decode(&out).unwrap().packet, p);
}

/// RFC 9260 §3.2: the chunk length counts the padding of every parameter but the
/// last (Wireshark flags the other way as malformed; found against usrsctp).
#[test]
fn an_init_chunk_length_counts_inner_padding_but_not_the_last_parameters() {
    let init = InitChunk {
        initiate_tag: 7,
        a_rwnd: 65536,
        outbound_streams: 1,
        inbound_streams: 1,
        initial_tsn: 1,
        params: vec![
            InitParam::SupportedExtensions(vec![0xB0, 0xB1]),
            InitParam::SupportedExtensions(vec![0xC0]),
        ],
    };
    let p = Packet {
        vtag: 0,
        chunks: vec![Chunk::Init(init)],
    };
    let mut out = Vec::new();
    encode(&p, 1, 2, &mut out);
    // 4 header + 16 fixed + (6 + 2 padding) + 5 = 33; padded to 36 on the wire.
    assert_eq!(&out[12..16], &[1, 0, 0, 33]);
    assert_eq!(out.len(), 12 + 36);
    assert_eq!(&out[32..40], &[0x80, 0x08, 0, 6, 0xB0, 0xB1, 0, 0]);
    assert_eq!(&out[40..45], &[0x80, 0x08, 0, 5, 0xC0]);
    assert_eq!(decode(&out).unwrap().packet, p);
}

#[test]
fn the_checksum_is_the_crc32c_of_rfc_9260_appendix_a() {
    // CRC32c check value of "123456789" is 0xE3069283.
    assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
    let p = Packet {
        vtag: 1,
        chunks: vec![Chunk::CookieAck],
    };
    let mut out = Vec::new();
    encode(&p, 1, 2, &mut out);
    let mut zeroed = out.clone();
    zeroed[8..12].fill(0);
    assert_eq!(&out[8..12], &crc32c::crc32c(&zeroed).to_le_bytes());
    out[13] ^= 1;
    assert_eq!(decode(&out).unwrap_err().what, "bad CRC32c checksum");
}

#[test]
fn errors_name_the_offset() {
    let p = Packet {
        vtag: 1,
        chunks: vec![data(1, b"xyz!"), Chunk::ShutdownAck],
    };
    let mut out = Vec::new();
    encode(&p, 1, 2, &mut out);
    // Claim a DATA length of 2: below the 4-byte header.
    let mut bad = out.clone();
    bad[14..16].copy_from_slice(&2u16.to_be_bytes());
    let crc = {
        let mut z = bad.clone();
        z[8..12].fill(0);
        crc32c::crc32c(&z)
    };
    bad[8..12].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(
        decode(&bad).unwrap_err(),
        WireError {
            offset: 14,
            what: "chunk length below 4"
        }
    );
    assert_eq!(decode(&out[..7]).unwrap_err().offset, 4);
}

/// ECNE and CWR (RFC 9260 Appendix A) are 8 bytes: type 12 or 13, flags 0, length 8,
/// one TSN. One that is longer or shorter is refused, not read as a TSN.
#[test]
fn ecne_and_cwr_are_one_tsn_and_a_wrong_length_is_refused() {
    for (chunk, t) in [
        (Chunk::Ecne { lowest_tsn: 7 }, 12u8),
        (Chunk::Cwr { lowest_tsn: 7 }, 13u8),
    ] {
        let p = Packet {
            vtag: 1,
            chunks: vec![chunk.clone()],
        };
        let mut raw = Vec::new();
        encode(&p, 1, 2, &mut raw);
        assert_eq!(&raw[12..20], &[t, 0, 0, 8, 0, 0, 0, 7]);
        assert_eq!(decode(&raw).unwrap().packet.chunks, vec![chunk]);
        // Twelve bytes: a TSN and four more.
        let mut long = raw[..20].to_vec();
        long[15] = 12;
        long.extend_from_slice(&[0; 4]);
        let c = checksum(&long);
        long[8..12].copy_from_slice(&c.to_le_bytes());
        assert!(decode(&long).is_err(), "type {t} of 12 bytes");
    }
}
