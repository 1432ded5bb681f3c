//! Property: every byte written is delivered exactly once, in order, with its real
//! content, under random loss, duplication and reordering on every path; and the
//! receiver never holds more than `rbuf`.

mod common;

use bytes::Bytes;
use cmt_core::{Config, Duration, Payload, Time};
use common::{Faults, Pair};
use proptest::prelude::*;

fn faults() -> impl Strategy<Value = Faults> {
    (1u64..80, 0u64..40, 0.0..0.15f64, 0.0..0.1f64).prop_map(|(d, j, loss, dup)| Faults {
        delay: Duration::from_millis(d),
        jitter: Duration::from_millis(j),
        loss,
        dup,
        rate_bps: 0,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_byte_arrives_once_in_order_under_loss_dup_and_reordering(
        len in 1usize..120_000,
        paths in prop::collection::vec(faults(), 1..4),
        rbuf_kb in 4u32..64,
        switches in any::<(bool, bool, bool, bool)>(),
        seed in any::<u64>(),
    ) {
        let data: Vec<u8> = (0..len).map(|i| (i.wrapping_mul(31) ^ (i >> 7)) as u8).collect();
        let mut cfg = Config {
            rbuf: rbuf_kb * 1024,
            assoc_max_retrans: 1000,
            ..Config::default()
        };
        (cfg.sfr, cfg.cuc, cfg.dac, cfg.pf_enabled) = switches;
        let mut pair = Pair::new(cfg.clone(), cfg.clone(), paths, seed);
        pair.a.write(Payload::Bytes(Bytes::from(data.clone())));
        let mut got = Vec::with_capacity(len);
        let finished = pair.drive(Time::ZERO + Duration::from_secs(3000), |p| {
            while let Some(chunk) = p.b.read() {
                match chunk {
                    Payload::Bytes(b) => got.extend_from_slice(&b),
                    Payload::Synthetic(_) => panic!("real bytes turned synthetic"),
                }
            }
            p.a.unacked_bytes() == 0
        });
        prop_assert!(finished, "transfer did not finish: {} of {} bytes", got.len(), len);
        prop_assert_eq!(got.len(), data.len());
        prop_assert!(got == data, "delivered bytes differ from the written bytes");
        prop_assert!(pair.b.observer().max_held <= cfg.rbuf);
        prop_assert!(!pair.a.is_failed());
    }
}

/// An embedder that counts deliveries through the observer can stop the receiver from
/// keeping delivered data: nothing is left to read, and the same chunks, bytes and
/// times are reported delivered as when the data is kept and read.
#[test]
fn discarded_deliveries_are_still_reported_and_nothing_is_kept() {
    let faults = || Faults {
        delay: Duration::from_millis(20),
        jitter: Duration::from_millis(15),
        loss: 0.05,
        dup: 0.02,
        rate_bps: 0,
    };
    let run = |discard: bool| {
        let cfg = Config::default();
        let mut pair = Pair::new(cfg.clone(), cfg, vec![faults(), faults()], 9);
        if discard {
            pair.b.discard_delivered();
        }
        pair.a.write(Payload::Synthetic(400_000));
        let mut read = 0u64;
        let done = pair.drive(Time::ZERO + Duration::from_secs(600), |p| {
            while let Some(d) = p.b.read() {
                read += d.len() as u64;
            }
            p.a.unacked_bytes() == 0
        });
        assert!(done, "transfer did not finish");
        let delivered: Vec<_> = pair
            .b
            .observer()
            .events
            .iter()
            .filter(|(_, e)| matches!(e, cmt_core::Event::Delivered { .. }))
            .cloned()
            .collect();
        (read, delivered)
    };
    let (read_kept, kept) = run(false);
    let (read_discarded, discarded) = run(true);
    assert_eq!(read_kept, 400_000);
    assert_eq!(read_discarded, 0, "nothing kept to read");
    // 400,000 bytes in chunks of at most one packet's payload: each delivered once.
    let chunks = 400_000usize.div_ceil(Config::default().max_payload() as usize);
    assert_eq!(kept.len(), chunks, "every chunk reported once");
    assert_eq!(kept.len(), discarded.len());
    assert!(kept == discarded, "the same deliveries reported");
}

/// A receiver that holds the SHUTDOWN ACK back stays in `Received` however often the
/// peer repeats its SHUTDOWN, and the association closes on both sides once it lets go.
#[test]
fn a_held_shutdown_ack_waits_for_the_application_and_then_the_association_closes() {
    let faults = Faults {
        delay: Duration::from_millis(10),
        jitter: Duration::ZERO,
        loss: 0.0,
        dup: 0.0,
        rate_bps: 0,
    };
    let cfg = Config::default();
    let mut pair = Pair::new(cfg.clone(), cfg, vec![faults.clone(), faults], 4);
    pair.b.hold_shutdown_ack(true);
    pair.a.write(Payload::Synthetic(50_000));
    pair.a.close();
    let secs = |s| Time::ZERO + Duration::from_secs(s);
    pair.drive(secs(20), |p| {
        while p.b.read().is_some() {}
        false
    });
    assert_eq!(pair.b.closing(), cmt_core::Closing::Received);
    assert_eq!(pair.a.closing(), cmt_core::Closing::ShutdownSent);
    assert!(!pair.a.is_failed(), "the sender keeps waiting");
    pair.b.hold_shutdown_ack(false);
    let closed = pair.drive(secs(40), |p| p.a.is_closed() && p.b.is_closed());
    assert!(closed, "{:?} {:?}", pair.a.closing(), pair.b.closing());
}

/// RFC 7053: with `sack_immediately`, the last chunk written before `close()` carries
/// the I bit, and the receiver acknowledges it at once, so the shutdown that waits for
/// that SACK does not wait for the receiver's delayed-ack timer (200 ms) too. Three
/// chunks over one 10 ms path: the first two are acknowledged together, the third
/// alone.
#[test]
fn the_last_chunk_before_close_asks_for_an_immediate_sack() {
    let close_time = |on: bool| {
        let cfg = Config {
            sack_immediately: on,
            ..Config::default()
        };
        let mut pair = Pair::new(cfg.clone(), cfg.clone(), vec![Faults::clean(10)], 4);
        pair.a.write(Payload::Synthetic(3 * cfg.max_payload()));
        pair.a.close();
        assert!(pair.drive(Time::ZERO + Duration::from_secs(10), |p| p.a.is_closed()));
        pair.now
    };
    // Data and its SACK, then SHUTDOWN, SHUTDOWN ACK: two round trips of 20 ms.
    let on = close_time(true);
    assert!(
        on < Time::ZERO + Duration::from_millis(100),
        "closed at {on:?} with the I bit"
    );
    let off = close_time(false);
    assert!(
        off >= Time::ZERO + Duration::from_millis(200),
        "closed at {off:?} without it"
    );
}
