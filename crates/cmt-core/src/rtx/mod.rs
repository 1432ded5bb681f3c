//! Retransmission-destination policies: where a lost chunk is resent (docs/algorithms.md §1.5).
//!
//! The core passes the candidate paths (ACTIVE ones; never PF or INACTIVE — except under
//! the ns-2.35 profile for the policies ns-2 lets pick a potentially-failed one, see
//! [`RetransmissionPolicy::ns2_allows_pf`]) and a seeded random generator for
//! tie-breaks; [`builtin`] is the table scenario files use ([`REGISTRY`] adds any
//! registered at run time).

mod csi;
mod cwnd;
mod rules;
mod same;
#[cfg(test)]
mod tests;

pub use csi::{RtxCsi, RtxCsiFactory};
pub use cwnd::{RtxCwnd, RtxCwndFactory};
pub use rules::{RankedRtx, RankedRtxFactory, Rule};
pub use same::{RtxSame, RtxSameFactory};

use crate::params::{ParamError, Params};
use crate::registry::Table;
use crate::time::Time;
use crate::view::{PathId, PathView};
use rand::RngCore;

/// What a policy sees when choosing a destination.
#[derive(Clone, Debug)]
pub struct RtxContext<'a> {
    /// Current time.
    pub now: Time,
    /// Every path, indexed by `PathId.0`.
    pub paths: &'a [PathView],
    /// Paths allowed as destination (non-empty).
    pub candidates: &'a [PathId],
    /// Path of the chunk's previous transmission.
    pub original: PathId,
    /// TSN being retransmitted.
    pub tsn: u64,
}

/// Chooses the destination of a retransmission.
pub trait RetransmissionPolicy: Send {
    /// One of `ctx.candidates`.
    fn select(&mut self, ctx: &RtxContext<'_>, rng: &mut dyn RngCore) -> PathId;

    /// Under the ns-2.35 profile (`compat = "ns2"`), whether the candidates include
    /// potentially-failed paths: ns-2's `SctpCMTAgent::SelectRtxDest` skips only
    /// INACTIVE destinations for RTX_TO_SAME and RTX_LOSSRATE, while RTX_ASAP takes
    /// ACTIVE ones and RTX_SSTHRESH / RTX_CWND leave PF ones out. Default: no.
    fn ns2_allows_pf(&self) -> bool {
        false
    }
}

/// Builds a policy for an association.
pub trait RtxFactory: Send + Sync {
    /// Registry name.
    fn name(&self) -> &'static str;
    /// A new policy instance.
    fn build(&self) -> Box<dyn RetransmissionPolicy>;
}

/// The built-in retransmission policies, one row each: name, aliases, summary, builder.
pub fn builtin() -> Table<dyn RtxFactory> {
    let ranked = |rule: Rule| {
        move |p: &Params| -> Result<Box<dyn RtxFactory>, ParamError> {
            Ok(Box::new(RankedRtxFactory::from_params(rule, p)?))
        }
    };
    Table::<dyn RtxFactory>::new("retransmission policy")
        .row(
            "rtx-same",
            &[],
            "resend on the original path while it is active (Iyengar et al., ICON 2004)",
            |p| Ok(Box::new(RtxSameFactory::from_params(p)?)),
        )
        .row(
            "rtx-asap",
            &[],
            "resend on any path with window room now (Iyengar et al., ICON 2004)",
            ranked(Rule::Asap),
        )
        .row(
            "rtx-cwnd",
            &[],
            "resend on the path with the largest cwnd (Iyengar et al., ICON 2004; ns-2.35 default)",
            |p| Ok(Box::new(RtxCwndFactory::from_params(p)?)),
        )
        .row(
            "rtx-ssthresh",
            &[],
            "resend on the path with the largest ssthresh (Iyengar et al., ICON 2004)",
            ranked(Rule::Ssthresh),
        )
        .row(
            "rtx-lossrate",
            &[],
            "resend on the path with the lowest loss rate (Iyengar et al., ICON 2004)",
            ranked(Rule::LossRate),
        )
        .row(
            "rtx-csi",
            &[],
            "cwnd, then ssthresh, then fewest timeouts (Cao et al. 2012, RTX_CSI)",
            |p| Ok(Box::new(RtxCsiFactory::from_params(p)?)),
        )
        .row(
            "rtx-cl",
            &[],
            "largest cwnd, then lowest loss rate (DB-CMT, 2022)",
            ranked(Rule::CwndThenLoss),
        )
}

crate::extension_point!(RtxFactory, "retransmission policy");

/// A factory from a name and a constructor, for policies without parameters.
pub struct FnFactory<P> {
    name: &'static str,
    make: P,
}

impl<P> FnFactory<P>
where
    P: Fn() -> Box<dyn RetransmissionPolicy> + Send + Sync,
{
    /// `make()` builds each association's policy.
    pub fn new(name: &'static str, make: P) -> Self {
        FnFactory { name, make }
    }
}

impl<P> RtxFactory for FnFactory<P>
where
    P: Fn() -> Box<dyn RetransmissionPolicy> + Send + Sync,
{
    fn name(&self) -> &'static str {
        self.name
    }
    fn build(&self) -> Box<dyn RetransmissionPolicy> {
        (self.make)()
    }
}

/// How ties between equally good candidates are broken (docs/algorithms.md §1.5 tie-breaking note).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TieBreak {
    /// Uniform over the tied candidates (default).
    #[default]
    Uniform,
    /// ns-2's scan: replace the incumbent with probability 1/2 on each tie.
    Ns2,
}

impl TieBreak {
    /// Reads the `ns2_faithful` switch.
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        Ok(if params.flag("ns2_faithful", false)? {
            TieBreak::Ns2
        } else {
            TieBreak::Uniform
        })
    }
}

/// The candidate with the largest `key`, ties broken by `tie`.
pub fn best_by<K: PartialOrd>(
    ctx: &RtxContext<'_>,
    key: impl Fn(&PathView) -> K,
    tie: TieBreak,
    rng: &mut dyn RngCore,
) -> PathId {
    let mut best: Vec<PathId> = Vec::with_capacity(ctx.candidates.len());
    let mut best_key: Option<K> = None;
    let mut ns2_pick = None;
    for &c in ctx.candidates {
        let k = key(&ctx.paths[c.0]);
        match best_key.as_ref().map(|b| k.partial_cmp(b)) {
            None | Some(Some(std::cmp::Ordering::Greater)) => {
                best_key = Some(k);
                best.clear();
                best.push(c);
                ns2_pick = Some(c);
            }
            Some(Some(std::cmp::Ordering::Equal)) => {
                best.push(c);
                if rng.next_u32() & 1 == 1 {
                    ns2_pick = Some(c);
                }
            }
            _ => {}
        }
    }
    match tie {
        TieBreak::Ns2 => ns2_pick.unwrap_or(ctx.original),
        TieBreak::Uniform if best.len() == 1 => best[0],
        TieBreak::Uniform => best[(rng.next_u64() % best.len() as u64) as usize],
    }
}
