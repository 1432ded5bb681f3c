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

use bytes::Bytes;

use crate::packet::{
    Chunk, DataChunk, DataFlags, GapBlock, HeartbeatInfo, InitChunk, InitParam, Packet, Payload,
    SackChunk, COMMON_HEADER_LEN,
};

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
    /// COOKIE ECHO.
    pub const COOKIE_ECHO: u8 = 10;
    /// COOKIE ACK.
    pub const COOKIE_ACK: u8 = 11;
    /// SHUTDOWN COMPLETE.
    pub const SHUTDOWN_COMPLETE: u8 = 14;
    /// AUTH (RFC 4895; see [`crate::auth`]).
    pub const AUTH: u8 = crate::auth::AUTH_CHUNK;
    /// Round info (project extension, skip if unknown).
    pub const ROUND_INFO: u8 = 0xB0;
    /// Rate advert (project extension, skip if unknown).
    pub const RATE_ADVERT: u8 = 0xB1;
    /// File digest (project extension, skip if unknown): the receiving application's
    /// length and SHA-256 of what it stored, bundled with its SHUTDOWN ACK.
    pub const FILE_DIGEST: u8 = 0xB2;
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

fn pad4(n: usize) -> usize {
    (n + 3) & !3
}

fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}
fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends a chunk: header with the unpadded length, value, zero padding.
fn put_chunk(out: &mut Vec<u8>, ctype: u8, flags: u8, value: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    out.extend_from_slice(&[ctype, flags, 0, 0]);
    value(out);
    let len = out.len() - start;
    out[start + 2..start + 4].copy_from_slice(&(len as u16).to_be_bytes());
    out.resize(start + pad4(len), 0);
}

/// Appends a parameter, after padding the one before it. The last parameter of a chunk
/// stays unpadded here: RFC 9260 §3.2 counts the padding of every parameter but the
/// last in the chunk length, and [`put_chunk`] pads the chunk. (Chunks start 4-aligned
/// in the packet, so aligning the buffer aligns the parameter within its chunk.)
fn put_param(out: &mut Vec<u8>, ptype: u16, value: &[u8]) {
    out.resize(pad4(out.len()), 0);
    put_u16(out, ptype);
    put_u16(out, (4 + value.len()) as u16);
    out.extend_from_slice(value);
}

fn put_payload(out: &mut Vec<u8>, p: &Payload) {
    match p {
        Payload::Bytes(b) => out.extend_from_slice(b),
        Payload::Synthetic(n) => out.resize(out.len() + *n as usize, 0),
    }
}

fn put_init(out: &mut Vec<u8>, i: &InitChunk) {
    put_u32(out, i.initiate_tag);
    put_u32(out, i.a_rwnd);
    put_u16(out, i.outbound_streams);
    put_u16(out, i.inbound_streams);
    put_u32(out, i.initial_tsn);
    for p in &i.params {
        match p {
            InitParam::Ipv4(a) => put_param(out, param_type::IPV4, &a.octets()),
            InitParam::Ipv6(a) => put_param(out, param_type::IPV6, &a.octets()),
            InitParam::StateCookie(c) => put_param(out, param_type::STATE_COOKIE, c),
            InitParam::SupportedExtensions(t) => {
                put_param(out, param_type::SUPPORTED_EXTENSIONS, t)
            }
            InitParam::Unknown { ptype, value } => put_param(out, *ptype, value),
        }
    }
}

fn put_heartbeat(out: &mut Vec<u8>, h: &HeartbeatInfo) {
    let mut v = Vec::with_capacity(18);
    v.extend_from_slice(&h.path.to_be_bytes());
    v.extend_from_slice(&h.sent_ns.to_be_bytes());
    v.extend_from_slice(&h.nonce.to_be_bytes());
    put_param(out, param_type::HEARTBEAT_INFO, &v);
}

