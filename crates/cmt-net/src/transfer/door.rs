//! A one-shot receiver's door while its transfer runs (`recv --out`): a second sender is
//! answered, never met with silence.
//!
//! While the running association's peer is heard from, an INIT (or a COOKIE ECHO) of
//! another association is answered with an ABORT ("Out of Resource") that says why: the
//! receiver takes one transfer at a time. Once the peer has been silent for [`STALE`] —
//! a sender killed, or cut off, and started again — the new sender is answered as at the
//! start, with the offer of what the receiver holds when it resumes (`--resume`), and
//! its association replaces the stale one at once: the stale peer gets an ABORT, what
//! was written is made durable, and the new stream continues it (a sender that resumes)
//! or starts it again (one that does not). A party that would take over a transfer
//! must wait until its sender has gone quiet, and without `--key` it could have started
//! a transfer of its own anyway.

use cmt_core::{Chunk, Duration, Packet};

use super::gate::{Accepted, Gate, Passed};
use super::options::Options;
use crate::io::{Arrival, Sockets};
use crate::resume::Offer;

/// How long the running association's peer must have been silent before a new sender
/// may replace it.
pub const STALE: Duration = Duration::from_secs(2);

/// The reason a busy receiver gives; a sender that reads [`BUSY_MARK`] in it tries
/// again for a while (the sender's `connect_when_free`), since the transfer it waits for may be its own
/// predecessor's, about to be replaced.
const BUSY: &str = "the receiver is busy with another transfer (recv --out takes one at a \
                    time; a sender silent for 2 s is replaced by the next)";

/// What a sender recognises a busy one-shot receiver's refusal by.
pub(super) const BUSY_MARK: &str = "busy with another transfer";

/// How long a sender refused by a busy one-shot receiver keeps trying: the [`STALE`]
/// time of the transfer it may be replacing, and some.
pub(super) const BUSY_RETRY_FOR: std::time::Duration = std::time::Duration::from_secs(6);

/// The listener a one-shot receiver keeps while its transfer runs.
pub(super) struct Door {
    gate: Gate,
}

impl Door {
    pub(super) fn new(mut gate: Gate) -> Door {
        gate.set_busy_reason(BUSY);
        Door { gate }
    }

    /// Whether arrival `a` knocks: an INIT, or the COOKIE ECHO of an association other
    /// than ours (`local_vtag`).
    pub(super) fn knocks(a: &Arrival, local_vtag: u32) -> bool {
        let Ok(p) = &a.packet else { return false };
        starts_one(p) && p.vtag != local_vtag
    }

    /// Answers arrival `a`; `stale`: the running association's peer has been silent for
    /// [`STALE`], so a new one may replace it, offered `offer` when it resumes. Returns
    /// the association that replaces it.
    pub(super) async fn answer(
        &mut self,
        socks: &mut Sockets,
        o: &Options,
        a: &Arrival,
        (stale, offer): (bool, Option<Offer>),
    ) -> Option<Accepted> {
        self.gate.set_offer(offer);
        match self.gate.pass(socks, o, a, !stale).await {
            Passed::Accepted(new) => Some(new),
            Passed::Answered | Passed::Busy | Passed::Rejected => None,
        }
    }
}

/// Whether `p` starts an association (an INIT or a COOKIE ECHO first).
fn starts_one(p: &Packet) -> bool {
    matches!(
        p.chunks.first(),
        Some(Chunk::Init(_)) | Some(Chunk::CookieEcho { .. })
    )
}
