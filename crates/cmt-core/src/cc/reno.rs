//! RFC 4960 / RFC 9260 §7.2 per-destination AIMD ("Reno" for SCTP), as in ns-2.35
//! `sctp.cc` (AdjustCwnd, FastRtx, Timeout). Spec §1.2.

use super::{AckSignal, CcFactory, CcInit, CcPathView, CongestionControl, LossSignal};
use crate::params::{ParamError, Params};
use crate::view::PathId;

/// Factory for [`Reno`]. Takes no parameters.
#[derive(Clone, Debug, Default)]
pub struct RenoFactory;

impl RenoFactory {
    /// Validates (no parameters are accepted).
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("reno", &[])?;
        Ok(RenoFactory)
    }
}

impl CcFactory for RenoFactory {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn build(&self, _path: PathId, init: &CcInit) -> Box<dyn CongestionControl> {
        Box::new(Reno::new(init))
    }
}

/// Uncoupled SCTP congestion control of one path.
#[derive(Clone, Debug)]
pub struct Reno {
    cwnd: u64,
    ssthresh: u64,
    pba: u64,
    /// Fraction of a byte of congestion-avoidance increase not applied yet (coupled
    /// controllers compute fractional increases).
    frac: f64,
}

impl Reno {
    /// Starts in slow start at the initial window.
    pub fn new(init: &CcInit) -> Self {
        Reno {
            cwnd: init.initial_cwnd,
            ssthresh: init.initial_ssthresh,
            pba: 0,
            frac: 0.0,
        }
    }

    /// For controllers that replace Reno's congestion-avoidance increase (LIA, BALIA):
    /// applies Reno to slow-start acks and returns true only for an ack that should get
    /// the replacement increase (congestion avoidance, window fully used — RFC 4960
    /// §7.2.2).
    pub fn wants_ca_increase(&mut self, ack: &AckSignal, all: &[CcPathView]) -> bool {
        if self.cwnd <= self.ssthresh || ack.bytes_acked == 0 {
            self.on_ack(ack, all);
            return false;
        }
        ack.flight_before >= self.cwnd
    }

    /// Adds a congestion-avoidance increase of `bytes` (fractional), at most one MTU per
    /// SACK as RFC 4960 byte counting allows; fractions carry over to later acks.
    pub fn add_ca_increase(&mut self, bytes: f64, mtu: u64) {
        self.add_ca_change(bytes.max(0.0), mtu);
    }

    /// As [`add_ca_increase`](Self::add_ca_increase), but `bytes` may be negative
    /// (OLIA's ε term shrinks the largest windows). A decrease is applied one whole MTU
    /// at a time once a full MTU of it has accumulated, as the kernel takes one packet
    /// off `snd_cwnd`; never below one MTU. At most one MTU either way per SACK.
    pub fn add_ca_change(&mut self, bytes: f64, mtu: u64) {
        let m = mtu as f64;
        self.frac += bytes.clamp(-m, m);
        if self.frac >= 1.0 {
            let whole = self.frac.floor().min(m);
            self.frac -= whole;
            self.cwnd += whole as u64;
        } else if self.frac <= -m {
            self.frac += m;
            self.cwnd = self.cwnd.saturating_sub(mtu).max(mtu);
        }
    }
    /// partial_bytes_acked.
    pub fn partial_bytes_acked(&self) -> u64 {
        self.pba
    }
    /// Sets cwnd without touching partial_bytes_acked (for controllers built on Reno).
    pub fn set_cwnd_keep_pba(&mut self, cwnd: u64) {
        self.cwnd = cwnd;
    }
    /// Sets cwnd and ssthresh, resetting partial_bytes_acked (a loss response).
    pub fn set_state(&mut self, cwnd: u64, ssthresh: u64) {
        self.cwnd = cwnd;
        self.ssthresh = ssthresh;
        self.pba = 0;
    }
}

impl CongestionControl for Reno {
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn on_ack(&mut self, ack: &AckSignal, _all: &[CcPathView]) {
        if ack.bytes_acked == 0 {
            return;
        }
        if self.cwnd <= self.ssthresh {
            // Slow start (RFC 9260 §7.2.1): only when the window was fully used.
            if ack.flight_before >= self.cwnd {
                self.cwnd += ack.bytes_acked.min(ack.mtu);
            }
        } else {
            // Congestion avoidance (§7.2.2): one MTU per cwnd of acked bytes.
            self.pba += ack.pba_bytes;
            if self.pba >= self.cwnd && ack.flight_before >= self.cwnd {
                self.pba -= self.cwnd;
                self.cwnd += ack.mtu;
            }
        }
        if ack.flight_before <= ack.bytes_acked {
            // Everything outstanding was acked: pba restarts (§7.2.2).
            self.pba = 0;
        }
    }

