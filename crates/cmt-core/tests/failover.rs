//! Path failure and recovery (RFC 9260 §8.2–8.3; CMT-PF, docs/algorithms.md §1.6): a path that stops
//! answering is detected, the transfer continues on the others, and the path is used
//! again once heartbeats get through.

mod common;

use cmt_core::{Config, Duration, Event, PathId, PathState, Payload, SendKind, Time};
use common::{Faults, Pair};

fn faults() -> Faults {
    Faults {
        delay: Duration::from_millis(10),
        jitter: Duration::ZERO,
        loss: 0.0,
        dup: 0.0,
        rate_bps: 0,
    }
}

fn secs(s: u64) -> Time {
    Time::ZERO + Duration::from_secs(s)
}

fn delivered(p: &mut Pair) -> u64 {
    let mut n = 0;
    while let Some(c) = p.b.read() {
        n += c.len() as u64;
    }
    n
}

/// States path 1 went through at the sender, with times.
fn states(p: &Pair) -> Vec<(Time, PathState)> {
    p.a.observer()
        .events
        .iter()
        .filter_map(|(t, e)| match e {
            Event::PathStateChanged {
                path: PathId(1),
                state,
            } => Some((*t, *state)),
            _ => None,
        })
        .collect()
}

/// Bytes delivered to the receiving application in `[from, to)`.
fn delivered_between(p: &Pair, from: Time, to: Time) -> u64 {
    p.b.observer()
        .events
        .iter()
        .filter(|(t, _)| *t >= from && *t < to)
        .map(|(_, e)| match e {
            Event::Delivered { bytes, .. } => *bytes as u64,
            _ => 0,
        })
        .sum()
}

/// Two equal paths; path 1 dies at 5 s. Returns the pair after 100 s.
fn run_outage(cfg: Config) -> Pair {
    let mut p = Pair::new(cfg.clone(), cfg, vec![faults(), faults()], 7);
    p.a.write(Payload::Synthetic(u32::MAX));
    p.drive(secs(5), |p| {
        delivered(p);
        false
    });
    p.down[1] = true;
    p.drive(secs(100), |p| {
        delivered(p);
        false
    });
    p
}

#[test]
fn without_pf_a_dead_path_goes_inactive_after_path_max_retrans_and_data_keeps_flowing() {
    let p = run_outage(Config {
        assoc_max_retrans: 100,
        ..Config::default()
    });
    let st = states(&p);
    assert!(
        st.iter().all(|(_, s)| *s != PathState::PotentiallyFailed),
        "{st:?}"
    );
    let (t_inactive, _) = st
        .iter()
        .find(|(_, s)| *s == PathState::Inactive)
        .copied()
        .expect("path 1 failed");
    // Six consecutive errors (error count > Path.Max.Retrans = 5) with RTO doubling from
    // 1 s: at least 1 + 2 + 4 + 8 + 16 s after the outage began.
    assert!(
        t_inactive > secs(5 + 31),
        "inactive too early: {t_inactive}"
    );
    assert_eq!(p.a.path(PathId(1)).state, PathState::Inactive);
    // The in-memory pair has no link rates, so the transfer runs at rbuf/RTT on one
    // path as on two: after failover it is back to the rate before the failure. In
    // between, round-robin keeps losing one chunk at a time on the dead path and waits
    // for each backed-off T3 (the problem CMT-PF addresses).
    let two_paths = delivered_between(&p, secs(3), secs(5)) as f64 / 2.0;
    let outage =
        delivered_between(&p, secs(6), t_inactive) as f64 / (t_inactive - secs(6)).as_secs_f64();
    assert!(
        outage < 0.6 * two_paths,
        "outage rate {outage:.0} B/s vs {two_paths:.0}"
    );
    let after = delivered_between(&p, t_inactive + Duration::from_secs(5), secs(100)) as f64
        / (secs(100) - (t_inactive + Duration::from_secs(5))).as_secs_f64();
    assert!(
        after > 0.9 * two_paths,
        "rate after failover {after:.0} B/s vs {two_paths:.0} before"
    );
    assert!(!p.a.is_failed());
}

