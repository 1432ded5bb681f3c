//! Explicit congestion notification (RFC 3168; RFC 9260 Appendix A) in the core:
//!
//! * a path whose packets are marked Congestion Experienced cuts its window as a loss
//!   would — once per window of that path, the other path untouched — and nothing is
//!   retransmitted, because nothing was lost;
//! * the receiver echoes a mark in front of every SACK until the sender's CWR answers
//!   it, and only then stops;
//! * a forged flood of echoes for one TSN cuts once, and an echo of a TSN never sent is
//!   ignored;
//! * without ECN in use nothing goes out ECN-capable and a mark is not echoed.

mod common;

use cmt_core::{
    AssocInit, Association, Chunk, Config, Duration, Event, Packet, PathId, Payload, SendKind,
    Time, Transmit,
};
use common::{algorithms, Faults, Log, Pair};

fn ecn() -> Config {
    Config {
        ecn: true,
        sack_freq: 1,
        ..Config::default()
    }
}

fn events<'a>(a: &'a Association<Log>) -> impl Iterator<Item = &'a Event> + 'a {
    a.observer().events.iter().map(|(_, e)| e)
}

/// Transfers 3 MB over two 10 ms paths with `mark` deciding which of A's DATA packets
/// (TSN offset, path) arrive marked.
fn transfer(cfg: Config, mark: impl FnMut(u32, PathId) -> bool + 'static) -> Pair {
    let mut p = Pair::new(
        cfg.clone(),
        cfg,
        vec![Faults::clean(10), Faults::clean(10)],
        5,
    );
    p.mark_if = Some(Box::new(mark));
    p.transfer(3_000_000);
    p
}

#[test]
fn marks_on_one_path_cut_only_that_path_and_resend_nothing() {
    // Path 1's packets among TSNs 200–215 (one window of it: its cwnd is well above
    // eight packets by then) and among 1,500–1,503 (a later window) arrive marked.
    let p = transfer(ecn(), |off, path| {
        path == PathId(1) && ((200..216).contains(&off) || (1500..1504).contains(&off))
    });
    let marked: Vec<usize> = events(&p.a)
        .filter_map(|e| match e {
            Event::CongestionMarked { path, .. } => Some(path.0),
            _ => None,
        })
        .collect();
    assert_eq!(marked, vec![1, 1], "one cut per marked window, on path 1");
    assert_eq!(p.a.stats().ecn_cuts, 2);
    assert!(p.b.stats().ce_marked >= 4, "{}", p.b.stats().ce_marked);
    assert!(p.a.stats().ecn_echoes >= 2);
    let resent = events(&p.a).any(|e| {
        matches!(
            e,
            Event::DataSent {
                kind: SendKind::FastRetransmit | SendKind::TimeoutRetransmit,
                ..
            } | Event::FastRetransmit { .. }
        )
    });
    assert!(!resent, "a mark is not a loss: nothing is resent");
    // Path 0 was never cut: its window only grew.
    let mut last = 0;
    for e in events(&p.a) {
        if let Event::CwndChanged {
            path: PathId(0),
            cwnd,
            ..
        } = e
        {
            assert!(*cwnd >= last, "path 0 cut from {last} to {cwnd}");
            last = *cwnd;
        }
    }
    // Every DATA packet (one chunk each) went out ECN-capable; no packet of B's did.
    let data = events(&p.a)
        .filter(|e| matches!(e, Event::DataSent { .. }))
        .count() as u64;
    assert_eq!(p.ect_sent, [data, 0]);
}

#[test]
fn without_ecn_nothing_is_ect_and_marks_are_not_echoed() {
    let p = transfer(Config::default(), |_, _| true);
    assert_eq!(p.ect_sent, [0, 0]);
    assert_eq!(p.b.stats().ce_marked, 0);
    assert_eq!(p.a.stats().ecn_cuts, 0);
}

/// Two ends with ECN on, and a's first `n` transmits after writing 100 KB.
fn pair() -> (Association<Log>, Association<Log>) {
    let (ia, ib): (AssocInit, AssocInit) = AssocInit::pair(9, 1 << 20, 1 << 20);
    let a = Association::new(ecn(), 1, algorithms(1), ia, Log::default()).unwrap();
    let b = Association::new(ecn(), 1, algorithms(1), ib, Log::default()).unwrap();
    (a, b)
}

