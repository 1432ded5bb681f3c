//! Data schedulers: which path carries the next new chunk.
//!
//! One scheduler instance per association, built by a [`SchedulerFactory`]; [`builtin`]
//! is the table scenario files use ([`REGISTRY`] adds any registered at run time). The core only asks when new data may be sent at all
//! (the peer window has room) and ignores a choice whose path cannot send, so a
//! scheduler can never push data beyond cwnd, rwnd or onto a failed path.

mod blest;
mod cmt_qa;
mod daps;
mod db_cmt;
mod ecf;
mod fast_slow;
mod ios;
mod japs;
mod linux_mptcp;
mod min_rtt;
mod picoquic_rr;
mod redundant;
mod rev;
mod round_robin;
mod round_robin_strict;
mod weighted;

pub use blest::{Blest, BlestFactory};
pub use cmt_qa::{CmtQa, CmtQaFactory};
pub use daps::{Daps, DapsFactory};
pub use db_cmt::{DbCmt, DbCmtFactory};
pub use ecf::{Ecf, EcfFactory};
pub use ios::{Ios, IosFactory, ServiceType};
pub use japs::{
    positions as japs_positions, repair_bytes as japs_repair_bytes, Japs, JapsFactory, PathPlan,
};
pub use linux_mptcp::LinuxMptcp;
pub use min_rtt::{MinRtt, MinRttFactory};
pub use picoquic_rr::PicoquicRr;
pub use redundant::{Redundant, RedundantFactory};
pub use rev::{awnd_delta, Flavour, ReceiverDriven, ReceiverDrivenFactory};
pub use round_robin::{RoundRobin, RoundRobinFactory};
pub use round_robin_strict::{StrictRoundRobin, StrictRoundRobinFactory};
pub use weighted::{Weighted, WeightedFactory};

use crate::params::{ParamError, Params};
use crate::registry::Table;
use crate::time::Time;
use crate::view::{PathId, PathView};

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
    /// Chunks not sent yet, reserved ones included (`usize::MAX` for a backlogged
    /// source): a [`Scheduler::select_at`] position must be below it.
    pub chunks_available: usize,
    /// Chunks that already have a TSN but were not sent yet because a path took a
    /// chunk further down the queue ([`Scheduler::select_at`]); they are the head of
    /// the queue, in TSN order.
    pub reserved: usize,
    /// The latest advertised receive window (a_rwnd) of the peer, bytes.
    pub peer_awnd: u64,
    /// Rate adverts applied so far (receiver-driven CMT: a change marks a new round).
    pub adverts: u64,
}

