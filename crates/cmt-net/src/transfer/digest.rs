//! FILE-DIGEST, both ways: the sender announces the length and SHA-256 of what it sent
//! (bundled with its SHUTDOWN), the receiver commits the file only when what it
//! received has the same, and answers with what it stored (bundled with its SHUTDOWN
//! ACK) — or, when they differ, with what it received, bundled with an ABORT. Neither
//! end reports success on anything less; nothing depends on SHUTDOWN COMPLETE, which
//! RFC 4895 does not let a key protect.
//!
//! A receiver that refuses a transfer for a reason of its own (a name it will not store
//! under, a file of that name that exists) says why in the same chunk type with the
//! [`REFUSAL`] flag, bundled with its ABORT, so the sender's user reads the reason
//! instead of a bare error cause.

use cmt_core::wire::chunk_type;
use cmt_core::Chunk;

use crate::sink::hex;

/// The FILE-DIGEST chunk: 8 bytes of length (big-endian) and the 32-byte SHA-256.
pub(super) fn digest_chunk(len: u64, sha_hex: &str) -> Chunk {
    let mut value = len.to_be_bytes().to_vec();
    value.extend(
        (0..sha_hex.len() / 2)
            .filter_map(|i| u8::from_str_radix(&sha_hex[2 * i..2 * i + 2], 16).ok()),
    );
    Chunk::Unknown {
        chunk_type: chunk_type::FILE_DIGEST,
        flags: 0,
        value: value.into(),
    }
}

/// The flag of a FILE-DIGEST chunk that carries a refusal's reason (UTF-8).
pub(super) const REFUSAL: u8 = 1;

/// The longest reason a refusal carries, in bytes.
const MAX_REASON: usize = 400;

/// A FILE-DIGEST chunk with the [`REFUSAL`] flag saying `why` (cut to 400 bytes).
pub(super) fn refusal_chunk(why: &str) -> Chunk {
    let mut end = why.len().min(MAX_REASON);
    while !why.is_char_boundary(end) {
        end -= 1;
    }
    Chunk::Unknown {
        chunk_type: chunk_type::FILE_DIGEST,
        flags: REFUSAL,
        value: why.as_bytes()[..end].to_vec().into(),
    }
}

/// The reason a refusal chunk gives, if `c` is one (printable characters only).
pub(super) fn parse_refusal(c: &Chunk) -> Option<String> {
    match c {
        Chunk::Unknown {
            chunk_type: chunk_type::FILE_DIGEST,
            flags: REFUSAL,
            value,
        } => Some(
            String::from_utf8_lossy(&value[..value.len().min(MAX_REASON)])
                .chars()
                .filter(|c| !c.is_control())
                .collect(),
        ),
        _ => None,
    }
}

/// Length and SHA-256 (hex) of a FILE-DIGEST chunk, if well formed.
pub(super) fn parse_digest(c: &Chunk) -> Option<(u64, String)> {
    match c {
        Chunk::Unknown {
            chunk_type: chunk_type::FILE_DIGEST,
            flags: 0,
            value,
        } if value.len() == 40 => {
            let len = u64::from_be_bytes(value[..8].try_into().ok()?);
            Some((len, hex(&value[8..])))
        }
        _ => None,
    }
}

/// Whether what the receiver got (`ours`: length, SHA-256) is what the sender announced;
/// the error, for the receiver's user, says what differs.
pub(super) fn compare_announced(
    announced: Option<&(u64, String)>,
    ours: (u64, &str),
) -> Result<(), String> {
    match announced {
        None => Err(format!(
            "the sender shut down without announcing its file's length and SHA-256 \
             ({} bytes received); nothing was stored",
            ours.0
        )),
        Some((len, sha)) if *len == ours.0 && sha == ours.1 => Ok(()),
        Some((len, sha)) => Err(format!(
            "received {} bytes with SHA-256 {}, but the sender announced {len} bytes with \
             {sha}: the data was changed or cut short on the way; nothing was stored",
            ours.0, ours.1
        )),
    }
}

/// The sender's message when the receiver refused the file and said what it received.
pub(super) fn refused(sent: (u64, &str), got: Option<&(u64, String)>) -> String {
    match got {
        Some((len, sha)) => format!(
            "the receiver received {len} bytes with SHA-256 {sha}, not the {} bytes with {} \
             sent, and stored nothing",
            sent.0, sent.1
        ),
        None => "the receiver refused the file".into(),
    }
}

/// Whether the receiver's digest confirms what was sent; the error says what differs.
pub(super) fn check_digest(sent: (u64, &str), got: Option<(u64, String)>) -> Result<(), String> {
    match got {
        None => {
            Err("the receiver closed without confirming what it stored (no FILE-DIGEST)".into())
        }
        Some((len, sha)) if len == sent.0 && sha == sent.1 => Ok(()),
        Some((len, sha)) => Err(format!(
            "the receiver stored {len} bytes with SHA-256 {sha}; {} bytes with {} were sent",
            sent.0, sent.1
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_digest_round_trips_and_any_difference_is_named() {
        let sha = "ab".repeat(32);
        let c = digest_chunk(1234, &sha);
        assert_eq!(parse_digest(&c), Some((1234, sha.clone())));
        assert!(check_digest((1234, &sha), parse_digest(&c)).is_ok());
        let e = check_digest((1235, &sha), parse_digest(&c)).unwrap_err();
        assert!(
            e.contains("stored 1234 bytes") && e.contains("1235 bytes"),
            "{e}"
        );
        let other = "cd".repeat(32);
        let e = check_digest((1234, &other), parse_digest(&c)).unwrap_err();
        assert!(e.contains(&sha) && e.contains(&other), "{e}");
        let e = check_digest((1234, &sha), None).unwrap_err();
        assert!(e.contains("without confirming"), "{e}");
    }

    #[test]
    fn a_refusal_carries_its_reason_and_is_never_taken_for_a_digest() {
        let why = "x".repeat(40);
        let c = refusal_chunk(&why);
        assert_eq!(parse_refusal(&c), Some(why));
        assert_eq!(parse_digest(&c), None, "40 bytes, but a refusal");
        assert_eq!(parse_refusal(&digest_chunk(1, &"ab".repeat(32))), None);
        let long = "é".repeat(300);
        let cut = parse_refusal(&refusal_chunk(&long)).unwrap();
        assert_eq!(cut, "é".repeat(200));
        let Chunk::Unknown { value, .. } = refusal_chunk("a\x1b[2Jb") else {
            panic!("a chunk")
        };
        let forged = Chunk::Unknown {
            chunk_type: chunk_type::FILE_DIGEST,
            flags: REFUSAL,
            value,
        };
        assert_eq!(parse_refusal(&forged).as_deref(), Some("a[2Jb"));
    }

    #[test]
    fn the_receiver_accepts_only_what_the_sender_announced() {
        let sha = "ab".repeat(32);
        let announced = (1234, sha.clone());
        assert!(compare_announced(Some(&announced), (1234, &sha)).is_ok());
        let e = compare_announced(Some(&announced), (1000, &sha)).unwrap_err();
        assert!(
            e.contains("received 1000 bytes") && e.contains("announced 1234"),
            "{e}"
        );
        let e = compare_announced(Some(&announced), (1234, &"cd".repeat(32))).unwrap_err();
        assert!(e.contains("nothing was stored"), "{e}");
        let e = compare_announced(None, (1234, &sha)).unwrap_err();
        assert!(e.contains("without announcing"), "{e}");
    }
}