#[test]
fn with_cmt_pf_a_dead_path_is_pf_after_one_timeout_and_comes_back_after_repair() {
    let cfg = Config {
        pf_enabled: true,
        assoc_max_retrans: 100,
        ..Config::default()
    };
    let mut p = run_outage(cfg);
    let st = states(&p);
    assert_eq!(
        st.first().map(|x| x.1),
        Some(PathState::PotentiallyFailed),
        "{st:?}"
    );
    // PF on the first timeout: within RTO.Initial-ish of the outage, not after many.
    assert!(st[0].0 < secs(5 + 4), "PF at {}", st[0].0);
    assert!(
        st.iter().any(|(_, s)| *s == PathState::Inactive),
        "heartbeats kept failing: {st:?}"
    );
    // PF stops feeding the dead path after one timeout: over the outage the transfer
    // runs much faster than without PF.
    let with_pf = delivered_between(&p, secs(5), secs(100));
    let plain = run_outage(Config {
        assoc_max_retrans: 100,
        ..Config::default()
    });
    let without_pf = delivered_between(&plain, secs(5), secs(100));
    assert!(
        with_pf as f64 > 1.5 * without_pf as f64,
        "PF {with_pf} B vs plain {without_pf} B"
    );
    // No new data went to path 1 while it was PF or INACTIVE.
    let pf_at = st[0].0;
    let new_on_dead: usize =
        p.a.observer()
            .events
            .iter()
            .filter(|(t, e)| {
                *t > pf_at
                    && matches!(
                        e,
                        Event::DataSent {
                            path: PathId(1),
                            kind: SendKind::New,
                            ..
                        }
                    )
            })
            .count();
    assert_eq!(new_on_dead, 0);

    // Repair: heartbeats (every backed-off RTO, at most 60 s) bring it back.
    p.down[1] = false;
    let repaired = p.now;
    p.drive(secs(200), |p| {
        delivered(p);
        false
    });
    let st = states(&p);
    let (t_back, _) = *st
        .iter()
        .rev()
        .find(|(_, s)| *s == PathState::Active)
        .expect("path 1 recovered");
    assert!(
        t_back > repaired && t_back < repaired + Duration::from_secs(61),
        "back at {t_back}"
    );
    let used_again = p.a.observer().events.iter().any(|(t, e)| {
        *t > t_back
            && matches!(
                e,
                Event::DataSent {
                    path: PathId(1),
                    kind: SendKind::New,
                    ..
                }
            )
    });
    assert!(used_again, "path 1 never carried new data after recovery");
}

fn pf_config() -> Config {
    Config {
        pf_enabled: true,
        pfmr: 1,
        ..Config::default()
    }
}

fn outage_config() -> Config {
    Config {
        rto_min: Duration::from_millis(200),
        outage: Some(cmt_core::config::Outage::default()),
        ..pf_config()
    }
}

/// When `e`'s observer logged its association closing.
fn closed_at(e: &cmt_core::Association<common::Log>) -> Option<Time> {
    e.observer()
        .events
        .iter()
        .find(|(_, e)| matches!(e, Event::AssociationClosed))
        .map(|(t, _)| *t)
}

/// The last in-order delivery at B.
fn last_delivery(p: &Pair) -> Time {
    p.b.observer()
        .events
        .iter()
        .filter(|(_, e)| matches!(e, Event::Delivered { .. }))
        .map(|(t, _)| *t)
        .max()
        .expect("something was delivered")
}

/// The first path dies for good mid-transfer: the data fails over, and so do the
/// SHUTDOWN, the SHUTDOWN ACK and the SHUTDOWN COMPLETE — both ends close (neither
/// fails) within one RTO and one round trip of the last data, in RFC mode and with
/// outage handling.
#[test]
fn the_first_path_dying_for_good_holds_up_neither_the_data_nor_the_close() {
    let paced = Faults {
        rate_bps: 10_000_000,
        ..faults()
    };
    for cfg in [pf_config(), outage_config()] {
        let mut p = Pair::new(cfg.clone(), cfg.clone(), vec![paced.clone(); 2], 11);
        p.a.write(Payload::Synthetic(4_000_000));
        p.a.close();
        p.drive(secs(1), |p| {
            delivered(p);
            false
        });
        p.down[0] = true;
        let done = p.drive(secs(120), |p| {
            delivered(p);
            p.a.is_closed() && p.b.is_closed()
        });
        assert!(done, "closed: {} {}", p.a.is_closed(), p.b.is_closed());
        assert!(!p.a.is_failed() && !p.b.is_failed());
        let last = last_delivery(&p);
        assert!(last > secs(1), "the path died mid-transfer");
        let rto = p.a.path(PathId(1)).rto;
        let rtt = Duration::from_millis(2 * 10 + 5);
        for (end, at) in [("A", closed_at(&p.a)), ("B", closed_at(&p.b))] {
            let at = at.expect("closed");
            assert!(
                at <= last + rto + rtt,
                "{end} closed at {at}, last data {last}, RTO {rto:?}"
            );
        }
    }
}

