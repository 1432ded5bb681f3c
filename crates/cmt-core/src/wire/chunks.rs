//! Each chunk's value layout in one place: `emit_*` writes it, `parse_*` reads it back
//! (checked, never panicking) and `*_len` / [`Chunk::wire_len`] give its size, side by side (RFC 9260 §3.3 and the project's
//! extension chunks).

use bytes::Bytes;

use super::asconf::{
    asconf_ack_len, asconf_len, parse_asconf, parse_asconf_ack, put_asconf, put_asconf_ack,
};
use super::chunk_type as t;
use super::fields::{pad4, put_chunk, put_payload, put_u16, put_u32, Reader};
use super::init::{init_len, parse_heartbeat, parse_init, put_heartbeat, put_init};
use super::WireError;
use crate::packet::{
    data_chunk_len, Chunk, DataChunk, DataFlags, GapBlock, Payload, SackChunk, HEARTBEAT_LEN,
    ROUND_INFO_LEN, SACK_HEADER_LEN,
};

impl Chunk {
    /// The chunk's type byte on the wire (RFC 9260 §3.2).
    pub fn chunk_type(&self) -> u8 {
        match self {
            Chunk::Data(_) => t::DATA,
            Chunk::Init(_) => t::INIT,
            Chunk::InitAck(_) => t::INIT_ACK,
            Chunk::CookieEcho { .. } => t::COOKIE_ECHO,
            Chunk::CookieAck => t::COOKIE_ACK,
            Chunk::Sack(_) => t::SACK,
            Chunk::Heartbeat(_) => t::HEARTBEAT,
            Chunk::HeartbeatAck(_) => t::HEARTBEAT_ACK,
            Chunk::Shutdown { .. } => t::SHUTDOWN,
            Chunk::ShutdownAck => t::SHUTDOWN_ACK,
            Chunk::ShutdownComplete { .. } => t::SHUTDOWN_COMPLETE,
            Chunk::Abort { .. } => t::ABORT,
            Chunk::Ecne { .. } => t::ECNE,
            Chunk::Cwr { .. } => t::CWR,
            Chunk::RoundInfo { .. } => t::ROUND_INFO,
            Chunk::RateAdvert { .. } => t::RATE_ADVERT,
            Chunk::Asconf(_) => t::ASCONF,
            Chunk::AsconfAck(_) => t::ASCONF_ACK,
            Chunk::Unknown { chunk_type, .. } => *chunk_type,
        }
    }

    /// Length of the chunk on the wire including padding.
    pub fn wire_len(&self) -> usize {
        match self {
            Chunk::Data(d) => data_chunk_len(d.payload.len()),
            Chunk::Init(i) | Chunk::InitAck(i) => init_len(i),
            Chunk::CookieEcho { cookie } => pad4(4 + cookie.len()),
            Chunk::CookieAck => 4,
            Chunk::Sack(s) => sack_len(s),
            Chunk::Heartbeat(_) | Chunk::HeartbeatAck(_) => HEARTBEAT_LEN,
            Chunk::Shutdown { .. } | Chunk::Ecne { .. } | Chunk::Cwr { .. } => 8,
            Chunk::ShutdownAck | Chunk::ShutdownComplete { .. } => 4,
            Chunk::Abort { cause, .. } => abort_len(*cause),
            Chunk::RoundInfo { .. } => ROUND_INFO_LEN,
            Chunk::RateAdvert { rates, .. } => rate_advert_len(rates),
            Chunk::Asconf(c) => asconf_len(c),
            Chunk::AsconfAck(c) => asconf_ack_len(c),
            Chunk::Unknown { value, .. } => pad4(4 + value.len()),
        }
    }
}

