//! Linux MPTCP's connection-level send buffer (`Config::send_buffer =
//! SendBuffer::Linux`) and TCP's Loss state under RACK-TLP, on the in-memory pair: two
//! 10 ms paths of 20 Mbit/s, 4 MB receive window, RTO.Min 200 ms, retransmissions on
//! the path that lost (RTX-SAME), Linux's reinjection, path 1 dead from 5 s.
//!
//! The model the bounds come from. The buffer is `tcp_wmem[0]` (4,096 bytes) plus, per
//! path, twice its largest window in packets (at least 10) times the kernel memory of
//! one packet (2,304 bytes for a 1,452-byte chunk). New data goes out only while what
//! is sent and not cumulatively acknowledged fits it; the cumulative ack stops at the
//! first chunk lost with path 1, so from the cut on path 0 can send at most the buffer
//! as new data, and then goes idle until the hole is filled — by a copy from
//! reinjection, which Linux sends only on an idle path. Slow start ends at 30 kB and
//! the cut comes 1.5 s in, so congestion avoidance has grown each window by at most one
//! packet per round trip (at least 20 ms): under 100 packets, a buffer under 1 MB.
//! Without it the 4 MB window lets path 0 send over a megabyte past the hole.

mod common;

use cmt_core::config::{Recovery, Reinject, SendBuffer};
use cmt_core::{Config, Duration, Event, PathId, Payload, SendKind, Time};
use common::{data_sent, sends, Faults, Pair};

fn secs(s: f64) -> Time {
    Time::ZERO + Duration::from_secs_f64(s)
}

fn cfg(send_buffer: SendBuffer, recovery: Recovery) -> Config {
    Config {
        reinject: Reinject::Linux,
        send_buffer,
        recovery,
        rbuf: 4 << 20,
        rto_min: Duration::from_millis(200),
        rto_initial: Duration::from_secs(1),
        initial_ssthresh: Some(30_000),
        ..Config::default()
    }
}

/// A backlogged transfer; path 1 down from `cut` s until `back` s; 12 s in all.
fn outage(cfg: Config, cut: f64, back: f64) -> Pair {
    outage_with(cfg, "rtx-same", cut, back)
}

/// As [`outage`], with retransmission policy `rtx`.
fn outage_with(cfg: Config, rtx: &str, cut: f64, back: f64) -> Pair {
    let link = Faults {
        rate_bps: 20_000_000,
        ..Faults::clean(10)
    };
    let faults = vec![link.clone(), link];
    let mut p = Pair::named(cfg, "round-robin", rtx, faults, 11);
    p.a.write(Payload::Synthetic(u32::MAX));
    let drain = |p: &mut Pair| {
        while p.b.read().is_some() {}
        false
    };
    p.drive(secs(cut), drain);
    p.down[1] = true;
    p.drive(secs(back), drain);
    p.down[1] = false;
    p.drive(secs(12.0), drain);
    p
}

fn timeouts(p: &Pair, path: usize) -> Vec<Time> {
    p.a.observer()
        .events
        .iter()
        .filter_map(|(t, e)| match e {
            Event::Timeout {
                path: PathId(i), ..
            } if *i == path => Some(*t),
            _ => None,
        })
        .collect()
}

/// The largest window each path had before `to`, bytes.
fn largest_cwnd(p: &Pair, to: Time) -> [u64; 2] {
    let mut w = [0u64; 2];
    for (t, e) in &p.a.observer().events {
        if let Event::CwndChanged { path, cwnd, .. } = e {
            if *t < to {
                w[path.0] = w[path.0].max(*cwnd);
            }
        }
    }
    w
}

/// User bytes of new data path 0 sent in `[from, to)`.
fn new_bytes(p: &Pair, from: Time, to: Time) -> u64 {
    p.a.observer()
        .events
        .iter()
        .filter_map(|(t, e)| match e {
            Event::DataSent {
                path: PathId(0),
                kind: SendKind::New,
                bytes,
                ..
            } if *t >= from && *t < to => Some(*bytes as u64),
            _ => None,
        })
        .sum()
}

