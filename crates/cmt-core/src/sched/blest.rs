//! BLEST, Blocking Estimation (Ferlin, Alay, Mehani, Boreli, IFIP Networking 2016;
//! multipath-tcp.org `mptcp_blest.c`; docs/algorithms.md §9.2). When the minRTT choice `b` is slower
//! than the fastest path `f`, BLEST estimates how much `f` could send while a chunk
//! lingers on `b` and skips `b` (sends nothing, waits for `f`) if that would not fit in
//! the send window left after `b`'s data:
//! `L = max(SRTT_b, minSRTT_b + (maxSRTT_b − minSRTT_b)·inflight'_b/cwnd_b)`,
//! `k = ⌊L/avgRTT_f⌋ + 1`; in initial slow start `f` sends `cwnd_f·(2^k − 1)`, else
//! `(c + (k − 1)/2)·k` with `c = max(cwnd_f, ssthresh_f + 1)` (packets), times λ.
//! λ starts at 1.2 and adapts in [1.0, 1.3]: +0.04 after a round with a window
//! shortage, −0.01 otherwise, at most once per min SRTT of `b`.
//!
//! Our resolutions: the kernel raises λ after its penalisation branch runs, which this
//! core does not have; we count a *window shortage* instead, when the peer's window left
//! is below `f`'s cwnd at decision time. The send window is the peer's window plus what
//! is in flight.

use super::fast_slow::{fast_and_slow, secs};
use super::{SchedContext, Scheduler, SchedulerFactory};
use crate::params::{ParamError, Params};
use crate::time::Time;
use crate::view::PathId;

/// Factory for [`Blest`]; parameter `lambda` (initial λ, default 1.2).
#[derive(Clone, Debug)]
pub struct BlestFactory {
    lambda: f64,
}

impl BlestFactory {
    /// Reads and validates parameters.
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("blest", &["lambda"])?;
        let lambda = params.number("lambda", 1.2)?;
        if !(1.0..=1.3).contains(&lambda) {
            return Err(ParamError(format!(
                "parameter `lambda` must be in [1.0, 1.3], got {lambda}"
            )));
        }
        Ok(BlestFactory { lambda })
    }
}

impl SchedulerFactory for BlestFactory {
    fn name(&self) -> &'static str {
        "blest"
    }
    fn build(&self, _num_paths: usize) -> Box<dyn Scheduler> {
        Box::new(Blest {
            lambda: self.lambda,
            bad: false,
            next_update: Time::ZERO,
        })
    }
}

/// BLEST with its adaptive λ.
#[derive(Clone, Debug)]
pub struct Blest {
    lambda: f64,
    bad: bool,
    next_update: Time,
}

impl Blest {
    /// The current λ.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }
}

impl Scheduler for Blest {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        let (f, b) = match fast_and_slow(ctx) {
            Ok(fb) => fb,
            Err(b) => return b,
        };
        self.bad |= ctx.peer_rwnd < f.cwnd;
        if ctx.now >= self.next_update {
            self.lambda = (self.lambda + if self.bad { 0.04 } else { -0.01 }).clamp(1.0, 1.3);
            self.bad = false;
            self.next_update = ctx.now + b.min_rtt.unwrap_or(b.rto);
        }
        let len = ctx.chunk_len as f64;
        let mss = len.max(1.0);
        let fill = ((b.flight as f64 + len) / b.cwnd.max(1) as f64).min(1.0);
        let (min_b, max_b) = (secs(b.min_rtt), secs(b.max_srtt).max(secs(b.srtt)));
        let linger = if fill >= 1.0 {
            max_b
        } else {
            secs(b.srtt).max(min_b + (max_b - min_b) * fill)
        };
        let avg_f = ((secs(f.min_rtt) + secs(f.max_srtt).max(secs(f.srtt))) / 2.0).max(1e-6);
        let k = (linger / avg_f).floor() + 1.0;
        let (cw_f, ss_f) = (f.cwnd as f64 / mss, f.ssthresh as f64 / mss);
        let pkts = if f.timeouts == 0
            && f.cwnd <= f.ssthresh
            && f.last_timeout.is_none()
            && f.loss_rate == 0.0
        {
            cw_f * (2f64.powf(k.min(16.0)) - 1.0)
        } else {
            let c = cw_f.max(ss_f + 1.0);
            (c + (k - 1.0) / 2.0) * k
        };
        let fast_bytes = self.lambda * pkts * mss;
        let window: f64 =
            ctx.peer_rwnd as f64 + ctx.paths.iter().map(|p| p.flight as f64).sum::<f64>();
        let avail = (window - (len + b.flight as f64)).max(0.0);
        if fast_bytes > avail {
            None
        } else {
            Some(b.id)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{ctx, view};
    use crate::time::Duration;
    use crate::view::PathView;

    fn path(i: usize, cwnd: u64, flight: u64, rtt_ms: u64, can_send: bool) -> PathView {
        PathView {
            loss_rate: 0.01,
            capacity: None,
            advertised_rate: None,
            ssthresh: cwnd,
            ..view(i, cwnd, flight, rtt_ms, can_send)
        }
    }

    #[test]
    fn skips_the_slow_path_when_the_fast_one_would_fill_the_window_meanwhile() {
        // Fast 10 ms full, slow 200 ms free: while a chunk lingers 200 ms on the slow
        // path the fast one sends ≈ 21 rounds of 7+ packets — far more than a 64 KB
        // window; with a 16 MB window the slow path is worth using.
        let paths = [
            path(0, 10_000, 10_000, 10, false),
            path(1, 10_000, 0, 200, true),
        ];
        // (peer window) -> choice
        let cases: &[(u64, Option<usize>)] = &[(64 * 1024, None), (16 << 20, Some(1))];
        for &(rwnd, want) in cases {
            let mut b = BlestFactory::from_params(&Params::default())
                .unwrap()
                .build(2);
            let mut c = ctx(&paths);
            c.peer_rwnd = rwnd;
            assert_eq!(b.select(&c), want.map(PathId), "rwnd {rwnd}");
        }
    }

    #[test]
    fn lambda_adapts_within_its_bounds() {
        let paths = [
            path(0, 10_000, 10_000, 10, false),
            path(1, 10_000, 0, 200, true),
        ];
        let mut b = Blest {
            lambda: 1.2,
            bad: false,
            next_update: Time::ZERO,
        };
        let mut c = ctx(&paths);
        c.peer_rwnd = 1_000; // shortage every time
        for i in 0..20 {
            c.now = Time::ZERO + Duration::from_millis(300 * i);
            b.select(&c);
        }
        assert!((b.lambda() - 1.3).abs() < 1e-9, "λ {}", b.lambda());
        c.peer_rwnd = 16 << 20;
        for i in 20..60 {
            c.now = Time::ZERO + Duration::from_millis(300 * i);
            b.select(&c);
        }
        assert!((b.lambda() - 1.0).abs() < 1e-9, "λ {}", b.lambda());
    }
}
