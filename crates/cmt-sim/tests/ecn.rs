//! Explicit congestion notification end to end (RFC 3168; SCTP's ECN of RFC 9260
//! Appendix A): queues that mark instead of dropping, and transports that cut their
//! window for a mark.
//!
//! * CoDel with ECN (RFC 8289 §5; Linux's `ecn`): an ECN-capable Reno association
//!   loses nothing — every window cut is an ECN cut, nothing is resent — and CoDel's
//!   bounds still hold: mean queueing delay below target + 6 ms (11 ms; the model in
//!   tests/queues.rs) and at least 3/4 of the link.
//! * A queue with ECN treats a transport without it exactly as one without ECN: every
//!   packet of a non-ECN association is dropped where it was before, the run is the
//!   same to the byte.
//! * FQ-CoDel with ECN: the association and a TCP-like CUBIC flow, both ECN-capable,
//!   share the bottleneck without a loss, each cutting for marks, each keeping at least
//!   3/4 of its half (FQ-CoDel's isolation, as in tests/queues.rs).

mod common;

use cmt_sim::Summary;

/// One path over link `a` (10 Mbit/s, 10 ms each way, 1,000 packets) under `aqm` with
/// `aqm_ecn`, a Reno association with `ecn`; `extra`: further TOML.
fn scenario(aqm: &str, aqm_ecn: bool, ecn: bool, extra: &str) -> String {
    format!(
        r#"
seed = 3
duration = "30s"
[association]
scheduler = "round-robin"
cc = "reno"
ecn = {ecn}
[receiver]
rbuf = "16MB"
[[links]]
name = "a"
rate = "10Mbps"
delay = "10ms"
queue = 1000
aqm = "{aqm}"
aqm_params = {{ ecn = {aqm_ecn} }}
[[paths]]
name = "a"
links = ["a"]
{extra}
"#
    )
}

fn run(text: &str) -> Summary {
    common::run(text, "ecn")
}

#[test]
fn codel_marks_an_ecn_flow_which_cuts_without_a_loss_and_keeps_codels_bounds() {
    let s = run(&scenario("codel", true, true, ""));
    let p = &s.paths[0];
    assert_eq!(
        (p.lost_packets, p.retransmissions, p.timeouts),
        (0, 0, 0),
        "a marked flow loses and resends nothing"
    );
    let cuts = p.ecn_cuts.expect("ECN on: cuts reported");
    assert!(cuts > 0);
    assert_eq!(cuts, p.cwnd_reductions, "every cut is an ECN cut");
    let queueing = s.delay_ms.mean - 10.0 - 1.2;
    assert!(queueing < 11.0, "CoDel queueing {queueing:.1} ms");
    assert!(s.goodput_mbps >= 0.75 * 10.0, "goodput {}", s.goodput_mbps);
}

#[test]
fn a_queue_with_ecn_drops_a_transport_without_it_exactly_as_before() {
    for aqm in ["red", "codel", "fq_codel"] {
        let with = run(&scenario(aqm, true, false, ""));
        let without = run(&scenario(aqm, false, false, ""));
        assert!(with.paths[0].lost_packets > 0, "{aqm}: the queue drops");
        assert_eq!(with.paths[0].ecn_cuts, None);
        let json = |s: &Summary| {
            let mut v = serde_json::to_value(s).unwrap();
            v.as_object_mut().unwrap().remove("inputs");
            v
        };
        assert_eq!(json(&with), json(&without), "{aqm}");
    }
}

#[test]
fn fq_codel_with_ecn_shares_the_link_between_two_ecn_flows_without_a_loss() {
    let cubic = r#"
[[traffic]]
name = "desktop"
kind = "tcp"
cc = "cubic"
ecn = true
links = ["a"]
"#;
    let s = run(&scenario("fq_codel", true, true, cubic));
    let (p, f) = (&s.paths[0], &s.background[0]);
    assert_eq!((p.lost_packets, f.lost_packets), (0, 0));
    assert!(p.ecn_cuts.unwrap() > 0 && f.ecn_cuts.unwrap() > 0);
    // Each keeps at least 3/4 of its half, less 4 % of headers.
    for (who, mbps) in [
        ("association", s.goodput_mbps),
        ("desktop", f.delivered_mbps),
    ] {
        assert!(mbps >= 0.75 * 5.0 * 0.96, "{who}: {mbps:.2} Mbit/s of 10");
    }
}