/// Appends chunk `c` (header, value, padding).
pub(super) fn emit(out: &mut Vec<u8>, c: &Chunk) {
    match c {
        Chunk::Data(d) => put_chunk(out, t::DATA, d.flags.bits(), |o| emit_data(o, d)),
        Chunk::Init(i) => put_chunk(out, t::INIT, 0, |o| put_init(o, i)),
        Chunk::InitAck(i) => put_chunk(out, t::INIT_ACK, 0, |o| put_init(o, i)),
        Chunk::CookieEcho { cookie } => {
            put_chunk(out, t::COOKIE_ECHO, 0, |o| o.extend_from_slice(cookie))
        }
        Chunk::CookieAck => put_chunk(out, t::COOKIE_ACK, 0, |_| {}),
        Chunk::Sack(s) => put_chunk(out, t::SACK, s.flags, |o| emit_sack(o, s)),
        Chunk::Heartbeat(h) => put_chunk(out, t::HEARTBEAT, 0, |o| put_heartbeat(o, h)),
        Chunk::HeartbeatAck(h) => put_chunk(out, t::HEARTBEAT_ACK, 0, |o| put_heartbeat(o, h)),
        Chunk::Shutdown { cum_tsn } => put_chunk(out, t::SHUTDOWN, 0, |o| put_u32(o, *cum_tsn)),
        Chunk::ShutdownAck => put_chunk(out, t::SHUTDOWN_ACK, 0, |_| {}),
        Chunk::Ecne { lowest_tsn } => put_chunk(out, t::ECNE, 0, |o| put_u32(o, *lowest_tsn)),
        Chunk::Cwr { lowest_tsn } => put_chunk(out, t::CWR, 0, |o| put_u32(o, *lowest_tsn)),
        Chunk::ShutdownComplete { reflected } => {
            put_chunk(out, t::SHUTDOWN_COMPLETE, t_bit(*reflected), |_| {})
        }
        Chunk::Abort { cause, reflected } => {
            put_chunk(out, t::ABORT, t_bit(*reflected), |o| emit_abort(o, *cause))
        }
        Chunk::RoundInfo {
            round,
            path,
            hold,
            seq,
        } => put_chunk(out, t::ROUND_INFO, 0, |o| {
            emit_round_info(o, *round, *path, *hold, *seq)
        }),
        Chunk::RateAdvert { seq, rates } => {
            put_chunk(out, t::RATE_ADVERT, 0, |o| emit_rate_advert(o, *seq, rates))
        }
        Chunk::Asconf(c) => put_chunk(out, t::ASCONF, 0, |o| put_asconf(o, c)),
        Chunk::AsconfAck(c) => put_chunk(out, t::ASCONF_ACK, 0, |o| put_asconf_ack(o, c)),
        Chunk::Unknown {
            chunk_type,
            flags,
            value,
        } => put_chunk(out, *chunk_type, *flags, |o| o.extend_from_slice(value)),
    }
}

/// Parses the value `v` of a chunk of type `ctype` with `flags`; `at` is the offset of
/// the value in the packet. Unknown types are kept verbatim.
pub(super) fn parse(ctype: u8, flags: u8, v: &[u8], at: usize) -> Result<Chunk, WireError> {
    let mut r = Reader::at(v, at);
    let unknown = || Chunk::Unknown {
        chunk_type: ctype,
        flags,
        value: Bytes::copy_from_slice(v),
    };
    Ok(match ctype {
        t::DATA => Chunk::Data(parse_data(&mut r, flags)?),
        t::INIT => Chunk::Init(parse_init(v, at)?),
        t::INIT_ACK => Chunk::InitAck(parse_init(v, at)?),
        t::COOKIE_ECHO => Chunk::CookieEcho {
            cookie: Bytes::copy_from_slice(v),
        },
        t::COOKIE_ACK => parse_empty(&r, Chunk::CookieAck, "COOKIE ACK carries a value")?,
        t::SACK => Chunk::Sack(parse_sack(&mut r, flags)?),
        // A peer's own heartbeat info (not ours) is kept verbatim.
        t::HEARTBEAT | t::HEARTBEAT_ACK => match parse_heartbeat(v, at) {
            Ok(h) if ctype == t::HEARTBEAT => Chunk::Heartbeat(h),
            Ok(h) => Chunk::HeartbeatAck(h),
            Err(_) => unknown(),
        },
        t::SHUTDOWN => parse_shutdown(&mut r)?,
        t::ECNE => Chunk::Ecne {
            lowest_tsn: parse_tsn(&mut r, "ECNE is not 8 bytes")?,
        },
        t::CWR => Chunk::Cwr {
            lowest_tsn: parse_tsn(&mut r, "CWR is not 8 bytes")?,
        },
        t::SHUTDOWN_ACK => parse_empty(&r, Chunk::ShutdownAck, "SHUTDOWN ACK carries a value")?,
        t::SHUTDOWN_COMPLETE => parse_empty(
            &r,
            Chunk::ShutdownComplete {
                reflected: flags & T_BIT != 0,
            },
            "SHUTDOWN COMPLETE carries a value",
        )?,
        t::ABORT => parse_abort(v, flags),
        t::ROUND_INFO => parse_round_info(&mut r)?,
        t::RATE_ADVERT => parse_rate_advert(&mut r)?,
        t::ASCONF => Chunk::Asconf(parse_asconf(v, at)?),
        t::ASCONF_ACK => Chunk::AsconfAck(parse_asconf_ack(v, at)?),
        _ => unknown(),
    })
}

/// A chunk without a value.
fn parse_empty(r: &Reader<'_>, chunk: Chunk, what: &'static str) -> Result<Chunk, WireError> {
    r.done(what)?;
    Ok(chunk)
}

/// DATA (RFC 9260 §3.3.1): TSN, stream id, stream sequence number, PPID, user data.
fn emit_data(o: &mut Vec<u8>, d: &DataChunk) {
    put_u32(o, d.tsn);
    put_u16(o, d.sid);
    put_u16(o, d.ssn);
    put_u32(o, d.ppid);
    put_payload(o, &d.payload);
}

