//! Address reconfiguration (RFC 5061) through the core's API: one ASCONF at a time,
//! numbered from the initial TSN; the peer's requests handed over once, in order;
//! a repeated request answered from the cache; lost ones sent again on another path;
//! given up after the association's retransmission limit.

mod common;

use std::net::IpAddr;

use cmt_core::addr_conf::{asconf_cause, AddrOp, AsconfChunk, AsconfParam, AsconfResponse};
use cmt_core::assoc::AddrRequest;
use cmt_core::{AssocInit, Chunk, Config, Duration, Packet, PathId, Time};
use common::{Faults, Pair};

const SEED: u64 = 11;

fn pair(cfg: Config) -> Pair {
    let f = Faults::clean(10);
    let mut p = Pair::new(cfg.clone(), cfg, vec![f.clone(), f], SEED);
    p.a.enable_reconfiguration();
    p.b.enable_reconfiguration();
    p
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn at(s: f64) -> Time {
    Time::ZERO + Duration::from_secs_f64(s)
}

/// Drives `p` until B has the peer's requests (or `until` s), and returns them.
fn requests_at_b(p: &mut Pair, until: f64) -> Vec<AddrRequest> {
    let mut got = Vec::new();
    p.drive(at(until), |p| {
        got.extend(p.b.take_address_requests());
        !got.is_empty()
    });
    got
}

/// B's verification tag, for forged packets to it.
fn b_tag(p: &Pair) -> u32 {
    AssocInit::pair(SEED, p.a.config().rbuf, p.b.config().rbuf)
        .1
        .local_vtag
}

#[test]
fn a_request_is_handed_over_once_and_its_verdicts_come_back_in_order() {
    let mut p = pair(Config::default());
    let ops = vec![AddrOp::Add(ip("10.9.0.1")), AddrOp::Delete(ip("10.1.0.1"))];
    assert!(p.a.reconfigure(p.now, ip("10.1.0.1"), ops.clone(), None));
    assert!(p.a.reconfiguration_pending());
    let got = requests_at_b(&mut p, 1.0);
    let [req] = got.as_slice() else {
        panic!("one request expected, got {got:?}")
    };
    assert_eq!(
        req.serial, p.first_tsn_a,
        "the first serial is the initial TSN"
    );
    assert_eq!(req.address, ip("10.1.0.1"));
    assert_eq!(req.path, PathId(0), "sent on the first active path");
    let got_ops: Vec<_> = req.params.iter().map(|x| x.op.clone()).collect();
    assert_eq!(got_ops, ops);
    assert_ne!(req.params[0].correlation, req.params[1].correlation);
    // The delete is refused (it is the source); the add is not mentioned: it succeeded.
    let refuse = AsconfResponse::refusal(&req.params[1], asconf_cause::DELETE_SOURCE_ADDRESS);
    p.b.answer_address_request(req.serial, None, vec![refuse]);
    p.drive(at(2.0), |p| !p.a.reconfiguration_pending());
    assert_eq!(
        p.a.take_address_results(),
        vec![
            (ops[0].clone(), Ok(())),
            (ops[1].clone(), Err(asconf_cause::DELETE_SOURCE_ADDRESS))
        ]
    );
    // The next request carries the next serial.
    assert!(p.a.reconfigure(
        p.now,
        ip("10.1.0.1"),
        vec![AddrOp::SetPrimary(ip("10.9.0.1"))],
        None
    ));
    let next = requests_at_b(&mut p, 3.0);
    assert_eq!(next[0].serial, p.first_tsn_a.wrapping_add(1));
}

#[test]
fn without_negotiation_nothing_is_sent_and_a_forged_asconf_is_ignored() {
    let f = Faults::clean(10);
    let mut p = Pair::new(Config::default(), Config::default(), vec![f], SEED);
    assert!(!p.a.reconfigure(
        p.now,
        ip("10.1.0.1"),
        vec![AddrOp::Add(ip("10.9.0.1"))],
        None
    ));
    assert!(!p.a.reconfiguration_pending());
    let forged = Packet {
        vtag: b_tag(&p),
        chunks: vec![Chunk::Asconf(AsconfChunk {
            serial: p.first_tsn_a,
            address: ip("10.1.0.1"),
            params: vec![AsconfParam {
                correlation: 1,
                op: AddrOp::Delete(ip("10.1.0.1")),
            }],
        })],
    };
    let before = p.b.stats().bogus_chunks;
    p.b.handle_packet(p.now, PathId(0), forged);
    assert!(p.b.take_address_requests().is_empty());
    assert_eq!(p.b.stats().bogus_chunks, before + 1);
}

#[test]
fn requests_out_of_order_are_dropped_and_a_repeat_is_answered_from_the_cache() {
    let mut p = pair(Config::default());
    let asconf = |serial| Packet {
        vtag: b_tag(&p),
        chunks: vec![Chunk::Asconf(AsconfChunk {
            serial,
            address: ip("10.1.0.1"),
            params: vec![AsconfParam {
                correlation: 7,
                op: AddrOp::Add(ip("10.9.0.1")),
            }],
        })],
    };
    let (ahead, first) = (asconf(p.first_tsn_a.wrapping_add(1)), asconf(p.first_tsn_a));
    let now = p.now;
    p.b.handle_packet(now, PathId(0), ahead);
    assert!(
        p.b.take_address_requests().is_empty(),
        "a serial ahead is dropped"
    );
    p.b.handle_packet(now, PathId(1), first.clone());
    let reqs = p.b.take_address_requests();
    assert_eq!(reqs.len(), 1);
    // Repeated before the answer: ignored (no second request, no answer yet).
    p.b.handle_packet(now, PathId(1), first.clone());
    assert!(p.b.take_address_requests().is_empty());
    assert!(p.b.poll_transmit(now).is_none());
    p.b.answer_address_request(reqs[0].serial, None, Vec::new());
    let ack = p.b.poll_transmit(now).expect("the answer");
    assert_eq!(ack.path, PathId(1), "answered where the request came from");
    assert!(
        matches!(ack.packet.chunks[..], [Chunk::AsconfAck(ref a)] if a.serial == reqs[0].serial)
    );
    // Repeated after the answer: the same answer again, still no second request.
    p.b.handle_packet(now, PathId(0), first);
    assert!(p.b.take_address_requests().is_empty());
    let again = p.b.poll_transmit(now).expect("the cached answer");
    assert_eq!(again.packet.chunks, ack.packet.chunks);
}

#[test]
fn a_lost_request_is_sent_again_on_the_other_path_after_its_rto() {
    let mut p = pair(Config::default());
    p.down[0] = true;
    assert!(p.a.reconfigure(
        p.now,
        ip("10.2.0.1"),
        vec![AddrOp::Add(ip("10.9.0.1"))],
        None
    ));
    let got = requests_at_b(&mut p, 10.0);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].path, PathId(1));
    // Sent on path 0 at 0 s and lost; again after path 0's initial RTO (3 s), plus
    // path 1's one-way delay.
    let arrived = p.now.as_nanos() as f64 / 1e9;
    assert!((3.0..3.05).contains(&arrived), "arrived at {arrived} s");
    p.b.answer_address_request(got[0].serial, None, Vec::new());
    p.drive(at(11.0), |p| !p.a.reconfiguration_pending());
    assert_eq!(
        p.a.take_address_results(),
        vec![(AddrOp::Add(ip("10.9.0.1")), Ok(()))]
    );
}

#[test]
fn an_unanswered_request_is_given_up_after_the_retransmission_limit() {
    let cfg = Config {
        assoc_max_retrans: 2,
        heartbeats: false,
        ..Config::default()
    };
    let mut p = pair(cfg);
    p.down = vec![true, true];
    assert!(p.a.reconfigure(
        p.now,
        ip("10.2.0.1"),
        vec![AddrOp::Add(ip("10.9.0.1"))],
        None
    ));
    // 3 s, then 6, then 12 (doubling): given up at 21 s, not before.
    assert!(!p.drive(at(20.9), |p| !p.a.reconfiguration_pending()));
    assert!(p.drive(at(21.1), |p| !p.a.reconfiguration_pending()));
    assert_eq!(
        p.a.take_address_results(),
        vec![(AddrOp::Add(ip("10.9.0.1")), Err(asconf_cause::NOT_APPLIED))]
    );
}
