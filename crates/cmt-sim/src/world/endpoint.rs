//! One endpoint of the simulation: an association and what the event loop needs to
//! drive it.

use cmt_core::{Association, Time};

use crate::recorder::Probe;

/// An association end: the association under study's sender (0) or receiver (1), or
/// one end of a TCP-like background flow.
pub(crate) struct Endpoint {
    /// The protocol state.
    pub(crate) assoc: Association<Probe>,
    /// When its timer is armed (the event queue may hold stale timer events).
    pub(crate) timer_at: Option<Time>,
    /// The route of each of its paths.
    pub(crate) routes: Vec<usize>,
    /// The endpoint it talks to.
    pub(crate) peer: usize,
    /// The background flow it belongs to (`None`: the association under study).
    pub(crate) flow: Option<usize>,
}

impl Endpoint {
    pub(crate) fn new(
        assoc: Association<Probe>,
        routes: Vec<usize>,
        peer: usize,
        flow: Option<usize>,
    ) -> Self {
        Endpoint {
            assoc,
            timer_at: None,
            routes,
            peer,
            flow,
        }
    }
}