/// A transfer over `n` paths whose every path is down from 2 s for `outage`; true when
/// the association survived and delivered everything, with the time from the end of
/// the outage to the first delivery after it.
fn all_paths_down(cfg: Config, n: usize, outage: Duration) -> (bool, Option<Duration>) {
    let paced = Faults {
        rate_bps: 4_000_000,
        ..faults()
    };
    let mut p = Pair::new(cfg.clone(), cfg, vec![paced; n], 13);
    let total = 4_000_000u64;
    p.a.write(Payload::Synthetic(total as u32));
    let mut got = 0;
    p.drive(secs(2), |p| {
        got += delivered(p);
        false
    });
    p.down = vec![true; n];
    p.drive(secs(2) + outage, |p| {
        got += delivered(p);
        false
    });
    p.down = vec![false; n];
    let back = p.now.max(secs(2) + outage);
    let done = p.drive(back + Duration::from_secs(600), |p| {
        got += delivered(p);
        got == total || p.a.is_failed()
    });
    let resumed =
        p.b.observer()
            .events
            .iter()
            .find(|(t, e)| *t >= back && matches!(e, Event::Delivered { .. }))
            .map(|(t, _)| t.saturating_since(back));
    (done && !p.a.is_failed() && got == total, resumed)
}

/// RFC 9260's Association.Max.Retrans counts every path's timeouts, so three paths
/// fail an outage of every path that one path survives (15 s: one path's RTO doubles
/// from 1 s to four errors, three paths make twelve, above the limit of ten). With
/// outage handling the
/// association survives outages up to the tolerance whatever the number of paths, and
/// data flows again within one probe interval (1 s) plus a round trip of the return.
#[test]
fn outage_handling_survives_every_path_down_as_one_path_does_and_resumes_within_a_second() {
    let fifteen = Duration::from_secs(15);
    assert!(
        all_paths_down(pf_config(), 1, fifteen).0,
        "one path survives 15 s"
    );
    assert!(
        !all_paths_down(pf_config(), 3, fifteen).0,
        "RFC: three paths do not"
    );
    for (n, secs_down) in [(1, 10), (3, 10), (3, 60), (3, 250)] {
        let (ok, resumed) = all_paths_down(outage_config(), n, Duration::from_secs(secs_down));
        assert!(ok, "{n} paths, {secs_down} s down: failed");
        let resumed = resumed.expect("data after the outage");
        // One probe interval, then the probe's round trip and the data's one-way trip.
        let bound = Duration::from_secs(1) + Duration::from_millis(3 * 10);
        assert!(
            resumed <= bound,
            "{n} paths, {secs_down} s: resumed after {resumed:?}"
        );
    }
    // Past the tolerance (300 s without a packet) it fails, and says why.
    let cfg = Config {
        outage: Some(cmt_core::config::Outage {
            tolerance: Duration::from_secs(20),
            ..Default::default()
        }),
        ..outage_config()
    };
    let paced = Faults {
        rate_bps: 4_000_000,
        ..faults()
    };
    let mut p = Pair::new(cfg.clone(), cfg, vec![paced; 3], 5);
    p.a.write(Payload::Synthetic(u32::MAX));
    p.drive(secs(1), |_| false);
    p.down = vec![true; 3];
    p.drive(secs(60), |p| p.a.is_failed());
    assert!(p.a.is_failed() && p.a.peer_silent());
    let failed_at =
        p.a.observer()
            .events
            .iter()
            .find(|(_, e)| matches!(e, Event::AssociationFailed))
            .map(|(t, _)| *t)
            .unwrap();
    assert!(
        failed_at >= secs(21) && failed_at <= secs(22),
        "failed at {failed_at}"
    );
}

