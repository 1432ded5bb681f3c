//! The receiver half driven directly with crafted DATA packets (no network): when it
//! SACKs, what the SACK says, and how the buffer bound is enforced.

mod common;

use cmt_core::packet::{Chunk, DataChunk, DataFlags, SackChunk};
use cmt_core::{AssocInit, Association, Compat, Config, Duration, Packet, PathId, Payload, Time};
use common::{algorithms, Log};

const MSS: u32 = 1452;

struct Rx {
    assoc: Association<Log>,
    vtag: u32,
    first_tsn: u32,
    /// The application reads what is delivered as soon as a packet is handled.
    reads: bool,
}

impl Rx {
    fn new(cfg: Config) -> Rx {
        let (_, ib) = AssocInit::pair(11, cfg.rbuf, cfg.rbuf);
        let (vtag, first_tsn) = (ib.local_vtag, ib.peer_initial_tsn);
        Rx {
            assoc: Association::new(cfg, 2, algorithms(2), ib, Log::default()).unwrap(),
            vtag,
            first_tsn,
            reads: true,
        }
    }

    /// DATA with TSN `first + k` arrives at `ms`; returns the SACK sent right away, if any.
    fn data(&mut self, k: u32, ms: u64) -> Option<SackChunk> {
        self.data_on(0, k, ms)
    }

    /// As [`Rx::data`], on path `path`.
    fn data_on(&mut self, path: usize, k: u32, ms: u64) -> Option<SackChunk> {
        let chunk = DataChunk {
            tsn: self.first_tsn.wrapping_add(k),
            sid: 0,
            ssn: k as u16,
            ppid: 0,
            flags: DataFlags::WHOLE,
            payload: Payload::Synthetic(MSS),
        };
        let now = Time::ZERO + Duration::from_millis(ms);
        self.assoc.handle_packet(
            now,
            PathId(path),
            Packet {
                vtag: self.vtag,
                chunks: vec![Chunk::Data(chunk)],
            },
        );
        if self.reads {
            while self.assoc.read().is_some() {}
        }
        self.sack(now)
    }

    fn sack(&mut self, now: Time) -> Option<SackChunk> {
        while let Some(t) = self.assoc.poll_transmit(now) {
            if let Some(Chunk::Sack(s)) = t.packet.chunks.into_iter().next() {
                return Some(s);
            }
        }
        None
    }

    fn cum(&self, s: &SackChunk) -> i64 {
        s.cum_tsn.wrapping_sub(self.first_tsn) as i32 as i64
    }
}

#[test]
fn delayed_sack_every_second_packet_or_after_200_ms() {
    let mut rx = Rx::new(Config {
        dac: false,
        ..Config::default()
    });
    assert!(rx.data(0, 0).is_none(), "first in-order packet is delayed");
    let s = rx
        .data(1, 1)
        .expect("second packet is acknowledged at once");
    assert_eq!(rx.cum(&s), 1);
    assert!(rx.data(2, 2).is_none());
    assert_eq!(
        rx.assoc.poll_timeout(),
        Some(Time::ZERO + Duration::from_millis(202))
    );
    rx.assoc
        .handle_timeout(Time::ZERO + Duration::from_millis(202));
    let s = rx
        .sack(Time::ZERO + Duration::from_millis(202))
        .expect("timer sends the SACK");
    assert_eq!(rx.cum(&s), 2);
}

#[test]
fn without_dac_a_gap_is_reported_at_once_with_gap_blocks() {
    let mut rx = Rx::new(Config {
        dac: false,
        ..Config::default()
    });
    rx.data(0, 0);
    // TSNs 2, 3 and 5 arrive; 1 and 4 are missing.
    let s = rx.data(2, 1).expect("gap → immediate SACK");
    assert_eq!(rx.cum(&s), 0);
    assert_eq!((s.gap_blocks[0].start, s.gap_blocks[0].end), (2, 2));
    rx.data(3, 2).expect("still a gap → immediate");
    let s = rx.data(5, 3).expect("immediate");
    let blocks: Vec<(u16, u16)> = s.gap_blocks.iter().map(|b| (b.start, b.end)).collect();
    assert_eq!(blocks, vec![(2, 3), (5, 5)]);
    assert_eq!(s.a_rwnd, 65536 - 3 * MSS, "three chunks held out of order");
    // The hole at 1 fills: everything up to 3 is delivered.
    let s = rx
        .data(1, 4)
        .expect("gap existed before this packet → immediate");
    assert_eq!(rx.cum(&s), 3);
    assert_eq!(s.a_rwnd, 65536 - MSS);
    // A duplicate is reported at once, in the dup list.
    let s = rx.data(2, 5).expect("duplicate → immediate");
    assert_eq!(s.dup_tsns, vec![rx.first_tsn.wrapping_add(2)]);
}

