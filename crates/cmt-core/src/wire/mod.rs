//! The SCTP packet format (RFC 9260 §3): encoding [`Packet`]s to bytes and parsing
//! bytes back, with the CRC32c checksum (RFC 9260 §6.8, Appendix A; stored in
//! little-endian byte order as the reference implementations do).
//!
//! Parsing is checked: every length is validated before use, and any input — truncated,
//! padded wrongly, with a bad checksum or nonsense lengths — gives a [`WireError`]
//! naming the offset and the problem, never a panic. Encoding and parsing round-trip
//! exactly for packets whose payloads are real bytes (a synthetic payload is encoded as
//! zeros).
//!
//! The project's extension chunks have the two high type bits `10`: a standard SCTP peer
//! that does not know them skips them without reporting (RFC 9260 §3.2).
//!
//! | chunk | type | value |
//! |---|---|---|
//! | round info | 0xB0 | path (1 byte), reserved (1), hold time (2), per-path sequence (4), round id (4) |
//! | rate advert | 0xB1 | advert sequence (4), then per path: path (1), reserved (3), rate in bytes/s (4) |
//!
//! Layout: `fields` — big-endian fields and TLV areas; `chunks` — each chunk's
//! `emit_*` / `parse_*` side by side; `init` — INIT / INIT ACK and HEARTBEAT values; `asconf` — ASCONF / ASCONF-ACK values.

mod asconf;
mod chunks;
mod fields;
mod init;
#[cfg(test)]
mod tests;

use self::fields::{pad4, put_u16, put_u32, Reader};
use crate::packet::{Packet, COMMON_HEADER_LEN};

/// Chunk type numbers (RFC 9260 §3.2 and the project's extensions).
pub mod chunk_type {
    /// DATA.
    pub const DATA: u8 = 0;
    /// INIT.
    pub const INIT: u8 = 1;
    /// INIT ACK.
    pub const INIT_ACK: u8 = 2;
    /// SACK.
    pub const SACK: u8 = 3;
    /// HEARTBEAT.
    pub const HEARTBEAT: u8 = 4;
    /// HEARTBEAT ACK.
    pub const HEARTBEAT_ACK: u8 = 5;
    /// ABORT.
    pub const ABORT: u8 = 6;
    /// SHUTDOWN.
    pub const SHUTDOWN: u8 = 7;
    /// SHUTDOWN ACK.
    pub const SHUTDOWN_ACK: u8 = 8;
    /// ERROR (operation error, RFC 9260 §3.3.10).
    pub const ERROR: u8 = 9;
    /// COOKIE ECHO.
    pub const COOKIE_ECHO: u8 = 10;
    /// COOKIE ACK.
    pub const COOKIE_ACK: u8 = 11;
    /// ECN Echo (RFC 9260 Appendix A): the lowest TSN of a packet that arrived
    /// marked CE.
    pub const ECNE: u8 = 12;
    /// Congestion Window Reduced (RFC 9260 Appendix A): the TSN of the ECN Echo the
    /// sender reduced for.
    pub const CWR: u8 = 13;
    /// SHUTDOWN COMPLETE.
    pub const SHUTDOWN_COMPLETE: u8 = 14;
    /// AUTH (RFC 4895; see [`crate::auth`]).
    pub const AUTH: u8 = crate::auth::AUTH_CHUNK;
    /// Round info (project extension, skip if unknown).
    pub const ROUND_INFO: u8 = 0xB0;
    /// Rate advert (project extension, skip if unknown).
    pub const RATE_ADVERT: u8 = 0xB1;
    /// File digest (project extension, skip if unknown): a length and a SHA-256. The
    /// sending application announces what it sent with its SHUTDOWN; the receiving
    /// one answers what it stored with its SHUTDOWN ACK (or with an ABORT when the two
    /// differ).
    pub const FILE_DIGEST: u8 = 0xB2;
    /// Arrivals (project extension, skip if unknown): when and where the receiver got
    /// each DATA packet, returned with its SACKs to a sender that asked, so that one
    /// end can calibrate a model of the paths (the receive timestamps QUIC's ACK
    /// frames may carry, draft-smith-quic-receive-ts, for SCTP).
    pub const ARRIVALS: u8 = 0xB3;
    /// ASCONF (RFC 5061 §4.1.1; see [`crate::addr_conf`]).
    pub const ASCONF: u8 = 0xC1;
    /// ASCONF-ACK (RFC 5061 §4.1.2).
    pub const ASCONF_ACK: u8 = 0x80;
}

