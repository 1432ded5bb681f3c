//! DB-CMT's congestion control (DB-CMT 2022 §4.1 eq. 4 and §4.3 eq. 5; docs/algorithms.md §5.2, §5.4).
//!
//! * D-DSP growth (originally A-CMT): slow start as RFC 4960; in congestion avoidance,
//!   at each opportunity where Reno would add one MTU (once per cwnd of acked bytes),
//!   add `MTU` if `D ≤ λ`, `MTU/2` if `λ < D ≤ δ`, nothing if `D > δ`, where
//!   `D = cwnd·(1 − RTTmin/SRTT)` in packets. Decisions D10 and D9 (docs/algorithms.md): boundary equalities as
//!   written; λ = 1, δ = 3 packets (ns-2 Vegas defaults), `profile = "linux"` gives 2/4.
//! * D-FRP reduction on fast retransmit: `ssthresh = max(cwnd·RTTmin/SRTT, 4·MTU)`,
//!   `cwnd = ssthresh` (decision D10: ssthresh and floor mirror RFC 4960 §7.2.3). Timeouts as
//!   RFC 4960.
//! * `a-cmt` is D-DSP growth alone, with RFC 4960's halving on fast retransmit: the
//!   A-CMT baseline of DB-CMT 2022 (a reconstruction — the A-CMT paper is unavailable; the
//!   seed credits only the growth rule to it, docs/algorithms.md §5.2).

use super::{AckSignal, CcFactory, CcInit, CcPathView, CongestionControl, LossSignal, Reno};
use crate::params::{ParamError, Params};
use crate::view::PathId;

/// Factory for [`DbCmtCc`]; parameters `profile` = "ns2" (λ 1, δ 3) or "linux" (2, 4),
/// and `growth` = "d-dsp" (default) or "reno" — Reno's growth, to measure D-FRP alone.
#[derive(Clone, Debug)]
pub struct DbCmtCcFactory {
    lambda: f64,
    delta: f64,
    frp: bool,
    dsp: bool,
}

impl DbCmtCcFactory {
    /// DB-CMT: D-DSP growth and D-FRP reduction.
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        Self::with_frp("db-cmt", params, true)
    }

    /// A-CMT: D-DSP growth, RFC 4960 reduction.
    pub fn a_cmt(params: &Params) -> Result<Self, ParamError> {
        Self::with_frp("a-cmt", params, false)
    }

    fn with_frp(name: &str, params: &Params, frp: bool) -> Result<Self, ParamError> {
        params.expect_only(name, &["profile", "growth"])?;
        let (lambda, delta) = match params.text("profile", "ns2")? {
            "ns2" => (1.0, 3.0),
            "linux" => (2.0, 4.0),
            o => {
                return Err(ParamError(format!(
                    "parameter `profile`: `{o}` (ns2 or linux)"
                )))
            }
        };
        let dsp = match params.text("growth", "d-dsp")? {
            "d-dsp" => true,
            "reno" => false,
            o => {
                return Err(ParamError(format!(
                    "parameter `growth`: `{o}` (d-dsp or reno)"
                )))
            }
        };
        Ok(DbCmtCcFactory {
            lambda,
            delta,
            frp,
            dsp,
        })
    }
}

impl CcFactory for DbCmtCcFactory {
    fn name(&self) -> &'static str {
        if self.frp {
            "db-cmt"
        } else {
            "a-cmt"
        }
    }
    fn build(&self, _path: PathId, init: &CcInit) -> Box<dyn CongestionControl> {
        Box::new(DbCmtCc {
            reno: Reno::new(init),
            lambda: self.lambda,
            delta: self.delta,
            frp: self.frp,
            dsp: self.dsp,
        })
    }
}

/// D-DSP growth and (unless A-CMT) D-FRP reduction around the RFC 4960 state.
#[derive(Clone, Debug)]
pub struct DbCmtCc {
    reno: Reno,
    lambda: f64,
    delta: f64,
    frp: bool,
    dsp: bool,
}

fn ratio(srtt: Option<crate::Duration>, min: Option<crate::Duration>) -> f64 {
    match (srtt, min) {
        (Some(s), Some(m)) if s.as_nanos() > 0 => {
            (m.as_nanos() as f64 / s.as_nanos() as f64).min(1.0)
        }
        _ => 1.0,
    }
}

impl CongestionControl for DbCmtCc {
    delegate_to_reno!();

