//! The congestion-control-aware bound against the simulator's own Reno on one path with
//! random loss, over the range the bound is meant for: loss 0.5–10 %, RTT 20–400 ms.
//!
//! Where the band comes from. The model (docs/metrics.md) is a renewal model of SCTP's
//! AIMD with SACK-based recovery. Its reference is ns-2.35's SCTP: on six points of this
//! grid (1 % / 20 ms, 2 % / 100 ms, 5 % / 20 ms, 10 % at 20, 100 and 400 ms;
//! `tools/ns2/diff.py`, four seeds) ns-2 and this simulator agreed within 3 % on goodput
//! and within 10 % on timeouts, window cuts and fast retransmits, so the simulator's Reno
//! stands in for the reference here. ±15 % per point is the accuracy the bound is meant
//! to have — enough to say how far a scheduler is from the best possible, not more than
//! a fluid model of a sawtooth can promise. The model's known residuals lie inside it — the largest, −14 % at 10 % loss and 20 ms, from the
//! fluid treatment of the data sent while a lost retransmission waits for its RTO — and
//! two seeds of 300 s at the point with the fewest loss episodes (0.5 %, 400 ms: about
//! 40 per run) add about ±5 % of noise to the mean. The mean over the grid tests the
//! model for bias: within ±5 %.

use cmt_sim::{run_str, Summary};

/// Paths of one 1 Gbit/s link each (so that only loss limits), loss on DATA only, a
/// 64 MB buffer, 300 s.
fn lossy_paths(names: &[&str]) -> String {
    let mut text = "seed = 1\nduration = \"300s\"\n[receiver]\nrbuf = \"64MB\"\n".to_string();
    for n in names {
        text += &format!(
            "[[links]]\nname = \"{n}\"\nrate = \"1000Mbps\"\ndelay = \"10ms\"\nqueue = 100000\n\
             loss_direction = \"forward\"\n[[paths]]\nname = \"{n}\"\nlinks = [\"{n}\"]\n"
        );
    }
    text
}

fn run(set: &[String]) -> Summary {
    run_str(&lossy_paths(&["l"]), set).expect("scenario runs")
}

/// Goodput over the bound at every point of the grid (loss 0.5–10 % × RTT 20–400 ms on
/// every path of `names`, `extra` overrides), the mean of two seeds per point, and a
/// printable table of them.
fn grid(names: &[&str], extra: &[String]) -> (Vec<f64>, String) {
    let text = lossy_paths(names);
    let mut ratios = Vec::new();
    let mut report = String::new();
    for loss in [0.005, 0.01, 0.02, 0.05, 0.10] {
        for rtt_ms in [20.0, 100.0, 400.0] {
            let mut point = Vec::new();
            for seed in 1..=2 {
                let mut set: Vec<String> = extra.to_vec();
                for n in names {
                    set.push(format!("links.{n}.loss={loss}"));
                    set.push(format!("links.{n}.delay=\"{}ms\"", rtt_ms / 2.0));
                }
                set.push(format!("seed={seed}"));
                let s = run_str(&text, &set).expect("scenario runs");
                assert!(s.cc_bound_mbps > 0.0 && s.cc_bound_mbps.is_finite());
                // The capacity (1 Gbit/s) never binds: the bound is the model's rate.
                assert!(s.cc_bound_mbps < 0.5 * s.bound_mbps);
                point.push(s.goodput_mbps / s.cc_bound_mbps);
            }
            let mean = (point[0] + point[1]) / 2.0;
            report += &format!("{extra:?} loss {loss} rtt {rtt_ms} ms: {mean:.3}\n");
            ratios.push(mean);
        }
    }
    (ratios, report)
}

#[test]
fn reno_on_one_lossy_path_lands_within_15_percent_of_the_cc_aware_bound() {
    let (ratios, report) = grid(&["l"], &[]);
    for r in &ratios {
        assert!((0.85..=1.15).contains(r), "goodput / cc bound:\n{report}");
    }
    let bias = ratios.iter().sum::<f64>() / ratios.len() as f64;
    assert!((0.95..=1.05).contains(&bias), "mean {bias:.3}:\n{report}");
}