#[test]
fn with_dac_gaps_keep_the_delay_and_the_sack_counts_packets() {
    let mut rx = Rx::new(Config::default());
    assert!(
        rx.data(1, 0).is_none(),
        "DAC: a gap does not force an immediate SACK"
    );
    let s = rx.data(2, 1).expect("second packet");
    assert_eq!(s.flags & 0x3, 2, "two DATA packets since the previous SACK");
    assert_eq!(rx.cum(&s), -1);
    assert_eq!(s.gap_blocks.len(), 1);
    assert!(rx.data(3, 2).is_none());
    rx.assoc
        .handle_timeout(Time::ZERO + Duration::from_millis(202));
    let s = rx.sack(Time::ZERO + Duration::from_millis(202)).unwrap();
    assert_eq!(s.flags & 0x3, 1, "one DATA packet since the previous SACK");
}

#[test]
fn with_filled_hole_acks_a_chunk_that_releases_held_data_is_sacked_at_once() {
    // The slow path 0 carries the connection's oldest chunk; the fast path 1 has
    // brought the two after it. With DAC alone the chunk that releases them waits for
    // the delayed-SACK timer, while a sender bounded by its send buffer waits for
    // exactly that SACK; a TCP subflow acks a segment that fills a gap at once.
    for filled in [false, true] {
        let mut rx = Rx::new(Config {
            ack_filled_holes: filled,
            ..Config::default()
        });
        assert!(rx.data_on(1, 1, 0).is_none(), "DAC: the gap stays quiet");
        rx.data_on(1, 2, 1).expect("every second packet");
        let s = rx.data_on(0, 0, 5);
        if filled {
            assert_eq!(rx.cum(&s.expect("at once")), 2, "0 released 1 and 2");
            // An in-order chunk with nothing held behind it keeps the delay …
            assert!(rx.data_on(0, 3, 6).is_none());
            rx.data_on(1, 5, 7).expect("every second packet");
            // … and the next hole's filling, the first packet since a SACK, does not.
            let s = rx.data_on(0, 4, 8).expect("4 releases 5");
            assert_eq!(rx.cum(&s), 5);
        } else {
            assert!(s.is_none(), "DAC keeps the delay");
            assert_eq!(
                rx.assoc.poll_timeout(),
                Some(Time::ZERO + Duration::from_millis(205))
            );
        }
    }
}

#[test]
fn out_of_order_data_beyond_rbuf_is_dropped_but_the_next_in_order_chunk_never_is() {
    let rbuf = 4 * MSS;
    let mut rx = Rx::new(Config {
        rbuf,
        dac: false,
        ..Config::default()
    });
    for k in 1..=6 {
        rx.data(k, k as u64);
    }
    assert_eq!(rx.assoc.rbuf_held(), 4 * MSS, "only four of six fit");
    let s = rx.data(0, 10).expect("SACK");
    // 0 delivered at once, then 1..=4 from the buffer; 5 and 6 were dropped.
    assert_eq!(rx.cum(&s), 4);
    assert!(s.gap_blocks.is_empty());
    assert_eq!(rx.assoc.rbuf_held(), 0);
    let drops = rx
        .assoc
        .observer()
        .events
        .iter()
        .filter(|(_, e)| matches!(e, cmt_core::Event::DataDropped { .. }))
        .count();
    assert_eq!(drops, 2);
}

