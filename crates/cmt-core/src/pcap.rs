//! pcap framing for captures of SCTP-over-UDP packets (RFC 6951), without IO: the
//! simulator and the runtime write these bytes to files. Classic pcap (microsecond
//! timestamps), link type RAW (101): every record is an IPv4 or IPv6 header, a UDP header
//! and the SCTP packet, so Wireshark and tshark decode it as SCTP over UDP (port 9899 by
//! default).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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

/// One record over IPv6: `sctp` inside UDP (with its checksum, which IPv6 requires)
/// inside an IPv6 header, at `ts_ns`.
pub fn record_v6(
    out: &mut Vec<u8>,
    ts_ns: u64,
    src: (Ipv6Addr, u16),
    dst: (Ipv6Addr, u16),
    sctp: &[u8],
) {
    let udp_len = 8 + sctp.len();
    let ip_len = 40 + udp_len;
    let us = ts_ns / 1_000;
    out.extend_from_slice(&((us / 1_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&((us % 1_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&(ip_len as u32).to_le_bytes());
    out.extend_from_slice(&(ip_len as u32).to_le_bytes());
    out.extend_from_slice(&[0x60, 0, 0, 0]); // version 6, no traffic class or flow label
    out.extend_from_slice(&(udp_len as u16).to_be_bytes());
    out.extend_from_slice(&[17, 64]); // next header UDP, hop limit 64
    out.extend_from_slice(&src.0.octets());
    out.extend_from_slice(&dst.0.octets());
    let udp = out.len();
    out.extend_from_slice(&src.1.to_be_bytes());
    out.extend_from_slice(&dst.1.to_be_bytes());
    out.extend_from_slice(&(udp_len as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(sctp);
    let sum = udp6_checksum(&src.0, &dst.0, &out[udp..]);
    out[udp + 6..udp + 8].copy_from_slice(&sum.to_be_bytes());
}

/// The UDP checksum over IPv6 (RFC 8200 §8.1): pseudo-header of addresses, length and
/// next header, then the UDP header (checksum zero) and data; 0 is sent as 0xFFFF.
pub fn udp6_checksum(src: &Ipv6Addr, dst: &Ipv6Addr, udp: &[u8]) -> u16 {
    let mut pseudo = Vec::with_capacity(40 + udp.len());
    pseudo.extend_from_slice(&src.octets());
    pseudo.extend_from_slice(&dst.octets());
    pseudo.extend_from_slice(&(udp.len() as u32).to_be_bytes());
    pseudo.extend_from_slice(&[0, 0, 0, 17]);
    pseudo.extend_from_slice(udp);
    match ipv4_checksum(&pseudo) {
        0 => 0xffff,
        s => s,
    }
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
    pub src: (IpAddr, u16),
    /// Destination address and UDP port.
    pub dst: (IpAddr, u16),
    /// The SCTP packet (the UDP payload).
    pub sctp: Vec<u8>,
}

/// Reads a capture in the framing [`record`] and [`record_v6`] write (classic
/// little-endian pcap, link type RAW, IPv4 or IPv6 + UDP). The error names the record and what is wrong with it.
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
        let port = |i: usize| u16::from_be_bytes([body[i], body[i + 1]]);
        let v4 = |i: usize| IpAddr::from([body[i], body[i + 1], body[i + 2], body[i + 3]]);
        let v6 = |i: usize| {
            let o: [u8; 16] = body[i..i + 16].try_into().expect("length checked");
            IpAddr::from(o)
        };
        let (src, dst, udp) = if len >= 28 && body[0] == 0x45 && body[9] == 17 {
            ((v4(12), port(20)), (v4(16), port(22)), 20)
        } else if len >= 48 && body[0] >> 4 == 6 && body[6] == 17 {
            ((v6(8), port(40)), (v6(24), port(42)), 40)
        } else {
            return Err(format!(
                "record {n}: not IPv4 (no options) or IPv6 (no extension headers) carrying UDP"
            ));
        };
        out.push(Record {
            ts_ns: (sec as u64 * 1_000_000 + usec as u64) * 1_000,
            src,
            dst,
            sctp: body[udp + 8..].to_vec(),
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
        let v4 = |x: (Ipv4Addr, u16)| (IpAddr::V4(x.0), x.1);
        assert_eq!(
            r[0],
            Record {
                ts_ns: 2_000_001_000,
                src: v4(a),
                dst: v4(b),
                sctp: vec![1, 2, 3]
            }
        );
        assert_eq!((r[1].src, r[1].sctp.len()), (v4(b), 20));
        out.truncate(out.len() - 1);
        assert_eq!(read(&out).unwrap_err(), "record 1: truncated body");
        assert!(read(&out[..10]).is_err());
    }

    #[test]
    fn an_ipv6_record_has_a_valid_udp_checksum_and_reads_back() {
        let mut out = file_header().to_vec();
        let a: Ipv6Addr = "2001:db8::1".parse().unwrap();
        let b: Ipv6Addr = "2001:db8::2".parse().unwrap();
        record_v6(&mut out, 5_000_000, (a, 40000), (b, 9899), &[9; 13]);
        let body = &out[24 + 16..];
        assert_eq!(body.len(), 40 + 8 + 13);
        assert_eq!(body[0] >> 4, 6);
        assert_eq!(u16::from_be_bytes([body[4], body[5]]), 8 + 13);
        // Summing the pseudo-header and the UDP datagram with its checksum gives zero.
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&a.octets());
        pseudo.extend_from_slice(&b.octets());
        pseudo.extend_from_slice(&21u32.to_be_bytes());
        pseudo.extend_from_slice(&[0, 0, 0, 17]);
        pseudo.extend_from_slice(&body[40..]);
        assert_eq!(ipv4_checksum(&pseudo), 0);
        let r = read(&out).unwrap();
        assert_eq!(r[0].src, (IpAddr::V6(a), 40000));
        assert_eq!(r[0].dst, (IpAddr::V6(b), 9899));
        assert_eq!(r[0].sctp, vec![9; 13]);
    }
}
