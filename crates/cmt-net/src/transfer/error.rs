//! Why a transfer did not complete.

use std::fmt;
use std::time::Duration;

use cmt_core::setup::{CAUSE_OUT_OF_RESOURCE, CAUSE_USER_INITIATED_ABORT};

/// Why a transfer did not complete; `Display` gives the one-line message for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransferError {
    /// An option, address or the destination was refused before any packet was sent.
    Invalid(String),
    /// No association: nobody answered or associated in time, or setup failed.
    Setup(String),
    /// The association ended without a graceful close: the peer aborted or stopped
    /// answering, the sender went silent, or the time limit passed (an ABORT told the
    /// peer where it could).
    Ended(Ended),
    /// Reading the source, storing the data, or writing the capture or trace failed
    /// (an ABORT told the peer).
    Io(String),
    /// The user aborted: an ABORT went to the peer.
    Aborted,
    /// The receiver's confirmation did not match what was sent.
    Unconfirmed(String),
    /// The receiver refused the data for a reason it gave (a name it does not store
    /// under, a file of that name that exists, its limit of transfers at once).
    Refused(String),
}

impl fmt::Display for TransferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransferError::Invalid(m)
            | TransferError::Setup(m)
            | TransferError::Io(m)
            | TransferError::Unconfirmed(m) => f.write_str(m),
            TransferError::Ended(why) => why.fmt(f),
            TransferError::Refused(m) => write!(f, "the receiver refused the transfer: {m}"),
            TransferError::Aborted => f.write_str("aborted: ABORT sent to the peer"),
        }
    }
}

impl std::error::Error for TransferError {}

/// How an established association ended without a graceful close.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ended {
    /// The peer sent an ABORT, with the error cause it gave, if any (RFC 9260 §3.3.10).
    PeerAborted(Option<u16>),
    /// Nothing came from the peer on any path for the outage tolerance.
    PeerSilent(Duration),
    /// The peer violated the protocol (it acknowledged data never sent, for one); an
    /// ABORT told it.
    PeerViolated,
    /// The association failed otherwise: the peer stopped answering.
    PeerStopped,
    /// The transfer's time limit passed; an ABORT told the peer.
    TimedOut(Duration),
    /// The association closed before the sender's SHUTDOWN announced the file.
    ClosedEarly,
    /// Another association replaced this one before its file was opened.
    Replaced,
}

impl fmt::Display for Ended {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ended::PeerAborted(Some(CAUSE_OUT_OF_RESOURCE)) => f.write_str(
                "the peer aborted the association: out of resource (the receiver could not store the data)",
            ),
            Ended::PeerAborted(Some(CAUSE_USER_INITIATED_ABORT)) => {
                f.write_str("the peer aborted the association (user-initiated)")
            }
            Ended::PeerAborted(Some(c)) => {
                write!(f, "the peer aborted the association (error cause {c})")
            }
            Ended::PeerAborted(None) => f.write_str("the peer aborted the association"),
            Ended::PeerSilent(t) => write!(
                f,
                "nothing came from the peer on any path for {} s (the outage tolerance): \
                 it is gone or every path is down",
                t.as_secs()
            ),
            Ended::PeerViolated => f.write_str(
                "the peer violated the protocol (it acknowledged data never sent, for one): \
                 ABORT sent",
            ),
            Ended::PeerStopped => f.write_str("the association failed: the peer stopped answering"),
            Ended::TimedOut(t) => write!(f, "transfer timed out after {} s", t.as_secs_f64()),
            Ended::ClosedEarly => f.write_str("the association closed before the peer's SHUTDOWN"),
            Ended::Replaced => f.write_str("replaced before a file"),
        }
    }
}

/// The message, for callers that report errors as text.
impl From<TransferError> for String {
    fn from(e: TransferError) -> String {
        e.to_string()
    }
}
