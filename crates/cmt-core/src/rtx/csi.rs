//! Cao et al. 2012, RTX_CSI §4.2, Algorithm 1; docs/algorithms.md §4): retransmit to the candidate that is
//! best by, in order, (1) largest cwnd, (2) largest ssthresh, (3) fewest T3 timeouts
//! within the last τ seconds, (4) longest time since its last timeout, (5) random.
//! The printed algorithm reuses one index for two quantities and writes its tie tests as
//! negations; these are the five textual rules, which are unambiguous. τ = 30 s by
//! default (the paper's experiments), parameter `tau_s`.
//!
//! The policy keeps each path's timeout times itself, from the counters in the path
//! views it is shown (the core reports how many timeouts a path had and when the latest
//! was).

use std::collections::VecDeque;

use rand::RngCore;

use super::{best_by, RetransmissionPolicy, RtxContext, RtxFactory, TieBreak};
use crate::params::{ParamError, Params};
use crate::time::{Duration, Time};
use crate::view::PathId;

/// Factory for [`RtxCsi`]; parameters `tau_s` (default 30) and `ns2_faithful`.
#[derive(Clone, Debug)]
pub struct RtxCsiFactory {
    tau: Duration,
    tie: TieBreak,
}

impl RtxCsiFactory {
    /// Reads and validates parameters.
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("rtx-csi", &["tau_s", "ns2_faithful"])?;
        let tau = params.number("tau_s", 30.0)?;
        if tau <= 0.0 {
            return Err(ParamError(format!(
                "parameter `tau_s` must be positive, got {tau}"
            )));
        }
        Ok(RtxCsiFactory {
            tau: Duration::from_secs_f64(tau),
            tie: TieBreak::from_params(params)?,
        })
    }
}

impl RtxFactory for RtxCsiFactory {
    fn name(&self) -> &'static str {
        "rtx-csi"
    }
    fn build(&self) -> Box<dyn RetransmissionPolicy> {
        Box::new(RtxCsi {
            tau: self.tau,
            tie: self.tie,
            seen: Vec::new(),
            times: Vec::new(),
        })
    }
}

/// RTX_CSI with per-path timeout histories.
#[derive(Clone, Debug)]
pub struct RtxCsi {
    tau: Duration,
    tie: TieBreak,
    seen: Vec<u32>,
    times: Vec<VecDeque<Time>>,
}

impl RtxCsi {
    fn observe(&mut self, ctx: &RtxContext<'_>) {
        if self.seen.len() < ctx.paths.len() {
            self.seen.resize(ctx.paths.len(), 0);
            self.times.resize(ctx.paths.len(), VecDeque::new());
        }
        for p in ctx.paths {
            let i = p.id.0;
            let new = p.timeouts.saturating_sub(self.seen[i]);
            self.seen[i] = p.timeouts;
            for _ in 0..new {
                self.times[i].push_back(p.last_timeout.unwrap_or(ctx.now));
            }
            while self.times[i]
                .front()
                .is_some_and(|&t| t + self.tau < ctx.now)
            {
                self.times[i].pop_front();
            }
        }
    }
}

impl RetransmissionPolicy for RtxCsi {
    fn select(&mut self, ctx: &RtxContext<'_>, rng: &mut dyn RngCore) -> PathId {
        self.observe(ctx);
        let times = &self.times;
        best_by(
            ctx,
            |p| {
                let tor = times[p.id.0].len() as u64;
                let since = p
                    .last_timeout
                    .map_or(u64::MAX, |t| (ctx.now - t).as_nanos());
                (p.cwnd, p.ssthresh, u64::MAX - tor, since)
            },
            self.tie,
            rng,
        )
    }
}
