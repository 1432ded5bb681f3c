//! Resuming an interrupted transfer (`send --resume`, `recv --resume`).
//!
//! A receiver asked to resume keeps what it received in `.NAME.part` beside `--out`,
//! and every checkpoint (each receive window's worth of data) makes it durable (flush,
//! fsync) and records its length in `.NAME.resume` ([`journal`]). Started again, it
//! truncates the partial file to the recorded length, hashes it, and offers it to the
//! sender in its INIT ACK ([`Offer`]: the file's total length, the length it holds, the
//! SHA-256 of those bytes). A sender asked to resume hashes the same prefix of its file:
//! when the lengths and the digests agree it sends only the rest, otherwise the source
//! changed and it refuses. Either way the data stream starts with a [`Header`] naming
//! where it starts, so the receiver appends or starts over, and the whole-file SHA-256
//! is still confirmed both ways at the end (the file digests of FILE-DIGEST).

pub mod journal;

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use bytes::Bytes;
use cmt_core::packet::InitParam;
use sha2::{Digest, Sha256};

/// INIT ACK parameter type of the receiver's [`Offer`]. The two high bits `10` make a
/// peer that does not know it skip it (RFC 9260 §3.2.1).
pub const RESUME_OFFER: u16 = 0x80B3;

/// What a resuming receiver holds of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offer {
    /// The whole file's length, as the sender announced it.
    pub total: u64,
    /// Bytes held (durably), from the start.
    pub offset: u64,
    /// SHA-256 of those bytes.
    pub prefix_sha256: [u8; 32],
}

impl Offer {
    /// As an INIT ACK parameter.
    pub fn param(&self) -> InitParam {
        let mut v = Vec::with_capacity(48);
        v.extend_from_slice(&self.total.to_be_bytes());
        v.extend_from_slice(&self.offset.to_be_bytes());
        v.extend_from_slice(&self.prefix_sha256);
        InitParam::Unknown {
            ptype: RESUME_OFFER,
            value: Bytes::from(v),
        }
    }

    /// The offer among a peer's INIT ACK parameters, if there is a well-formed one.
    pub fn from_params(params: &[(u16, Bytes)]) -> Option<Offer> {
        let (_, v) = params.iter().find(|(t, _)| *t == RESUME_OFFER)?;
        if v.len() != 48 {
            return None;
        }
        let total = u64::from_be_bytes(v[..8].try_into().ok()?);
        let offset = u64::from_be_bytes(v[8..16].try_into().ok()?);
        (offset <= total).then(|| Offer {
            total,
            offset,
            prefix_sha256: v[16..48].try_into().expect("32 bytes"),
        })
    }
}

/// Sets `f`'s length to `len` and its position there.
pub(crate) fn truncate(f: &mut File, len: u64) -> std::io::Result<()> {
    f.set_len(len)?;
    f.seek(SeekFrom::Start(len))?;
    Ok(())
}

/// SHA-256 state of the first `len` bytes read from `r` (an error if it has fewer).
pub fn hash_prefix(r: &mut impl Read, len: u64) -> std::io::Result<Sha256> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        r.read_exact(&mut buf[..n])?;
        h.update(&buf[..n]);
        left -= n as u64;
    }
    Ok(h)
}

/// Opens what a resumable receiver left in `part` (opened read-write): with a journal
/// record whose length the file holds, the file is cut to that length and hashed, and
/// the offer returned; otherwise it is emptied. The file is positioned at its end.
pub(crate) fn reopen(
    f: &File,
    part: &Path,
    record: Option<journal::Record>,
) -> Result<(Sha256, Option<Offer>), String> {
    let at = |e: std::io::Error| format!("{}: {e}", part.display());
    let mut f = f;
    let len = f.metadata().map_err(at)?.len();
    let Some(r) = record.filter(|r| r.offset <= len && r.offset > 0) else {
        f.set_len(0).map_err(at)?;
        f.seek(SeekFrom::Start(0)).map_err(at)?;
        return Ok((Sha256::new(), None));
    };
    f.set_len(r.offset).map_err(at)?;
    f.seek(SeekFrom::Start(0)).map_err(at)?;
    let hasher = hash_prefix(&mut f, r.offset).map_err(at)?;
    f.seek(SeekFrom::Start(r.offset)).map_err(at)?;
    let offer = Offer {
        total: r.total,
        offset: r.offset,
        prefix_sha256: hasher.clone().finalize().into(),
    };
    Ok((hasher, Some(offer)))
}

