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

use cmt_sim::{run_str, Summary};

const SCENARIO: &str = "seed = 1\nduration = \"0.9s\"\n[receiver]\nrbuf = \"64MB\"\n\
    [association]\ncc = \"linux-cubic\"\n\
    [[links]]\nname = \"l\"\nrate = \"20Mbps\"\ndelay = \"20ms\"\nqueue = 264\n\
    [[paths]]\nname = \"l\"\nlinks = [\"l\"]\n";

fn run(hystart: bool) -> Summary {
    let set = [format!("association.cc_params={{hystart={hystart}}}")];
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
fn plain_cubic_has_no_hystart_unless_asked() {
    // `cubic` (RFC 9438) has no HyStart unless asked: the same run as without it.
    let plain = run_str(SCENARIO, &["association.cc=\"cubic\"".to_string()]).expect("runs");
    assert!(
        plain.paths[0].lost_packets > 0,
        "cubic's slow start ends by a loss"
    );
}
