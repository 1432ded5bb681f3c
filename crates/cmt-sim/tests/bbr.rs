//! BBR v1 (Cardwell et al., ACM Queue 2016) held to its model and to published
//! measurements of it beside CUBIC, on one 10 Mbit/s bottleneck with a 40 ms round
//! trip (BDP 50 KB, 33 full packets):
//!
//! * alone, BBR delivers the bottleneck's rate (at least 90 % of it: ProbeRTT's 200 ms
//!   in every 10 s and the headers cost under 6 %) while keeping in flight between one
//!   and two BDPs — its window is `2·BtlBw·RTprop` plus three packets, so its queue
//!   holds at most one BDP (40 ms) plus those — where CUBIC, loss-based, fills a
//!   1,000-packet buffer (over 300 ms of queue), and BBR loses nothing;
//! * against CUBIC it takes most of a shallow buffer (half a BDP) and yields in a deep
//!   one (eight BDPs), as measured by Hock, Bless and Zitterbart ("Experimental
//!   Evaluation of BBR Congestion Control", ICNP 2017) and by Cardwell et al.;
//! * in a deep buffer its share does not depend on how many CUBIC flows it meets, the
//!   central finding of Ware, Mukerjee, Seshan and Sherry's model ("Modeling BBR's
//!   Interactions with Loss-Based Congestion Control", IMC 2019: BBR is window-limited
//!   by its in-flight cap there) — where a fair share would fall from 1/2 to 1/5. Paired
//!   over eight start times, the 95 % interval of the difference holds 0 and excludes
//!   the fair share's 0.3.

mod common;

use cmt_sim::Summary;

/// The association (`cc`) alone or with `cubics` CUBIC flows through link `a` with a
/// `queue`-packet buffer, for 60 s.
fn scenario(cc: &str, queue: u32, cubics: u32) -> String {
    let competitors = match cubics {
        0 => String::new(),
        n => format!(
            "[[traffic]]\nname = \"cubic\"\nkind = \"tcp\"\ncc = \"cubic\"\ncount = {n}\n\
             links = [\"a\"]\n"
        ),
    };
    format!(
        r#"
seed = 3
duration = "60s"
[association]
scheduler = "round-robin"
cc = "{cc}"
[receiver]
rbuf = "64MB"
[[links]]
name = "a"
rate = "10Mbps"
delay = "20ms"
queue = {queue}
[[paths]]
name = "a"
links = ["a"]
{competitors}"#
    )
}

fn run(text: &str) -> Summary {
    common::run(text, "bbr")
}

/// The association's share of what was delivered.
fn share(s: &Summary) -> f64 {
    let others: f64 = s.background.iter().map(|f| f.delivered_mbps).sum();
    s.goodput_mbps / (s.goodput_mbps + others)
}

/// Mean queueing delay, ms: one-way delay less propagation (20 ms) and a full
/// packet's serialisation (1.2 ms).
fn queueing_ms(s: &Summary) -> f64 {
    s.delay_ms.mean - 20.0 - 1.2
}

#[test]
fn alone_bbr_fills_the_bottleneck_with_at_most_one_bdp_queued() {
    let bbr = run(&scenario("bbr", 1000, 0));
    assert!(bbr.goodput_mbps >= 9.0, "BBR {} Mbit/s", bbr.goodput_mbps);
    let q = queueing_ms(&bbr);
    assert!(q < 40.0 + 3.6, "BBR queueing {q:.1} ms");
    assert_eq!(bbr.paths[0].lost_packets, 0);
    let cubic = run(&scenario("cubic", 1000, 0));
    assert!(queueing_ms(&cubic) > 300.0, "CUBIC {}", queueing_ms(&cubic));
}

#[test]
fn against_cubic_bbr_takes_a_shallow_buffer_and_yields_in_a_deep_one() {
    let shallow = share(&run(&scenario("bbr", 17, 1)));
    let deep = share(&run(&scenario("bbr", 266, 1)));
    assert!(shallow > 0.5, "shallow buffer: BBR's share {shallow:.2}");
    assert!(
        deep < 0.5 && deep < shallow,
        "deep {deep:.2}, shallow {shallow:.2}"
    );
}

/// When the CUBIC flows start, s: the runs of one comparison differ only in it (the
/// network is otherwise deterministic, and where CUBIC's sawtooth meets BBR's 10 s
/// ProbeRTT cycle moves each run's shares by ±0.15).
const STARTS: [f64; 8] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9];

/// Student's t, 97.5 % quantile, 7 degrees of freedom.
const T_7: f64 = 2.365;

#[test]
fn in_a_deep_buffer_bbrs_share_does_not_depend_on_the_number_of_cubic_flows() {
    // Paired by start time: BBR's share against one CUBIC flow less its share against
    // four. Ware et al.'s model predicts 0; a fair share would predict 1/2 − 1/5 = 0.3.
    let diffs: Vec<f64> = STARTS
        .iter()
        .map(|&start| {
            let at = |n: u32| {
                let text = scenario("bbr", 133, n)
                    .replace("count = ", &format!("start = \"{start}s\"\ncount = "));
                share(&run(&text))
            };
            at(1) - at(4)
        })
        .collect();
    let n = diffs.len() as f64;
    let mean = diffs.iter().sum::<f64>() / n;
    let sd = (diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let half = T_7 * sd / n.sqrt();
    assert!(
        mean + half < 0.3,
        "paired difference {mean:.3} ± {half:.3}: the fair-share prediction (0.3) is not excluded"
    );
    assert!(
        (mean - half..=mean + half).contains(&0.0),
        "paired difference {mean:.3} ± {half:.3} excludes Ware et al.'s 0"
    );
}
