//! Receiver-driven CMT between two associations on a hand-driven wire: rate adverts
//! reach the sender, a lost advert costs nothing but time (the next one carries every
//! path's current rate), and all data arrives.

use std::collections::BTreeMap;

use cmt_core::cc::ReceiverCcFactory;
use cmt_core::params::Params;
use cmt_core::rev::RevConfig;
use cmt_core::rtx::{RtxCwndFactory, RtxFactory};
use cmt_core::sched;
use cmt_core::{
    Algorithms, AssocInit, Association, Chunk, Config, Duration, Packet, PathId, Payload, Time,
};

fn assoc(cfg: &Config, init: AssocInit) -> Association {
    let algs = Algorithms {
        scheduler: sched::by_name("mptcp-rec", &Params::default())
            .unwrap()
            .build(2),
        rtx: RtxCwndFactory::default().build(),
        cc: &ReceiverCcFactory,
    };
    Association::new(cfg.clone(), 2, algs, init, ()).unwrap()
}

#[test]
fn a_lost_advert_is_superseded_by_the_next_and_the_transfer_completes() {
    let cfg = Config {
        rev: Some(RevConfig::default()),
        rbuf: 256 * 1024,
        ..Config::default()
    };
    let (ia, ib) = AssocInit::pair(7, cfg.rbuf, cfg.rbuf);
    let (mut a, mut b) = (assoc(&cfg, ia), assoc(&cfg, ib));
    let total = 400_000usize;
    a.write(Payload::Synthetic(total as u32));
    // (arrival time, seq) -> (to_b, path, packet); 10 ms one way on path 0, 30 ms on 1.
    let mut wire: BTreeMap<(Time, u64), (bool, PathId, Packet)> = BTreeMap::new();
    let delay = |p: PathId| Duration::from_millis(if p.0 == 0 { 10 } else { 30 });
    let (mut seq, mut now, mut got) = (0u64, Time::ZERO, 0usize);
    let (mut adverts_seen, mut dropped, mut applied) = (0, false, 0);
    while now < Time::from_nanos(20_000_000_000) && got < total {
        while let Some(e) = wire.first_entry() {
            if e.key().0 > now {
                break;
            }
            let (to_b, path, packet) = e.remove();
            let advert = packet.chunks.iter().find_map(|c| match c {
                Chunk::RateAdvert { rates, .. } => Some(rates.clone()),
                _ => None,
            });
            if to_b {
                b.handle_packet(now, path, packet);
            } else {
                a.handle_packet(now, path, packet);
                if let Some(rates) = advert {
                    // Every advert carries every path; the sender takes the newest.
                    assert_eq!(rates.len(), 2);
                    for (p, r) in rates {
                        let seen = a.path(PathId(p as usize)).advertised_rate;
                        if seen == Some(r as f64) {
                            applied += 1;
                        }
                    }
                }
            }
        }
        for t in [a.poll_timeout(), b.poll_timeout()].into_iter().flatten() {
            if t <= now {
                a.handle_timeout(now);
                b.handle_timeout(now);
                break;
            }
        }
        while let Some(t) = a.poll_transmit(now) {
            seq += 1;
            wire.insert((now + delay(t.path), seq), (true, t.path, t.packet));
        }
        while let Some(t) = b.poll_transmit(now) {
            let is_advert = t
                .packet
                .chunks
                .iter()
                .any(|c| matches!(c, Chunk::RateAdvert { .. }));
            if is_advert {
                adverts_seen += 1;
                if !dropped {
                    dropped = true; // lose the first advert
                    continue;
                }
            }
            seq += 1;
            wire.insert((now + delay(t.path), seq), (false, t.path, t.packet));
        }
        while let Some(p) = b.read() {
            got += p.len();
        }
        now += Duration::from_millis(1);
    }
    assert!(dropped && adverts_seen > 10, "adverts: {adverts_seen}");
    assert!(
        applied > 10,
        "the sender applied the later adverts ({applied})"
    );
    assert_eq!(got, total, "all data delivered by {now:?}");
    assert!(a
        .path(PathId(0))
        .advertised_rate
        .is_some_and(|r| r > 10_000.0));
}
