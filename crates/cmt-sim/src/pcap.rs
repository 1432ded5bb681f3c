//! pcap captures of SCTP-over-UDP packets (RFC 6951) for the simulator and the runtime.
//! Classic pcap (microsecond timestamps, little endian), link type RAW (101): every
//! record is an IPv4 or IPv6 header, a UDP header (with its checksum) and the SCTP
//! packet, so Wireshark and tshark decode it as SCTP over UDP (port 9899 by default).
//! The file format is `pcap-file`'s and the IP and UDP headers are `etherparse`'s; this
//! module only chooses the framing.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use etherparse::{NetSlice, PacketBuilder, SlicedPacket, TransportSlice};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

/// The IANA port for SCTP over UDP (RFC 6951).
pub const SCTP_UDP_PORT: u16 = 9899;

/// Largest record: a whole IP datagram.
const SNAPLEN: u32 = 65_535;
/// TTL / hop limit written in the IP headers.
const HOP_LIMIT: u8 = 64;

/// A capture being written to `W`: the file header first, then one record per packet.
pub struct Pcap<W: Write> {
    w: PcapWriter<W>,
}

fn io_error(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(format!("pcap: {e}"))
}

impl<W: Write> Pcap<W> {
    /// Starts a capture on `out` (writes the 24-byte file header).
    pub fn new(out: W) -> std::io::Result<Self> {
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen: SNAPLEN,
            datalink: DataLink::RAW,
            ts_resolution: TsResolution::MicroSecond,
            endianness: Endianness::Little,
        };
        let w = PcapWriter::with_header(out, header).map_err(io_error)?;
        Ok(Pcap { w })
    }

    /// Records `sctp` (an encoded SCTP packet) inside UDP inside IPv4 or IPv6, from
    /// `src` to `dst` at `ts_ns`. Mixed address families are refused.
    pub fn record(
        &mut self,
        ts_ns: u64,
        src: SocketAddr,
        dst: SocketAddr,
        sctp: &[u8],
    ) -> std::io::Result<()> {
        let ip = match (src.ip(), dst.ip()) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                PacketBuilder::ipv4(s.octets(), d.octets(), HOP_LIMIT)
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                PacketBuilder::ipv6(s.octets(), d.octets(), HOP_LIMIT)
            }
            _ => {
                return Err(io_error(
                    "source and destination of different address families",
                ))
            }
        };
        let udp = ip.udp(src.port(), dst.port());
        let mut frame = Vec::with_capacity(udp.size(sctp.len()));
        udp.write(&mut frame, sctp).map_err(io_error)?;
        // Microseconds, as the file header says (pcap-file truncates the rest).
        let ts = Duration::from_nanos(ts_ns);
        let packet = PcapPacket::new(ts, frame.len() as u32, &frame);
        self.w.write_packet(&packet).map_err(io_error)?;
        Ok(())
    }

    /// The writer, with everything recorded so far.
    pub fn into_inner(self) -> W {
        self.w.into_writer()
    }
}

/// One record of a capture: time, endpoints and the SCTP packet.
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

