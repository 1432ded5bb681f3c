//! pcap framing for captures of SCTP-over-UDP packets (RFC 6951), without IO: the
//! simulator and the runtime write these bytes to files. Classic pcap (microsecond
//! timestamps), link type RAW (101): every record is an IPv4 header, a UDP header and the
//! SCTP packet, so Wireshark and tshark decode it as SCTP over UDP (port 9899 by
//! default).

use std::net::Ipv4Addr;

/// The IANA port for SCTP over UDP (RFC 6951).
pub const SCTP_UDP_PORT: u16 = 9899;

/// The 24-byte file header.
pub fn file_header() -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    // thiszone 0, sigfigs 0
    h[16..20].copy_from_slice(&65_535u32.to_le_bytes());
    h[20..24].copy_from_slice(&101u32.to_le_bytes()); // LINKTYPE_RAW
    h
}

/// One record: `sctp` (an encoded SCTP packet) inside UDP inside IPv4, at `ts_ns`.
pub fn record(
    out: &mut Vec<u8>,
    ts_ns: u64,
    src: (Ipv4Addr, u16),
    dst: (Ipv4Addr, u16),
    sctp: &[u8],
) {
    let udp_len = 8 + sctp.len();
    let ip_len = 20 + udp_len;
    let us = ts_ns / 1_000;
    out.extend_from_slice(&((us / 1_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&((us % 1_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&(ip_len as u32).to_le_bytes());
    out.extend_from_slice(&(ip_len as u32).to_le_bytes());
    let start = out.len();
    out.extend_from_slice(&[0x45, 0]);
    out.extend_from_slice(&(ip_len as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0]); // id, DF, TTL 64, UDP
    out.extend_from_slice(&src.0.octets());
    out.extend_from_slice(&dst.0.octets());
    let sum = ipv4_checksum(&out[start..start + 20]);
    out[start + 10..start + 12].copy_from_slice(&sum.to_be_bytes());
    out.extend_from_slice(&src.1.to_be_bytes());
    out.extend_from_slice(&dst.1.to_be_bytes());
    out.extend_from_slice(&(udp_len as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]); // no UDP checksum (IPv4 allows it; SCTP has CRC32c)
    out.extend_from_slice(sctp);
}

/// The Internet checksum of an IPv4 header (its checksum field zero).
pub fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32)
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// One record of a capture written by [`record`]: time, endpoints and the SCTP packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Timestamp, nanoseconds (microsecond resolution).
    pub ts_ns: u64,
    /// Source address and UDP port.
    pub src: (Ipv4Addr, u16),
    /// Destination address and UDP port.
    pub dst: (Ipv4Addr, u16),
    /// The SCTP packet (the UDP payload).
    pub sctp: Vec<u8>,
}

/// Reads a capture in the framing [`record`] writes (classic little-endian pcap, link
/// type RAW, IPv4 + UDP). The error names the record and what is wrong with it.
pub fn read(bytes: &[u8]) -> Result<Vec<Record>, String> {
    if bytes.len() < 24 || bytes[0..4] != file_header()[0..4] {
        return Err("not a little-endian microsecond pcap file".into());
    }
    if bytes[20..24] != 101u32.to_le_bytes() {
        return Err("link type is not RAW (101)".into());
    }
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let (mut pos, mut out) = (24, Vec::new());
    while pos < bytes.len() {
        let n = out.len();
        let head = bytes
            .get(pos..pos + 16)
            .ok_or(format!("record {n}: truncated header"))?;
        let (sec, usec, len) = (u32_at(head, 0), u32_at(head, 4), u32_at(head, 8) as usize);
        let body = bytes
            .get(pos + 16..pos + 16 + len)
            .ok_or(format!("record {n}: truncated body"))?;
        if len < 28 || body[0] != 0x45 || body[9] != 17 {
            return Err(format!("record {n}: not IPv4 (no options) carrying UDP"));
        }
        let ip = |i: usize| Ipv4Addr::new(body[i], body[i + 1], body[i + 2], body[i + 3]);
        let port = |i: usize| u16::from_be_bytes([body[i], body[i + 1]]);
        out.push(Record {
            ts_ns: (sec as u64 * 1_000_000 + usec as u64) * 1_000,
            src: (ip(12), port(20)),
            dst: (ip(16), port(22)),
            sctp: body[28..].to_vec(),
        });
        pos += 16 + len;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_by_hand() {
        let mut out = Vec::new();
        let a = (Ipv4Addr::new(10, 0, 0, 1), 9899);
        let b = (Ipv4Addr::new(10, 0, 0, 2), 9899);
        record(&mut out, 1_500_000_123, a, b, &[0xAA; 12]);
        // ts 1 s 500000 µs, lengths 20 + 8 + 12 = 40.
        assert_eq!(&out[0..4], &1u32.to_le_bytes());
        assert_eq!(&out[4..8], &500_000u32.to_le_bytes());
        assert_eq!(&out[8..12], &40u32.to_le_bytes());
        let ip = &out[16..36];
        assert_eq!(ip[9], 17);
        // A header with its checksum filled in sums to zero.
        assert_eq!(ipv4_checksum(ip), 0);
        assert_eq!(&out[36..40], &[0x26, 0xAB, 0x26, 0xAB]);
        assert_eq!(&out[40..42], &20u16.to_be_bytes());
        assert_eq!(out.len(), 16 + 40);
        assert_eq!(&file_header()[0..4], &[0xd4, 0xc3, 0xb2, 0xa1]);
    }

    #[test]
    fn read_returns_what_record_wrote_and_names_a_truncated_record() {
        let mut out = file_header().to_vec();
        let a = (Ipv4Addr::new(10, 0, 0, 1), 5000);
        let b = (Ipv4Addr::new(10, 0, 0, 2), 9899);
        record(&mut out, 2_000_001_000, a, b, &[1, 2, 3]);
        record(&mut out, 3_000_000_000, b, a, &[4; 20]);
        let r = read(&out).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[0],
            Record {
                ts_ns: 2_000_001_000,
                src: a,
                dst: b,
                sctp: vec![1, 2, 3]
            }
        );
        assert_eq!((r[1].src, r[1].sctp.len()), (b, 20));
        out.truncate(out.len() - 1);
        assert_eq!(read(&out).unwrap_err(), "record 1: truncated body");
        assert!(read(&out[..10]).is_err());
    }
}