/// One of two paths is down for 60 s: with outage handling it is probed at least once
/// a second all along, so it carries new data again within a second of its return
/// (RFC back-off would have left it untried for up to 32 s).
#[test]
fn a_path_back_from_a_long_outage_is_in_the_schedule_within_a_second() {
    let mut p = Pair::new(
        outage_config(),
        outage_config(),
        vec![faults(), faults()],
        17,
    );
    p.a.write(Payload::Synthetic(u32::MAX));
    p.drive(secs(2), |p| {
        delivered(p);
        false
    });
    p.down[1] = true;
    p.drive(secs(62), |p| {
        delivered(p);
        false
    });
    p.down[1] = false;
    p.drive(secs(70), |p| {
        delivered(p);
        false
    });
    let back =
        p.a.observer()
            .events
            .iter()
            .find(|(t, e)| {
                *t >= secs(62)
                    && matches!(
                        e,
                        Event::DataSent {
                            path: PathId(1),
                            kind: SendKind::New,
                            ..
                        }
                    )
            })
            .map(|(t, _)| t.saturating_since(secs(62)))
            .expect("path 1 carries new data again");
    assert!(
        back <= Duration::from_secs(1) + Duration::from_millis(30),
        "after {back:?}"
    );
    assert!(!p.a.is_failed());
}

/// Retransmissions sent to path 1 while it was potentially failed (it is down from 5 s
/// to 9 s), under `rtx` with CMT-PF, in the ns-2.35 profile or RFC mode. Path 0 loses
/// 2 % (both paths' loss rates are given to the policy, as ns-2's
/// `set-destination-lossrate` does).
fn retransmissions_to_pf_path(rtx: &str, compat: cmt_core::Compat) -> usize {
    let cfg = Config {
        pf_enabled: true,
        compat,
        ..Config::default()
    };
    let paced = Faults {
        rate_bps: 4_000_000,
        ..faults()
    };
    let lossy = Faults {
        loss: 0.02,
        ..paced.clone()
    };
    let mut p = Pair::named(cfg, "round-robin", rtx, vec![lossy, paced], 21);
    p.a.set_destination_loss_rate(PathId(0), Some(0.02));
    p.a.set_destination_loss_rate(PathId(1), Some(0.0));
    p.a.write(Payload::Synthetic(u32::MAX));
    for (until, down) in [(5, false), (9, true), (20, false)] {
        p.down[1] = down;
        p.drive(secs(until), |p| {
            delivered(p);
            false
        });
    }
    let mut pf = false;
    let mut count = 0;
    for (_, e) in &p.a.observer().events {
        match e {
            Event::PathStateChanged {
                path: PathId(1),
                state,
            } => pf = *state == PathState::PotentiallyFailed,
            Event::DataSent {
                path: PathId(1),
                kind: SendKind::FastRetransmit | SendKind::TimeoutRetransmit,
                ..
            } if pf => count += 1,
            _ => {}
        }
    }
    count
}

/// ns-2.35's `SelectRtxDest` lets RTX_TO_SAME and RTX_LOSSRATE resend to a
/// potentially-failed destination; RTX_CWND leaves it out. The ns-2 profile mirrors
/// that; RFC mode gives every policy ACTIVE paths only.
#[test]
fn under_the_ns2_profile_rtx_same_and_lossrate_may_resend_to_a_pf_path() {
    use cmt_core::Compat::{Ns2, Rfc};
    for rtx in ["rtx-same", "rtx-lossrate"] {
        let n = retransmissions_to_pf_path(rtx, Ns2);
        assert!(n > 0, "{rtx}, ns-2: no retransmission to the PF path");
        assert_eq!(retransmissions_to_pf_path(rtx, Rfc), 0, "{rtx}, RFC");
    }
    assert_eq!(
        retransmissions_to_pf_path("rtx-cwnd", Ns2),
        0,
        "rtx-cwnd, ns-2"
    );
}