#[test]
fn with_linuxs_send_buffer_the_surviving_path_sends_at_most_the_buffer_past_the_hole() {
    let with = outage(cfg(SendBuffer::Linux, Recovery::RackTlp), 1.5, 12.0);
    let first_copy = sends(&with, 0, SendKind::Copy, secs(1.5), secs(12.0))[0];
    let w = largest_cwnd(&with, first_copy);
    let buffer = 4096 + w.iter().map(|c| 2 * (c / 1500).max(10) * 2304).sum::<u64>();
    let past = new_bytes(&with, secs(1.5), first_copy);
    println!("largest windows {w:?}, buffer {buffer}, new bytes past the cut {past}, first copy {first_copy}");
    assert!(buffer < 1 << 20, "windows near the Mathis bound: {w:?}");
    assert!(past <= buffer, "{past} bytes past the cut, buffer {buffer}");
    // The first copy comes while path 0 is idle: no new data in the 50 ms (over two
    // round trips) before it.
    let before = sends(
        &with,
        0,
        SendKind::New,
        first_copy - Duration::from_millis(50),
        first_copy,
    );
    assert!(
        before.is_empty(),
        "path 0 idle before the first copy at {first_copy}"
    );
    // Without the buffer the receive window alone bounds it: far more goes past the
    // hole, over a megabyte, before the first copy.
    let without = outage(cfg(SendBuffer::Off, Recovery::RackTlp), 1.5, 12.0);
    let first_copy = sends(&without, 0, SendKind::Copy, secs(1.5), secs(12.0))[0];
    let past_off = new_bytes(&without, secs(1.5), first_copy);
    println!("without: {past_off} bytes past the cut, first copy {first_copy}");
    assert!(past_off > 1 << 20, "{past_off} bytes without the buffer");
}

#[test]
fn under_rack_tlp_a_path_takes_no_new_data_from_its_timeout_until_it_answers() {
    // Path 1 down from 1.5 to 5 s, with the send buffer, so path 0 idles and the copies
    // of path 1's chunks are acknowledged early. TCP's Loss state: nothing new on path
    // 1 from its first timeout until a probe or retransmission of its own is
    // acknowledged after its return — the copies' acknowledgements must not free its
    // window — and then it carries new data again. This test passes without the rule
    // too (other mechanisms keep new data off path 1 here); the next one isolates it.
    let p = outage(cfg(SendBuffer::Linux, Recovery::RackTlp), 1.5, 5.0);
    assert_silent_while_down(&p);
}

/// Path 1, down from 1.5 to 5 s, timed out within half a second, took no new data from
/// its first timeout until it came back, and carried new data again after.
fn assert_silent_while_down(p: &Pair) {
    let first = timeouts(p, 1)[0];
    assert!(
        first > secs(1.5) && first < secs(2.0),
        "first timeout at {first}"
    );
    let during = sends(p, 1, SendKind::New, first, secs(5.0));
    assert!(
        during.is_empty(),
        "new data on path 1 while it was down: {during:?}"
    );
    let after = sends(p, 1, SendKind::New, secs(5.0), secs(12.0));
    assert!(
        !after.is_empty(),
        "path 1 carries new data again after its return"
    );
}

#[test]
fn the_loss_state_alone_keeps_new_data_off_a_path_whose_chunks_were_resent_elsewhere() {
    // Without reinjection or the send buffer, and with lost chunks resent on the other
    // path (RTX-CWND), path 1's timeout moves everything it held to path 0; once those
    // are acknowledged its flight is empty and its window (one packet) open. Only the
    // Loss state keeps new data off it until it answers: without the rule, round-robin
    // gives it new data that is lost again, timeout after timeout.
    let mut c = cfg(SendBuffer::Off, Recovery::RackTlp);
    c.reinject = Reinject::Off;
    assert_silent_while_down(&outage_with(c.clone(), "rtx-cwnd", 1.5, 5.0));
    // RFC 9260's recovery keeps no Loss state: there the same outage does put new
    // data on path 1 after its timeout (what the rule exists to stop).
    c.recovery = Recovery::Sctp;
    let sctp = outage_with(c, "rtx-cwnd", 1.5, 5.0);
    let first = timeouts(&sctp, 1)[0];
    assert!(
        !sends(&sctp, 1, SendKind::New, first, secs(5.0)).is_empty(),
        "without the Loss state the dead path is given new data"
    );
}

