//! Every registered scheduler, driven through random loss, duplication and reordering:
//! all data arrives intact and in order, the receiver never exceeds rbuf, and the core
//! never had to refuse a choice (no scheduler picked a path without room).

mod common;

use bytes::Bytes;
use cmt_core::cc::{CcFactory, ReceiverCcFactory, RenoFactory};
use cmt_core::rtx::{RtxCwndFactory, RtxFactory};
use cmt_core::sched::{SchedContext, Scheduler};
use cmt_core::{
    Algorithms, AssocInit, Association, Config, Duration, Event, Params, PathId, Payload, Time,
};
use common::{Faults, Log};
use proptest::prelude::*;

fn faults() -> impl Strategy<Value = Faults> {
    (
        1u64..100,
        0u64..30,
        0.0..0.1f64,
        0.0..0.05f64,
        prop_oneof![Just(0u64), Just(2_000_000), Just(10_000_000)],
    )
        .prop_map(|(d, j, loss, dup, rate_bps)| Faults {
            delay: Duration::from_millis(d),
            jitter: Duration::from_millis(j),
            loss,
            dup,
            rate_bps,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn every_scheduler_delivers_everything_within_cwnd_and_rwnd(
        paths in prop::collection::vec(faults(), 2..4),
        rbuf_kb in 8u32..64,
        seed in any::<u64>(),
    ) {
        for name in &cmt_core::sched::names() {
            // The receiver-driven schedulers run as in their presets: round info, rate
            // adverts and the receiver-driven allowance.
            let rev = matches!(name.as_str(), "cmt-rev" | "mptcp-rec");
            let cfg = Config {
                rbuf: rbuf_kb * 1024,
                assoc_max_retrans: 1000,
                rev: rev.then(cmt_core::rev::RevConfig::default),
                ..Config::default()
            };
            let cc: &dyn CcFactory = if rev { &ReceiverCcFactory } else { &RenoFactory };
            let n = paths.len();
            let factory = cmt_core::sched::by_name(name, &Params::default()).unwrap();
            let mk = |init| {
                let algs = Algorithms { scheduler: factory.build(n), rtx: RtxCwndFactory::default().build(), cc };
                Association::new(cfg.clone(), n, algs, init, Log::default()).unwrap()
            };
            let (ia, ib) = AssocInit::pair(seed, cfg.rbuf, cfg.rbuf);
            let mut pair = common::Pair::with(mk(ia), mk(ib), paths.clone(), seed);
            let data: Vec<u8> = (0..60_000u32).map(|i| (i * 7) as u8).collect();
            pair.a.write(Payload::Bytes(Bytes::from(data.clone())));
            let mut got = Vec::new();
            let done = pair.drive(Time::ZERO + Duration::from_secs(3000), |p| {
                while let Some(Payload::Bytes(b)) = p.b.read() {
                    got.extend_from_slice(&b);
                }
                p.a.unacked_bytes() == 0
            });
            prop_assert!(done, "{name}: transfer did not finish");
            prop_assert!(got == data, "{name}: delivered bytes differ");
            prop_assert!(pair.b.observer().max_held <= cfg.rbuf, "{name}: receive buffer exceeded");
            prop_assert_eq!(pair.a.stats().refused_choices, 0, "{}: chose a path without room", name);
        }
    }
}

/// Asks once for path 1 at queue position 3, then always for path 0 at the head.
struct FarAhead(bool);
impl Scheduler for FarAhead {
    fn select(&mut self, _ctx: &SchedContext<'_>) -> Option<PathId> {
        Some(PathId(0))
    }
    fn select_at(&mut self, _ctx: &SchedContext<'_>) -> Option<(PathId, usize)> {
        if std::mem::replace(&mut self.0, false) {
            Some((PathId(1), 3))
        } else {
            Some((PathId(0), 0))
        }
    }
}

#[test]
fn a_queue_position_past_the_data_sends_nothing_instead_of_the_last_chunk() {
    // Two chunks queued, position 3 asked for on path 1: the position names no chunk
    // (JAPS's empty block), so path 1 sends nothing now. A core that clamped the
    // position would send the last chunk on path 1. The next write gives the scheduler
    // a new opportunity, and path 0 then carries everything.
    let fast = Faults {
        delay: Duration::from_millis(5),
        jitter: Duration::ZERO,
        loss: 0.0,
        dup: 0.0,
        rate_bps: 0,
    };
    let cfg = Config::default();
    let mk = |init| {
        let algs = Algorithms {
            scheduler: Box::new(FarAhead(true)),
            rtx: RtxCwndFactory::default().build(),
            cc: &RenoFactory,
        };
        Association::new(cfg.clone(), 2, algs, init, Log::default()).unwrap()
    };
    let (ia, ib) = AssocInit::pair(9, cfg.rbuf, cfg.rbuf);
    let mut pair = common::Pair::with(mk(ia), mk(ib), vec![fast.clone(), fast], 9);
    let sent = |pair: &common::Pair| -> Vec<PathId> {
        (pair.a.observer().events.iter())
            .filter_map(|(_, e)| match e {
                Event::DataSent { path, .. } => Some(*path),
                _ => None,
            })
            .collect()
    };
    pair.a.write(Payload::Bytes(Bytes::from(vec![7u8; 2000])));
    pair.drive(Time::ZERO + Duration::from_secs(1), |_| false);
    assert_eq!(sent(&pair), [], "nothing is sent on the refused choice");
    assert_eq!(pair.a.stats().refused_choices, 1);
    pair.a.write(Payload::Bytes(Bytes::from(vec![8u8; 1000])));
    let mut got = 0;
    let done = pair.drive(Time::ZERO + Duration::from_secs(10), |p| {
        while let Some(Payload::Bytes(b)) = p.b.read() {
            got += b.len();
        }
        p.a.unacked_bytes() == 0
    });
    assert!(done, "transfer did not finish");
    assert_eq!(got, 3000);
    let paths = sent(&pair);
    assert!(
        paths.len() >= 3 && paths.iter().all(|p| *p == PathId(0)),
        "{paths:?}"
    );
}
