//! Queue disciplines end to end, each held to what its specification promises:
//!
//! * CoDel (RFC 8289) keeps a bulk flow's standing queue near `target` where drop-tail
//!   lets it fill the buffer: one Reno flow, 10 Mbit/s, 20 ms round trip, a 1,000-packet
//!   buffer. Model: under drop-tail Reno's window runs into a full buffer and halves, so
//!   the queue swings between about half the buffer and all of it — mean queueing delay
//!   at least a quarter of the buffer's drain time (1,000 × 1.2 ms / 4 = 0.3 s). Under
//!   CoDel the queue reaches `target` (5 ms), then grows by one packet per round trip
//!   for one `interval` (100 ms: 5 packets, 6 ms) before the drop: it never exceeds
//!   target + 6 ms, so its mean queueing delay stays below 11 ms; and Reno keeps at
//!   least 3/4 of the link (a window halved from the pipe's size averages 3/4 of it).
//! * FQ-CoDel (RFC 8290) isolates flows: two Reno flows over one bottleneck whose round
//!   trips differ fourfold; in one CoDel queue the short one takes most of it (both see
//!   the same drops and Reno's rate goes as 1/RTT), in FQ-CoDel's queue per flow the
//!   long one keeps at least 3/4 of its half (its window saws in its own queue).
//! * RED (Floyd and Jacobson 1993) keeps the average queue between its thresholds:
//!   configured as ns-2.35 does for this link (6.25 and 18.75 packets of 500 bytes), the
//!   mean queueing delay stays under twice max_th's worth of full packets (the average
//!   lags the queue), well under drop-tail's.

mod common;

use cmt_sim::{load_str, Summary};

/// One path over one link `a` (10 Mbit/s, 10 ms each way, 1,000 packets) with
/// discipline `aqm`; one Reno association with a window that never limits it.
fn one_flow(aqm: &str) -> String {
    format!(
        r#"
seed = 3
duration = "30s"
[association]
scheduler = "round-robin"
cc = "reno"
[receiver]
rbuf = "16MB"
[[links]]
name = "a"
rate = "10Mbps"
delay = "10ms"
queue = 1000
aqm = "{aqm}"
[[paths]]
name = "a"
links = ["a"]
"#
    )
}

fn run(text: &str) -> Summary {
    common::run(text, "queues")
}

/// Mean queueing delay, ms: one-way delay less propagation (10 ms) and serialisation
/// of a full packet at 10 Mbit/s (1.2 ms).
fn queueing_ms(s: &Summary) -> f64 {
    s.delay_ms.mean - 10.0 - 1.2
}

#[test]
fn codel_keeps_a_bulk_flows_queue_near_target_where_droptail_fills_the_buffer() {
    let tail = run(&one_flow("droptail"));
    let codel = run(&one_flow("codel"));
    let (qt, qc) = (queueing_ms(&tail), queueing_ms(&codel));
    assert!(qt >= 300.0, "drop-tail queueing {qt:.1} ms");
    assert!(qc < 11.0, "CoDel queueing {qc:.1} ms");
    assert!(
        codel.goodput_mbps >= 0.75 * 10.0,
        "CoDel goodput {}",
        codel.goodput_mbps
    );
}

#[test]
fn red_keeps_the_average_queue_near_its_thresholds() {
    let tail = run(&one_flow("droptail"));
    let red = run(&one_flow("red"));
    let qr = queueing_ms(&red);
    // ns-2.35's max_th for 10 Mbit/s: 18.75 packets; at most twice that many full
    // (1.2 ms) packets queued on average, for the average's lag behind the queue.
    assert!(qr < 2.0 * 18.75 * 1.2, "RED queueing {qr:.1} ms");
    assert!(qr < queueing_ms(&tail) / 10.0);
    assert!(
        red.goodput_mbps >= 0.75 * 10.0,
        "RED goodput {}",
        red.goodput_mbps
    );
}

/// The association on a 10 ms round trip and a TCP-like Reno flow on a 50 ms one, both
/// through the bottleneck `b` (10 Mbit/s) under `aqm`: their goodputs, Mbit/s.
fn two_flows(aqm: &str) -> (f64, f64) {
    let text = format!(
        r#"
seed = 5
duration = "40s"
[association]
cc = "reno"
[receiver]
rbuf = "16MB"
[[links]]
name = "b"
rate = "10Mbps"
delay = "4ms"
queue = 200
aqm = "{aqm}"
[[links]]
name = "far"
rate = "1Gbps"
delay = "20ms"
queue = 1000
[[paths]]
name = "near"
links = ["b"]
[[traffic]]
name = "far"
kind = "tcp"
links = ["far", "b"]
"#
    );
    let s = run(&text);
    (s.goodput_mbps, s.background[0].delivered_mbps)
}

#[test]
fn fq_codel_gives_a_long_round_trip_its_share_where_one_codel_queue_does_not() {
    // One queue: both flows see the same drops, so Reno's rate goes as 1/RTT (about
    // 55 ms against 15 ms with the queue near target): the near flow takes most.
    let (near_c, far_c) = two_flows("codel");
    assert!(
        near_c >= 2.0 * far_c,
        "CoDel: near {near_c:.2}, far {far_c:.2} Mbit/s"
    );
    // A queue per flow, served in turn: the far flow's window saws in its own queue
    // within its half of the link, averaging at least 3/4 of it (less 4 % of headers).
    let (near_fq, far_fq) = two_flows("fq_codel");
    assert!(
        far_fq >= 0.75 * 5.0 * 0.96,
        "FQ-CoDel: far {far_fq:.2} Mbit/s of 10"
    );
    assert!(far_fq > far_c && near_fq < near_c);
}

/// The error loading the one-flow scenario under `aqm` with `params` (a TOML table).
fn refused(aqm: &str, params: &str) -> String {
    let text = one_flow(aqm).replace(
        &format!("aqm = \"{aqm}\""),
        &format!("aqm = \"{aqm}\"\naqm_params = {params}"),
    );
    match load_str(&text, "q", None, &[]) {
        Ok(_) => panic!("accepted: {aqm} {params}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn an_unknown_discipline_or_parameter_is_refused_naming_the_key() {
    for (aqm, params, says) in [
        ("blue", "{}", "field `links[0].aqm`: unknown `blue`"),
        (
            "codel",
            "{ target = 5 }",
            "unknown parameter `target` for `codel`",
        ),
        (
            "red",
            "{ min_th = 20, max_th = 15 }",
            "min_th 20 and max_th 15",
        ),
        (
            "fq_codel",
            "{ quantum = 10 }",
            "quantum 10: give 64 to 65535 bytes",
        ),
    ] {
        let e = refused(aqm, params);
        assert!(e.contains(says), "{aqm} {params}: {e}");
    }
}