/// Encodes `packet` with the given ports and its CRC32c into `out` (cleared first).
pub fn encode(packet: &Packet, src_port: u16, dst_port: u16, out: &mut Vec<u8>) {
    use chunk_type as t;
    out.clear();
    put_u16(out, src_port);
    put_u16(out, dst_port);
    put_u32(out, packet.vtag);
    put_u32(out, 0);
    for c in &packet.chunks {
        match c {
            Chunk::Data(d) => put_chunk(out, t::DATA, d.flags.bits(), |o| {
                put_u32(o, d.tsn);
                put_u16(o, d.sid);
                put_u16(o, d.ssn);
                put_u32(o, d.ppid);
                put_payload(o, &d.payload);
            }),
            Chunk::Init(i) => put_chunk(out, t::INIT, 0, |o| put_init(o, i)),
            Chunk::InitAck(i) => put_chunk(out, t::INIT_ACK, 0, |o| put_init(o, i)),
            Chunk::CookieEcho { cookie } => {
                put_chunk(out, t::COOKIE_ECHO, 0, |o| o.extend_from_slice(cookie))
            }
            Chunk::CookieAck => put_chunk(out, t::COOKIE_ACK, 0, |_| {}),
            Chunk::Sack(s) => put_chunk(out, t::SACK, s.flags, |o| {
                put_u32(o, s.cum_tsn);
                put_u32(o, s.a_rwnd);
                put_u16(o, s.gap_blocks.len() as u16);
                put_u16(o, s.dup_tsns.len() as u16);
                for b in &s.gap_blocks {
                    put_u16(o, b.start);
                    put_u16(o, b.end);
                }
                for &d in &s.dup_tsns {
                    put_u32(o, d);
                }
            }),
            Chunk::Heartbeat(h) => put_chunk(out, t::HEARTBEAT, 0, |o| put_heartbeat(o, h)),
            Chunk::HeartbeatAck(h) => put_chunk(out, t::HEARTBEAT_ACK, 0, |o| put_heartbeat(o, h)),
            Chunk::Shutdown { cum_tsn } => put_chunk(out, t::SHUTDOWN, 0, |o| put_u32(o, *cum_tsn)),
            Chunk::ShutdownAck => put_chunk(out, t::SHUTDOWN_ACK, 0, |_| {}),
            Chunk::ShutdownComplete => put_chunk(out, t::SHUTDOWN_COMPLETE, 0, |_| {}),
            Chunk::Abort { cause } => put_chunk(out, t::ABORT, 0, |o| {
                if let Some(code) = cause {
                    put_u16(o, *code);
                    put_u16(o, 4);
                }
            }),
            Chunk::RoundInfo {
                round,
                path,
                hold,
                seq,
            } => put_chunk(out, t::ROUND_INFO, 0, |o| {
                o.extend_from_slice(&[*path, 0]);
                put_u16(o, *hold);
                put_u32(o, *seq);
                put_u32(o, *round);
            }),
            Chunk::RateAdvert { seq, rates } => put_chunk(out, t::RATE_ADVERT, 0, |o| {
                put_u32(o, *seq);
                for &(p, r) in rates {
                    o.extend_from_slice(&[p, 0, 0, 0]);
                    put_u32(o, r);
                }
            }),
            Chunk::Unknown {
                chunk_type,
                flags,
                value,
            } => put_chunk(out, *chunk_type, *flags, |o| o.extend_from_slice(value)),
        }
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

/// A bounds-checked reader over one slice, reporting offsets relative to the packet.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    fn err(&self, what: &'static str) -> WireError {
        WireError {
            offset: self.base + self.pos,
            what,
        }
    }
    fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], WireError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let Some(end) = end else {
            return Err(self.err(what));
        };
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self, what: &'static str) -> Result<u8, WireError> {
        Ok(self.bytes(1, what)?[0])
    }
    fn u16(&mut self, what: &'static str) -> Result<u16, WireError> {
        let b = self.bytes(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, WireError> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self, what: &'static str) -> Result<u64, WireError> {
        let b = self.bytes(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_be_bytes(a))
    }
    fn rest(&self) -> usize {
        self.buf.len() - self.pos
    }
    fn done(&self, what: &'static str) -> Result<(), WireError> {
        if self.rest() == 0 {
            Ok(())
        } else {
            Err(self.err(what))
        }
    }
}

