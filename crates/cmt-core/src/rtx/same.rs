//! RTX-SAME (Iyengar et al., ICON'04; ns-2 `RTX_TO_SAME`; docs/algorithms.md §1.5): retransmit to the
//! destination of the original transmission unless it is no longer a candidate (PF or
//! INACTIVE); then fall back to the candidate with the largest cwnd.

use super::{best_by, RetransmissionPolicy, RtxContext, RtxFactory, TieBreak};
use crate::params::{ParamError, Params};
use crate::view::PathId;
use rand::RngCore;

/// Factory for [`RtxSame`]; parameter `ns2_faithful` (bool) for the fallback tie-break.
#[derive(Clone, Debug, Default)]
pub struct RtxSameFactory {
    tie: TieBreak,
}

impl RtxSameFactory {
    /// Reads and validates parameters.
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("rtx-same", &["ns2_faithful"])?;
        Ok(RtxSameFactory {
            tie: TieBreak::from_params(params)?,
        })
    }
}

impl RtxFactory for RtxSameFactory {
    fn name(&self) -> &'static str {
        "rtx-same"
    }
    fn build(&self) -> Box<dyn RetransmissionPolicy> {
        Box::new(RtxSame { tie: self.tie })
    }
}

/// RTX-SAME policy.
#[derive(Clone, Debug, Default)]
pub struct RtxSame {
    tie: TieBreak,
}

impl RetransmissionPolicy for RtxSame {
    fn select(&mut self, ctx: &RtxContext<'_>, rng: &mut dyn RngCore) -> PathId {
        if ctx.candidates.contains(&ctx.original) {
            ctx.original
        } else {
            best_by(ctx, |p| p.cwnd, self.tie, rng)
        }
    }

    /// ns-2's RTX_TO_SAME keeps the original destination unless it is INACTIVE.
    fn ns2_allows_pf(&self) -> bool {
        true
    }
}
