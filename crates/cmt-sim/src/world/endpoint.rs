//! One endpoint of the simulation: an association and what the event loop needs to
//! drive it.

use cmt_core::{Association, Time};

use crate::ids::{EndpointId, FlowId, RouteId};
use crate::recorder::Probe;

/// An association end: the association under study's sender (0) or receiver (1), or
/// one end of a TCP-like background flow.
pub(crate) struct Endpoint {
    /// The protocol state.
    pub(crate) assoc: Association<Probe>,
    /// When its timer is armed (the event queue may hold stale timer events).
    pub(crate) timer_at: Option<Time>,
    /// Its pending timer events.
    pub(crate) timer_keys: super::timer_keys::TimerKeys,
    /// The route of each of its paths.
    pub(crate) routes: Vec<RouteId>,
    /// The endpoint it talks to.
    pub(crate) peer: EndpointId,
    /// The background flow it belongs to (`None`: the association under study).
    pub(crate) flow: Option<FlowId>,
}

impl Endpoint {
    pub(crate) fn new(
        mut assoc: Association<Probe>,
        routes: Vec<RouteId>,
        peer: EndpointId,
        flow: Option<FlowId>,
    ) -> Self {
        // Simulated data are lengths; the recorder counts deliveries from events.
        assoc.discard_delivered();
        Endpoint {
            assoc,
            timer_at: None,
            timer_keys: Default::default(),
            routes,
            peer,
            flow,
        }
    }
}

impl std::ops::Index<EndpointId> for Vec<Endpoint> {
    type Output = Endpoint;
    fn index(&self, e: EndpointId) -> &Endpoint {
        &self[e.0]
    }
}

impl std::ops::IndexMut<EndpointId> for Vec<Endpoint> {
    fn index_mut(&mut self, e: EndpointId) -> &mut Endpoint {
        &mut self[e.0]
    }
}
