//! LIA, the coupled increase of MPTCP (RFC 6356 §3; multipath-tcp.org
//! `mptcp_coupled.c`; docs/algorithms.md §10). Slow start, fast retransmit and timeouts as RFC 4960
//! per path; in congestion avoidance each ack of `b` bytes on path i adds
//! `min(α·b·MSS/cwnd_total, b·MSS/cwnd_i)` with
//! `α = cwnd_total · max_r(cwnd_r/rtt_r²) / (Σ_r cwnd_r/rtt_r)²`, so that the paths
//! together take no more than one Reno flow on a shared bottleneck. With one path α = 1
//! and this is Reno.

use super::{AckSignal, CcFactory, CcInit, CcPathView, CongestionControl, LossSignal, Reno};
use crate::params::{ParamError, Params};
use crate::view::PathId;

/// Factory for [`Lia`]. Takes no parameters.
#[derive(Clone, Debug, Default)]
pub struct LiaFactory;

impl LiaFactory {
    /// Validates (no parameters are accepted).
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("lia", &[])?;
        Ok(LiaFactory)
    }
}

impl CcFactory for LiaFactory {
    fn name(&self) -> &'static str {
        "lia"
    }
    fn build(&self, _path: PathId, init: &CcInit) -> Box<dyn CongestionControl> {
        Box::new(Lia {
            reno: Reno::new(init),
        })
    }
}

/// One path's LIA state.
#[derive(Clone, Debug)]
pub struct Lia {
    reno: Reno,
}

/// LIA's α over the paths' windows and RTTs (paths without an RTT sample are left out).
pub fn lia_alpha(all: &[CcPathView]) -> f64 {
    let rated: Vec<(f64, f64)> = all
        .iter()
        .filter_map(|p| p.srtt.map(|r| (p.cwnd as f64, r.as_secs_f64().max(1e-6))))
        .collect();
    let total: f64 = rated.iter().map(|x| x.0).sum();
    let best = rated.iter().map(|&(w, r)| w / (r * r)).fold(0.0, f64::max);
    let sum: f64 = rated.iter().map(|&(w, r)| w / r).sum();
    if sum <= 0.0 {
        1.0
    } else {
        total * best / (sum * sum)
    }
}

impl CongestionControl for Lia {
    delegate_to_reno!();

    fn on_ack(&mut self, ack: &AckSignal, all: &[CcPathView]) {
        if !self.reno.wants_ca_increase(ack, all) {
            return;
        }
        let cwnd = self.reno.cwnd();
        let total: f64 = all
            .iter()
            .map(|p| p.cwnd as f64)
            .sum::<f64>()
            .max(cwnd as f64);
        let alpha = lia_alpha(all);
        let (b, mss) = (ack.bytes_acked as f64, ack.mtu as f64);
        let inc = (alpha * b * mss / total).min(b * mss / cwnd as f64);
        self.reno.add_ca_increase(inc, ack.mtu);
    }
    fn on_fast_retransmit(&mut self, loss: &LossSignal) {
        self.reno.on_fast_retransmit(loss);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    fn view(i: usize, cwnd: u64, rtt_ms: u64) -> CcPathView {
        CcPathView {
            id: PathId(i),
            cwnd,
            srtt: Some(Duration::from_millis(rtt_ms)),
            loss_interval: 0,
        }
    }

    #[test]
    fn alpha_by_hand() {
        // One path: α = 1 (Reno).
        assert!((lia_alpha(&[view(0, 10_000, 100)]) - 1.0).abs() < 1e-12);
        // Two equal paths: total·(w/r²)/(2w/r)² = 2w·w/r² / (4w²/r²) = 1/2.
        assert!((lia_alpha(&[view(0, 10_000, 100), view(1, 10_000, 100)]) - 0.5).abs() < 1e-12);
        // w = (10000, 20000), r = (0.1, 0.2): max w/r² = 1e6 (both); Σ w/r = 2e5;
        // α = 30000·1e6/4e10 = 0.75.
        assert!((lia_alpha(&[view(0, 10_000, 100), view(1, 20_000, 200)]) - 0.75).abs() < 1e-12);
    }
}
