//! Our addresses as the peer knows them (RFC 5061 reconfiguration): those it accepted,
//! those waiting for its answer and those gone but not yet deleted at the peer.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use cmt_core::PathId;

/// Our addresses as the peer knows them, and those waiting for its answer.
#[derive(Debug, Default)]
pub(super) struct Addresses {
    /// Addresses of ours the peer knows (the handshake's, then those it accepted).
    pub(super) announced: BTreeSet<IpAddr>,
    /// Added addresses waiting for the peer's answer, with the paths from them.
    pub(super) pending: BTreeMap<IpAddr, Vec<PathId>>,
    /// Addresses of ours that are gone, not yet deleted at the peer (a handover's old
    /// address waits for the new one).
    pub(super) gone: BTreeSet<IpAddr>,
}

impl Addresses {
    pub(super) fn new(announced: impl IntoIterator<Item = IpAddr>) -> Self {
        Addresses {
            announced: announced.into_iter().collect(),
            pending: BTreeMap::new(),
            gone: BTreeSet::new(),
        }
    }
}
