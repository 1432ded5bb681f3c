//! Typed SCTP packets: what the core emits and consumes.
//!
//! Read first: RFC 9260 §3 (packet format) and §3.3 (chunk definitions).
//!
//! The simulator passes these values directly, with length-only payloads; the runtime
//! encodes them with the wire codec (a later layer). [`Packet::wire_len`] gives the exact
//! on-the-wire size of the SCTP packet (common header plus padded chunks) so that the
//! simulator charges links for the same bytes a real stack would send.

use bytes::Bytes;

/// Size of the SCTP common header (ports, verification tag, checksum).
pub const COMMON_HEADER_LEN: usize = 12;
/// Size of a DATA chunk header (type, flags, length, TSN, stream id, SSN, PPID).
pub const DATA_HEADER_LEN: usize = 16;
/// Size of a SACK chunk without gap blocks and duplicate TSNs.
pub const SACK_HEADER_LEN: usize = 16;
/// Size of a HEARTBEAT / HEARTBEAT-ACK chunk carrying a [`HeartbeatInfo`].
pub const HEARTBEAT_LEN: usize = 4 + 4 + 20;

/// One SCTP packet: a verification tag and a list of chunks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Verification tag of the receiving endpoint (RFC 9260 §8.5).
    pub vtag: u32,
    /// Chunks in the order they are bundled.
    pub chunks: Vec<Chunk>,
}

/// The chunk types the core speaks.
///
/// INIT / INIT-ACK / COOKIE-ECHO / COOKIE-ACK arrive with the wire codec and the real
/// runtime; the simulator starts associations in the ESTABLISHED state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Chunk {
    /// User data (RFC 9260 §3.3.1).
    Data(DataChunk),
    /// Association setup request (§3.3.2).
    Init(InitChunk),
    /// Answer to INIT, carrying the state cookie (§3.3.3).
    InitAck(InitChunk),
    /// The state cookie sent back (§3.3.11).
    CookieEcho {
        /// The cookie, opaque to the receiver of the INIT-ACK.
        cookie: Bytes,
    },
    /// Acknowledges a COOKIE ECHO (§3.3.12).
    CookieAck,
    /// Selective acknowledgement (§3.3.4).
    Sack(SackChunk),
    /// Path probe (§3.3.5).
    Heartbeat(HeartbeatInfo),
    /// Answer to a probe (§3.3.6).
    HeartbeatAck(HeartbeatInfo),
    /// Graceful close request carrying the cumulative TSN ack (§3.3.8).
    Shutdown {
        /// Cumulative TSN acknowledged by the sender of the SHUTDOWN.
        cum_tsn: u32,
    },
    /// Acknowledges a SHUTDOWN (§3.3.9).
    ShutdownAck,
    /// Final step of the shutdown (§3.3.13).
    ShutdownComplete {
        /// The T bit: the packet carries the receiver's own tag reflected back (sent
        /// without an association, RFC 9260 §8.4 (5)), not the tag the peer chose.
        reflected: bool,
    },
    /// Immediate close (§3.3.7) with an optional error cause code.
    Abort {
        /// Error cause code (§3.3.10), if any.
        cause: Option<u16>,
        /// The T bit: sent without an association (out of the blue, RFC 9260 §8.4),
        /// the packet's tag is the one the receiver of the ABORT expects from its peer.
        reflected: bool,
    },
    /// ECN Echo (RFC 9260 Appendix A): a packet arrived marked Congestion Experienced;
    /// repeated with every SACK until the peer's CWR answers it.
    Ecne {
        /// The lowest TSN of the marked packet.
        lowest_tsn: u32,
    },
    /// Congestion Window Reduced (RFC 9260 Appendix A): the answer to an ECN Echo.
    Cwr {
        /// The TSN of the ECN Echo answered.
        lowest_tsn: u32,
    },
    /// Receiver-driven CMT (project extension, docs/algorithms.md §2.1): the round id and the per-path
    /// sequence number of the DATA chunk bundled after it. Its type's two high bits are
    /// `10`, so a peer that does not know it skips it silently and goes on with the
    /// rest of the packet (RFC 9260 §3.2).
    RoundInfo {
        /// Round id: the sequence number of the latest rate advert the sender had applied
        /// when it sent the packet (`u32::MAX` before any).
        round: u32,
        /// Path index at the sender.
        path: u8,
        /// How long the sender held this packet after the advert that opened its round
        /// reached it, in units of [`HOLD_UNIT_NS`] (only the first packet of a round on
        /// a path has a non-zero value); `u16::MAX`: that long or longer.
        hold: u16,
        /// Per-path sequence number of the packet.
        seq: u32,
    },
    /// Receiver-driven CMT (project extension, docs/algorithms.md §2.1): the receiver's rate per path,
    /// bundled with a SACK. `seq` orders adverts that travel on different paths.
    RateAdvert {
        /// Advert sequence number (the sender's next round id, mod 16).
        seq: u32,
        /// `(path index at the sender, rate in bytes/s)`.
        rates: Vec<(u8, u32)>,
    },
    /// Address reconfiguration request (RFC 5061 §4.1.1).
    Asconf(crate::addr_conf::AsconfChunk),
    /// Answer to an ASCONF (RFC 5061 §4.1.2).
    AsconfAck(crate::addr_conf::AsconfAckChunk),
    /// A chunk the core does not interpret (extension chunks, kept verbatim).
    Unknown {
        /// Chunk type byte.
        chunk_type: u8,
        /// Chunk flags byte.
        flags: u8,
        /// Chunk value (without the 4-byte chunk header).
        value: Bytes,
    },
}