fn drain(x: &mut Association<Log>, now: Time) -> Vec<Transmit> {
    std::iter::from_fn(|| x.poll_transmit(now)).collect()
}

fn has(t: &Transmit, f: fn(&Chunk) -> bool) -> bool {
    t.packet.chunks.iter().any(f)
}

#[test]
fn the_echo_leads_every_sack_until_a_cwr_answers_it() {
    let (mut a, mut b) = pair();
    let t0 = Time::ZERO;
    a.write(Payload::Synthetic(100_000));
    let mut data = drain(&mut a, t0);
    assert!(data.len() >= 2 && data.iter().all(|t| t.ect));
    let second = data.remove(1);
    let first = data.remove(0);
    // The first arrives marked: B's SACK carries the echo in front.
    b.handle_packet_ecn(t0, PathId(0), first.packet, true);
    let sacks = drain(&mut b, t0);
    assert_eq!(sacks.len(), 1);
    assert!(matches!(sacks[0].packet.chunks[0], Chunk::Ecne { .. }));
    assert!(!sacks[0].ect, "a SACK is not ECN-capable");
    // The second arrives unmarked: the echo is repeated.
    b.handle_packet(t0, PathId(0), second.packet);
    let again = drain(&mut b, t0);
    assert!(again
        .iter()
        .all(|t| has(t, |c| matches!(c, Chunk::Ecne { .. }))));
    // A reads the echo: its next DATA packet carries the CWR.
    let t1 = t0 + Duration::from_millis(20);
    for s in sacks.into_iter().chain(again) {
        a.handle_packet(t1, PathId(0), s.packet);
    }
    assert_eq!(a.stats().ecn_cuts, 1, "two echoes of one window cut once");
    let next = drain(&mut a, t1);
    assert!(matches!(next[0].packet.chunks[0], Chunk::Cwr { .. }));
    for t in next {
        b.handle_packet(t1, PathId(0), t.packet);
    }
    let after = drain(&mut b, t1);
    assert!(!after.is_empty());
    assert!(after
        .iter()
        .all(|t| !has(t, |c| matches!(c, Chunk::Ecne { .. }))));
}

#[test]
fn echoes_cut_once_per_window_a_forged_flood_once_and_unsent_data_never() {
    let (mut a, mut b) = pair();
    let (ia, _) = AssocInit::pair(9, 1 << 20, 1 << 20);
    let t0 = Time::ZERO;
    a.write(Payload::Synthetic(1_000_000));
    let first = drain(&mut a, t0);
    assert!(first.len() >= 3, "{}", first.len());
    let tsn = |t: &Transmit| {
        t.packet
            .chunks
            .iter()
            .find_map(|c| match c {
                Chunk::Data(d) => Some(d.tsn),
                _ => None,
            })
            .expect("a DATA packet")
    };
    let echo = |tsn: u32, n: usize| Packet {
        vtag: ia.local_vtag,
        chunks: vec![Chunk::Ecne { lowest_tsn: tsn }; n],
    };
    // A flood of 50 echoes of the first packet: one cut.
    a.handle_packet(t0, PathId(0), echo(tsn(&first[0]), 50));
    assert_eq!(a.stats().ecn_cuts, 1);
    // An echo of a later packet of the same window (sent before the cut): no cut.
    a.handle_packet(t0, PathId(0), echo(tsn(&first[2]), 1));
    assert_eq!(a.stats().ecn_cuts, 1);
    // An echo of a TSN never sent: ignored and counted.
    let bogus = a.stats().bogus_chunks;
    a.handle_packet(
        t0,
        PathId(0),
        echo(tsn(&first[0]).wrapping_add(1_000_000), 1),
    );
    assert_eq!((a.stats().ecn_cuts, a.stats().bogus_chunks), (1, bogus + 1));
    // The window is acknowledged; data sent after the cut is a new window, and an echo
    // of it cuts again.
    let t1 = t0 + Duration::from_millis(20);
    for t in first {
        b.handle_packet(t1, PathId(0), t.packet);
    }
    for s in drain(&mut b, t1) {
        a.handle_packet(t1, PathId(0), s.packet);
    }
    let later = drain(&mut a, t1);
    assert!(!later.is_empty());
    a.handle_packet(t1, PathId(0), echo(tsn(&later[0]), 1));
    assert_eq!(a.stats().ecn_cuts, 2);
}