/// Chooses paths for new data.
pub trait Scheduler: Send {
    /// A transmission opportunity starts (a SACK, timeout or write was just handled).
    fn begin(&mut self, _ctx: &SchedContext<'_>) {}
    /// The path for the next new chunk, or `None` to send no new data now.
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId>;
    /// The path for the next new chunk and the chunk's position in the send queue:
    /// 0 is the head (the lowest unsent TSN), `k` skips `k` chunks, which get their TSNs
    /// now and are sent later, head first (JAPS's per-path queue pointers). A position
    /// at or past [`SchedContext::chunks_available`] names no chunk: the core then sends
    /// nothing until the next opportunity (and counts a refused choice). The default is
    /// [`select`](Self::select) at the head.
    fn select_at(&mut self, ctx: &SchedContext<'_>) -> Option<(PathId, usize)> {
        self.select(ctx).map(|p| (p, 0))
    }
    /// The chunk was sent on `path`.
    fn on_sent(&mut self, _path: PathId, _tsn: u64, _bytes: u32) {}
    /// Whether this scheduler ever asks for [`copies`](Self::copies) (the core skips
    /// the request otherwise).
    fn makes_copies(&self) -> bool {
        false
    }
    /// Extra copies to send of chunks already sent: `(tsn, path)` pairs appended to
    /// `out`. The core sends each when its path has cwnd room, before new data, and
    /// skips copies of chunks acknowledged meanwhile. Asked at the start of every
    /// transmission opportunity (redundant scheduling; JAPS's delay-burst repair).
    fn copies(&mut self, _ctx: &SchedContext<'_>, _out: &mut Vec<(u64, PathId)>) {}
    /// An RTT sample was taken on `path` (Karn's rule applied).
    fn on_rtt_sample(&mut self, _now: Time, _path: PathId, _rtt: crate::time::Duration) {}
}

/// Builds a scheduler for an association.
pub trait SchedulerFactory: Send + Sync {
    /// Registry name.
    fn name(&self) -> &'static str;
    /// A scheduler for an association with `num_paths` paths.
    fn build(&self, num_paths: usize) -> Box<dyn Scheduler>;
}

/// The built-in schedulers, one row each: name, aliases, summary, builder.
pub fn builtin() -> Table<dyn SchedulerFactory> {
    Table::<dyn SchedulerFactory>::new("scheduler")
        .row(
            "round-robin",
            &["rr", "cmt"],
            "CMT round-robin over paths with window room (Iyengar et al., ToN 2006; ns-2.35)",
            |p| Ok(Box::new(RoundRobinFactory::from_params(p)?)),
        )
        .row(
            "round-robin-strict",
            &[],
            "one chunk per active path in turn, a turn waits for room (prototype round-robin)",
            |p| Ok(Box::new(StrictRoundRobinFactory::from_params(p)?)),
        )
        .row(
            "minrtt",
            &[],
            "lowest SRTT among paths with room (Linux MPTCP default scheduler)",
            |p| Ok(Box::new(MinRttFactory::from_params(p)?)),
        )
        .row(
            "linux-mptcp",
            &[],
            "least linger time (queued bytes / pacing rate) in 64 KiB bursts (upstream Linux MPTCP, 6.11)",
            |p| without_params("linux-mptcp", p, LinuxMptcp::new),
        )
        .row(
            "picoquic-rr",
            &[],
            "least recently sent among available paths with room, standby paths in reserve (picoquic)",
            |p| without_params("picoquic-rr", p, PicoquicRr::new),
        )
        .row(
            "ios-handover",
            &[],
            "WiFi until it is slow, then cellular (Apple MPTCP's handover service type, xnu)",
            |p| Ok(Box::new(IosFactory::from_params(ServiceType::Handover, p)?)),
        )
        .row(
            "ios-interactive",
            &[],
            "the lower-latency path, never both (Apple MPTCP's interactive service type, xnu)",
            |p| Ok(Box::new(IosFactory::from_params(ServiceType::Interactive, p)?)),
        )
        .row(
            "cmt-qa",
            &[],
            "CMT-QA*, path-quality-aware (reconstruction of Xu et al., IEEE TMC 2013)",
            |p| Ok(Box::new(CmtQaFactory::from_params(p)?)),
        )
        .row(
            "db-cmt",
            &[],
            "least data queued in the network (DB-CMT, 2022)",
            |p| Ok(Box::new(DbCmtFactory::from_params(p)?)),
        )
        .row(
            "weighted",
            &[],
            "smooth weighted round robin by cwnd/SRTT",
            |p| Ok(Box::new(WeightedFactory::from_params(p)?)),
        )
        .row(
            "blest",
            &[],
            "blocking estimation (Ferlin et al., IFIP Networking 2016)",
            |p| Ok(Box::new(BlestFactory::from_params(p)?)),
        )
        .row(
            "ecf",
            &[],
            "earliest completion first (Lim et al., CoNEXT 2017)",
            |p| Ok(Box::new(EcfFactory::from_params(p)?)),
        )
        .row(
            "daps",
            &[],
            "delay-aware packet scheduling (Kuhn et al., ICC 2014)",
            |p| Ok(Box::new(DapsFactory::from_params(p)?)),
        )
        .row(
            "japs",
            &[],
            "jitter-aware packet scheduling (Chan et al., 2016)",
            |p| Ok(Box::new(JapsFactory::from_params(p)?)),
        )
        .row(
            "redundant",
            &[],
            "every chunk on every active path (Linux MPTCP redundant)",
            |p| Ok(Box::new(RedundantFactory::from_params(p)?)),
        )
        .row(
            "cmt-rev",
            &[],
            "receiver-driven PAM-rev + DDS-rev (Cao et al. 2015, CMT-Rev)",
            |p| {
                Ok(Box::new(ReceiverDrivenFactory::from_params(
                    Flavour::CmtRev,
                    p,
                )?))
            },
        )
        .row(
            "mptcp-rec",
            &[],
            "receiver-driven PCDer (MPTCP-rec, 2016)",
            |p| {
                Ok(Box::new(ReceiverDrivenFactory::from_params(
                    Flavour::MptcpRec,
                    p,
                )?))
            },
        )
}

/// The factory of a built-in scheduler without parameters (any given is refused) whose
/// `make(num_paths)` builds each association's instance.
fn without_params<S: Scheduler + 'static>(
    name: &'static str,
    params: &Params,
    make: fn(usize) -> S,
) -> Result<Box<dyn SchedulerFactory>, ParamError> {
    params.expect_only(name, &[])?;
    Ok(Box::new(FnFactory::new(name, move |n| {
        Box::new(make(n)) as Box<dyn Scheduler>
    })))
}

crate::extension_point!(SchedulerFactory, "scheduler");

/// A factory from a name and a function of the number of paths, for schedulers without
/// per-association parameters.
pub struct FnFactory<S> {
    name: &'static str,
    make: S,
}

impl<S> FnFactory<S>
where
    S: Fn(usize) -> Box<dyn Scheduler> + Send + Sync,
{
    /// `make(num_paths)` builds each association's scheduler.
    pub fn new(name: &'static str, make: S) -> Self {
        FnFactory { name, make }
    }
}

impl<S> SchedulerFactory for FnFactory<S>
where
    S: Fn(usize) -> Box<dyn Scheduler> + Send + Sync,
{
    fn name(&self) -> &'static str {
        self.name
    }
    fn build(&self, num_paths: usize) -> Box<dyn Scheduler> {
        (self.make)(num_paths)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::time::Duration;

    /// A path view for decision tables: cwnd and flight in bytes, SRTT in ms (0 = none).
    pub(crate) fn view(i: usize, cwnd: u64, flight: u64, srtt_ms: u64, can_send: bool) -> PathView {
        let srtt = (srtt_ms > 0).then(|| Duration::from_millis(srtt_ms));
        PathView {
            cwnd,
            flight,
            srtt,
            min_rtt: srtt,
            max_srtt: srtt,
            can_send,
            ..PathView::idle(i)
        }
    }

    /// A scheduling context over `paths` for a full-size chunk.
    pub(crate) fn ctx(paths: &[PathView]) -> SchedContext<'_> {
        SchedContext {
            now: Time::ZERO,
            paths,
            peer_rwnd: 1 << 20,
            chunk_len: 1452,
            queued_bytes: u64::MAX,
            chunks_available: usize::MAX,
            reserved: 0,
            peer_awnd: 1 << 20,
            adverts: 0,
        }
    }
}
