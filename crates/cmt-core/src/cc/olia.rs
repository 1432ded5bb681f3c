//! OLIA, opportunistic linked increases (Khalili, Gast, Popovic, Le Boudec, IEEE/ACM ToN
//! 2013; multipath-tcp.org `mptcp_olia.c`; docs/algorithms.md §10). Windows in packets, RTTs in
//! seconds. Each acked packet on path r adds
//! `(w_r/rtt_r²)/(Σ_p w_p/rtt_p)² + ε_r/w_r`, where, with `ℓ_p` the bytes acked between
//! path p's last two losses or since its last loss (whichever is larger), `B` = the
//! paths with the largest `ℓ_p/rtt_p²` and `M` = the paths with the largest window:
//! `ε_r = 1/(|P|·|B∖M|)` for r ∈ B∖M, `−1/(|P|·|M|)` for r ∈ M when B∖M is not empty,
//! else 0. The ε terms sum to zero over the paths: they move window from the largest
//! paths to the best ones without changing the total. The negative term is applied
//! (the window may shrink by whole MTUs, never below one), as the kernel does. Losses
//! halve the path's window as Reno; slow start and timeouts as RFC 4960. One path:
//! Reno. Comparisons of `ℓ/rtt²` are exact (integers: bytes and µs²), as the kernel's.

use super::{AckSignal, CcFactory, CcInit, CcPathView, CongestionControl, LossSignal, Reno};
use crate::params::{ParamError, Params};
use crate::view::PathId;

/// Factory for [`Olia`]. Takes no parameters.
#[derive(Clone, Debug, Default)]
pub struct OliaFactory;

impl OliaFactory {
    /// Validates (no parameters are accepted).
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("olia", &[])?;
        Ok(OliaFactory)
    }
}

impl CcFactory for OliaFactory {
    fn name(&self) -> &'static str {
        "olia"
    }
    fn build(&self, path: PathId, init: &CcInit) -> Box<dyn CongestionControl> {
        Box::new(Olia {
            reno: Reno::new(init),
            path,
        })
    }
}

/// One path's OLIA state.
#[derive(Clone, Debug)]
pub struct Olia {
    reno: Reno,
    path: PathId,
}

/// `ε_r` for path `r` (see the module doc). Paths without an RTT sample are left out.
pub fn olia_epsilon(all: &[CcPathView], r: PathId) -> f64 {
    let rated: Vec<(PathId, u64, u128, u128)> = all
        .iter()
        .filter_map(|p| {
            let us = p.srtt?.as_nanos().div_ceil(1000).max(1) as u128;
            Some((p.id, p.cwnd, p.loss_interval as u128, us * us))
        })
        .collect();
    let Some(me) = rated.iter().find(|x| x.0 == r) else {
        return 0.0;
    };
    let max_cwnd = rated.iter().map(|x| x.1).max().unwrap_or(0);
    // Best ℓ/rtt² by cross-multiplication: a/b ≥ c/d ⇔ a·d ≥ c·b.
    let (mut best_l, mut best_r2) = (0u128, 1u128);
    for &(_, _, l, r2) in &rated {
        if l * best_r2 >= best_l * r2 {
            (best_l, best_r2) = (l, r2);
        }
    }
    let is_best = |l: u128, r2: u128| l * best_r2 == best_l * r2;
    let m = rated.iter().filter(|x| x.1 == max_cwnd).count();
    let b_not_m = rated
        .iter()
        .filter(|x| x.1 != max_cwnd && is_best(x.2, x.3))
        .count();
    let n = rated.len() as f64;
    if b_not_m == 0 {
        0.0
    } else if me.1 == max_cwnd {
        -1.0 / (n * m as f64)
    } else if is_best(me.2, me.3) {
        1.0 / (n * b_not_m as f64)
    } else {
        0.0
    }
}

/// Increase in packets per acked packet on path `r` (windows in packets).
pub fn olia_increase(all: &[CcPathView], r: PathId, mss: f64) -> Option<f64> {
    let me = all.iter().find(|p| p.id == r)?;
    let rtt_r = me.srtt?.as_secs_f64().max(1e-6);
    let w_r = (me.cwnd as f64 / mss).max(1.0);
    let sum: f64 = all
        .iter()
        .filter_map(|p| {
            p.srtt
                .map(|t| p.cwnd as f64 / mss / t.as_secs_f64().max(1e-6))
        })
        .sum();
    if sum <= 0.0 {
        return None;
    }
    Some((w_r / (rtt_r * rtt_r)) / (sum * sum) + olia_epsilon(all, r) / w_r)
}

impl CongestionControl for Olia {
    delegate_to_reno!();

