//! RTX-CWND (Iyengar et al., ICON'04; ns-2 `RTX_CWND`, the ns-2.35 default; docs/algorithms.md §1.5):
//! retransmit to the candidate with the largest cwnd; ties broken at random.

use super::{best_by, RetransmissionPolicy, RtxContext, RtxFactory, TieBreak};
use crate::params::{ParamError, Params};
use crate::view::PathId;
use rand::RngCore;

/// Factory for [`RtxCwnd`]; parameter `ns2_faithful` (bool) selects ns-2's tie-break.
#[derive(Clone, Debug, Default)]
pub struct RtxCwndFactory {
    tie: TieBreak,
}

impl RtxCwndFactory {
    /// Reads and validates parameters.
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("rtx-cwnd", &["ns2_faithful"])?;
        Ok(RtxCwndFactory {
            tie: TieBreak::from_params(params)?,
        })
    }
}

impl RtxFactory for RtxCwndFactory {
    fn name(&self) -> &'static str {
        "rtx-cwnd"
    }
    fn build(&self) -> Box<dyn RetransmissionPolicy> {
        Box::new(RtxCwnd { tie: self.tie })
    }
}

/// RTX-CWND policy.
#[derive(Clone, Debug, Default)]
pub struct RtxCwnd {
    tie: TieBreak,
}

impl RetransmissionPolicy for RtxCwnd {
    fn select(&mut self, ctx: &RtxContext<'_>, rng: &mut dyn RngCore) -> PathId {
        best_by(ctx, |p| p.cwnd, self.tie, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtx::RtxSame;
    use crate::time::Time;
    use crate::view::PathView;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn view(i: usize, cwnd: u64) -> PathView {
        PathView {
            cwnd,
            ..PathView::idle(i)
        }
    }

    fn choose(
        policy: &mut dyn RetransmissionPolicy,
        cwnds: &[u64],
        cands: &[usize],
        orig: usize,
        seed: u64,
    ) -> usize {
        let paths: Vec<_> = cwnds.iter().enumerate().map(|(i, &c)| view(i, c)).collect();
        let cands: Vec<_> = cands.iter().map(|&i| PathId(i)).collect();
        let ctx = RtxContext {
            now: Time::ZERO,
            paths: &paths,
            candidates: &cands,
            original: PathId(orig),
            tsn: 7,
        };
        policy.select(&ctx, &mut ChaCha8Rng::seed_from_u64(seed)).0
    }

    #[test]
    fn rtx_cwnd_picks_largest_cwnd_among_candidates() {
        // (cwnds, candidates, original) -> chosen
        let cases: &[(&[u64], &[usize], usize, usize)] = &[
            (&[3000, 9000, 6000], &[0, 1, 2], 0, 1),
            (&[3000, 9000, 6000], &[0, 2], 0, 2),
            (&[3000, 9000, 6000], &[0], 1, 0),
        ];
        for (cw, cands, orig, want) in cases {
            assert_eq!(choose(&mut RtxCwnd::default(), cw, cands, *orig, 1), *want);
        }
    }

    #[test]
    fn rtx_cwnd_breaks_ties_uniformly_with_the_injected_rng() {
        let mut seen = [0u32; 3];
        for seed in 0..300 {
            seen[choose(
                &mut RtxCwnd::default(),
                &[5000, 5000, 5000],
                &[0, 1, 2],
                0,
                seed,
            )] += 1;
        }
        for n in seen {
            assert!((70..=130).contains(&n), "tie counts {seen:?}");
        }
    }

    #[test]
    fn rtx_same_keeps_original_unless_it_is_not_a_candidate() {
        assert_eq!(
            choose(&mut RtxSame::default(), &[3000, 9000], &[0, 1], 0, 1),
            0
        );
        assert_eq!(
            choose(&mut RtxSame::default(), &[3000, 9000, 100], &[0, 2], 1, 1),
            0
        );
    }
}