/// INIT and INIT-ACK (RFC 9260 §3.3.2–3.3.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitChunk {
    /// Initiate tag: the verification tag the peer must use.
    pub initiate_tag: u32,
    /// Advertised receiver window credit.
    pub a_rwnd: u32,
    /// Number of outbound streams.
    pub outbound_streams: u16,
    /// Number of inbound streams.
    pub inbound_streams: u16,
    /// Initial TSN.
    pub initial_tsn: u32,
    /// Optional and variable-length parameters.
    pub params: Vec<InitParam>,
}

/// A parameter of INIT / INIT-ACK.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InitParam {
    /// IPv4 address (type 5).
    Ipv4(std::net::Ipv4Addr),
    /// IPv6 address (type 6).
    Ipv6(std::net::Ipv6Addr),
    /// State cookie (type 7, INIT-ACK only).
    StateCookie(Bytes),
    /// Supported extensions: the chunk types the sender understands (type 0x8008,
    /// RFC 5061 §4.2.7).
    SupportedExtensions(Vec<u8>),
    /// A parameter kept verbatim.
    Unknown {
        /// Parameter type.
        ptype: u16,
        /// Value without the 4-byte parameter header.
        value: Bytes,
    },
}

/// A DATA chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataChunk {
    /// Transmission sequence number (wire form, 32 bits).
    pub tsn: u32,
    /// Stream identifier.
    pub sid: u16,
    /// Stream sequence number.
    pub ssn: u16,
    /// Payload protocol identifier.
    pub ppid: u32,
    /// U/B/E/I flag bits.
    pub flags: DataFlags,
    /// User data.
    pub payload: Payload,
}

/// Flags of a DATA chunk (RFC 9260 §3.3.1, RFC 7053 for I).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataFlags {
    /// U: unordered delivery.
    pub unordered: bool,
    /// B: first fragment of a user message.
    pub beginning: bool,
    /// E: last fragment of a user message.
    pub ending: bool,
    /// I: the receiver should SACK immediately.
    pub immediate: bool,
}

impl DataFlags {
    /// A whole, ordered user message in one chunk (B and E set).
    pub const WHOLE: DataFlags = DataFlags {
        unordered: false,
        beginning: true,
        ending: true,
        immediate: false,
    };

    /// The chunk-flags byte: E = 1, B = 2, U = 4, I = 8.
    pub fn bits(self) -> u8 {
        (self.ending as u8)
            | (self.beginning as u8) << 1
            | (self.unordered as u8) << 2
            | (self.immediate as u8) << 3
    }

    /// From the chunk-flags byte (other bits ignored).
    pub fn from_bits(b: u8) -> DataFlags {
        DataFlags {
            ending: b & 1 != 0,
            beginning: b & 2 != 0,
            unordered: b & 4 != 0,
            immediate: b & 8 != 0,
        }
    }
}

/// The user data of a DATA chunk: real bytes (runtime, property tests) or only a length
/// (simulator, where bytes would cost memory and time and carry no information).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload {
    /// Real bytes.
    Bytes(Bytes),
    /// `n` bytes whose content does not matter.
    Synthetic(u32),
}

impl Payload {
    /// Number of user bytes.
    pub fn len(&self) -> usize {
        match self {
            Payload::Bytes(b) => b.len(),
            Payload::Synthetic(n) => *n as usize,
        }
    }
    /// True for a zero-length payload.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The first `n` bytes, and what remains after them.
    pub fn split_at(self, n: usize) -> (Payload, Option<Payload>) {
        if n >= self.len() {
            return (self, None);
        }
        match self {
            Payload::Bytes(mut b) => {
                let rest = b.split_off(n);
                (Payload::Bytes(b), Some(Payload::Bytes(rest)))
            }
            Payload::Synthetic(len) => (
                Payload::Synthetic(n as u32),
                Some(Payload::Synthetic(len - n as u32)),
            ),
        }
    }
}

