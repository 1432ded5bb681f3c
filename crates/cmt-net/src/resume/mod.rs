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

/// The first bytes of a cmtlab data stream: where in the file it starts, the file's
/// length and, when the sender gives one, the name to store it under (what a receiver
/// serving a directory uses; a receiver writing to a named file ignores it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Offset of the stream's first byte in the file.
    pub start: u64,
    /// The whole file's length ([`UNKNOWN_LENGTH`] for a stream).
    pub total: u64,
    /// The file's name as the sender gives it (unchecked: see `transfer::names`).
    pub name: Option<String>,
}

/// [`Header::total`] of a stream whose length is not known when it starts (standard
/// input): the receiver learns it from the sender's digest at the end, and does not
/// keep a resumable part of it.
pub const UNKNOWN_LENGTH: u64 = u64::MAX;

/// The header without a name (version 1).
const MAGIC: &[u8; 8] = b"cmtlab\x01\x00";
/// The header with a name (version 2): two bytes of name length and the name follow.
const MAGIC_NAMED: &[u8; 8] = b"cmtlab\x01\x01";

/// Bytes of a [`Header`] without a name on the stream (a name adds 2 + its length).
pub const HEADER_LEN: usize = 24;

/// The longest name a header carries, in bytes (a longer one is malformed).
pub const MAX_NAME: usize = 1024;

impl Header {
    /// The header's bytes.
    pub fn bytes(&self) -> Bytes {
        let mut v = Vec::with_capacity(self.len());
        v.extend_from_slice(if self.name.is_some() {
            MAGIC_NAMED
        } else {
            MAGIC
        });
        v.extend_from_slice(&self.start.to_be_bytes());
        v.extend_from_slice(&self.total.to_be_bytes());
        if let Some(n) = &self.name {
            v.extend_from_slice(&(n.len() as u16).to_be_bytes());
            v.extend_from_slice(n.as_bytes());
        }
        Bytes::from(v)
    }

    /// Its length on the stream.
    pub fn len(&self) -> usize {
        HEADER_LEN + self.name.as_ref().map_or(0, |n| 2 + n.len())
    }

    /// Never empty (for clippy's `len_without_is_empty`).
    pub fn is_empty(&self) -> bool {
        false
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
        let mut data = data;
        loop {
            let want = self.wanted()?;
            let take = (want - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buf.len() < want {
                return Ok((None, &[]));
            }
            // Complete unless the length just read asks for the name.
            if self.wanted()? == self.buf.len() {
                break;
            }
        }
        self.done = true;
        let start = u64::from_be_bytes(self.buf[8..16].try_into().expect("8 bytes"));
        let total = u64::from_be_bytes(self.buf[16..24].try_into().expect("8 bytes"));
        if start > total {
            return Err(format!("stream header: start {start} past the end {total}"));
        }
        let name = match self.buf.get(HEADER_LEN + 2..) {
            Some(n) => Some(
                String::from_utf8(n.to_vec())
                    .map_err(|_| "stream header: the file's name is not UTF-8".to_string())?,
            ),
            None => None,
        };
        Ok((Some(Header { start, total, name }), data))
    }

    /// How many bytes the header has, as far as what was read tells.
    fn wanted(&self) -> Result<usize, String> {
        if self.buf.len() < 8 {
            return Ok(HEADER_LEN);
        }
        match &self.buf[..8] {
            m if m == MAGIC => Ok(HEADER_LEN),
            m if m == MAGIC_NAMED && self.buf.len() < HEADER_LEN + 2 => Ok(HEADER_LEN + 2),
            m if m == MAGIC_NAMED => {
                let n = u16::from_be_bytes([self.buf[HEADER_LEN], self.buf[HEADER_LEN + 1]]);
                if n as usize > MAX_NAME {
                    return Err(format!(
                        "stream header: a name of {n} bytes (at most {MAX_NAME})"
                    ));
                }
                Ok(HEADER_LEN + 2 + n as usize)
            }
            _ => Err("the data stream does not start with a cmtlab header".into()),
        }
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
        for name in [None, Some("report.pdf".to_string()), Some(String::new())] {
            let h = Header {
                start: 5,
                total: 9,
                name,
            };
            let mut stream = h.bytes().to_vec();
            assert_eq!(stream.len(), h.len());
            stream.extend_from_slice(b"abcd");
            // Every split point: the header read whole, what follows passed on.
            for cut in 0..stream.len() {
                let mut r = HeaderReader::default();
                let (first, rest1) = r.feed(&stream[..cut]).unwrap();
                let (second, rest2) = match first {
                    Some(got) => (
                        Some(got),
                        [rest1, r.feed(&stream[cut..]).unwrap().1].concat(),
                    ),
                    None => {
                        let (got, rest) = r.feed(&stream[cut..]).unwrap();
                        (got, rest.to_vec())
                    }
                };
                assert_eq!(second.as_ref(), Some(&h), "cut at {cut}");
                assert_eq!(rest2, b"abcd", "cut at {cut}");
                assert_eq!(r.feed(b"ef").unwrap(), (None, &b"ef"[..]));
            }
        }
        let mut bad = HeaderReader::default();
        assert!(bad.feed(&[0u8; 30]).is_err());
    }

    #[test]
    fn a_header_with_a_name_too_long_or_not_utf8_is_refused() {
        let mut long = MAGIC_NAMED.to_vec();
        long.extend_from_slice(&[0; 16]);
        long.extend_from_slice(&((MAX_NAME + 1) as u16).to_be_bytes());
        let e = HeaderReader::default().feed(&long).unwrap_err();
        assert!(e.contains("a name of 1025 bytes"), "{e}");
        let mut latin1 = MAGIC_NAMED.to_vec();
        latin1.extend_from_slice(&[0; 16]);
        latin1.extend_from_slice(&[0, 1, 0xE9]);
        let e = HeaderReader::default().feed(&latin1).unwrap_err();
        assert!(e.contains("not UTF-8"), "{e}");
    }
}
