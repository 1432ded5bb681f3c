//! Weighted split: chunks go to the ACTIVE paths in proportion to their estimated
//! capacity `cwnd / SRTT` (RTO when there is no sample), by smooth weighted round robin:
//! each chunk adds `share_i · len` credit to every active path, the available path with
//! the most credit takes the chunk and pays `len`. Credit is capped at `burst` chunks
//! (parameter, default 8) and debt at one chunk, so a path that was full for a while
//! takes at most about `burst` chunks in a row once it has room again. A frequent
//! request from users of multipath stacks; not from the papers.

use super::{SchedContext, Scheduler, SchedulerFactory};
use crate::params::{ParamError, Params};
use crate::view::{PathId, PathState, PathView};

/// Factory for [`Weighted`]; parameter `burst` (chunks of credit, default 8).
#[derive(Clone, Debug)]
pub struct WeightedFactory {
    burst: f64,
}

impl WeightedFactory {
    /// Reads and validates parameters.
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("weighted", &["burst"])?;
        let burst = params.number("burst", 8.0)?;
        if burst < 1.0 {
            return Err(ParamError(format!(
                "parameter `burst` must be at least 1, got {burst}"
            )));
        }
        Ok(WeightedFactory { burst })
    }
}

impl SchedulerFactory for WeightedFactory {
    fn name(&self) -> &'static str {
        "weighted"
    }
    fn build(&self, num_paths: usize) -> Box<dyn Scheduler> {
        Box::new(Weighted {
            credit: vec![0.0; num_paths],
            burst: self.burst,
        })
    }
}

/// Estimated capacity of a path, bytes/s.
pub fn capacity(p: &PathView) -> f64 {
    let rtt = p.srtt.unwrap_or(p.rto).as_secs_f64().max(1e-6);
    p.cwnd as f64 / rtt
}

/// Smooth weighted round robin over capacity estimates.
#[derive(Clone, Debug)]
pub struct Weighted {
    credit: Vec<f64>,
    burst: f64,
}

impl Scheduler for Weighted {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        let active = || ctx.paths.iter().filter(|p| p.state == PathState::Active);
        let total: f64 = active().map(capacity).sum();
        if total <= 0.0 {
            return None;
        }
        let len = ctx.chunk_len as f64;
        let cap = self.burst * len;
        for p in active() {
            let c = &mut self.credit[p.id.0];
            *c = (*c + capacity(p) / total * len).min(cap);
        }
        let pick = ctx.paths.iter().filter(|p| p.can_send).max_by(|a, b| {
            self.credit[a.id.0]
                .total_cmp(&self.credit[b.id.0])
                .then_with(|| b.id.cmp(&a.id))
        })?;
        let c = &mut self.credit[pick.id.0];
        *c = (*c - len).max(-len);
        Some(pick.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{ctx, view};

    #[test]
    fn chunks_split_in_proportion_to_cwnd_over_srtt() {
        // Capacities 30000/30ms = 1 MB/s, 10000/10ms = 1 MB/s, 20000/40ms = 0.5 MB/s.
        let paths = [
            view(0, 30_000, 0, 30, true),
            view(1, 10_000, 0, 10, true),
            view(2, 20_000, 0, 40, true),
        ];
        let mut w = WeightedFactory::from_params(&Params::default())
            .unwrap()
            .build(3);
        let mut n = [0u32; 3];
        for _ in 0..1000 {
            n[w.select(&ctx(&paths)).unwrap().0] += 1;
        }
        assert_eq!(n, [400, 400, 200], "split {n:?}");
    }

    #[test]
    fn a_full_path_is_skipped_and_does_not_burst_afterwards() {
        let mut w = WeightedFactory::from_params(&Params::default())
            .unwrap()
            .build(2);
        let full = [view(0, 10_000, 0, 10, false), view(1, 10_000, 0, 10, true)];
        for _ in 0..100 {
            assert_eq!(w.select(&ctx(&full)), Some(PathId(1)));
        }
        let free = [view(0, 10_000, 0, 10, true), view(1, 10_000, 0, 10, true)];
        let first: Vec<usize> = (0..40).map(|_| w.select(&ctx(&free)).unwrap().0).collect();
        let burst = first.iter().take_while(|&&p| p == 0).count();
        assert!(
            (8..=10).contains(&burst),
            "path 0 took {burst} chunks in a row"
        );
        assert!(WeightedFactory::from_params(&Params(
            [("burst".to_string(), crate::ParamValue::Number(0.0))].into()
        ))
        .is_err());
    }
}
