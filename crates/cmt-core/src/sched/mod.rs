//! Data schedulers: which path carries the next new chunk.
//!
//! One scheduler instance per association, built by a [`SchedulerFactory`]; [`by_name`]
//! is the table scenario files use. The core only asks when new data may be sent at all
//! (the peer window has room) and ignores a choice whose path cannot send, so a
//! scheduler can never push data beyond cwnd, rwnd or onto a failed path.

mod round_robin;

pub use round_robin::{RoundRobin, RoundRobinFactory};

use crate::params::{ParamError, Params};
use crate::path::{PathId, PathView};
use crate::time::Time;

/// What a scheduler sees when asked for a path.
#[derive(Clone, Debug)]
pub struct SchedContext<'a> {
    /// Current time.
    pub now: Time,
    /// Every path, indexed by `PathId.0`.
    pub paths: &'a [PathView],
    /// Peer receive window left (a_rwnd minus bytes in flight), bytes.
    pub peer_rwnd: u64,
    /// User bytes of the chunk to place.
    pub chunk_len: u32,
    /// User bytes waiting in the send queue (saturating for a backlogged source).
    pub queued_bytes: u64,
}

/// Chooses paths for new data.
pub trait Scheduler: Send {
    /// A transmission opportunity starts (a SACK, timeout or write was just handled).
    fn begin(&mut self, _ctx: &SchedContext<'_>) {}
    /// The path for the next new chunk, or `None` to send no new data now.
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId>;
    /// The chunk was sent on `path`.
    fn on_sent(&mut self, _path: PathId, _tsn: u64, _bytes: u32) {}
}

/// Builds a scheduler for an association.
pub trait SchedulerFactory: Send + Sync {
    /// Registry name.
    fn name(&self) -> &'static str;
    /// A scheduler for an association with `num_paths` paths.
    fn build(&self, num_paths: usize) -> Box<dyn Scheduler>;
}

/// Names accepted by [`by_name`].
pub const NAMES: &[&str] = &["round-robin"];

/// The registry: scenario name → factory.
pub fn by_name(name: &str, params: &Params) -> Result<Box<dyn SchedulerFactory>, ParamError> {
    match name {
        "round-robin" | "rr" | "cmt" => Ok(Box::new(RoundRobinFactory::from_params(params)?)),
        _ => Err(ParamError(format!(
            "unknown scheduler `{name}` (known: {})",
            NAMES.join(", ")
        ))),
    }
}