    fn on_ack(&mut self, ack: &AckSignal, all: &[CcPathView]) {
        if all.len() < 2 {
            self.reno.on_ack(ack, all); // one path: Reno
            return;
        }
        if !self.reno.wants_ca_increase(ack, all) {
            return;
        }
        let mss = ack.mtu as f64;
        if let Some(per_pkt) = olia_increase(all, self.path, mss) {
            // (b/MSS packets acked) × per_pkt packets × MSS bytes.
            self.reno
                .add_ca_change(per_pkt * ack.bytes_acked as f64, ack.mtu);
        }
    }
    fn on_fast_retransmit(&mut self, loss: &LossSignal) {
        self.reno.on_fast_retransmit(loss);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    fn v(i: usize, cwnd_pkts: u64, rtt_ms: u64, loss_interval: u64) -> CcPathView {
        CcPathView {
            id: PathId(i),
            cwnd: cwnd_pkts * 1000,
            srtt: Some(Duration::from_millis(rtt_ms)),
            loss_interval,
        }
    }

    #[test]
    fn epsilon_table() {
        // (paths, path asked, ε)
        let cases: Vec<(Vec<CcPathView>, usize, f64)> = vec![
            // The best path (ℓ/rtt²) also has the largest window: B∖M empty, ε = 0.
            (vec![v(0, 20, 100, 9000), v(1, 10, 100, 3000)], 0, 0.0),
            (vec![v(0, 20, 100, 9000), v(1, 10, 100, 3000)], 1, 0.0),
            // Best path 1 has the smaller window: +1/(2·1) to it, −1/(2·1) to path 0.
            (vec![v(0, 20, 100, 3000), v(1, 10, 100, 9000)], 1, 0.5),
            (vec![v(0, 20, 100, 3000), v(1, 10, 100, 9000)], 0, -0.5),
            // RTT counts squared: ℓ 4000 at 100 ms beats ℓ 9000 at 200 ms (0.4 vs 0.225).
            (vec![v(0, 20, 200, 9000), v(1, 10, 100, 4000)], 1, 0.5),
            // Three paths: path 2 best and small, paths 0 and 1 share the largest window.
            (
                vec![v(0, 20, 100, 1000), v(1, 20, 100, 1000), v(2, 5, 100, 8000)],
                2,
                1.0 / 3.0,
            ),
            (
                vec![v(0, 20, 100, 1000), v(1, 20, 100, 1000), v(2, 5, 100, 8000)],
                0,
                -1.0 / 6.0,
            ),
            // A path neither best nor largest: 0.
            (
                vec![v(0, 20, 100, 1000), v(1, 10, 100, 500), v(2, 5, 100, 8000)],
                1,
                0.0,
            ),
        ];
        for (i, (all, r, want)) in cases.iter().enumerate() {
            let got = olia_epsilon(all, PathId(*r));
            assert!((got - want).abs() < 1e-12, "case {i}: {got} ≠ {want}");
        }
    }

    #[test]
    fn epsilons_sum_to_zero_and_equal_paths_grow_like_half_a_reno_each() {
        let all = vec![v(0, 20, 100, 3000), v(1, 10, 100, 9000), v(2, 15, 100, 100)];
        let s: f64 = (0..3).map(|r| olia_epsilon(&all, PathId(r))).sum();
        assert!(s.abs() < 1e-12, "{s}");
        // Two equal paths, ε = 0: per packet (w/r²)/(2w/r)² = 1/(4w); over a window of
        // acks each path gains 1/4 packet per RTT... the pair 1/2 (Reno: 1) — which,
        // with both paths halving, gives the pair one Reno flow's window.
        let eq = vec![v(0, 10, 100, 5000), v(1, 10, 100, 5000)];
        let inc = olia_increase(&eq, PathId(0), 1000.0).unwrap();
        assert!((inc - 1.0 / 40.0).abs() < 1e-12, "{inc}");
    }

    #[test]
    fn a_negative_epsilon_shrinks_the_window_by_whole_mtus_never_below_one() {
        let init = CcInit {
            mtu: 1000,
            initial_cwnd: 2000,
            initial_ssthresh: 1,
        };
        let mut o = Olia {
            reno: Reno::new(&init),
            path: PathId(0),
        };
        // Path 0: largest window, worst ℓ: ε = −1/2 per window… per acked packet −0.25
        // at w = 2, plus a tiny first term.
        let all = vec![v(0, 2, 100, 10), v(1, 1, 100, 9000)];
        for _ in 0..40 {
            let ack = AckSignal {
                now: crate::time::Time::ZERO,
                bytes_acked: 1000,
                pba_bytes: 1000,
                flight_before: 2000,
                mtu: 1000,
                srtt: Some(Duration::from_millis(100)),
                min_rtt: Some(Duration::from_millis(100)),
                newest_sent: None,
            };
            o.on_ack(&ack, &all);
        }
        assert_eq!(o.cwnd(), 1000);
    }
}
