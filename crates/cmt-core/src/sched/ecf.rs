//! ECF, Earliest Completion First (Lim, Chen, Nahum, Towsley, Gibbens, CoNEXT 2017;
//! multipath-tcp.org `mptcp_ecf.c`; docs/algorithms.md §9.3). When the minRTT choice `b` is slower
//! than the fastest path `f`, ECF estimates whether the data waiting to be sent would
//! finish sooner by waiting for `f`:
//! `SRTT_f·(n_f + cwnd_f) < (1 + waiting·β)·cwnd_f·(SRTT_s + δ)` with
//! `n_f = max(k, cwnd_f)`, and then waits (sends nothing) if also
//! `SRTT_s·max(k, cwnd_s) ≥ cwnd_s·(2·SRTT_f + δ)`. β = 0.25 (`r_beta = 4`).
//!
//! decision D20 (docs/algorithms.md): `δ = max(RTTVAR_f, RTTVAR_s)` by default (the paper's σ);
//! `delta = "kernel"` gives `max(2·RTTVAR, 100 ms)`. Our own resolution: a backlogged
//! source has no finite send buffer, so `k` (bytes not yet handed to a path) is capped
//! at the peer's window, the most the sender could ever have in flight.

use super::fast_slow::{fast_and_slow, secs};
use super::{SchedContext, Scheduler, SchedulerFactory};
use crate::params::{ParamError, Params};
use crate::view::PathId;

/// Factory for [`Ecf`]; parameters `beta` (default 0.25) and `delta` ("sigma" or "kernel").
#[derive(Clone, Debug)]
pub struct EcfFactory {
    beta: f64,
    kernel_delta: bool,
}

impl EcfFactory {
    /// Reads and validates parameters.
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("ecf", &["beta", "delta"])?;
        let beta = params.number("beta", 0.25)?;
        let kernel_delta = match params.text("delta", "sigma")? {
            "sigma" => false,
            "kernel" => true,
            o => {
                return Err(ParamError(format!(
                    "parameter `delta`: `{o}` (sigma or kernel)"
                )))
            }
        };
        Ok(EcfFactory { beta, kernel_delta })
    }
}

impl SchedulerFactory for EcfFactory {
    fn name(&self) -> &'static str {
        "ecf"
    }
    fn build(&self, _num_paths: usize) -> Box<dyn Scheduler> {
        Box::new(Ecf {
            beta: self.beta,
            kernel_delta: self.kernel_delta,
            waiting: false,
        })
    }
}

/// ECF with its "waiting" hysteresis state.
#[derive(Clone, Debug)]
pub struct Ecf {
    beta: f64,
    kernel_delta: bool,
    waiting: bool,
}

impl Scheduler for Ecf {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        let (f, s) = match fast_and_slow(ctx) {
            Ok(fs) => fs,
            Err(b) => return b,
        };
        let (rtt_f, rtt_s) = (secs(f.srtt), secs(s.srtt));
        let var = f.rttvar.max(s.rttvar).as_secs_f64();
        let delta = if self.kernel_delta {
            (2.0 * var).max(0.1)
        } else {
            var
        };
        let k = ctx.queued_bytes.min(ctx.peer_rwnd) as f64;
        let (cw_f, cw_s) = (f.cwnd as f64, s.cwnd as f64);
        let waiting = if self.waiting { 1.0 } else { 0.0 };
        if rtt_f * (k.max(cw_f) + cw_f) < (1.0 + waiting * self.beta) * cw_f * (rtt_s + delta) {
            if rtt_s * k.max(cw_s) >= cw_s * (2.0 * rtt_f + delta) {
                self.waiting = true;
                return None;
            }
            Some(s.id)
        } else {
            self.waiting = false;
            Some(s.id)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{ctx, view};

    fn ecf() -> Box<dyn Scheduler> {
        EcfFactory::from_params(&Params::default())
            .unwrap()
            .build(2)
    }

    #[test]
    fn waits_for_the_fast_path_when_little_data_is_left_and_uses_the_slow_one_otherwise() {
        // Fast path full (20 ms), slow path free (200 ms), cwnds 30 KB / 10 KB.
        let paths = [
            view(0, 30_000, 30_000, 20, false),
            view(1, 10_000, 0, 200, true),
        ];
        // (bytes waiting to be sent) -> choice
        let cases: &[(u64, Option<usize>)] = &[
            (3_000, None),          // f finishes it in one round: wait
            (100_000_000, Some(1)), // plenty of data: the slow path helps
        ];
        for &(k, want) in cases {
            let mut c = ctx(&paths);
            c.queued_bytes = k;
            assert_eq!(ecf().select(&c), want.map(PathId), "k = {k}");
        }
        // When the fast path has room, it is simply used.
        let free = [view(0, 30_000, 0, 20, true), view(1, 10_000, 0, 200, true)];
        assert_eq!(ecf().select(&ctx(&free)), Some(PathId(0)));
    }
}
