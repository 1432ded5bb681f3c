//! A path's congestion controller with its window read once per change.
//!
//! The core reads a path's cwnd many times per packet (every scheduling decision's
//! path views, every SACK's flight checks and cwnd-event comparisons) and changes it a
//! few times per SACK. The controller is a trait object, so every read was a virtual
//! call into another allocation; here cwnd and ssthresh are read from the controller
//! after each call that may change them and kept beside the path's other state. A
//! controller's window changes only through its own `&mut self` methods (the trait
//! says so), so the kept values are always what the controller would answer.

use crate::cc::{AckSignal, CcPathView, CongestionControl, LossSignal};
use crate::time::{Duration, Time};

/// A congestion controller and its current window.
pub(crate) struct Window {
    ctl: Box<dyn CongestionControl>,
    cwnd: u64,
    ssthresh: u64,
    /// The controller paces and wants to hear of every packet sent (asked once).
    rate_based: bool,
}

impl Window {
    pub(crate) fn new(ctl: Box<dyn CongestionControl>) -> Self {
        let (cwnd, ssthresh) = (ctl.cwnd(), ctl.ssthresh());
        let rate_based = ctl.is_rate_based();
        Window {
            ctl,
            cwnd,
            ssthresh,
            rate_based,
        }
    }

    /// Congestion window, bytes.
    #[inline]
    pub(crate) fn cwnd(&self) -> u64 {
        self.cwnd
    }

    /// Slow-start threshold, bytes.
    #[inline]
    pub(crate) fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// Reads the window after a call that may have changed it.
    fn read(&mut self) {
        self.cwnd = self.ctl.cwnd();
        self.ssthresh = self.ctl.ssthresh();
    }

    pub(crate) fn on_ack(&mut self, ack: &AckSignal, all: &[CcPathView]) {
        self.ctl.on_ack(ack, all);
        self.read();
    }

    pub(crate) fn on_fast_retransmit(&mut self, loss: &LossSignal) {
        self.ctl.on_fast_retransmit(loss);
        self.read();
    }

    pub(crate) fn on_timeout(&mut self, loss: &LossSignal) {
        self.ctl.on_timeout(loss);
        self.read();
    }

    pub(crate) fn on_idle(&mut self, mtu: u64, initial_cwnd: u64) {
        self.ctl.on_idle(mtu, initial_cwnd);
        self.read();
    }

    pub(crate) fn set_cwnd(&mut self, cwnd: u64) {
        self.ctl.set_cwnd(cwnd);
        self.read();
    }

    /// Whether the controller is rate-based (paces, samples every packet).
    #[inline]
    pub(crate) fn is_rate_based(&self) -> bool {
        self.rate_based
    }

    /// A DATA packet left (rate-based controllers only).
    pub(crate) fn on_sent(&mut self, now: Time, bytes: u64, flight: u64) {
        if self.rate_based {
            self.ctl.on_sent(now, bytes, flight);
            self.read();
        }
    }

    /// The pacing rate a rate-based controller asks for, bytes/s.
    #[inline]
    pub(crate) fn pacing_rate(&self) -> Option<f64> {
        if self.rate_based {
            self.ctl.pacing_rate()
        } else {
            None
        }
    }

    pub(crate) fn on_rate_advert(&mut self, bytes_per_s: f64, srtt: Option<Duration>, mtu: u64) {
        self.ctl.on_rate_advert(bytes_per_s, srtt, mtu);
        self.read();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CcFactory, CcInit};
    use crate::time::Time;
    use crate::view::PathId;

    /// After every kind of call the kept window is what the controller answers, for
    /// each built-in controller (a sequence of acks, losses, a timeout, idle decay, a
    /// forced window and a rate advert).
    #[test]
    fn the_kept_window_follows_every_controller_through_every_call() {
        let init = CcInit {
            mtu: 1500,
            initial_cwnd: 4380,
            initial_ssthresh: 65536,
        };
        let table = crate::cc::builtin();
        for name in table.names() {
            let factory: Box<dyn CcFactory> = table
                .build(&name, &Default::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut w = Window::new(factory.build(PathId(0), &init));
            let check = |w: &Window, step: &str| {
                assert_eq!(
                    (w.cwnd(), w.ssthresh()),
                    (w.ctl.cwnd(), w.ctl.ssthresh()),
                    "{name} after {step}"
                );
            };
            check(&w, "creation");
            let srtt = Some(Duration::from_millis(50));
            let all = [CcPathView {
                id: PathId(0),
                cwnd: w.cwnd(),
                srtt,
                loss_interval: 0,
            }];
            for k in 0..40u64 {
                let ack = AckSignal {
                    now: Time::ZERO + Duration::from_millis(10 * k),
                    bytes_acked: 1468,
                    pba_bytes: 1468,
                    flight_before: w.cwnd(),
                    mtu: 1500,
                    srtt,
                    min_rtt: srtt,
                    newest_sent: None,
                };
                w.on_ack(&ack, &all);
                check(&w, "an ack");
            }
            let loss = LossSignal {
                now: Time::ZERO + Duration::from_secs(1),
                mtu: 1500,
                srtt,
                min_rtt: srtt,
                max_srtt: srtt,
                min_ssthresh: 6000,
            };
            w.on_fast_retransmit(&loss);
            check(&w, "a fast retransmit");
            w.on_timeout(&loss);
            check(&w, "a timeout");
            w.on_idle(1500, 4380);
            check(&w, "idle decay");
            w.set_cwnd(3000);
            check(&w, "set_cwnd");
            w.on_rate_advert(250_000.0, srtt, 1500);
            check(&w, "a rate advert");
        }
    }
}
