//! The retransmission policies that differ only in their ranking of candidates
//! (docs/algorithms.md §1.5, §4, §5.3): each picks the candidate with the best key, ties broken at
//! random by the injected generator (uniform by default; ns-2's scan with
//! `ns2_faithful = true`).
//!
//! * `rtx-ssthresh` (Iyengar et al., ICON'04): largest ssthresh.
//! * `rtx-lossrate` (ICON'04): lowest loss rate. decision D11 (docs/algorithms.md): the EWMA estimate
//!   of the core (gain 1/8), or ns-2's configured loss ("oracle") when the embedder sets
//!   it with `Association::set_destination_loss_rate` (scenario `loss_rate = "oracle"`).
//! * `rtx-cl` (DB-CMT 2022 §4.2, docs/algorithms.md §5.3): largest cwnd, then lowest loss rate.
//! * `rtx-asap` (ICON'04): any candidate with cwnd room now (random among them), else
//!   the largest cwnd.

use rand::RngCore;

use super::{best_by, RetransmissionPolicy, RtxContext, RtxFactory, TieBreak};
use crate::params::{ParamError, Params};
use crate::view::PathId;

/// Which ranking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Largest ssthresh.
    Ssthresh,
    /// Lowest estimated loss rate.
    LossRate,
    /// Largest cwnd, then lowest loss rate (RTX-CL).
    CwndThenLoss,
    /// A candidate with cwnd room now.
    Asap,
}

/// Factory for [`RankedRtx`].
#[derive(Clone, Debug)]
pub struct RankedRtxFactory {
    rule: Rule,
    tie: TieBreak,
}

impl RankedRtxFactory {
    /// Reads parameters (`ns2_faithful`).
    pub fn from_params(rule: Rule, params: &Params) -> Result<Self, ParamError> {
        params.expect_only(rule_name(rule), &["ns2_faithful"])?;
        Ok(RankedRtxFactory {
            rule,
            tie: TieBreak::from_params(params)?,
        })
    }
}

fn rule_name(rule: Rule) -> &'static str {
    match rule {
        Rule::Ssthresh => "rtx-ssthresh",
        Rule::LossRate => "rtx-lossrate",
        Rule::CwndThenLoss => "rtx-cl",
        Rule::Asap => "rtx-asap",
    }
}

impl RtxFactory for RankedRtxFactory {
    fn name(&self) -> &'static str {
        rule_name(self.rule)
    }
    fn build(&self) -> Box<dyn RetransmissionPolicy> {
        Box::new(RankedRtx {
            rule: self.rule,
            tie: self.tie,
        })
    }
}

/// A ranking policy.
#[derive(Clone, Debug)]
pub struct RankedRtx {
    rule: Rule,
    tie: TieBreak,
}

impl RetransmissionPolicy for RankedRtx {
    fn select(&mut self, ctx: &RtxContext<'_>, rng: &mut dyn RngCore) -> PathId {
        match self.rule {
            Rule::Ssthresh => best_by(ctx, |p| p.ssthresh, self.tie, rng),
            Rule::LossRate => best_by(ctx, |p| -p.loss_rate, self.tie, rng),
            Rule::CwndThenLoss => best_by(ctx, |p| (p.cwnd, -p.loss_rate), self.tie, rng),
            Rule::Asap => {
                let room: Vec<PathId> = ctx
                    .candidates
                    .iter()
                    .copied()
                    .filter(|c| ctx.paths[c.0].flight < ctx.paths[c.0].cwnd)
                    .collect();
                if room.is_empty() {
                    best_by(ctx, |p| p.cwnd, self.tie, rng)
                } else {
                    let sub = RtxContext {
                        candidates: &room,
                        ..ctx.clone()
                    };
                    best_by(&sub, |_| 0u8, self.tie, rng)
                }
            }
        }
    }

    /// ns-2's RTX_LOSSRATE skips only INACTIVE destinations.
    fn ns2_allows_pf(&self) -> bool {
        self.rule == Rule::LossRate
    }
}
