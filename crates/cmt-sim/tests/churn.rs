//! Paths that come and go (`[[events]]` with `path = …`, `paths[].present`): a removed
//! path's data moves to the others at once, an added one is announced to the receiver
//! (RFC 5061 ADD-IP), verified and then used.

mod bins;

use bins::{arrived, first_arrival, run};
use cmt_sim::{load_str, Simulation, Summary};

const CHURN: &str = r#"
seed = 5
duration = "30s"
[association]
pf = true
[receiver]
rbuf = "1MB"
[metrics]
bin = "0.05s"
[[links]]
name = "wifi"
rate = "10Mbps"
delay = "20ms"
queue = 100
[[links]]
name = "lte"
rate = "10Mbps"
delay = "40ms"
queue = 50
[[links]]
name = "wifi2"
rate = "10Mbps"
delay = "20ms"
queue = 100
[[paths]]
name = "wifi"
links = ["wifi"]
[[paths]]
name = "lte"
links = ["lte"]
[[paths]]
name = "wifi2"
links = ["wifi2"]
present = false
[[events]]
at = "10s"
link = "wifi"
state = "down"
[[events]]
at = "10s"
path = "wifi"
state = "removed"
[[events]]
at = "20s"
path = "wifi2"
state = "added"
"#;

/// The longest time in `(from, to]` without an in-order delivery, to a bin.
fn stall(sim: &Simulation, bin: f64, from: f64, to: f64) -> f64 {
    let rec = sim.recorder();
    let (mut run, mut longest) = (0usize, 0usize);
    for (i, b) in rec.bins.iter().enumerate() {
        let t = (i + 1) as f64 * bin;
        if t <= from + 1e-9 || t > to + 1e-9 {
            continue;
        }
        run = if b.delivered_bytes == 0 { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest as f64 * bin
}

#[test]
fn a_removed_path_hands_its_data_over_at_once() {
    let (sim, bin) = run(CHURN, &[]);
    // The stream stalls for at most one round trip of the remaining path — 80 ms of
    // propagation and up to 50 queued packets at 10 Mbit/s (60 ms) — plus 200 ms: the
    // chunks lost with WiFi are resent over LTE one LTE round trip after the removal
    // (the wait for SACKs of what had arrived) and arrive in one more one-way delay and
    // queue (≤ 0.1 s), not after a timeout.
    let s = stall(&sim, bin, 9.5, 12.0);
    eprintln!("in-order stall across the removal: {s:.2} s");
    assert!(s <= 0.34, "in-order stall {s} s across the removal");
    // Nothing arrives over the removed path after the removal (its link is down too),
    // and the removal is not counted as a failure.
    let after = arrived(&sim, bin, 0, 10.0 + bin, 30.0);
    assert_eq!(after, 0, "WiFi carried {after} B after its removal");
    assert_eq!(Summary::of(&sim, 0.0).paths[0].failures, 0);
    // The control: the same link failure without the removal costs a retransmission
    // timeout (RTO.Min 1 s) before CMT-PF moves the data.
    let without = CHURN.replace(
        "path = \"wifi\"\nstate = \"removed\"",
        "link = \"wifi\"\nstate = \"down\"",
    );
    let (sim, bin) = run(&without, &[]);
    let s = stall(&sim, bin, 9.5, 12.0);
    eprintln!("without the removal: {s:.2} s");
    assert!(s >= 0.9, "without the removal the stall was only {s} s");
}

#[test]
fn an_added_path_is_verified_and_then_carries_data() {
    let (sim, bin) = run(CHURN, &[]);
    // Not one DATA chunk before the address exists.
    assert_eq!(arrived(&sim, bin, 2, 0.0, 20.0), 0);
    // After it: the ADD-IP to the receiver over LTE, behind at most a full LTE queue
    // (40 ms + 50 packets at 10 Mbit/s: 60 ms), its ASCONF-ACK back (40 ms, a queue of
    // SACKs only), a HEARTBEAT and its ACK on the new path (40 ms), then data one way
    // (20 ms), within a bin.
    let first = first_arrival(&sim, bin, 2, 20.0).expect("the added path never carried data");
    assert!(
        first <= 20.0 + (0.04 + 0.06) + 0.04 + 0.04 + 0.02 + bin + 1e-9,
        "first data at {first} s"
    );
    // Not before the ASCONF round trip could have completed (80 ms of propagation over
    // LTE) and the HEARTBEAT's (40 ms): the receiver learns of the path first.
    assert!(first >= 20.0 + 0.08 + 0.04, "first data at {first} s");
    // And then its share: at least half its capacity over 25–30 s (round-robin over two
    // loss-free 10 Mbit/s paths with a 1 MB buffer: each runs near its capacity).
    let bytes = arrived(&sim, bin, 2, 25.0, 30.0);
    assert!(
        bytes as f64 >= 0.5 * 10e6 / 8.0 * 5.0,
        "{bytes} B in 25–30 s"
    );
    let s = Summary::of(&sim, 0.0);
    assert_eq!((s.paths[2].failures, s.paths[2].recoveries), (0, 0));
}

#[test]
fn a_path_removed_and_added_back_at_once_strands_nothing() {
    // WiFi's link and address go at 10 s and come back 20 ms later — before the
    // removal's round-trip wait is over. What WiFi had in flight (dropped with the
    // link) must still be resent at once on LTE, not left until a timeout of the
    // re-added path: the same stall bound as a plain removal.
    let text = CHURN
        .replace(
            "at = \"20s\"\npath = \"wifi2\"",
            "at = \"10.02s\"\npath = \"wifi\"",
        )
        .replace("duration = \"30s\"", "duration = \"20s\"")
        + "[[events]]\nat = \"10.02s\"\nlink = \"wifi\"\nstate = \"up\"\n";
    let (sim, bin) = run(&text, &[]);
    let s = stall(&sim, bin, 9.5, 12.0);
    assert!(
        s <= 0.34,
        "in-order stall {s} s across the removal and return"
    );
    // And WiFi, verified again, carries data.
    assert!(arrived(&sim, bin, 0, 11.0, 20.0) > 1_000_000);
}

#[test]
fn path_events_are_checked() {
    let bad = |from: &str, to: &str, want: &str| {
        let e = load_str(&CHURN.replace(from, to), "t", None, &[])
            .err()
            .unwrap_or_else(|| panic!("{to} accepted"))
            .to_string();
        assert!(e.contains(want), "{e}");
    };
    bad(
        "path = \"wifi2\"",
        "path = \"wifi3\"",
        "unknown path `wifi3`",
    );
    bad(
        "state = \"added\"",
        "state = \"up\"",
        "`up` (a path event needs `added` or `removed`)",
    );
    bad(
        "path = \"wifi2\"\nstate = \"added\"",
        "path = \"wifi2\"\nstate = \"added\"\nrate = \"1Mbps\"",
        "a path event gives",
    );
    let none = CHURN
        .replace(
            "links = [\"wifi\"]\n",
            "links = [\"wifi\"]\npresent = false\n",
        )
        .replace(
            "links = [\"lte\"]\n",
            "links = [\"lte\"]\npresent = false\n",
        );
    let e = load_str(&none, "t", None, &[]).err().unwrap().to_string();
    assert!(e.contains("every path is absent at the start"), "{e}");
}
