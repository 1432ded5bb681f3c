//! What BLEST and ECF share: the fastest path `f` (lowest SRTT among ACTIVE paths, room
//! or not) and the minRTT choice `b` (lowest SRTT among paths with room). Only when `b`
//! is slower than `f` do they consider waiting for `f` instead.

use super::{MinRtt, SchedContext, Scheduler};
use crate::view::{PathState, PathView};

/// `(f, b)` when `b` is a slower path than `f`; otherwise `Err(b)`, the answer to give.
pub(super) fn fast_and_slow<'a>(
    ctx: &'a SchedContext<'_>,
) -> Result<(&'a PathView, &'a PathView), Option<crate::PathId>> {
    let b = MinRtt.select(ctx);
    let f = ctx
        .paths
        .iter()
        .filter(|p| p.state == PathState::Active && p.srtt.is_some())
        .min_by_key(|p| (p.srtt, p.id));
    match (f, b) {
        (Some(f), Some(b)) if f.id != b && ctx.paths[b.0].srtt.is_some() => {
            Ok((f, &ctx.paths[b.0]))
        }
        _ => Err(b),
    }
}

/// Seconds of an optional duration (0 when absent).
pub(super) fn secs(d: Option<crate::Duration>) -> f64 {
    d.map_or(0.0, |d| d.as_secs_f64())
}
