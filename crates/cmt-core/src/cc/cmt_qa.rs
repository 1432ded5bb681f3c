//! CMT-QA*'s loss differentiation (docs/algorithms.md §6; a **reconstruction**: the CMT-QA paper, Xu
//! et al., IEEE TMC 2013, says only that it tells wireless from congestion losses "to
//! avoid unreasonable congestion window adjustments"). On a fast retransmit on path d,
//! the loss is classed as wireless when the path shows no queue build-up,
//! `SRTT_d ≤ RTTmin_d + 0.2·(RTTmax_d − RTTmin_d)` (RTTmax = the largest SRTT the path
//! has had); then cwnd and ssthresh are kept. Otherwise, and for every timeout, RFC
//! 4960 as [`Reno`]. Parameter `threshold` (default 0.2) is the fraction of the RTT
//! range.

use super::{AckSignal, CcFactory, CcInit, CcPathView, CongestionControl, LossSignal, Reno};
use crate::params::{ParamError, Params};
use crate::view::PathId;

/// Factory for [`CmtQaCc`].
#[derive(Clone, Debug)]
pub struct CmtQaCcFactory {
    threshold: f64,
}

impl CmtQaCcFactory {
    /// Reads and validates `threshold` (0..=1).
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("cmt-qa", &["threshold"])?;
        let threshold = params.number("threshold", 0.2)?;
        if !(0.0..=1.0).contains(&threshold) {
            return Err(ParamError(format!(
                "parameter `threshold`: {threshold} is not in 0..=1"
            )));
        }
        Ok(CmtQaCcFactory { threshold })
    }
}

impl CcFactory for CmtQaCcFactory {
    fn name(&self) -> &'static str {
        "cmt-qa"
    }
    fn build(&self, _path: PathId, init: &CcInit) -> Box<dyn CongestionControl> {
        Box::new(CmtQaCc {
            reno: Reno::new(init),
            threshold: self.threshold,
        })
    }
}

/// Reno with wireless-loss differentiation on fast retransmit.
#[derive(Clone, Debug)]
pub struct CmtQaCc {
    reno: Reno,
    threshold: f64,
}

/// Whether a loss detected with this signal counts as wireless (no queue build-up).
/// Without RTT history it is congestion.
pub fn is_wireless_loss(loss: &LossSignal, threshold: f64) -> bool {
    match (loss.srtt, loss.min_rtt, loss.max_srtt) {
        (Some(s), Some(lo), Some(hi)) if hi > lo => {
            let (s, lo, hi) = (s.as_secs_f64(), lo.as_secs_f64(), hi.as_secs_f64());
            s <= lo + threshold * (hi - lo)
        }
        _ => false,
    }
}

impl CongestionControl for CmtQaCc {
    delegate_to_reno!();

    fn on_ack(&mut self, ack: &AckSignal, all: &[CcPathView]) {
        self.reno.on_ack(ack, all);
    }
    fn on_fast_retransmit(&mut self, loss: &LossSignal) {
        if !is_wireless_loss(loss, self.threshold) {
            self.reno.on_fast_retransmit(loss);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Duration, Time};

    fn sig(srtt: u64, min: u64, max: u64) -> LossSignal {
        LossSignal {
            now: Time::ZERO,
            mtu: 1500,
            min_ssthresh: 6000,
            srtt: Some(Duration::from_millis(srtt)),
            min_rtt: Some(Duration::from_millis(min)),
            max_srtt: Some(Duration::from_millis(max)),
        }
    }

    #[test]
    fn classification_table() {
        // (srtt, min, max) → wireless; the boundary is min + 0.2·(max − min).
        let cases = [
            ((100, 100, 200), true),  // no queue at all
            ((120, 100, 200), true),  // exactly at the boundary
            ((121, 100, 200), false), // just above it
            ((190, 100, 200), false), // deep queue
            ((100, 100, 100), false), // no RTT range yet: congestion
        ];
        for ((s, lo, hi), want) in cases {
            assert_eq!(
                is_wireless_loss(&sig(s, lo, hi), 0.2),
                want,
                "{s} {lo} {hi}"
            );
        }
        let none = LossSignal {
            now: Time::ZERO,
            mtu: 1500,
            min_ssthresh: 6000,
            srtt: None,
            min_rtt: None,
            max_srtt: None,
        };
        assert!(!is_wireless_loss(&none, 0.2));
    }

    #[test]
    fn a_wireless_loss_keeps_the_window_a_congestion_loss_halves_it() {
        let f = CmtQaCcFactory::from_params(&Params::default()).unwrap();
        let init = CcInit {
            mtu: 1500,
            initial_cwnd: 30_000,
            initial_ssthresh: 1,
        };
        let mut c = f.build(PathId(0), &init);
        c.on_fast_retransmit(&sig(105, 100, 200));
        assert_eq!(c.cwnd(), 30_000);
        c.on_fast_retransmit(&sig(180, 100, 200));
        assert_eq!(c.cwnd(), 15_000);
        let bad = Params(
            [(
                "threshold".to_string(),
                crate::params::ParamValue::Number(2.0),
            )]
            .into_iter()
            .collect(),
        );
        assert!(CmtQaCcFactory::from_params(&bad).is_err());
    }
}
