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
}