/// Splits a TLV area (chunks or parameters) into `(type field, value, offset)` items.
fn tlvs(
    buf: &[u8],
    base: usize,
    hdr_what: &'static str,
) -> Result<Vec<(u16, Bytes, usize)>, WireError> {
    let mut out = Vec::new();
    let mut r = Reader { buf, pos: 0, base };
    while r.rest() > 0 {
        let at = r.pos;
        let t = r.u16(hdr_what)?;
        let len = r.u16(hdr_what)? as usize;
        if len < 4 {
            return Err(WireError {
                offset: base + at + 2,
                what: "length field below 4",
            });
        }
        let value = r.bytes(len - 4, "length runs past the end")?;
        let padding = pad4(len) - len;
        if r.rest() > 0 {
            // Padding is required between items (the last one may omit it).
            r.bytes(padding, "missing padding")?;
        }
        out.push((t, Bytes::copy_from_slice(value), base + at));
    }
    Ok(out)
}

fn parse_heartbeat(v: &[u8], at: usize) -> Result<HeartbeatInfo, WireError> {
    let params = tlvs(v, at, "truncated heartbeat parameter")?;
    let [(t, value, off)] = params.as_slice() else {
        return Err(WireError {
            offset: at,
            what: "heartbeat needs exactly one parameter",
        });
    };
    if *t != param_type::HEARTBEAT_INFO || value.len() != 18 {
        return Err(WireError {
            offset: *off,
            what: "heartbeat info is not ours",
        });
    }
    let mut r = Reader {
        buf: value,
        pos: 0,
        base: off + 4,
    };
    Ok(HeartbeatInfo {
        path: r.u16("heartbeat path")?,
        sent_ns: r.u64("heartbeat time")?,
        nonce: r.u64("heartbeat nonce")?,
    })
}

fn parse_init(v: &[u8], at: usize) -> Result<InitChunk, WireError> {
    let mut r = Reader {
        buf: v,
        pos: 0,
        base: at,
    };
    let initiate_tag = r.u32("truncated INIT")?;
    let a_rwnd = r.u32("truncated INIT")?;
    let outbound_streams = r.u16("truncated INIT")?;
    let inbound_streams = r.u16("truncated INIT")?;
    let initial_tsn = r.u32("truncated INIT")?;
    let mut params = Vec::new();
    for (t, value, off) in tlvs(&v[16..], at + 16, "truncated INIT parameter")? {
        params.push(match t {
            param_type::IPV4 => {
                let o: [u8; 4] = value[..].try_into().map_err(|_| WireError {
                    offset: off,
                    what: "IPv4 address is not 4 bytes",
                })?;
                InitParam::Ipv4(o.into())
            }
            param_type::IPV6 => {
                let o: [u8; 16] = value[..].try_into().map_err(|_| WireError {
                    offset: off,
                    what: "IPv6 address is not 16 bytes",
                })?;
                InitParam::Ipv6(o.into())
            }
            param_type::STATE_COOKIE => InitParam::StateCookie(value),
            param_type::SUPPORTED_EXTENSIONS => InitParam::SupportedExtensions(value.to_vec()),
            ptype => InitParam::Unknown { ptype, value },
        });
    }
    Ok(InitChunk {
        initiate_tag,
        a_rwnd,
        outbound_streams,
        inbound_streams,
        initial_tsn,
        params,
    })
}

