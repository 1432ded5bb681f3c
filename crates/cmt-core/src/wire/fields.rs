//! Byte-level writing and bounds-checked reading of SCTP's big-endian fields and
//! type-length-value areas.

use bytes::Bytes;

use super::WireError;
use crate::packet::Payload;

pub(super) fn pad4(n: usize) -> usize {
    (n + 3) & !3
}

pub(super) fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}
pub(super) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends a chunk: header with the unpadded length, value, zero padding.
pub(super) fn put_chunk(out: &mut Vec<u8>, ctype: u8, flags: u8, value: impl FnOnce(&mut Vec<u8>)) {
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
pub(super) fn put_param(out: &mut Vec<u8>, ptype: u16, value: &[u8]) {
    out.resize(pad4(out.len()), 0);
    put_u16(out, ptype);
    put_u16(out, (4 + value.len()) as u16);
    out.extend_from_slice(value);
}

pub(super) fn put_payload(out: &mut Vec<u8>, p: &Payload) {
    match p {
        Payload::Bytes(b) => out.extend_from_slice(b),
        Payload::Synthetic(n) => out.resize(out.len() + *n as usize, 0),
    }
}

/// A bounds-checked reader over one slice, reporting offsets relative to the packet.
pub(super) struct Reader<'a> {
    pub(super) buf: &'a [u8],
    pub(super) pos: usize,
    pub(super) base: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, whose first byte is at `base` in the packet.
    pub(super) fn at(buf: &'a [u8], base: usize) -> Self {
        Reader { buf, pos: 0, base }
    }
}

impl<'a> Reader<'a> {
    pub(super) fn err(&self, what: &'static str) -> WireError {
        WireError {
            offset: self.base + self.pos,
            what,
        }
    }
    pub(super) fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], WireError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let Some(end) = end else {
            return Err(self.err(what));
        };
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    pub(super) fn u8(&mut self, what: &'static str) -> Result<u8, WireError> {
        Ok(self.bytes(1, what)?[0])
    }
    pub(super) fn u16(&mut self, what: &'static str) -> Result<u16, WireError> {
        let b = self.bytes(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    pub(super) fn u32(&mut self, what: &'static str) -> Result<u32, WireError> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub(super) fn u64(&mut self, what: &'static str) -> Result<u64, WireError> {
        let b = self.bytes(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_be_bytes(a))
    }
    pub(super) fn rest(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub(super) fn done(&self, what: &'static str) -> Result<(), WireError> {
        if self.rest() == 0 {
            Ok(())
        } else {
            Err(self.err(what))
        }
    }
}

/// Splits a TLV area (chunks or parameters) into `(type field, value, offset)` items.
pub(super) fn tlvs(
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