/// Reads a capture of IP + UDP records with link type RAW (as [`Pcap`] writes them).
/// The error names the record and what is wrong with it.
pub fn read(bytes: &[u8]) -> Result<Vec<Record>, String> {
    let mut r = PcapReader::new(bytes).map_err(|e| format!("not a pcap file: {e}"))?;
    if r.header().datalink != DataLink::RAW {
        return Err("link type is not RAW (101)".into());
    }
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        let n = out.len();
        let p = p.map_err(|e| format!("record {n}: {e}"))?;
        let sliced = SlicedPacket::from_ip(&p.data).map_err(|e| format!("record {n}: {e}"))?;
        let (src, dst) = match &sliced.net {
            Some(NetSlice::Ipv4(v4)) => (
                IpAddr::V4(v4.header().source_addr()),
                IpAddr::V4(v4.header().destination_addr()),
            ),
            Some(NetSlice::Ipv6(v6)) => (
                IpAddr::V6(v6.header().source_addr()),
                IpAddr::V6(v6.header().destination_addr()),
            ),
            None => return Err(format!("record {n}: not an IP packet")),
        };
        let Some(TransportSlice::Udp(udp)) = &sliced.transport else {
            return Err(format!("record {n}: not UDP"));
        };
        out.push(Record {
            ts_ns: p.timestamp.as_nanos() as u64,
            src: (src, udp.source_port()),
            dst: (dst, udp.destination_port()),
            sctp: udp.payload().to_vec(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(a: &str) -> SocketAddr {
        a.parse().unwrap()
    }

    /// The Internet checksum (RFC 1071) of `b`: zero over a header whose checksum is in.
    fn ones_complement_sum(b: &[u8]) -> u16 {
        let mut sum: u32 = b
            .chunks(2)
            .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32)
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    #[test]
    fn an_ipv4_record_by_hand() {
        let mut p = Pcap::new(Vec::new()).unwrap();
        let (a, b) = (v4("10.0.0.1:9899"), v4("10.0.0.2:9899"));
        p.record(1_500_000_123, a, b, &[0xAA; 12]).unwrap();
        let out = p.into_inner();
        // File header: magic, version 2.4, snaplen, link type RAW.
        assert_eq!(&out[0..4], &[0xd4, 0xc3, 0xb2, 0xa1]);
        assert_eq!(&out[4..8], &[2, 0, 4, 0]);
        assert_eq!(&out[16..20], &65_535u32.to_le_bytes());
        assert_eq!(&out[20..24], &101u32.to_le_bytes());
        // Record: ts 1 s 500000 µs, lengths 20 + 8 + 12 = 40.
        let rec = &out[24..];
        assert_eq!(&rec[0..4], &1u32.to_le_bytes());
        assert_eq!(&rec[4..8], &500_000u32.to_le_bytes());
        assert_eq!(&rec[8..12], &40u32.to_le_bytes());
        let ip = &rec[16..36];
        assert_eq!((ip[0], ip[8], ip[9]), (0x45, 64, 17), "IPv4, TTL 64, UDP");
        assert_eq!(ones_complement_sum(ip), 0, "header checksum filled in");
        assert_eq!(&rec[36..40], &[0x26, 0xAB, 0x26, 0xAB]);
        assert_eq!(&rec[40..42], &20u16.to_be_bytes());
        assert_eq!(rec.len(), 16 + 40);
    }

    #[test]
    fn read_returns_what_was_recorded_and_names_a_truncated_record() {
        let mut p = Pcap::new(Vec::new()).unwrap();
        let (a, b) = (v4("10.0.0.1:5000"), v4("10.0.0.2:9899"));
        p.record(2_000_001_000, a, b, &[1, 2, 3]).unwrap();
        p.record(3_000_000_000, b, a, &[4; 20]).unwrap();
        let mut out = p.into_inner();
        let r = read(&out).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[0],
            Record {
                ts_ns: 2_000_001_000,
                src: (a.ip(), 5000),
                dst: (b.ip(), 9899),
                sctp: vec![1, 2, 3]
            }
        );
        assert_eq!((r[1].src, r[1].sctp.len()), ((b.ip(), 9899), 20));
        out.truncate(out.len() - 1);
        assert!(read(&out).unwrap_err().starts_with("record 1:"));
        assert!(read(&out[..10]).is_err());
    }

    #[test]
    fn an_ipv6_record_has_a_valid_udp_checksum_and_reads_back() {
        let mut p = Pcap::new(Vec::new()).unwrap();
        let a: SocketAddr = "[2001:db8::1]:40000".parse().unwrap();
        let b: SocketAddr = "[2001:db8::2]:9899".parse().unwrap();
        p.record(5_000_000, a, b, &[9; 13]).unwrap();
        assert!(
            p.record(0, a, v4("10.0.0.1:1"), &[1]).is_err(),
            "mixed families"
        );
        let out = p.into_inner();
        let body = &out[24 + 16..];
        assert_eq!(body.len(), 40 + 8 + 13);
        assert_eq!(body[0] >> 4, 6);
        assert_eq!(u16::from_be_bytes([body[4], body[5]]), 8 + 13);
        // Summing the pseudo-header and the UDP datagram with its checksum gives zero.
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&body[8..40]);
        pseudo.extend_from_slice(&21u32.to_be_bytes());
        pseudo.extend_from_slice(&[0, 0, 0, 17]);
        pseudo.extend_from_slice(&body[40..]);
        assert_eq!(ones_complement_sum(&pseudo), 0);
        let r = read(&out).unwrap();
        assert_eq!((r[0].src, r[0].dst), ((a.ip(), 40000), (b.ip(), 9899)));
        assert_eq!(r[0].sctp, vec![9; 13]);
    }
}