/// Parses and checks one packet (common header, CRC32c, every chunk).
pub fn decode(buf: &[u8]) -> Result<Datagram, WireError> {
    use chunk_type as t;
    let mut r = Reader {
        buf,
        pos: 0,
        base: 0,
    };
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
    let mut cr = Reader {
        buf: &buf[COMMON_HEADER_LEN..],
        pos: 0,
        base: COMMON_HEADER_LEN,
    };
    while cr.rest() > 0 {
        let at = COMMON_HEADER_LEN + cr.pos;
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
        let mut r = Reader {
            buf: v,
            pos: 0,
            base: at + 4,
        };
        let chunk = match ctype {
            t::DATA => {
                let tsn = r.u32("DATA shorter than its header")?;
                let sid = r.u16("DATA shorter than its header")?;
                let ssn = r.u16("DATA shorter than its header")?;
                let ppid = r.u32("DATA shorter than its header")?;
                if r.rest() == 0 {
                    return Err(r.err("DATA without user data"));
                }
                let payload = Payload::Bytes(Bytes::copy_from_slice(r.bytes(r.rest(), "")?));
                Chunk::Data(DataChunk {
                    tsn,
                    sid,
                    ssn,
                    ppid,
                    flags: DataFlags::from_bits(flags),
                    payload,
                })
            }
            t::INIT => Chunk::Init(parse_init(v, at + 4)?),
            t::INIT_ACK => Chunk::InitAck(parse_init(v, at + 4)?),
            t::COOKIE_ECHO => Chunk::CookieEcho {
                cookie: Bytes::copy_from_slice(v),
            },
            t::COOKIE_ACK => {
                r.done("COOKIE ACK carries a value")?;
                Chunk::CookieAck
            }
            t::SACK => {
                let cum_tsn = r.u32("truncated SACK")?;
                let a_rwnd = r.u32("truncated SACK")?;
                let ngaps = r.u16("truncated SACK")?;
                let ndups = r.u16("truncated SACK")?;
                let mut gap_blocks = Vec::with_capacity(ngaps.min(1024) as usize);
                for _ in 0..ngaps {
                    gap_blocks.push(GapBlock {
                        start: r.u16("fewer gap blocks than announced")?,
                        end: r.u16("fewer gap blocks than announced")?,
                    });
                }
                let mut dup_tsns = Vec::with_capacity(ndups.min(1024) as usize);
                for _ in 0..ndups {
                    dup_tsns.push(r.u32("fewer duplicate TSNs than announced")?);
                }
                r.done("SACK longer than its blocks")?;
                Chunk::Sack(SackChunk {
                    cum_tsn,
                    a_rwnd,
                    gap_blocks,
                    dup_tsns,
                    flags,
                })
            }
            // A peer's own heartbeat info (not ours) is kept verbatim.
            t::HEARTBEAT | t::HEARTBEAT_ACK => match parse_heartbeat(v, at + 4) {
                Ok(h) if ctype == t::HEARTBEAT => Chunk::Heartbeat(h),
                Ok(h) => Chunk::HeartbeatAck(h),
                Err(_) => Chunk::Unknown {
                    chunk_type: ctype,
                    flags,
                    value: Bytes::copy_from_slice(v),
                },
            },
            t::SHUTDOWN => {
                let cum_tsn = r.u32("truncated SHUTDOWN")?;
                r.done("SHUTDOWN longer than 8 bytes")?;
                Chunk::Shutdown { cum_tsn }
            }
            t::SHUTDOWN_ACK => {
                r.done("SHUTDOWN ACK carries a value")?;
                Chunk::ShutdownAck
            }
            t::SHUTDOWN_COMPLETE => {
                r.done("SHUTDOWN COMPLETE carries a value")?;
                Chunk::ShutdownComplete
            }
            // The first error cause's code, if any (its details are not kept).
            t::ABORT => Chunk::Abort {
                cause: (v.len() >= 4).then(|| u16::from_be_bytes([v[0], v[1]])),
            },
            t::ROUND_INFO => {
                let path = r.u8("truncated round info")?;
                r.u8("truncated round info")?;
                let hold = r.u16("truncated round info")?;
                let seq = r.u32("truncated round info")?;
                let round = r.u32("truncated round info")?;
                r.done("round info longer than 16 bytes")?;
                Chunk::RoundInfo {
                    round,
                    path,
                    hold,
                    seq,
                }
            }
            t::RATE_ADVERT => {
                let seq = r.u32("truncated rate advert")?;
                if !r.rest().is_multiple_of(8) {
                    return Err(r.err("rate advert entries are 8 bytes"));
                }
                let mut rates = Vec::with_capacity(r.rest() / 8);
                while r.rest() > 0 {
                    let p = r.u8("rate advert entry")?;
                    r.bytes(3, "rate advert entry")?;
                    rates.push((p, r.u32("rate advert entry")?));
                }
                Chunk::RateAdvert { seq, rates }
            }
            _ => Chunk::Unknown {
                chunk_type: ctype,
                flags,
                value: Bytes::copy_from_slice(v),
            },
        };
        chunks.push(chunk);
    }
    Ok(Datagram {
        src_port,
        dst_port,
        packet: Packet { vtag, chunks },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