#[test]
fn packets_with_a_wrong_verification_tag_are_dropped_and_counted() {
    let mut rx = Rx::new(Config::default());
    let chunk = DataChunk {
        tsn: rx.first_tsn,
        sid: 0,
        ssn: 0,
        ppid: 0,
        flags: DataFlags::WHOLE,
        payload: Payload::Synthetic(10),
    };
    rx.assoc.handle_packet(
        Time::ZERO,
        PathId(0),
        Packet {
            vtag: rx.vtag ^ 1,
            chunks: vec![Chunk::Data(chunk)],
        },
    );
    assert_eq!(rx.assoc.stats().bad_vtag, 1);
    assert!(rx.assoc.read().is_none());
}

#[test]
fn a_sack_reports_only_as_many_gap_blocks_as_fit_in_one_packet() {
    // 300 holes at MTU 576: a SACK of n blocks is 20 (IP) + 12 + 16 + 4n bytes, so 132
    // blocks fit (576 bytes exactly) and the rest wait for later SACKs (RFC 9260 §6.2).
    // ns-2.35's rule (an entry while size + 4 < mtu − 32) gives 131.
    for (compat, fit) in [(Compat::Rfc, 132), (Compat::Ns2, 131)] {
        let mut rx = Rx::new(Config {
            mtu: 576,
            dac: false,
            rbuf: 1 << 22,
            compat,
            ..Config::default()
        });
        let mut last = None;
        for i in 1..=300 {
            last = rx.data(2 * i, i as u64).or(last);
        }
        let s = last.expect("holes are reported at once");
        assert_eq!(s.gap_blocks.len(), fit, "{compat:?}");
        let packet = Packet {
            vtag: 1,
            chunks: vec![Chunk::Sack(s)],
        };
        assert!(
            20 + packet.wire_len() <= 576,
            "{compat:?}: {}",
            packet.wire_len()
        );
    }
}

/// Bound by reads, delivered data the application has not read takes room in the window
/// like data held out of order; reading it opens the window, and a SACK says so at once
/// (a window update) — while an application that reads as data arrives sees the window
/// it always saw and causes no extra SACK. Not bound (the default), unread data takes
/// no room.
#[test]
fn unread_data_closes_the_window_and_reading_it_sends_a_window_update() {
    let rbuf = 8 * MSS;
    let cfg = Config {
        rbuf,
        dac: false,
        ..Config::default()
    };
    let mut slow = Rx::new(cfg.clone());
    slow.reads = false;
    slow.assoc.bound_by_reads();
    let mut sacks = Vec::new();
    for k in 0..6 {
        sacks.extend(slow.data(k, k as u64));
    }
    let last = sacks.last().expect("every second packet is SACKed");
    assert_eq!(slow.cum(last), 5);
    assert_eq!(
        last.a_rwnd,
        rbuf - 6 * MSS,
        "six unread chunks take their room"
    );
    assert!(slow.sack(Time::ZERO + Duration::from_millis(6)).is_none());
    // Reading opens the window by six chunks: a SACK goes without waiting for data.
    let mut read = 0;
    while let Some(p) = slow.assoc.read() {
        read += p.len();
    }
    assert_eq!(read, 6 * MSS as usize);
    let update = slow
        .sack(Time::ZERO + Duration::from_millis(7))
        .expect("window update");
    assert_eq!(update.a_rwnd, rbuf);
    assert_eq!(slow.cum(&update), 5);

    let mut prompt = Rx::new(cfg);
    prompt.assoc.bound_by_reads();
    let mut sacks = 0;
    for k in 0..6 {
        if let Some(s) = prompt.data(k, k as u64) {
            assert_eq!(s.a_rwnd, rbuf, "data read at once leaves the window open");
            sacks += 1;
        }
        assert!(
            prompt
                .sack(Time::ZERO + Duration::from_millis(k as u64))
                .is_none(),
            "no window update when nothing was withheld"
        );
    }
    assert_eq!(sacks, 3, "the usual SACK every second packet");

    let mut unbound = Rx::new(Config {
        rbuf,
        dac: false,
        ..Config::default()
    });
    unbound.reads = false;
    let last = (0..6)
        .filter_map(|k| unbound.data(k, k as u64))
        .last()
        .unwrap();
    assert_eq!(
        last.a_rwnd, rbuf,
        "not bound by reads: delivered data frees its room"
    );
}
