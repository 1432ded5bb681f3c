//! Web-like flows (`kind = "web"`): objects one at a time, think times between, and
//! each object's flow completion time (FCT) against its model.
//!
//! * One-packet objects on an idle link: the FCT is the packet's serialisation plus the
//!   propagation delay, exactly (1,000 B of payload + 48 B of headers = 1,048 B at
//!   10 Mbit/s: 0.8384 ms, plus 10 ms). The objects started in 60 s number about
//!   60 s / (1 s mean think + FCT): a renewal count, within 3σ (σ ≈ √59 ≈ 7.7).
//! * 100 KB objects: at least serialisation (~84 ms of bytes on the wire) plus the
//!   one-way delay; at most that plus the slow start from a restarted window (under 6
//!   round trips of 20 ms from 3 packets to 69).
//! * Beside a backlogged Reno flow: under drop-tail a one-packet object waits behind the
//!   bulk flow's standing queue (its sawtooth keeps at least a quarter of the 200-packet
//!   buffer, 60 ms, on average); under FQ-CoDel the object's flow is sparse and is
//!   served ahead of the bulk queue: its FCT stays within CoDel's target (5 ms) of the
//!   idle link's.

mod common;

use cmt_sim::{load_str, Summary};

/// The association on its own link `own`; the web flow `web` (objects of `object`,
/// Pareto `shape`) over link `w` (10 Mbit/s, 10 ms, 200 packets, `aqm`), and with `bulk`
/// a backlogged Reno flow over `w` too.
fn scenario(object: &str, shape: &str, aqm: &str, bulk: bool) -> String {
    let bulk = if bulk {
        "[[traffic]]\nname = \"bulk\"\nkind = \"tcp\"\nlinks = [\"w\"]\n"
    } else {
        ""
    };
    format!(
        r#"
seed = 4
duration = "60s"
[association]
cc = "reno"
[[links]]
name = "own"
rate = "1Mbps"
delay = "10ms"
[[links]]
name = "w"
rate = "10Mbps"
delay = "10ms"
queue = 200
aqm = "{aqm}"
[[paths]]
name = "p"
links = ["own"]
[[traffic]]
name = "web"
kind = "web"
links = ["w"]
object = "{object}"
shape = {shape}
idle = "1s"
{bulk}"#
    )
}

fn run(text: &str) -> Summary {
    common::run(text, "web")
}

/// The web flow's (objects completed, mean FCT ms, largest FCT ms).
fn fct(s: &Summary) -> (u64, f64, f64) {
    let web = &s.background[0];
    let f = web.fct_ms.as_ref().expect("a web flow reports FCTs");
    (web.objects.unwrap(), f.mean, f.max)
}

#[test]
fn a_one_packet_object_takes_serialisation_plus_propagation() {
    let (n, mean, max) = fct(&run(&scenario("1000B", "inf", "droptail", false)));
    let model = 0.8384 + 10.0;
    assert!(
        (mean - model).abs() < 1e-3 && (max - model).abs() < 1e-3,
        "{mean} {max}"
    );
    let expected = 60.0 / (1.0 + model / 1e3);
    assert!(
        (n as f64 - expected).abs() < 3.0 * expected.sqrt(),
        "{n} objects"
    );
}

#[test]
fn a_large_object_is_bounded_by_its_bytes_and_slow_start() {
    let (n, mean, _) = fct(&run(&scenario("100KB", "inf", "droptail", false)));
    assert!(n > 30);
    // 102,400 B in 71 packets of at most 1,452 B of payload: 71 × 48 B of headers.
    let wire_ms = (102_400.0 + 71.0 * 48.0) * 8.0 / 10e6 * 1e3;
    let floor = wire_ms + 10.0;
    assert!(
        mean >= floor && mean <= floor + 6.0 * 20.0,
        "mean {mean} ms"
    );
}

#[test]
fn fq_codel_serves_a_sparse_web_flow_past_a_bulk_queue() {
    let idle = 0.8384 + 10.0;
    let (_, tail, _) = fct(&run(&scenario("1000B", "inf", "droptail", true)));
    let (n, fq, _) = fct(&run(&scenario("1000B", "inf", "fq_codel", true)));
    assert!(tail > idle + 60.0, "drop-tail: {tail} ms");
    assert!(
        n > 40 && fq < idle + 5.0,
        "FQ-CoDel: {fq} ms over {n} objects"
    );
}

/// Heavy-tailed sizes: a few objects are many times the mean, and `object` belongs to
/// web flows only.
#[test]
fn pareto_objects_and_misplaced_keys() {
    let s = run(&scenario("20KB", "1.2", "droptail", false));
    let (n, mean, max) = fct(&s);
    assert!(
        n > 30 && max > 3.0 * mean,
        "{n} objects, mean {mean} max {max}"
    );
    let bad = scenario("20KB", "1.2", "droptail", true).replace(
        "kind = \"tcp\"\nlinks",
        "kind = \"tcp\"\nobject = \"1KB\"\nlinks",
    );
    let Err(e) = load_str(&bad, "web", None, &[]) else {
        panic!("a tcp flow took `object`");
    };
    assert!(e.to_string().contains("traffic[1].object"), "{e}");
    let Err(e) = load_str(
        &scenario("20KB", "0.9", "droptail", false),
        "web",
        None,
        &[],
    ) else {
        panic!("shape 0.9 accepted");
    };
    assert!(e.to_string().contains("traffic[0].shape"), "{e}");
}
