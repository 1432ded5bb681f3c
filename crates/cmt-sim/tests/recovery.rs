//! The deployed stacks' loss recovery on one path with random loss, over loss 0.5–10 %
//! and RTT 20–400 ms, against the model and against RFC 9260's missing-report rule on
//! the same seeds: RACK-TLP (`association.recovery = "rack-tlp"`, RFC 8985), with and
//! without Proportional Rate Reduction (`prr`, RFC 9937), and QUIC's (`"quic"`, RFC
//! 9002).
//!
//! Model. Mathis et al. ("The Macroscopic Behavior of the TCP Congestion Avoidance
//! Algorithm", CCR 1997): a window-halving sender that never waits for a timeout sends
//! `sqrt(3 / (2q))` packets per round trip, where `q` is the fraction of its packets
//! that end in a window cut. Both repair a tail loss with a probe that cuts nothing and
//! find a lost retransmission without the retransmission timer (RACK by time; QUIC as
//! any loss, a retransmission being a new transmission on its path), so with a
//! backlogged sender goodput follows that law with `q` measured (cuts over packets
//! sent: several losses of one window, or of one recovery period, cut once). ±15 % per
//! point is the accuracy the repository asks of its window models (`cc_bound.rs`).
//! QUIC's persistent congestion (losses spanning three probe timeouts) needs a
//! blackout: random loss at these rates never collapses the window. With PRR the
//! window does not grow during the round trip of each reduction: the model adds it
//! (`mathis_with_recovery_round`).
//!
//! Against RFC 9260's rule: at high loss a lost retransmission waits for T3-rtx there
//! (RTO.Min 1 s), which collapses the window. RACK-TLP takes no more timeouts at any
//! point and strictly fewer where SCTP takes many; QUIC's probe timeouts collapse
//! nothing. So neither gets less goodput (3 % of slack for the seeds' noise).

use cmt_sim::{run_str, Summary};

const ALL_LOSSES: [f64; 3] = [0.005, 0.02, 0.10];

const SCENARIO: &str = "seed = 1\nduration = \"120s\"\n[receiver]\nrbuf = \"64MB\"\n\
    [[links]]\nname = \"l\"\nrate = \"1000Mbps\"\ndelay = \"10ms\"\nqueue = 100000\n\
    loss_direction = \"forward\"\n[[paths]]\nname = \"l\"\nlinks = [\"l\"]\n";

/// `recovery` is a recovery's name, with more `key=value` settings after spaces.
fn run(recovery: &str, loss: f64, rtt_ms: u64) -> Summary {
    let mut words = recovery.split(' ');
    let mut set = vec![
        format!(
            "association.recovery=\"{}\"",
            words.next().unwrap_or_default()
        ),
        format!("links.l.loss={loss}"),
        format!("links.l.delay=\"{}ms\"", rtt_ms / 2),
    ];
    set.extend(words.map(|w| format!("association.{w}")));
    run_str(SCENARIO, &set).expect("scenario runs")
}

/// Mathis et al.'s packets per round trip at cut rate `q`.
fn mathis(q: f64) -> f64 {
    (1.5 / q).sqrt()
}

/// The same sawtooth with one round trip without growth after each cut, as a sender
/// in Proportional Rate Reduction spends it (no window growth until the reduction
/// ends; RFC 9937, Linux's `tcp_cong_control`): from `W/2` to `W` in `W/2` round trips
/// (`3W²/8` packets), then a round trip that sends `W/2` while the flight comes down.
/// `1/q` packets per cycle of `W/2 + 1` round trips.
fn mathis_with_recovery_round(q: f64) -> f64 {
    let w = (-0.5 + (0.25 + 1.5 / q).sqrt()) / 0.75;
    (1.0 / q) / (w / 2.0 + 1.0)
}

/// Runs `recovery` and RFC 9260's rule over the grid (`losses` × RTT 20–400 ms). A
/// point fails when its goodput is more than 15 % off `model` (packets per round trip
/// at its own cut rate), more than 3 % below SCTP's, or when `worse` holds of its
/// summary and SCTP's.
fn against_model_and_sctp(
    recovery: &str,
    losses: &[f64],
    model: fn(f64) -> f64,
    worse: impl Fn(&Summary, &Summary) -> bool,
) {
    let mut report = String::new();
    let mut failures = Vec::new();
    for &loss in losses {
        for rtt_ms in [20, 100, 400] {
            let (it, sctp) = (run(recovery, loss, rtt_ms), run("sctp", loss, rtt_ms));
            let p = &it.paths[0];
            let q = p.cwnd_reductions as f64 / p.sent_packets as f64;
            let mss_bits = 1452.0 * 8.0;
            let mathis = model(q) * mss_bits / (rtt_ms as f64 / 1000.0) / 1e6;
            let ratio = it.goodput_mbps / mathis;
            let line = format!(
                "loss {loss} rtt {rtt_ms} ms: {recovery} {:.3} Mbit/s, model at q {q:.4} \
                 {mathis:.3} ({ratio:.3}), timeouts {} (SCTP {:.3} Mbit/s, timeouts {})\n",
                it.goodput_mbps, it.timeouts, sctp.goodput_mbps, sctp.timeouts
            );
            report += &line;
            if !(0.85..=1.15).contains(&ratio)
                || it.goodput_mbps < 0.97 * sctp.goodput_mbps
                || worse(&it, &sctp)
            {
                failures.push(line);
            }
        }
    }
    assert!(failures.is_empty(), "{failures:?}\n{report}");
}

#[test]
fn rack_tlp_follows_mathis_at_its_own_cut_rate_and_never_times_out_more_than_sctp() {
    against_model_and_sctp("rack-tlp", &ALL_LOSSES, mathis, |rack, sctp| {
        rack.timeouts > sctp.timeouts || (sctp.timeouts >= 20 && rack.timeouts >= sctp.timeouts / 2)
    });
}

#[test]
fn rack_tlp_with_prr_follows_mathis_with_a_round_trip_of_recovery() {
    // PRR spreads each cut over the round trip after it, and the window does not grow
    // until the reduction ends: Mathis's sawtooth with that round trip added. Where
    // it takes about one round trip, at 0.5 and 2 % loss. (At 10 % lost retransmissions
    // and further losses stretch reductions over more: measured 0.79–0.82 of this
    // model, docs/algorithms.md D55.) The timeouts are RACK-TLP's.
    let losses = [0.005, 0.02];
    against_model_and_sctp(
        "rack-tlp prr=true",
        &losses,
        mathis_with_recovery_round,
        |rack, sctp| {
            rack.timeouts > sctp.timeouts
                || (sctp.timeouts >= 20 && rack.timeouts >= sctp.timeouts / 2)
        },
    );
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

#[test]
fn quic_follows_mathis_at_its_own_cut_rate_and_gets_no_less_than_sctp() {
    // Its probe timeouts cut nothing: only goodput is compared with SCTP's.
    against_model_and_sctp("quic", &ALL_LOSSES, mathis, |_, _| false);
}