/// CMT on two equal lossy paths over the same grid as one path: with CUC (the default)
/// to the same band; without it the bound must still hold. With CUC a path's window
/// grows while its loss is repaired on the other path, and each path carries ≈ 9 % more
/// than one Reno sender (ns-2.35's CMT module measures the same: 2.88 Mbit/s on two
/// 10 Mbit/s, 110 ms, 1 % paths against 1.32 on one); the model takes that growth when
/// CUC is on. Without the CUC term the 5 % / 20 ms point lands above 1.15, outside the
/// band.
#[test]
fn cmt_on_two_lossy_paths_lands_within_15_percent_of_the_cc_aware_bound() {
    let (ratios, report) = grid(&["a", "b"], &[]);
    for r in &ratios {
        assert!((0.85..=1.15).contains(r), "goodput / cc bound:\n{report}");
    }
    let bias = ratios.iter().sum::<f64>() / ratios.len() as f64;
    assert!((0.95..=1.05).contains(&bias), "mean {bias:.3}:\n{report}");
    // Without CUC the window freezes during recovery, as on one path, and the two
    // paths' timeouts interact: the bound is looser (0.84–1.00 when this was written),
    // never exceeded beyond the model's accuracy.
    let (ratios, report) = grid(&["a", "b"], &["association.cuc=false".to_string()]);
    assert!(ratios.iter().all(|r| *r <= 1.15), "{report}");
    let bias = ratios.iter().sum::<f64>() / ratios.len() as f64;
    assert!(bias <= 1.0, "mean {bias:.3}:\n{report}");
}

#[test]
fn without_loss_the_cc_aware_bound_is_the_receive_buffer_bound() {
    let s = run(&["links.l.loss=0".into(), "links.l.rate=\"10Mbps\"".into()]);
    assert_eq!(s.cc_bound_mbps, s.bound_mbps);
}

#[test]
fn background_traffic_leaves_the_bound_what_it_did_not_deliver() {
    // A 10 Mbit/s path without loss beside a 4 Mbit/s open-loop flow and a greedy
    // TCP-like flow: the bound is the capacity less what both delivered (after
    // headers), and the association stays below it.
    let text = r#"
seed = 1
duration = "20s"
[receiver]
rbuf = "64MB"
[[links]]
name = "l"
rate = "10Mbps"
delay = "10ms"
queue = 100
[[paths]]
name = "p"
links = ["l"]
[[traffic]]
name = "cbr"
kind = "cbr"
links = ["l"]
rate = "4Mbps"
size = 1000
[[traffic]]
name = "tcp"
kind = "tcp"
links = ["l"]
"#;
    let s = run_str(text, &[]).unwrap();
    let taken: f64 = s.background.iter().map(|b| b.delivered_mbps).sum();
    let left = (10.0 - taken) * 1452.0 / 1500.0;
    assert!(taken > 4.0, "background delivered {taken} Mbit/s");
    assert!(
        (s.cc_bound_mbps - left).abs() < 1e-9,
        "{} vs {left}",
        s.cc_bound_mbps
    );
    assert!(s.goodput_mbps <= s.cc_bound_mbps);
    assert!(s.cc_bound_mbps < 0.7 * s.bound_mbps);
}

/// Loss set by an event at 0 s is the same loss as set on the link: both bounds agree
/// to the last digit; and a link down for half the run halves what both bounds allow
/// (the bound of each stretch, weighted by its length).
#[test]
fn both_bounds_follow_the_links_scheduled_changes() {
    let one = |extra: &str, loss: &str| {
        let text = format!(
            "seed = 1\nduration = \"60s\"\n[receiver]\nrbuf = \"4MB\"\n\
             [[links]]\nname = \"l\"\nrate = \"10Mbps\"\ndelay = \"25ms\"\n{loss}\
             [[paths]]\nname = \"l\"\nlinks = [\"l\"]\n{extra}"
        );
        run_str(&text, &[]).expect("scenario runs")
    };
    let on_link = one("", "loss = 0.005\n");
    let by_event = one("[[events]]\nat = \"0s\"\nlink = \"l\"\nloss = 0.005\n", "");
    assert_eq!(on_link.cc_bound_mbps, by_event.cc_bound_mbps);
    assert_eq!(on_link.bound_mbps, by_event.bound_mbps);
    let lossless = one("", "");
    assert!(on_link.cc_bound_mbps < 0.6 * lossless.cc_bound_mbps);
    // Down from 30 s on (no loss): half the run at the full bound, half at nothing.
    let half = one(
        "[[events]]\nat = \"30s\"\nlink = \"l\"\nstate = \"down\"\n",
        "",
    );
    let rel = |a: f64, b: f64| (a / b - 0.5).abs();
    assert!(
        rel(half.bound_mbps, lossless.bound_mbps) < 1e-9,
        "{}",
        half.bound_mbps
    );
    // The cc-aware bound spreads start-up over the first stretch only: within a few %.
    assert!(rel(half.cc_bound_mbps, lossless.cc_bound_mbps) < 0.03);
}
