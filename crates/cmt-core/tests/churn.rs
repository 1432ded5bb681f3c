//! `Association::remove_path` / `add_path` (docs/algorithms.md §1.9) through the core's
//! API alone: what the calls accept, and what the removed and re-added path carries.

mod common;

use cmt_core::{Config, Duration, Event, PathId, PathState, Payload, Time};
use common::{Faults, Pair};

fn pair() -> Pair {
    let f = Faults::clean(10);
    let mut p = Pair::new(Config::default(), Config::default(), vec![f.clone(), f], 3);
    p.a.write(Payload::Synthetic(u32::MAX));
    p
}

fn at(s: f64) -> Time {
    Time::ZERO + Duration::from_secs_f64(s)
}

fn drain(p: &mut Pair) -> bool {
    while p.b.read().is_some() {}
    false
}

/// Times path 1 carried new data or retransmissions from the sender.
fn sends_on_1(p: &Pair) -> Vec<Time> {
    p.a.observer()
        .events
        .iter()
        .filter_map(|(t, e)| match e {
            Event::DataSent {
                path: PathId(1), ..
            } => Some(*t),
            _ => None,
        })
        .collect()
}

#[test]
fn a_removed_path_carries_nothing_and_an_added_one_only_after_its_heartbeat() {
    let mut p = pair();
    p.drive(at(2.0), drain);
    assert!(!sends_on_1(&p).is_empty(), "both paths carry data at first");
    // What the calls accept: a known path that is there can be removed once; only a
    // removed path can be added; unknown paths change nothing.
    let now = p.now;
    assert!(p.a.remove_path(now, PathId(1)));
    assert!(!p.a.remove_path(now, PathId(1)));
    assert!(!p.a.add_path(now, PathId(0)));
    assert!(!p.a.add_path(now, PathId(7)) && !p.a.remove_path(now, PathId(7)));
    assert_eq!(p.a.path(PathId(1)).state, PathState::Removed);
    assert!(!p.a.path(PathId(1)).can_send);
    let removed_at = now;
    p.drive(at(4.0), drain);
    let during: Vec<_> = sends_on_1(&p)
        .into_iter()
        .filter(|&t| t > removed_at)
        .collect();
    assert!(during.is_empty(), "data on the removed path at {during:?}");
    // Added back: unconfirmed until the HEARTBEAT-ACK one round trip (20 ms) later,
    // with no data before it, and data after it.
    let added_at = p.now;
    assert!(p.a.add_path(added_at, PathId(1)));
    assert_eq!(p.a.path(PathId(1)).state, PathState::Unconfirmed);
    p.drive(at(6.0), drain);
    let active_at =
        p.a.observer()
            .events
            .iter()
            .find_map(|(t, e)| match e {
                Event::PathStateChanged {
                    path: PathId(1),
                    state: PathState::Active,
                } if *t > added_at => Some(*t),
                _ => None,
            })
            .expect("the re-added path was never verified");
    assert!(
        active_at - added_at <= Duration::from_millis(25),
        "verified after {:?}",
        active_at - added_at
    );
    let after: Vec<_> = sends_on_1(&p)
        .into_iter()
        .filter(|&t| t > added_at)
        .collect();
    assert!(
        after.first().is_some_and(|&t| t >= active_at),
        "{:?}",
        after.first()
    );
    assert!(after.len() > 10);
    assert!(!p.a.is_failed());
}
