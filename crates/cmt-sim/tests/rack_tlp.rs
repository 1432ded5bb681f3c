//! RACK-TLP (`association.recovery = "rack-tlp"`, RFC 8985) on one path with random
//! loss, over loss 0.5–10 % and RTT 20–400 ms, against the model and against RFC 9260's
//! missing-report rule on the same seeds.
//!
//! Model. Mathis et al. ("The Macroscopic Behavior of the TCP Congestion Avoidance
//! Algorithm", CCR 1997): a window-halving sender that never waits for a timeout sends
//! `sqrt(3 / (2q))` packets per round trip, where `q` is the fraction of its packets
//! that end in a window cut. RACK-TLP repairs a lost retransmission and a tail loss
//! without the retransmission timer, so with a backlogged sender its goodput follows
//! that law with `q` measured (cuts over packets sent: several losses of one window cut
//! once). ±15 % per point is the accuracy the repository asks of its window models
//! (`cc_bound.rs`).
//!
//! Against RFC 9260's rule: at high loss a lost retransmission waits for T3-rtx there
//! (RTO.Min 1 s); RACK-TLP takes no more timeouts at any point and strictly fewer where
//! SCTP takes many, and so no less goodput (3 % of slack for the seeds' noise).

use cmt_sim::{run_str, Summary};

const SCENARIO: &str = "seed = 1\nduration = \"120s\"\n[receiver]\nrbuf = \"64MB\"\n\
    [[links]]\nname = \"l\"\nrate = \"1000Mbps\"\ndelay = \"10ms\"\nqueue = 100000\n\
    loss_direction = \"forward\"\n[[paths]]\nname = \"l\"\nlinks = [\"l\"]\n";

fn run(recovery: &str, loss: f64, rtt_ms: u64) -> Summary {
    let set = [
        format!("association.recovery=\"{recovery}\""),
        format!("links.l.loss={loss}"),
        format!("links.l.delay=\"{}ms\"", rtt_ms / 2),
    ];
    run_str(SCENARIO, &set).expect("scenario runs")
}

#[test]
fn rack_tlp_follows_mathis_at_its_own_cut_rate_and_never_times_out_more_than_sctp() {
    let mut report = String::new();
    let mut failures = Vec::new();
    for loss in [0.005, 0.02, 0.10] {
        for rtt_ms in [20, 100, 400] {
            let (rack, sctp) = (run("rack-tlp", loss, rtt_ms), run("sctp", loss, rtt_ms));
            let p = &rack.paths[0];
            let q = p.cwnd_reductions as f64 / p.sent_packets as f64;
            let mss_bits = 1452.0 * 8.0;
            let mathis = (1.5 / q).sqrt() * mss_bits / (rtt_ms as f64 / 1000.0) / 1e6;
            let ratio = rack.goodput_mbps / mathis;
            let line = format!(
                "loss {loss} rtt {rtt_ms} ms: RACK-TLP {:.3} Mbit/s, Mathis at q {q:.4} \
                 {mathis:.3} ({ratio:.3}), timeouts {} (SCTP {} Mbit/s {:.3}, timeouts {})\n",
                rack.goodput_mbps,
                rack.timeouts,
                sctp.goodput_mbps,
                sctp.goodput_mbps,
                sctp.timeouts
            );
            report += &line;
            if !(0.85..=1.15).contains(&ratio)
                || rack.timeouts > sctp.timeouts
                || rack.goodput_mbps < 0.97 * sctp.goodput_mbps
                || (sctp.timeouts >= 20 && rack.timeouts >= sctp.timeouts / 2)
            {
                failures.push(line);
            }
        }
    }
    assert!(failures.is_empty(), "{failures:?}\n{report}");
}

#[test]
fn an_unknown_recovery_is_refused_with_its_key() {
    let err = cmt_sim::run_str(SCENARIO, &["association.recovery=\"rack\"".to_string()])
        .expect_err("refused");
    let text = err.to_string();
    assert!(
        text.contains("association.recovery") && text.contains("rack-tlp"),
        "{text}"
    );
}
