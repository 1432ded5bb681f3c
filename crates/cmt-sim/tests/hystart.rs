//! HyStart, the slow-start exit Linux's CUBIC runs by default (`linux-cubic`,
//! `hystart = true`), in the simulator: one path of 20 Mbit/s and 40 ms round trip (a
//! BDP of 66 packets) behind a queue of four BDPs, a backlogged sender, 0.9 s.
//!
//! Model. Slow start grows the window by one MTU per SACK of two packets: ×1.5 per
//! round trip from 10 packets. The acks of a round come back at the link's rate (one
//! per 1.2 ms, under HyStart's 2 ms), so they form one train lasting as long as the
//! round delivers at that rate; HyStart ends slow start once a train lasts half the
//! minimum round trip (20 ms), which takes a window of more than half a BDP and
//! happens at the latest in the round that ends at two BDPs. From there CUBIC with no
//! loss behind it grows 5 % per round trip, so reaching the pipe (BDP + queue, five
//! BDPs) takes over 18 round trips, more than 0.7 s: no packet is lost in the run.
//! Without HyStart slow start ends only by a loss: from 10 packets it passes the pipe
//! of 330 in 9 rounds, 0.6 s even with the round trips the queue adds (46, 69, 104
//! and 155 ms for the last four).
//!
//! The delay rule, on its own: a path of 2 Mbit/s and 100 ms round trip (a BDP of 17
//! packets) behind a queue of 100, 3 s. Its SACKs, one per two packets, come 12 ms
//! apart, so no ack train forms; slow start ends once a round's smallest round trip
//! exceeds the minimum by `clamp(100/8, 4, 16)` = 12.5 ms of queue, about two packets
//! past the BDP. From there 5 % per round trip takes 37 round trips (3.7 s) to reach
//! the pipe of 117. Without HyStart slow start passes 117 packets in 7 rounds, 2.0 s
//! with the queue's delay (rounds of 0.10, 0.10, 0.13, 0.20, 0.31, 0.46 and 0.68 s).

use cmt_sim::{run_str, Summary};

const SCENARIO: &str = "seed = 1\nduration = \"0.9s\"\n[receiver]\nrbuf = \"64MB\"\n\
    [association]\ncc = \"linux-cubic\"\n\
    [[links]]\nname = \"l\"\nrate = \"20Mbps\"\ndelay = \"20ms\"\nqueue = 264\n\
    [[paths]]\nname = \"l\"\nlinks = [\"l\"]\n";

fn run(hystart: bool) -> Summary {
    run_with(hystart, &[])
}

fn run_with(hystart: bool, more: &[&str]) -> Summary {
    let mut set = vec![format!("association.cc_params={{hystart={hystart}}}")];
    set.extend(more.iter().map(|s| s.to_string()));
    run_str(SCENARIO, &set).expect("scenario runs")
}

#[test]
fn hystart_leaves_slow_start_before_the_queue_overflows() {
    let with = run(true);
    let without = run(false);
    let (w, wo) = (&with.paths[0], &without.paths[0]);
    assert_eq!(
        (w.lost_packets, w.cwnd_reductions),
        (0, 0),
        "HyStart: slow start ended by the ack train, no loss within the run"
    );
    assert!(
        wo.lost_packets > 0 && wo.cwnd_reductions > 0,
        "without HyStart slow start overflows the queue: {} lost",
        wo.lost_packets
    );
}

#[test]
fn on_a_slow_path_the_delay_rule_ends_slow_start_before_the_queue_overflows() {
    let slow = [
        "links.l.rate=\"2Mbps\"",
        "links.l.delay=\"50ms\"",
        "links.l.queue=100",
        "duration=\"3s\"",
    ];
    let (with, without) = (run_with(true, &slow), run_with(false, &slow));
    let (w, wo) = (&with.paths[0], &without.paths[0]);
    assert_eq!(
        (w.lost_packets, w.cwnd_reductions),
        (0, 0),
        "HyStart by delay"
    );
    assert!(wo.lost_packets > 0, "without HyStart the queue overflows");
}

#[test]
fn plain_cubic_has_no_hystart_unless_asked() {
    // `cubic` (RFC 9438) has no HyStart unless asked: the same run as without it.
    let plain = run_str(SCENARIO, &["association.cc=\"cubic\"".to_string()]).expect("runs");
    assert!(
        plain.paths[0].lost_packets > 0,
        "cubic's slow start ends by a loss"
    );
}
