//! Fast retransmission of chunks already retransmitted (docs/algorithms.md D41).
//!
//! Split fast retransmit counts a chunk missing when a SACK acks higher TSNs sent on
//! the chunk's path: it assumes TSN order is send order there. A chunk resent after its
//! path failed breaks that assumption — it lies below every TSN its new path carried
//! before it, and their acks report it missing while its copy is still in flight. The
//! hostile case: three paths, one blackholed for good mid-transfer, so that a window of
//! chunks is resent onto the survivors at once. With more than one path a chunk
//! retransmitted for any reason is never fast-retransmitted again (as ns-2.35's
//! `RtxMarkedChunks` and FreeBSD's SCTP with CMT do); with one path RFC 9260 §7.2.4's
//! rule stands, and a timed-out chunk lost again is still fast-retransmitted.

use std::collections::BTreeMap;
use std::path::PathBuf;

use cmt_sim::{load_str, Simulation};

/// Three 10 Mbit/s paths; the first is blackholed (both directions) at 3 s for good. The
/// receive buffer holds more than the other two paths carry until the first path's T3
/// fires (≈ 1 s), so they keep sending past the hole and their acks meet the resent
/// chunks.
const THREE_PATHS: &str = r#"
name = "failover-retransmissions"
seed = 3
duration = "15s"

[association]
scheduler = "round-robin"
rtx = "rtx-cwnd"
pf = {PF}

[receiver]
rbuf = "8MB"

[[links]]
name = "a"
rate = "10Mbps"
delay = "20ms"
[[links]]
name = "b"
rate = "10Mbps"
delay = "30ms"
[[links]]
name = "c"
rate = "10Mbps"
delay = "40ms"

[[paths]]
name = "pa"
links = ["a"]
[[paths]]
name = "pb"
links = ["b"]
[[paths]]
name = "pc"
links = ["c"]

[[events]]
at = "3s"
link = "a"
state = "down"
"#;

/// One path with 8 % loss: timeouts whose retransmission is lost again are common.
const ONE_PATH: &str = r#"
name = "one-path-retransmissions"
seed = 5
duration = "120s"

[receiver]
rbuf = "128KB"

[[links]]
name = "a"
rate = "5Mbps"
delay = "20ms"
loss = 0.08
loss_direction = "forward"

[[paths]]
name = "pa"
links = ["a"]
"#;

/// Per TSN, the causes of its sender-side transmissions in order (`new`, `fast`,
/// `timeout`), from the run's per-packet trace.
fn transmissions(scenario: &str, name: &str) -> BTreeMap<u64, Vec<String>> {
    let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.csv"));
    let mut sim = Simulation::new(load_str(scenario, name, None, &[]).unwrap()).unwrap();
    sim.trace_to(&file).unwrap();
    sim.run(&mut |_| {});
    sim.finish_trace().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let mut by_tsn: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        // time_s, side, path, path_name, direction, kind, cause, tsn, …
        if f[1] == "sender" && f[4] == "data" && matches!(f[5], "send" | "retransmit") {
            by_tsn
                .entry(f[7].parse().unwrap())
                .or_default()
                .push(f[6].to_string());
        }
    }
    by_tsn
}

/// TSNs fast-retransmitted after an earlier retransmission (a `fast` cause as the third
/// transmission or later), and TSNs retransmitted at all.
fn fast_after_retransmission(t: &BTreeMap<u64, Vec<String>>) -> (usize, usize) {
    let again = t
        .values()
        .filter(|causes| causes.iter().skip(2).any(|c| c == "fast"))
        .count();
    let resent = t.values().filter(|c| c.len() > 1).count();
    (again, resent)
}

#[test]
fn over_several_paths_a_retransmitted_chunk_is_never_fast_retransmitted_again() {
    for pf in [false, true] {
        let scenario = THREE_PATHS.replace("{PF}", &pf.to_string());
        let t = transmissions(&scenario, &format!("three-paths-pf-{pf}"));
        let (again, resent) = fast_after_retransmission(&t);
        // The case must exercise the rule: the failure moves a whole window of the
        // first path's chunks (≈ 10 Mbit/s × 40 ms RTT ≈ 34 chunks, more with queueing)
        // onto the other two paths.
        assert!(resent >= 30, "pf {pf}: only {resent} chunks resent");
        assert_eq!(
            again, 0,
            "pf {pf}: {again} of {resent} resent chunks went out again by fast retransmit"
        );
    }
}

#[test]
fn on_one_path_a_timed_out_chunk_lost_again_is_still_fast_retransmitted() {
    let t = transmissions(ONE_PATH, "one-path");
    let (again, resent) = fast_after_retransmission(&t);
    assert!(resent > 100, "only {resent} chunks resent");
    assert!(
        again > 0,
        "RFC 9260 §7.2.4 lets a chunk retransmitted by the timer be fast-retransmitted; none was"
    );
}
