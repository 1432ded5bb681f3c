//! Index newtypes of the simulated network, so a link direction, a route, an endpoint
//! and a background flow cannot be mistaken for one another (paths have
//! [`cmt_core::PathId`]).

use std::ops::Index;

/// A link direction: scenario link `l` is `LinkDir(2l)` forward (the way data goes) and
/// `LinkDir(2l + 1)` back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkDir(pub usize);

impl LinkDir {
    /// The other direction of the same link.
    pub fn reverse(self) -> LinkDir {
        LinkDir(self.0 ^ 1)
    }
}

/// A route: the chain of link directions a packet crosses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RouteId(pub usize);

/// An endpoint: 0 and 1 are the sender and receiver of the association under study,
/// then the ends of each TCP-like background flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EndpointId(pub usize);

impl EndpointId {
    /// The association under study's sender.
    pub const SENDER: EndpointId = EndpointId(0);
    /// The association under study's receiver.
    pub const RECEIVER: EndpointId = EndpointId(1);
}

/// A background flow (one copy of a `[[traffic]]` entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub usize);

impl Index<RouteId> for Vec<Vec<LinkDir>> {
    type Output = Vec<LinkDir>;
    fn index(&self, r: RouteId) -> &Vec<LinkDir> {
        &self[r.0]
    }
}
