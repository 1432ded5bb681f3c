//! Receiver-driven CMT between two associations on a hand-driven wire: rate adverts
//! reach the sender, a lost advert costs nothing but time (the next one carries the
//! current rate of every path that has one), and all data arrives.

use std::collections::BTreeMap;

use cmt_core::cc::ReceiverCcFactory;
use cmt_core::params::Params;
use cmt_core::rev::RevConfig;
use cmt_core::rtx::{RtxCwndFactory, RtxFactory};
use cmt_core::sched;
use cmt_core::{
    Algorithms, AssocInit, Association, Chunk, Config, Duration, Packet, PathId, Payload, Time,
};

/// MPTCP-rec's scheduler, RTX-CWND and the receiver-driven window, for two paths.
fn algorithms() -> Algorithms<'static> {
    Algorithms {
        scheduler: sched::by_name("mptcp-rec", &Params::default())
            .unwrap()
            .build(2),
        rtx: RtxCwndFactory::default().build(),
        cc: &ReceiverCcFactory,
    }
}

/// Receiver-driven CMT with a 256 KB receive buffer.
fn rev_config() -> Config {
    Config {
        rev: Some(RevConfig::default()),
        rbuf: 256 * 1024,
        ..Config::default()
    }
}

fn carries_advert(p: &Packet) -> bool {
    p.chunks
        .iter()
        .any(|c| matches!(c, Chunk::RateAdvert { .. }))
}

fn assoc(cfg: &Config, init: AssocInit) -> Association {
    Association::new(cfg.clone(), 2, algorithms(), init, ()).unwrap()
}

#[test]
fn a_lost_advert_is_superseded_by_the_next_and_the_transfer_completes() {
    let cfg = rev_config();
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
                    // Every advert carries every path that has a rate; the sender
                    // takes the newest.
                    assert!(rates.len() <= 2);
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
            if carries_advert(&t.packet) {
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

/// Events of the sender's rate adverts being applied: (time, path).
#[derive(Default)]
struct Adverts(Vec<(Time, PathId)>);

impl cmt_core::Observer for Adverts {
    fn event(&mut self, now: Time, e: &cmt_core::Event) {
        if let cmt_core::Event::RateAdvertApplied { path, .. } = e {
            self.0.push((now, *path));
        }
    }
}

#[test]
fn with_a_fifth_of_the_adverts_lost_rates_are_still_updated_in_every_10_s() {
    // A round ends when the sender has seen an advert, and the receiver used to arm its
    // advert timer only when a round started: once every advert after a round's start
    // was lost, feedback stopped for good. Now the timer re-arms itself. 20 % of the
    // packets that carry an advert are dropped (seeded); every 10 s after start-up the
    // sender must still have applied new rates on both paths.
    use rand::{Rng, SeedableRng};
    let cfg = rev_config();
    let (ia, ib) = AssocInit::pair(11, cfg.rbuf, cfg.rbuf);
    let mut a = Association::new(cfg.clone(), 2, algorithms(), ia, Adverts::default()).unwrap();
    let mut b = assoc(&cfg, ib);
    a.write_backlog();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut wire: BTreeMap<(Time, u64), (bool, PathId, Packet)> = BTreeMap::new();
    let delay = |p: PathId| Duration::from_millis(if p.0 == 0 { 10 } else { 30 });
    let (mut seq, mut now, mut lost) = (0u64, Time::ZERO, 0);
    let end = Time::from_nanos(60_000_000_000);
    while now < end {
        while let Some(e) = wire.first_entry() {
            if e.key().0 > now {
                break;
            }
            let (to_b, path, packet) = e.remove();
            if to_b {
                b.handle_packet(now, path, packet);
            } else {
                a.handle_packet(now, path, packet);
            }
        }
        if a.poll_timeout().is_some_and(|t| t <= now) {
            a.handle_timeout(now);
        }
        if b.poll_timeout().is_some_and(|t| t <= now) {
            b.handle_timeout(now);
        }
        while let Some(t) = a.poll_transmit(now) {
            seq += 1;
            wire.insert((now + delay(t.path), seq), (true, t.path, t.packet));
        }
        while let Some(t) = b.poll_transmit(now) {
            if carries_advert(&t.packet) && rng.gen_bool(0.2) {
                lost += 1;
                continue;
            }
            seq += 1;
            wire.insert((now + delay(t.path), seq), (false, t.path, t.packet));
        }
        while b.read().is_some() {}
        now += Duration::from_millis(1);
    }
    assert!(lost > 20, "only {lost} adverts dropped");
    let applied = &a.observer().0;
    for p in [PathId(0), PathId(1)] {
        for k in 1..6u64 {
            let (from, to) = (
                Time::from_nanos(k * 10_000_000_000),
                Time::from_nanos((k + 1) * 10_000_000_000),
            );
            assert!(
                applied.iter().any(|&(t, q)| q == p && t >= from && t < to),
                "no rate applied on {p:?} between {from} and {to}"
            );
        }
    }
}