fn parse_data(r: &mut Reader<'_>, flags: u8) -> Result<DataChunk, WireError> {
    let tsn = r.u32("DATA shorter than its header")?;
    let sid = r.u16("DATA shorter than its header")?;
    let ssn = r.u16("DATA shorter than its header")?;
    let ppid = r.u32("DATA shorter than its header")?;
    if r.rest() == 0 {
        return Err(r.err("DATA without user data"));
    }
    let payload = Payload::Bytes(Bytes::copy_from_slice(r.bytes(r.rest(), "")?));
    Ok(DataChunk {
        tsn,
        sid,
        ssn,
        ppid,
        flags: DataFlags::from_bits(flags),
        payload,
    })
}

/// SACK (RFC 9260 §3.3.4): cumulative TSN, a_rwnd, block counts, gap blocks,
/// duplicate TSNs.
fn emit_sack(o: &mut Vec<u8>, s: &SackChunk) {
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
}

fn sack_len(s: &SackChunk) -> usize {
    SACK_HEADER_LEN + 4 * s.gap_blocks.len() + 4 * s.dup_tsns.len()
}

fn parse_sack(r: &mut Reader<'_>, flags: u8) -> Result<SackChunk, WireError> {
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
    Ok(SackChunk {
        cum_tsn,
        a_rwnd,
        gap_blocks,
        dup_tsns,
        flags,
    })
}

/// SHUTDOWN (RFC 9260 §3.3.8): the cumulative TSN ack.
fn parse_shutdown(r: &mut Reader<'_>) -> Result<Chunk, WireError> {
    let cum_tsn = r.u32("truncated SHUTDOWN")?;
    r.done("SHUTDOWN longer than 8 bytes")?;
    Ok(Chunk::Shutdown { cum_tsn })
}

/// ECNE or CWR (RFC 9260 Appendix A): one TSN and nothing else.
fn parse_tsn(r: &mut Reader<'_>, what: &'static str) -> Result<u32, WireError> {
    let tsn = r.u32(what)?;
    r.done(what)?;
    Ok(tsn)
}

/// ABORT (RFC 9260 §3.3.7) with at most one error cause, code only (length 4).
fn emit_abort(o: &mut Vec<u8>, cause: Option<u16>) {
    if let Some(code) = cause {
        put_u16(o, code);
        put_u16(o, 4);
    }
}

fn abort_len(cause: Option<u16>) -> usize {
    4 + if cause.is_some() { 4 } else { 0 }
}

/// The first error cause's code, if any (its details are not kept), and the T bit.
fn parse_abort(v: &[u8], flags: u8) -> Chunk {
    Chunk::Abort {
        cause: (v.len() >= 4).then(|| u16::from_be_bytes([v[0], v[1]])),
        reflected: flags & T_BIT != 0,
    }
}

/// The T bit of ABORT and SHUTDOWN COMPLETE (RFC 9260 §3.3.7, §3.3.13).
const T_BIT: u8 = 0x01;

fn t_bit(reflected: bool) -> u8 {
    if reflected {
        T_BIT
    } else {
        0
    }
}

/// Round info (0xB0): path (1), reserved (1), hold time (2), per-path sequence (4),
/// round id (4).
fn emit_round_info(o: &mut Vec<u8>, round: u32, path: u8, hold: u16, seq: u32) {
    o.extend_from_slice(&[path, 0]);
    put_u16(o, hold);
    put_u32(o, seq);
    put_u32(o, round);
}

fn parse_round_info(r: &mut Reader<'_>) -> Result<Chunk, WireError> {
    let path = r.u8("truncated round info")?;
    r.u8("truncated round info")?;
    let hold = r.u16("truncated round info")?;
    let seq = r.u32("truncated round info")?;
    let round = r.u32("truncated round info")?;
    r.done("round info longer than 16 bytes")?;
    Ok(Chunk::RoundInfo {
        round,
        path,
        hold,
        seq,
    })
}

/// Rate advert (0xB1): advert sequence (4), then per path: path (1), reserved (3), rate
/// in bytes/s (4).
fn emit_rate_advert(o: &mut Vec<u8>, seq: u32, rates: &[(u8, u32)]) {
    put_u32(o, seq);
    for &(p, r) in rates {
        o.extend_from_slice(&[p, 0, 0, 0]);
        put_u32(o, r);
    }
}

fn rate_advert_len(rates: &[(u8, u32)]) -> usize {
    8 + 8 * rates.len()
}

fn parse_rate_advert(r: &mut Reader<'_>) -> Result<Chunk, WireError> {
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
    Ok(Chunk::RateAdvert { seq, rates })
}
