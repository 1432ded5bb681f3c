//! The sender's window under receiver-driven CMT (Cao et al. 2015, CMT-Rev §3.2; MPTCP-rec,
//! MPTCP-rec 2016 §4.2; docs/algorithms.md §2.6). Congestion control has moved to the receiver; decision
//! D7 (docs/algorithms.md) for the "cwnd" the papers' schedulers still test: the allowance
//! `W_d = max(2·MTU, Rate_e^d · SRTT_d)` bytes, recomputed at every advert and ack.
//! Until the receiver has a rate for the path, the window starts at RFC 9260's initial
//! window and grows in slow start (§7.2.1), so start-up is not held back while the
//! receiver measures its first round. Fast retransmits and
//! timeouts do not change it (loss recovery stays at the sender; the next advertised
//! rate answers the loss); PF recovery may still set it. Pacing at `Rate_e^d` is done by
//! the core for every path with an advertised rate.

use super::{AckSignal, CcFactory, CcInit, CcPathView, CongestionControl, LossSignal};
use crate::params::{ParamError, Params};
use crate::time::Duration;
use crate::view::PathId;

/// Factory for [`ReceiverCc`]. Takes no parameters.
#[derive(Clone, Debug, Default)]
pub struct ReceiverCcFactory;

impl ReceiverCcFactory {
    /// Validates (no parameters are accepted).
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("receiver", &[])?;
        Ok(ReceiverCcFactory)
    }
}

impl CcFactory for ReceiverCcFactory {
    fn name(&self) -> &'static str {
        "receiver"
    }
    fn build(&self, _path: PathId, init: &CcInit) -> Box<dyn CongestionControl> {
        Box::new(ReceiverCc {
            cwnd: init.initial_cwnd.max(init.mtu),
            ssthresh: init.initial_ssthresh.max(4 * init.mtu),
            rate: None,
        })
    }
}

/// The allowance of one path.
#[derive(Clone, Debug)]
pub struct ReceiverCc {
    cwnd: u64,
    ssthresh: u64,
    rate: Option<f64>,
}

/// `max(2·MTU, rate · srtt)` bytes.
pub fn allowance(rate: f64, srtt: Duration, mtu: u64) -> u64 {
    ((rate * srtt.as_secs_f64()) as u64).max(2 * mtu)
}

impl CongestionControl for ReceiverCc {
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn on_ack(&mut self, ack: &AckSignal, _all: &[CcPathView]) {
        match (self.rate, ack.srtt) {
            (Some(rate), Some(srtt)) => self.cwnd = allowance(rate, srtt, ack.mtu),
            (Some(_), None) => {}
            (None, _) => {
                if ack.flight_before >= self.cwnd {
                    self.cwnd += ack.bytes_acked.min(ack.mtu);
                }
            }
        }
    }
    fn on_fast_retransmit(&mut self, _loss: &LossSignal) {}
    fn on_timeout(&mut self, _loss: &LossSignal) {}
    fn on_idle(&mut self, _mtu: u64, _initial_cwnd: u64) {}
    fn set_cwnd(&mut self, cwnd: u64) {
        self.cwnd = cwnd;
    }
    fn on_rate_advert(&mut self, bytes_per_s: f64, srtt: Option<Duration>, mtu: u64) {
        self.rate = Some(bytes_per_s);
        if let Some(srtt) = srtt {
            self.cwnd = allowance(bytes_per_s, srtt, mtu);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Time;

    #[test]
    fn the_allowance_follows_the_advert_and_ignores_losses() {
        let init = CcInit {
            mtu: 1500,
            initial_cwnd: 4380,
            initial_ssthresh: 65_536,
        };
        let mut c = ReceiverCcFactory.build(PathId(0), &init);
        assert_eq!(c.cwnd(), 4380);
        // Before any rate: slow start, one MTU per full-window ack.
        let ack = AckSignal {
            now: Time::ZERO,
            bytes_acked: 2920,
            pba_bytes: 2920,
            flight_before: 4380,
            mtu: 1500,
            srtt: Some(Duration::from_millis(50)),
            min_rtt: None,
            newest_sent: None,
        };
        c.on_ack(&ack, &[]);
        assert_eq!(c.cwnd(), 5880);
        // 1 MB/s × 50 ms = 50 000 bytes.
        c.on_rate_advert(1_000_000.0, Some(Duration::from_millis(50)), 1500);
        assert_eq!(c.cwnd(), 50_000);
        // A tiny rate keeps two MTUs.
        c.on_rate_advert(1_000.0, Some(Duration::from_millis(50)), 1500);
        assert_eq!(c.cwnd(), 3000);
        let loss = LossSignal {
            now: Time::ZERO,
            mtu: 1500,
            min_ssthresh: 6000,
            srtt: None,
            min_rtt: None,
            max_srtt: None,
        };
        c.on_fast_retransmit(&loss);
        c.on_timeout(&loss);
        assert_eq!(c.cwnd(), 3000);
    }
}
