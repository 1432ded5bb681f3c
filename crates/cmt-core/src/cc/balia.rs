//! BALIA, balanced linked adaptation (Peng, Walid, Hwang, Low, IEEE/ACM ToN 2016;
//! multipath-tcp.org `mptcp_balia.c`; docs/algorithms.md §10). With `x_k = w_k/rtt_k` (packets/s) and
//! `α_r = max_k x_k / x_r`, each acked packet on path r adds
//! `(x_r / (rtt_r·(Σ_k x_k)²)) · ((1 + α_r)/2) · ((4 + α_r)/5)` packets to `w_r`; a loss
//! removes `(w_r/2)·min(α_r, 1.5)` (ssthresh = the result, at least 4·MTU here, as for
//! every controller of this project). Slow start and timeouts as RFC 4960. One path:
//! Reno. The loss response uses α from the latest ack's view of all paths.

use super::{AckSignal, CcFactory, CcInit, CcPathView, CongestionControl, LossSignal, Reno};
use crate::params::{ParamError, Params};
use crate::view::PathId;

/// Factory for [`Balia`]. Takes no parameters.
#[derive(Clone, Debug, Default)]
pub struct BaliaFactory;

impl BaliaFactory {
    /// Validates (no parameters are accepted).
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("balia", &[])?;
        Ok(BaliaFactory)
    }
}

impl CcFactory for BaliaFactory {
    fn name(&self) -> &'static str {
        "balia"
    }
    fn build(&self, path: PathId, init: &CcInit) -> Box<dyn CongestionControl> {
        Box::new(Balia {
            reno: Reno::new(init),
            path,
            alpha: 1.0,
        })
    }
}

/// One path's BALIA state.
#[derive(Clone, Debug)]
pub struct Balia {
    reno: Reno,
    path: PathId,
    /// α_r from the latest ack (1 until one is seen).
    alpha: f64,
}

/// `(α_r, per-packet increase in packets)` for path `r`, windows in packets.
pub fn balia_terms(all: &[CcPathView], r: PathId, mss: f64) -> Option<(f64, f64)> {
    let xs: Vec<(PathId, f64, f64)> = all
        .iter()
        .filter_map(|p| {
            p.srtt
                .map(|t| (p.id, p.cwnd as f64 / mss, t.as_secs_f64().max(1e-6)))
        })
        .map(|(id, w, rtt)| (id, w / rtt, rtt))
        .collect();
    let &(_, x_r, rtt_r) = xs.iter().find(|x| x.0 == r)?;
    let sum: f64 = xs.iter().map(|x| x.1).sum();
    let max = xs.iter().map(|x| x.1).fold(0.0, f64::max);
    if x_r <= 0.0 || sum <= 0.0 {
        return None;
    }
    let alpha = max / x_r;
    let inc = x_r / (rtt_r * sum * sum) * ((1.0 + alpha) / 2.0) * ((4.0 + alpha) / 5.0);
    Some((alpha, inc))
}

impl CongestionControl for Balia {
    delegate_to_reno!();

    fn on_ack(&mut self, ack: &AckSignal, all: &[CcPathView]) {
        let mss = ack.mtu as f64;
        let terms = balia_terms(all, self.path, mss);
        if let Some((alpha, _)) = terms {
            self.alpha = alpha;
        }
        if all.len() < 2 {
            self.reno.on_ack(ack, all); // one path: Reno
            return;
        }
        if !self.reno.wants_ca_increase(ack, all) {
            return;
        }
        // per_pkt packets per acked packet; b/MSS packets acked; in bytes: ×MSS.
        if let Some((_, per_pkt)) = terms {
            self.reno
                .add_ca_increase(per_pkt * ack.bytes_acked as f64, ack.mtu);
        }
    }
    fn on_fast_retransmit(&mut self, loss: &LossSignal) {
        let cwnd = self.reno.cwnd() as f64;
        let after = (cwnd - cwnd / 2.0 * self.alpha.min(1.5)) as u64;
        let ssthresh = after.max(4 * loss.mtu);
        self.reno
            .set_state(ssthresh.min(self.reno.cwnd().max(4 * loss.mtu)), ssthresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    fn v(i: usize, cwnd_pkts: u64, rtt_ms: u64) -> CcPathView {
        CcPathView {
            id: PathId(i),
            cwnd: cwnd_pkts * 1000,
            srtt: Some(Duration::from_millis(rtt_ms)),
            loss_interval: 0,
        }
    }

    #[test]
    fn alpha_and_increase_by_hand() {
        // x = 10/0.1 = 100 and 20/0.1 = 200 packets/s; Σx = 300.
        let all = [v(0, 10, 100), v(1, 20, 100)];
        let (a0, i0) = balia_terms(&all, PathId(0), 1000.0).unwrap();
        assert!((a0 - 2.0).abs() < 1e-12);
        // 100/(0.1·300²)·(3/2)·(6/5) = 0.0111…·1.8 = 0.02.
        assert!((i0 - 0.02).abs() < 1e-12, "{i0}");
        let (a1, i1) = balia_terms(&all, PathId(1), 1000.0).unwrap();
        assert!((a1 - 1.0).abs() < 1e-12);
        // 200/(0.1·300²)·1·1 = 0.0222…
        assert!((i1 - 200.0 / 9000.0).abs() < 1e-12, "{i1}");
    }

    #[test]
    fn a_slower_path_backs_off_less_than_half_only_up_to_alpha_one_and_a_half() {
        let init = CcInit {
            mtu: 1000,
            initial_cwnd: 20_000,
            initial_ssthresh: 1000,
        };
        let loss = LossSignal {
            now: crate::time::Time::ZERO,
            mtu: 1000,
            min_ssthresh: 4000,
            srtt: None,
            min_rtt: None,
            max_srtt: None,
        };
        // α = 2 → min(α, 1.5) = 1.5: w − w/2·1.5 = w/4.
        let mut b = Balia {
            reno: Reno::new(&init),
            path: PathId(0),
            alpha: 2.0,
        };
        b.on_fast_retransmit(&loss);
        assert_eq!(b.cwnd(), 5_000);
        // α = 1 (the fastest path): halves.
        let mut b = Balia {
            reno: Reno::new(&init),
            path: PathId(0),
            alpha: 1.0,
        };
        b.on_fast_retransmit(&loss);
        assert_eq!(b.cwnd(), 10_000);
    }
}