/// A SACK chunk (RFC 9260 §3.3.4).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SackChunk {
    /// Cumulative TSN ack.
    pub cum_tsn: u32,
    /// Advertised receiver window credit, bytes.
    pub a_rwnd: u32,
    /// Gap ack blocks, offsets relative to `cum_tsn`, ascending and disjoint.
    pub gap_blocks: Vec<GapBlock>,
    /// TSNs received more than once since the previous SACK.
    pub dup_tsns: Vec<u32>,
    /// Chunk flags. With CMT's DAC the low two bits carry the number of DATA packets
    /// received since the previous SACK (Iyengar et al.; ns-2 `sctp-cmt.cc`).
    pub flags: u8,
}

/// One gap ack block: TSNs `cum_tsn + start ..= cum_tsn + end` were received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GapBlock {
    /// Offset of the first TSN of the block from the cumulative TSN.
    pub start: u16,
    /// Offset of the last TSN of the block from the cumulative TSN.
    pub end: u16,
}

/// The opaque sender-specific information of a HEARTBEAT, typed: the core reads back
/// which path it probed and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeartbeatInfo {
    /// Index of the probed path at the sender of the HEARTBEAT.
    pub path: u16,
    /// Send time in the sender's clock, nanoseconds.
    pub sent_ns: u64,
    /// Random nonce; a HEARTBEAT-ACK whose nonce does not match is ignored.
    pub nonce: u64,
}

/// Bytes of a [`Chunk::RoundInfo`] on the wire (header, path, reserved, hold, seq,
/// round).
pub const ROUND_INFO_LEN: usize = 16;

/// The unit of [`Chunk::RoundInfo`]'s hold time: 100 µs (so at most 6.55 s).
pub const HOLD_UNIT_NS: u64 = 100_000;

/// A hold time as ROUND-INFO carries it (saturating).
pub fn hold_to_wire(d: crate::time::Duration) -> u16 {
    (d.as_nanos() / HOLD_UNIT_NS).min(u16::MAX as u64) as u16
}

/// A hold time from ROUND-INFO; `None` when it saturated (6.55 s or more: no usable
/// RTT sample).
pub fn hold_from_wire(v: u16) -> Option<crate::time::Duration> {
    (v < u16::MAX).then(|| crate::time::Duration::from_nanos(v as u64 * HOLD_UNIT_NS))
}

fn pad4(n: usize) -> usize {
    (n + 3) & !3
}

/// Size on the wire of a DATA chunk carrying `payload` user bytes (header and padding
/// included). Congestion and flow control count these bytes, as RFC 9260 §6.1 counts
/// "DATA chunks" and ns-2.35 counts chunk lengths.
pub fn data_chunk_len(payload: usize) -> usize {
    pad4(DATA_HEADER_LEN + payload)
}

impl Packet {
    /// True if the packet carries at least one DATA chunk.
    pub fn has_data(&self) -> bool {
        self.chunks.iter().any(|c| matches!(c, Chunk::Data(_)))
    }
}

/// Error cause "Invalid Mandatory Parameter" (RFC 9260 §3.3.10.7).
pub const CAUSE_INVALID_MANDATORY_PARAMETER: u16 = 7;
/// Error cause "Protocol Violation" (RFC 9260 §3.3.10.13).
pub const CAUSE_PROTOCOL_VIOLATION: u16 = 13;
/// Error cause "Out of Resource" (RFC 9260 §3.3.10.4): e.g. a receiver that cannot
/// store what it was sent.
pub const CAUSE_OUT_OF_RESOURCE: u16 = 4;
/// Error cause "User-Initiated Abort" (RFC 9260 §3.3.10.12).
pub const CAUSE_USER_INITIATED_ABORT: u16 = 12;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns2_sized_data_packet_is_1480_bytes_of_sctp() {
        // ns-2: dataChunkSize 1468 = 16 B header + 1452 B data; + 12 B common header
        // + 20 B IP = 1500 B (docs/algorithms.md §1.1).
        let p = Packet {
            vtag: 1,
            chunks: vec![Chunk::Data(DataChunk {
                tsn: 0,
                sid: 0,
                ssn: 0,
                ppid: 0,
                flags: DataFlags::WHOLE,
                payload: Payload::Synthetic(1452),
            })],
        };
        assert_eq!(p.wire_len() + 20, 1500);
    }

    #[test]
    fn payload_split_keeps_every_byte() {
        let (a, b) = Payload::Bytes(Bytes::from_static(b"abcdef")).split_at(4);
        assert_eq!(a, Payload::Bytes(Bytes::from_static(b"abcd")));
        assert_eq!(b, Some(Payload::Bytes(Bytes::from_static(b"ef"))));
        let (a, b) = Payload::Synthetic(10).split_at(10);
        assert_eq!((a, b), (Payload::Synthetic(10), None));
    }
}
