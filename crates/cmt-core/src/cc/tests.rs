//! Model-based property test over every registered congestion controller: random
//! sequences of acks, fast-retransmit losses, timeouts, idle periods and RTT changes.
//! Invariants: cwnd ≥ 1 MTU, ssthresh never below its 4·MTU floor after a loss, values
//! stay finite and bounded, and a loss event never makes the window grow.

use proptest::prelude::*;

use super::{by_name, names, AckSignal, CcInit, CcPathView, LossSignal};
use crate::params::Params;
use crate::time::{Duration, Time};
use crate::view::PathId;

const MTU: u64 = 1500;

/// A loss with no RTT known, the RFC's 4·MTU ssthresh floor, at time zero.
pub(super) fn loss_of(mtu: u64) -> LossSignal {
    LossSignal {
        now: Time::ZERO,
        mtu,
        min_ssthresh: 4 * mtu,
        srtt: None,
        min_rtt: None,
        max_srtt: None,
    }
}

#[derive(Clone, Debug)]
enum Op {
    Ack {
        bytes: u64,
        flight_frac: f64,
        srtt_ms: u64,
        min_ms: u64,
    },
    FastRtx {
        srtt_ms: u64,
        min_ms: u64,
        max_ms: u64,
    },
    Timeout,
    Idle,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1u64..20_000, 0.0..1.5f64, 1u64..1000, 1u64..1000).prop_map(|(bytes, flight_frac, s, m)| Op::Ack { bytes, flight_frac, srtt_ms: s.max(m), min_ms: m.min(s) }),
        2 => (1u64..1000, 1u64..1000, 0u64..1000).prop_map(|(s, m, x)| Op::FastRtx { srtt_ms: s.max(m), min_ms: m.min(s), max_ms: s.max(m) + x }),
        1 => Just(Op::Timeout),
        1 => Just(Op::Idle),
    ]
}

proptest! {
    #[test]
    fn every_controller_keeps_its_invariants(ops in prop::collection::vec(op(), 1..300), others in prop::collection::vec((1u64..200_000, 1u64..500, 0u64..1_000_000), 0..3), own_l in 0u64..1_000_000) {
        for name in &names() {
            let f = by_name(name, &Params::default()).unwrap();
            let init = CcInit { mtu: MTU, initial_cwnd: 4380, initial_ssthresh: 65_536 };
            let mut cc = f.build(PathId(0), &init);
            for op in &ops {
                let before = (cc.cwnd(), cc.ssthresh());
                let mut all = vec![CcPathView { id: PathId(0), cwnd: cc.cwnd(), srtt: Some(Duration::from_millis(50)), loss_interval: own_l }];
                all.extend(others.iter().enumerate().map(|(i, &(w, r, l))| CcPathView { id: PathId(i + 1), cwnd: w, srtt: Some(Duration::from_millis(r)), loss_interval: l }));
                match *op {
                    Op::Ack { bytes, flight_frac, srtt_ms, min_ms } => {
                        let ack = AckSignal {
                            now: Time::ZERO,
                            bytes_acked: bytes, pba_bytes: bytes,
                            flight_before: (cc.cwnd() as f64 * flight_frac) as u64,
                            mtu: MTU,
                            srtt: Some(Duration::from_millis(srtt_ms)),
                            min_rtt: Some(Duration::from_millis(min_ms)),
                            newest_sent: None,
                        };
                        cc.on_ack(&ack, &all);
                        // Growth per ack is bounded: at most one MTU (byte counting) — or,
                        // for a rate-based controller (BBR grows by what was delivered),
                        // what was acknowledged, what was in flight (packet conservation)
                        // or its four-packet floor.
                        let bound = match cc.is_rate_based() {
                            true => (before.0 + bytes).max(ack.flight_before).max(4 * MTU),
                            false => before.0 + MTU,
                        };
                        prop_assert!(cc.cwnd() <= bound, "{name}: grew {} → {}", before.0, cc.cwnd());
                    }
                    Op::FastRtx { srtt_ms, min_ms, max_ms } => {
                        let loss = LossSignal { now: Time::ZERO, mtu: MTU, min_ssthresh: 4 * MTU, srtt: Some(Duration::from_millis(srtt_ms)), min_rtt: Some(Duration::from_millis(min_ms)), max_srtt: Some(Duration::from_millis(max_ms)) };
                        cc.on_fast_retransmit(&loss);
                        prop_assert!(cc.cwnd() <= before.0.max(4 * MTU), "{name}: window grew on a loss");
                        prop_assert!(cc.ssthresh() >= 4 * MTU, "{name}: ssthresh {} below floor", cc.ssthresh());
                    }
                    Op::Timeout => {
                        let loss = LossSignal { now: Time::ZERO, mtu: MTU, min_ssthresh: 4 * MTU, srtt: None, min_rtt: None, max_srtt: None };
                        cc.on_timeout(&loss);
                        // Receiver-driven: the advertised rate, not a timeout, sets the window.
                        if *name != "receiver" {
                            prop_assert_eq!(cc.cwnd(), MTU, "{}: timeout leaves one MTU", name);
                        }
                        prop_assert!(cc.ssthresh() >= 4 * MTU);
                    }
                    Op::Idle => {
                        cc.on_idle(MTU, init.initial_cwnd);
                        prop_assert!(cc.cwnd() <= before.0);
                    }
                }
                prop_assert!(cc.cwnd() >= MTU, "{name}: cwnd {} below one MTU", cc.cwnd());
                prop_assert!(cc.cwnd() < 1 << 40 && cc.ssthresh() < 1 << 40, "{name}: runaway window");
            }
        }
    }
}