/// An association begins when it is made, not at its driver's clock origin: one made
/// 1,000 s into a server's life with a 20 s outage tolerance (a server idle for fifty
/// tolerances) lives through an idle minute on its heartbeats, and fails 20 s after its
/// peer falls silent — not at once, as when its timers ran from the clock's origin. The
/// way back is what breaks (a one-way failure), so the ABORT it sends when it gives up
/// reaches the peer, which ends too instead of waiting for its own tolerance.
#[test]
fn an_association_made_late_runs_its_timers_from_its_own_start() {
    let cfg = Config {
        outage: Some(cmt_core::config::Outage {
            tolerance: Duration::from_secs(20),
            ..Default::default()
        }),
        ..outage_config()
    };
    let start = secs(1000);
    let mut p = Pair::new_at(cfg.clone(), cfg, vec![faults(), faults()], 11, start);
    let hb = p.a.poll_timeout().expect("heartbeats are scheduled");
    assert!(
        hb > start,
        "first timer at {hb}, before the association began"
    );
    p.drive(start + Duration::from_secs(60), |p| {
        p.a.is_failed() || p.b.is_failed()
    });
    assert!(
        !p.a.is_failed() && !p.b.is_failed(),
        "an idle association failed"
    );
    // From 1,060 s nothing from B reaches A.
    p.drop_if = Some(|now, to_b, _, _| !to_b && now >= secs(1060));
    p.drive(start + Duration::from_secs(200), |p| p.b.is_failed());
    assert!(p.a.peer_silent(), "A did not fail by silence");
    let failed_at = |e: &cmt_core::Association<common::Log>| {
        e.observer()
            .events
            .iter()
            .find(|(_, e)| matches!(e, Event::AssociationFailed))
            .map(|(t, _)| *t)
    };
    let a_failed = failed_at(&p.a).unwrap().saturating_since(secs(1060));
    assert!(
        a_failed >= Duration::from_secs(15) && a_failed <= Duration::from_secs(21),
        "A failed {a_failed:?} after B fell silent"
    );
    let b_failed = failed_at(&p.b).expect("B was told");
    assert!(!p.b.peer_silent(), "B ended by silence, not by A's ABORT");
    assert!(b_failed <= failed_at(&p.a).unwrap() + Duration::from_millis(50));
}

/// When A first saw a path come back (ACTIVE again) at or after `from`.
fn first_return(p: &Pair, from: Time) -> Option<Time> {
    p.a.observer()
        .events
        .iter()
        .find(|(t, e)| {
            *t >= from
                && matches!(
                    e,
                    Event::PathStateChanged {
                        state: PathState::Active,
                        ..
                    }
                )
        })
        .map(|(t, _)| *t)
}

/// Every path goes down, at staggered moments (so their retransmission timers run out
/// of phase), and all come back at 12 s. Outage handling: the first path to answer a
/// probe carries what the others held, oldest missing chunk first, at once — B's
/// in-order delivery resumes within a round trip and a one-way trip of A first seeing
/// a path come back, not at the backed-off T3 of the path that held the missing chunk;
/// and that first answer comes within one probe interval and a round trip of the return.
#[test]
fn after_an_outage_the_first_path_to_answer_carries_the_missing_data_at_once() {
    let paced = Faults {
        rate_bps: 4_000_000,
        ..faults()
    };
    let n = 3;
    let mut checked = 0;
    for (seed, stagger_ms) in [(13, 150), (14, 330), (15, 610), (16, 70)] {
        let mut p = Pair::new(
            outage_config(),
            outage_config(),
            vec![paced.clone(); n],
            seed,
        );
        p.a.write(Payload::Synthetic(u32::MAX));
        p.drive(secs(2), |p| {
            delivered(p);
            false
        });
        for i in 0..n {
            p.down[i] = true;
            let until = p.now + Duration::from_millis(stagger_ms);
            p.drive(until, |p| {
                delivered(p);
                false
            });
        }
        p.drive(secs(12), |p| {
            delivered(p);
            false
        });
        p.down = vec![false; n];
        p.drive(secs(15), |p| {
            delivered(p);
            false
        });
        let back = secs(12);
        let answered = first_return(&p, back).expect("a path came back");
        let resumed =
            p.b.observer()
                .events
                .iter()
                .find(|(t, e)| *t >= back && matches!(e, Event::Delivered { .. }))
                .map(|(t, _)| *t)
                .expect("delivery after the outage");
        let interval = outage_config().outage.unwrap().probe_interval;
        let rtt = Duration::from_millis(2 * 10 + 2 * 3);
        assert!(
            answered <= back + interval + rtt,
            "seed {seed}: first answer at {answered}"
        );
        // What B holds is unknown to A until a SACK arrives (those of the outage were
        // lost): what A resends first may have arrived already, so B's first SACK —
        // one round trip — can be needed to learn what is missing, then one one-way
        // trip of 10 ms behind at most a few 1.5 KB packets at 4 Mbit/s (3 ms each).
        let one_way = Duration::from_millis(10 + 4 * 3);
        assert!(
            resumed <= answered + rtt + one_way,
            "seed {seed}: a path answered at {answered}, delivery resumed at {resumed}"
        );
        checked += 1;
    }
    assert_eq!(checked, 4);
}