    fn on_fast_retransmit(&mut self, loss: &LossSignal) {
        self.ssthresh = (self.cwnd / 2).max(loss.min_ssthresh);
        self.cwnd = self.ssthresh;
        self.pba = 0;
    }

    fn on_timeout(&mut self, loss: &LossSignal) {
        self.ssthresh = (self.cwnd / 2).max(loss.min_ssthresh);
        self.cwnd = loss.mtu;
        self.pba = 0;
    }

    fn on_idle(&mut self, mtu: u64, initial_cwnd: u64) {
        // RFC 4960 §7.2.1's max(cwnd/2, 4·MTU) would *raise* a window below 4·MTU (after
        // a timeout); decay never grows it.
        if self.cwnd > initial_cwnd {
            self.cwnd = (self.cwnd / 2)
                .max(4 * mtu)
                .max(initial_cwnd)
                .min(self.cwnd);
        }
    }

    fn set_cwnd(&mut self, cwnd: u64) {
        self.cwnd = cwnd;
        self.pba = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Time;

    const MTU: u64 = 1500;

    fn reno(cwnd: u64, ssthresh: u64) -> Reno {
        Reno::new(&CcInit {
            mtu: MTU,
            initial_cwnd: cwnd,
            initial_ssthresh: ssthresh,
        })
    }
    fn ack(bytes: u64, flight: u64) -> AckSignal {
        AckSignal {
            now: Time::ZERO,
            bytes_acked: bytes,
            pba_bytes: bytes,
            flight_before: flight,
            mtu: MTU,
            srtt: None,
            min_rtt: None,
            newest_sent: None,
        }
    }
    fn loss() -> LossSignal {
        crate::cc::tests::loss_of(MTU)
    }

    #[test]
    fn slow_start_grows_by_at_most_one_mtu_per_sack_and_only_when_cwnd_was_full() {
        // (cwnd, flight before, acked) -> cwnd after
        let cases = [
            (4380, 4380, 2904, 4380 + 1500),
            (4380, 4380, 1000, 5380),
            (4380, 3000, 2904, 4380),
        ];
        for (cwnd, flight, acked, want) in cases {
            let mut r = reno(cwnd, 65536);
            r.on_ack(&ack(acked, flight), &[]);
            assert_eq!(r.cwnd(), want, "cwnd {cwnd} flight {flight} acked {acked}");
        }
    }

    #[test]
    fn congestion_avoidance_adds_one_mtu_per_window_of_acked_bytes() {
        let mut r = reno(15000, 10000);
        for _ in 0..9 {
            r.on_ack(&ack(1500, 30000), &[]);
        }
        assert_eq!(r.cwnd(), 15000);
        assert_eq!(r.partial_bytes_acked(), 13500);
        r.on_ack(&ack(1500, 30000), &[]);
        assert_eq!(r.cwnd(), 16500);
        assert_eq!(r.partial_bytes_acked(), 0);
    }

    #[test]
    fn fast_retransmit_halves_and_timeout_collapses_with_four_mtu_floor() {
        let mut r = reno(20000, 65536);
        r.on_fast_retransmit(&loss());
        assert_eq!((r.cwnd(), r.ssthresh()), (10000, 10000));
        r.on_fast_retransmit(&loss());
        assert_eq!((r.cwnd(), r.ssthresh()), (6000, 6000));
        r.on_timeout(&loss());
        assert_eq!((r.cwnd(), r.ssthresh()), (1500, 6000));
    }

    #[test]
    fn idle_decay_never_raises_a_small_window() {
        let mut r = reno(4381, 3000); // just above the initial window, below 4 MTU
        r.on_idle(MTU, 4380);
        assert_eq!(r.cwnd(), 4381);
    }

    #[test]
    fn idle_decay_halves_but_not_below_four_mtu() {
        let mut r = reno(40000, 10000);
        r.on_idle(MTU, 4380);
        assert_eq!(r.cwnd(), 20000);
        r.on_idle(MTU, 4380);
        r.on_idle(MTU, 4380);
        assert_eq!(r.cwnd(), 6000);
    }
}