/// Two paths, 20 and 2 Mbit/s, 10 ms each, upstream Linux's scheduler, 2 s of a
/// backlogged transfer.
fn fast_and_slow(send_buffer: SendBuffer) -> Pair {
    let fast = Faults {
        rate_bps: 20_000_000,
        ..Faults::clean(10)
    };
    let slow = Faults {
        rate_bps: 2_000_000,
        ..Faults::clean(10)
    };
    let mut p = Pair::named(
        cfg(send_buffer, Recovery::RackTlp),
        "linux-mptcp",
        "rtx-same",
        vec![fast, slow],
        5,
    );
    p.a.write(Payload::Synthetic(u32::MAX));
    p.drive(secs(2.0), |p| {
        while p.b.read().is_some() {}
        false
    });
    p
}

#[test]
fn with_linuxs_write_queues_a_slow_path_holds_its_place_in_the_stream_up_to_its_buffer() {
    // Linux moves data into a subflow's queue while the subflow's buffer (twice its
    // largest window, at least 10 packets, at 2,304 bytes a packet) has room, and the
    // data has its sequence number from then on. So the slow path sends chunks whose
    // TSNs are below ones the fast path already sent, in its own queue's order; and
    // the chunks waiting in its queue at any moment (later sent on it, with TSNs below
    // the highest sent by then) stay within that buffer, counted in DATA chunk bytes
    // (1,468 for a full chunk). Without the queues a chunk gets its TSN as it leaves:
    // new TSNs go out in order.
    let p = fast_and_slow(SendBuffer::Linux);
    let sent = data_sent(&p, SendKind::New);
    let slow: Vec<(Time, u64)> = sent
        .iter()
        .filter(|s| s.1 == 1)
        .map(|s| (s.0, s.2))
        .collect();
    assert!(
        slow.len() > 100,
        "the slow path carried data: {}",
        slow.len()
    );
    assert!(
        slow.windows(2).all(|w| w[0].1 < w[1].1),
        "the slow path's queue keeps its order"
    );
    let mut highest = 0u64;
    let (mut behind, mut peak_waiting) = (0usize, 0usize);
    for (k, &(t, path, tsn)) in sent.iter().enumerate() {
        if path == 1 {
            behind += usize::from(tsn < highest);
            // Chunks the slow path sends later whose TSNs are below the highest
            // sent so far: given to its queue already.
            let waiting = sent[k..]
                .iter()
                .filter(|s| s.1 == 1 && s.2 < highest && s.2 != tsn)
                .count();
            let w = largest_cwnd(&p, t + Duration::from_nanos(1))[1];
            let buffer = 2 * (w / 1500).max(10) * 2304;
            assert!(
                waiting as u64 * 1468 <= buffer,
                "at {t}: {waiting} chunks waiting on the slow path, its buffer {buffer} B"
            );
            peak_waiting = peak_waiting.max(waiting);
        }
        highest = highest.max(tsn);
    }
    println!(
        "{behind} of {} slow-path chunks behind the fast path, up to {peak_waiting} waiting",
        slow.len()
    );
    assert!(
        behind > slow.len() / 2,
        "most slow-path chunks had their place before newer ones left on the fast path: {behind}"
    );
    let off = data_sent(&fast_and_slow(SendBuffer::Off), SendKind::New);
    assert!(
        off.windows(2).all(|w| w[0].2 < w[1].2),
        "without the queues new TSNs leave in order"
    );
}