/// Path 1 is down from 2 s to 32 s and its link is reported up at its return
/// (`link_up`): it is probed at once and ACTIVE one round trip later, where without the
/// report it waits for its next backed-off probe. A report for an ACTIVE path, or for a
/// path that does not exist, sends nothing.
#[test]
fn a_link_reported_up_is_probed_at_once() {
    let back = secs(32);
    let run = |report: bool, at_ms: u64| {
        let mut p = Pair::new(
            outage_config(),
            outage_config(),
            vec![faults(), faults()],
            19,
        );
        p.a.write(Payload::Synthetic(u32::MAX));
        p.drive(secs(2), |p| {
            delivered(p);
            false
        });
        p.down[1] = true;
        let at = back + Duration::from_millis(at_ms);
        p.drive(at, |p| {
            delivered(p);
            false
        });
        p.down[1] = false;
        if report {
            p.a.link_up(p.now, PathId(1));
        }
        p.drive(at + Duration::from_secs(2), |p| {
            delivered(p);
            false
        });
        first_return(&p, at).map(|t| t.saturating_since(at))
    };
    let rtt = Duration::from_millis(2 * 10 + 1);
    let mut waited = Duration::ZERO;
    for at_ms in [0, 130, 290, 410] {
        let reported = run(true, at_ms).expect("path 1 back");
        assert!(
            reported <= rtt,
            "reported at +{at_ms} ms: back after {reported:?}"
        );
        waited = waited.max(run(false, at_ms).expect("path 1 back"));
    }
    // Unreported, it waited for its probe at least once (the bound of rule 2 holds).
    assert!(
        waited > rtt && waited <= Duration::from_millis(500) + rtt,
        "{waited:?}"
    );

    let mut p = Pair::new(
        outage_config(),
        outage_config(),
        vec![faults(), faults()],
        19,
    );
    p.a.write(Payload::Synthetic(1_000_000));
    p.drive(secs(1), |_| false);
    let before = p.a.poll_timeout();
    p.a.link_up(p.now, PathId(0));
    p.a.link_up(p.now, PathId(7));
    assert_eq!(p.a.poll_timeout(), before, "nothing new to do");
}

/// Path 0 dies at 2 s under a transfer over two paths, its link reported down at once
/// (`link_down`): what it had in flight goes to path 1 at once, so B's in-order stall
/// is about a round trip, where without the report it waits for path 0's RTO (at
/// least RTO.Min, 0.2 s). The report counts no error and cuts no window.
#[test]
fn a_link_reported_down_is_taken_out_at_once() {
    let run = |report: bool| {
        let mut p = Pair::new(
            outage_config(),
            outage_config(),
            vec![faults(), faults()],
            23,
        );
        p.a.write(Payload::Synthetic(u32::MAX));
        p.drive(secs(2), |p| {
            delivered(p);
            false
        });
        p.down[0] = true;
        if report {
            p.a.link_down(p.now, PathId(0));
        }
        p.drive(secs(5), |p| {
            delivered(p);
            false
        });
        let stall =
            p.b.observer()
                .events
                .iter()
                .filter(|(t, e)| *t >= secs(2) && matches!(e, Event::Delivered { .. }))
                .map(|(t, _)| *t)
                .fold((secs(2), Duration::ZERO), |(last, gap), t| {
                    (t, gap.max(t.saturating_since(last)))
                })
                .1;
        let timeouts =
            p.a.observer()
                .events
                .iter()
                .filter(|(t, e)| *t >= secs(2) && matches!(e, Event::Timeout { .. }))
                .count();
        (stall, p.a.path(PathId(0)).state, timeouts)
    };
    let (reported, state, timeouts) = run(true);
    assert_eq!(state, PathState::PotentiallyFailed);
    assert_eq!(timeouts, 0, "no T3 had to expire");
    let rtt = Duration::from_millis(2 * 10 + 5);
    assert!(reported <= rtt, "stall {reported:?} with the report");
    let (unreported, _, _) = run(false);
    assert!(
        unreported >= Duration::from_millis(200),
        "stall {unreported:?} without it"
    );
}