/// Parameter types (RFC 9260 §3.2.1, RFC 5061 §4.2.7).
pub mod param_type {
    /// Heartbeat Info (in HEARTBEAT and HEARTBEAT ACK).
    pub const HEARTBEAT_INFO: u16 = 1;
    /// IPv4 Address.
    pub const IPV4: u16 = 5;
    /// IPv6 Address.
    pub const IPV6: u16 = 6;
    /// State Cookie.
    pub const STATE_COOKIE: u16 = 7;
    /// Supported Extensions.
    pub const SUPPORTED_EXTENSIONS: u16 = 0x8008;
    /// ECN Capable (RFC 9260 Appendix A; no value): in an INIT or INIT ACK, the sender
    /// takes part in explicit congestion notification.
    pub const ECN_CAPABLE: u16 = 0x8000;
}

/// A parse failure: where and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireError {
    /// Byte offset in the packet.
    pub offset: usize,
    /// The problem.
    pub what: &'static str,
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "malformed SCTP packet at byte {}: {}",
            self.offset, self.what
        )
    }
}
impl std::error::Error for WireError {}

/// A parsed packet with its ports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datagram {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// The packet.
    pub packet: Packet,
}

impl Packet {
    /// Size of the SCTP packet on the wire (no IP/UDP headers).
    pub fn wire_len(&self) -> usize {
        COMMON_HEADER_LEN
            + self
                .chunks
                .iter()
                .map(crate::packet::Chunk::wire_len)
                .sum::<usize>()
    }
}

/// Encodes `packet` with the given ports and its CRC32c into `out` (cleared first).
pub fn encode(packet: &Packet, src_port: u16, dst_port: u16, out: &mut Vec<u8>) {
    out.clear();
    put_u16(out, src_port);
    put_u16(out, dst_port);
    put_u32(out, packet.vtag);
    put_u32(out, 0);
    for c in &packet.chunks {
        chunks::emit(out, c);
    }
    let crc = checksum(out);
    out[8..12].copy_from_slice(&crc.to_le_bytes());
}

/// The CRC32c of an encoded packet, computed with its checksum field taken as zero
/// (the caller stores it little-endian at bytes 8..12).
pub fn checksum(pkt: &[u8]) -> u32 {
    let mut c = crc32c::crc32c(&pkt[..8]);
    c = crc32c::crc32c_append(c, &[0; 4]);
    crc32c::crc32c_append(c, &pkt[COMMON_HEADER_LEN..])
}

/// Parses and checks one packet (common header, CRC32c, every chunk).
pub fn decode(buf: &[u8]) -> Result<Datagram, WireError> {
    let mut r = Reader::at(buf, 0);
    let src_port = r.u16("shorter than the common header")?;
    let dst_port = r.u16("shorter than the common header")?;
    let vtag = r.u32("shorter than the common header")?;
    let stored = r.bytes(4, "shorter than the common header")?;
    let stored = u32::from_le_bytes([stored[0], stored[1], stored[2], stored[3]]);
    if checksum(buf) != stored {
        return Err(WireError {
            offset: 8,
            what: "bad CRC32c checksum",
        });
    }
    let mut chunks = Vec::new();
    let mut cr = Reader::at(&buf[COMMON_HEADER_LEN..], COMMON_HEADER_LEN);
    while cr.rest() > 0 {
        chunks.push(next_chunk(&mut cr)?);
    }
    Ok(Datagram {
        src_port,
        dst_port,
        packet: Packet { vtag, chunks },
    })
}

/// Reads one chunk header, its value and padding, and parses the value.
fn next_chunk(cr: &mut Reader<'_>) -> Result<crate::packet::Chunk, WireError> {
    let at = cr.base + cr.pos;
    let ctype = cr.u8("truncated chunk header")?;
    let flags = cr.u8("truncated chunk header")?;
    let len = cr.u16("truncated chunk header")? as usize;
    if len < 4 {
        return Err(WireError {
            offset: at + 2,
            what: "chunk length below 4",
        });
    }
    let v = cr.bytes(len - 4, "chunk length runs past the end")?;
    if cr.rest() > 0 {
        cr.bytes(pad4(len) - len, "missing chunk padding")?;
    }
    chunks::parse(ctype, flags, v, at + 4)
}
