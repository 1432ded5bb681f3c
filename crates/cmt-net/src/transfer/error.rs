//! Why a transfer did not complete.

use std::fmt;

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
    Ended(String),
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
            | TransferError::Ended(m)
            | TransferError::Io(m)
            | TransferError::Unconfirmed(m) => f.write_str(m),
            TransferError::Refused(m) => write!(f, "the receiver refused the transfer: {m}"),
            TransferError::Aborted => f.write_str("aborted: ABORT sent to the peer"),
        }
    }
}

impl std::error::Error for TransferError {}

/// The message, for callers that report errors as text.
impl From<TransferError> for String {
    fn from(e: TransferError) -> String {
        e.to_string()
    }
}
