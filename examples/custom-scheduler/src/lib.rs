//! An example extension of cmtlab, kept outside its crates: a scheduler and a loss
//! model, registered by name in `src/main.rs`, used by `scenarios/split.toml`.
//!
//! * `fixed-share` — a scheduler that gives the first path a fixed share of the new
//!   chunks (parameter `share`, default 0.5) and spreads the rest over the other paths,
//!   waiting for a path's window rather than giving its turn away. Removed paths take
//!   no turns: the path table may hold paths whose address went and, in the real
//!   runtime, slots kept for addresses the peer may add.
//! * `outage` — a loss model that drops every packet during periodic outages
//!   (parameters `every` and `length`, in seconds), e.g. a handover gap.

use cmt_core::sched::{SchedContext, Scheduler, SchedulerFactory};
use cmt_core::{ParamError, Params, PathId, PathState, Time};
use cmt_sim::loss_model::{LossModel, LossModelFactory};
use rand::RngCore;

/// The `fixed-share` scheduler's factory (one per scenario).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FixedShare {
    /// Fraction of new chunks for the first path, in 0..=1.
    pub share: f64,
}

impl FixedShare {
    /// Reads `association.scheduler_params`: `share` (default 0.5).
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        p.expect_only("fixed-share", &["share"])?;
        let share = p.number("share", 0.5)?;
        if !(0.0..=1.0).contains(&share) {
            return Err(ParamError(format!(
                "parameter `share` must be in 0..=1, got {share}"
            )));
        }
        Ok(FixedShare { share })
    }
}

impl SchedulerFactory for FixedShare {
    fn name(&self) -> &'static str {
        "fixed-share"
    }
    fn build(&self, num_paths: usize) -> Box<dyn Scheduler> {
        Box::new(FixedShareState {
            share: self.share,
            credit: 0.0,
            paths: num_paths,
            next_other: 1 % num_paths.max(1),
        })
    }
}

/// Per association: the first path's credit in chunks and whose turn it is among the
/// others.
struct FixedShareState {
    share: f64,
    credit: f64,
    paths: usize,
    next_other: usize,
}

impl FixedShareState {
    /// The path whose turn it is, without consuming it.
    fn turn(&self) -> usize {
        if self.paths == 1 || self.credit + self.share >= 1.0 - 1e-9 {
            0
        } else {
            self.next_other
        }
    }
}

impl Scheduler for FixedShareState {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        let live = |i: usize| {
            ctx.paths
                .get(i)
                .is_some_and(|p| p.state != PathState::Removed)
        };
        // A removed path would never send: its turn passes to the next of paths 1..n.
        for _ in 1..self.paths {
            if live(self.next_other) {
                break;
            }
            self.next_other = self.next_other % (self.paths - 1) + 1;
        }
        let turn = match self.turn() {
            0 if !live(0) => self.next_other,
            t => t,
        };
        let p = ctx.paths.get(turn)?;
        // Wait for the path whose turn it is: the split stays exact.
        p.can_send.then_some(p.id)
    }

    fn on_sent(&mut self, path: PathId, _tsn: u64, _bytes: u32) {
        // Each chunk earns the first path `share` of a chunk; a chunk sent there
        // spends one.
        self.credit += self.share;
        if path.0 == 0 {
            self.credit -= 1.0;
        } else {
            // The next of paths 1..n, in turn.
            self.next_other = self.next_other % (self.paths - 1) + 1;
        }
    }
}

/// The `outage` loss model: every `every` seconds, starting at `every`, the link drops
/// everything for `length` seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outage {
    /// Time between outage starts, ns.
    pub every_ns: u64,
    /// Outage length, ns (shorter than `every`).
    pub length_ns: u64,
}

impl Outage {
    /// Reads `links[].loss_model_params`: `every` and `length` in seconds.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        p.expect_only("outage", &["every", "length"])?;
        let every = p.number("every", 10.0)?;
        let length = p.number("length", 0.2)?;
        if !(every > 0.0 && (0.0..every).contains(&length)) {
            return Err(ParamError(format!(
                "need 0 <= length < every, got every = {every}, length = {length}"
            )));
        }
        Ok(Outage {
            every_ns: (every * 1e9) as u64,
            length_ns: (length * 1e9) as u64,
        })
    }
}

impl LossModel for Outage {
    fn lose(&mut self, now: Time, _size: u32, _rng: &mut dyn RngCore) -> bool {
        let t = now.as_nanos();
        t >= self.every_ns && t % self.every_ns < self.length_ns
    }
}

impl LossModelFactory for Outage {
    fn build(&self) -> Box<dyn LossModel> {
        Box::new(*self)
    }
    fn mean_loss(&self) -> f64 {
        self.length_ns as f64 / self.every_ns as f64
    }
}