/// The first bytes of a cmtlab data stream: where in the file it starts, and the file's
/// length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Offset of the stream's first byte in the file.
    pub start: u64,
    /// The whole file's length ([`UNKNOWN_LENGTH`] for a stream).
    pub total: u64,
}

/// [`Header::total`] of a stream whose length is not known when it starts (standard
/// input): the receiver learns it from the sender's digest at the end, and does not
/// keep a resumable part of it.
pub const UNKNOWN_LENGTH: u64 = u64::MAX;

const MAGIC: &[u8; 8] = b"cmtlab\x01\x00";

/// Bytes of a [`Header`] on the stream.
pub const HEADER_LEN: usize = 24;

impl Header {
    /// The header's bytes.
    pub fn bytes(&self) -> Bytes {
        let mut v = Vec::with_capacity(HEADER_LEN);
        v.extend_from_slice(MAGIC);
        v.extend_from_slice(&self.start.to_be_bytes());
        v.extend_from_slice(&self.total.to_be_bytes());
        Bytes::from(v)
    }
}

/// Reads a [`Header`] off the front of a stream delivered in pieces.
#[derive(Default)]
pub struct HeaderReader {
    buf: Vec<u8>,
    done: bool,
}

impl HeaderReader {
    /// Feeds the next piece of the stream: `Ok(None)` while the header is incomplete,
    /// then the header and what of `data` follows it (once; afterwards every piece is
    /// returned whole with `None`). An error when the stream does not start with one.
    pub fn feed<'a>(&mut self, data: &'a [u8]) -> Result<(Option<Header>, &'a [u8]), String> {
        if self.done {
            return Ok((None, data));
        }
        let take = (HEADER_LEN - self.buf.len()).min(data.len());
        self.buf.extend_from_slice(&data[..take]);
        if self.buf.len() < HEADER_LEN {
            return Ok((None, &[]));
        }
        self.done = true;
        if &self.buf[..8] != MAGIC {
            return Err("the data stream does not start with a cmtlab header".into());
        }
        let start = u64::from_be_bytes(self.buf[8..16].try_into().expect("8 bytes"));
        let total = u64::from_be_bytes(self.buf[16..24].try_into().expect("8 bytes"));
        if start > total {
            return Err(format!("stream header: start {start} past the end {total}"));
        }
        Ok((Some(Header { start, total }), &data[take..]))
    }

    /// Whether the header was read.
    pub fn is_done(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offer_round_trips_through_its_parameter_and_a_bad_one_is_none() {
        let o = Offer {
            total: 100,
            offset: 40,
            prefix_sha256: [7; 32],
        };
        let InitParam::Unknown { ptype, value } = o.param() else {
            panic!("an unknown parameter")
        };
        assert_eq!(Offer::from_params(&[(ptype, value.clone())]), Some(o));
        assert_eq!(Offer::from_params(&[(ptype, value.slice(..47))]), None);
        let mut past = value.to_vec();
        past[8..16].copy_from_slice(&101u64.to_be_bytes());
        assert_eq!(Offer::from_params(&[(ptype, Bytes::from(past))]), None);
    }

    #[test]
    fn a_header_split_over_pieces_is_read_and_what_follows_passed_on() {
        let h = Header { start: 5, total: 9 };
        let mut stream = h.bytes().to_vec();
        stream.extend_from_slice(b"abcd");
        let mut r = HeaderReader::default();
        assert_eq!(r.feed(&stream[..10]).unwrap(), (None, &[][..]));
        let (got, rest) = r.feed(&stream[10..]).unwrap();
        assert_eq!((got, rest), (Some(h), &b"abcd"[..]));
        assert_eq!(r.feed(b"ef").unwrap(), (None, &b"ef"[..]));
        let mut bad = HeaderReader::default();
        assert!(bad.feed(&[0u8; 30]).is_err());
    }
}