    fn on_ack(&mut self, ack: &AckSignal, all: &[CcPathView]) {
        let before = self.reno.cwnd();
        let in_ca = before > self.reno.ssthresh();
        self.reno.on_ack(ack, all);
        let added = self.reno.cwnd().saturating_sub(before);
        if self.dsp && in_ca && added > 0 {
            // Reno granted one MTU: replace it by the D-DSP step.
            let d_pkts = before as f64 * (1.0 - ratio(ack.srtt, ack.min_rtt)) / ack.mtu as f64;
            let step = if d_pkts <= self.lambda {
                ack.mtu
            } else if d_pkts <= self.delta {
                ack.mtu / 2
            } else {
                0
            };
            self.reno.set_cwnd_keep_pba(before + step);
        }
    }
    fn on_fast_retransmit(&mut self, loss: &LossSignal) {
        if !self.frp {
            return self.reno.on_fast_retransmit(loss);
        }
        let cwnd = self.reno.cwnd() as f64 * ratio(loss.srtt, loss.min_rtt);
        let ssthresh = (cwnd as u64).max(4 * loss.mtu);
        self.reno.set_state(ssthresh, ssthresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamValue;
    use crate::time::{Duration, Time};

    const MTU: u64 = 1500;

    fn cc(cwnd: u64) -> DbCmtCc {
        let f = DbCmtCcFactory::from_params(&Params::default()).unwrap();
        let mut c = DbCmtCc {
            reno: Reno::new(&CcInit {
                mtu: MTU,
                initial_cwnd: cwnd,
                initial_ssthresh: 1,
            }),
            lambda: f.lambda,
            delta: f.delta,
            frp: f.frp,
            dsp: f.dsp,
        };
        c.reno.set_state(cwnd, 1);
        c
    }

    fn ack_window(c: &mut DbCmtCc, srtt_ms: u64, min_ms: u64) {
        let cwnd = c.cwnd();
        let ack = AckSignal {
            now: Time::ZERO,
            bytes_acked: cwnd,
            pba_bytes: cwnd,
            flight_before: cwnd,
            mtu: MTU,
            srtt: Some(Duration::from_millis(srtt_ms)),
            min_rtt: Some(Duration::from_millis(min_ms)),
            newest_sent: None,
        };
        c.on_ack(&ack, &[]);
    }

    #[test]
    fn growth_step_depends_on_queued_packets() {
        // cwnd 30000 = 20 packets. (srtt, min) -> step: D = 20·(1 − min/srtt) packets.
        let cases = [
            ((100, 100), MTU),
            ((105, 100), MTU),
            ((110, 100), MTU / 2),
            ((120, 100), 0),
        ];
        // D = 0, 0.95, 1.82, 3.33
        for ((s, m), step) in cases {
            let mut c = cc(30_000);
            ack_window(&mut c, s, m);
            assert_eq!(c.cwnd(), 30_000 + step, "srtt {s} min {m}");
        }
    }

    #[test]
    fn reno_growth_with_d_frp_ignores_the_queue_but_keeps_the_reduction() {
        let mut p = Params::default();
        p.0.insert("growth".into(), ParamValue::Text("reno".into()));
        let f = DbCmtCcFactory::from_params(&p).unwrap();
        let init = CcInit {
            mtu: MTU,
            initial_cwnd: 30_000,
            initial_ssthresh: 1,
        };
        let mut c = f.build(PathId(0), &init);
        // D = 20·(1 − 100/120) = 3.3 packets > δ: D-DSP would add nothing, Reno adds an MTU.
        let ack = AckSignal {
            now: Time::ZERO,
            bytes_acked: 30_000,
            pba_bytes: 30_000,
            flight_before: 30_000,
            mtu: MTU,
            srtt: Some(Duration::from_millis(120)),
            min_rtt: Some(Duration::from_millis(100)),
            newest_sent: None,
        };
        c.on_ack(&ack, &[]);
        assert_eq!(c.cwnd(), 31_500);
        let loss = LossSignal {
            now: Time::ZERO,
            mtu: MTU,
            min_ssthresh: 4 * MTU,
            srtt: Some(Duration::from_millis(150)),
            min_rtt: Some(Duration::from_millis(100)),
            max_srtt: None,
        };
        c.on_fast_retransmit(&loss);
        assert_eq!(c.cwnd(), 21_000, "D-FRP: 31500 · 100/150");
        p.0.insert("growth".into(), ParamValue::Text("vegas".into()));
        let e = DbCmtCcFactory::from_params(&p).unwrap_err();
        assert!(e.0.contains("growth") && e.0.contains("vegas"), "{}", e.0);
    }

    #[test]
    fn fast_retransmit_scales_by_min_over_srtt_with_a_four_mtu_floor() {
        let loss = |s, m| LossSignal {
            now: Time::ZERO,
            mtu: MTU,
            min_ssthresh: 4 * MTU,
            srtt: Some(Duration::from_millis(s)),
            min_rtt: Some(Duration::from_millis(m)),
            max_srtt: None,
        };
        let mut c = cc(30_000);
        c.on_fast_retransmit(&loss(150, 100));
        assert_eq!((c.cwnd(), c.ssthresh()), (20_000, 20_000));
        let mut c = cc(8_000);
        c.on_fast_retransmit(&loss(400, 100));
        assert_eq!((c.cwnd(), c.ssthresh()), (6_000, 6_000), "floor 4 MTU");
        // A-CMT halves as RFC 4960 whatever the RTT ratio.
        let f = DbCmtCcFactory::a_cmt(&Params::default()).unwrap();
        let init = CcInit {
            mtu: MTU,
            initial_cwnd: 30_000,
            initial_ssthresh: 1,
        };
        let mut a = f.build(PathId(0), &init);
        a.on_fast_retransmit(&loss(150, 100));
        assert_eq!((a.cwnd(), a.ssthresh()), (15_000, 15_000));
    }
}
