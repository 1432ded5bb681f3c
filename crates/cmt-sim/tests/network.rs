//! The network model end to end: link events in the middle of a transfer.

use cmt_sim::{load_str, run_built, Simulation, Summary};

const TWO: &str = r#"
seed = 4
file_size = "60MB"
[association]
pf = true
[receiver]
rbuf = "256KB"
[[links]]
name = "a"
rate = "10Mbps"
delay = "20ms"
queue = 100
[[links]]
name = "b"
rate = "10Mbps"
delay = "20ms"
queue = 100
[[paths]]
name = "a"
links = ["a"]
[[paths]]
name = "b"
links = ["b"]
[[events]]
at = "5s"
link = "b"
state = "down"
[[events]]
at = "15s"
link = "b"
state = "up"
"#;

#[test]
fn a_path_down_for_ten_seconds_is_detected_the_transfer_completes_and_the_path_is_used_again() {
    let built = load_str(TWO, "two", None, &[]).unwrap();
    let bin = built.bin.as_secs_f64();
    let mut sim = Simulation::new(built).unwrap();
    sim.run(&mut |_| {});
    let s = Summary::of(&sim, 0.0);
    assert_eq!(s.ending, "FileDelivered");
    assert_eq!(s.delivered_bytes, 60 * 1024 * 1024);
    let b = &s.paths[1];
    assert!(b.failures >= 1, "path b never detected failed: {b:?}");
    assert!(b.recoveries >= 1, "path b never came back: {b:?}");
    assert_eq!(s.paths[0].failures, 0);
    let rec = sim.recorder();
    let carried = |from: f64, to: f64, p: usize| -> u64 {
        rec.bins
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                let t = (*i + 1) as f64 * bin;
                t > from && t <= to
            })
            .map(|(_, x)| x.delivered_per_path[p])
            .sum()
    };
    // During the outage path b delivers nothing and path a carries the transfer.
    assert_eq!(carried(6.0, 15.0, 1), 0);
    assert!(
        carried(6.0, 15.0, 0) > 8 * 1_000_000,
        "path a carried {} B",
        carried(6.0, 15.0, 0)
    );
    // After it is back (and a heartbeat found it), path b carries data again.
    assert!(
        carried(15.0, 1e9, 1) > 1_000_000,
        "path b after recovery: {} B",
        carried(15.0, 1e9, 1)
    );
    // Two paths carry 19.4 Mbit/s of goodput, one path 9.7: 60 MB take 26 s without an
    // outage, about 31 s with 10 s on one path; recovery costs a few seconds more.
    let ftt = s.ftt_s.unwrap();
    assert!(ftt > 30.0 && ftt < 40.0, "FTT {ftt}");
}

/// `flap` expands into downs and ups: the path delivers nothing in each down phase and
/// carries data again in the up phases; the link is up after `until`.
#[test]
fn a_flapping_link_is_down_and_up_by_its_schedule() {
    let text = TWO.replace(
        "[[events]]\nat = \"5s\"\nlink = \"b\"\nstate = \"down\"\n[[events]]\nat = \"15s\"\nlink = \"b\"\nstate = \"up\"\n",
        "[[events]]\nat = \"4s\"\nlink = \"b\"\nflap = { down = \"2s\", up = \"4s\", until = \"22s\" }\n",
    );
    assert!(text.contains("flap"), "the template changed");
    let built = load_str(&text, "flap", None, &[]).unwrap();
    let downs: Vec<f64> = built
        .events
        .iter()
        .filter(|e| e.change.down == Some(true))
        .map(|e| e.at.as_secs_f64())
        .collect();
    assert_eq!(downs, vec![4.0, 10.0, 16.0]);
    let bin = built.bin.as_secs_f64();
    let mut sim = Simulation::new(built).unwrap();
    sim.run(&mut |_| {});
    let s = Summary::of(&sim, 0.0);
    assert_eq!(s.ending, "FileDelivered");
    let rec = sim.recorder();
    let carried = |from: f64, to: f64| -> u64 {
        rec.bins
            .iter()
            .enumerate()
            .filter(|(i, _)| (*i as f64 * bin) >= from && ((*i + 1) as f64 * bin) <= to)
            .map(|(_, x)| x.delivered_per_path[1])
            .sum()
    };
    for d in [4.0, 10.0, 16.0] {
        // Nothing arrives on b while it is down (from the first bin wholly inside).
        assert_eq!(carried(d + 0.5, d + 2.0), 0, "down at {d}");
    }
    assert!(
        carried(22.0, 1e9) > 1_000_000,
        "b carries data after the flapping"
    );
    let e = load_str(
        &text.replace("until = \"22s\"", "until = \"3s\""),
        "t.toml",
        None,
        &[],
    )
    .err()
    .expect("until before at")
    .to_string();
    assert!(
        e.contains("events[0].flap") && e.contains("until after `at`"),
        "{e}"
    );
}

#[test]
fn bad_event_definitions_are_clear_errors() {
    let cases = [
        (
            "link = \"b\"\nstate = \"down\"",
            "link = \"c\"\nstate = \"down\"",
            "unknown link `c`",
        ),
        (
            "state = \"down\"",
            "state = \"sideways\"",
            "unknown state `sideways`",
        ),
        (
            "state = \"down\"",
            "direction = \"left\"",
            "unknown direction `left`",
        ),
        ("at = \"5s\"", "at = \"-5s\"", "must not be negative"),
    ];
    for (from, to, want) in cases {
        let text = TWO.replacen(from, to, 1);
        let e = load_str(&text, "t.toml", None, &[])
            .err()
            .expect("rejected")
            .to_string();
        assert!(
            e.starts_with("t.toml: field `events[0]") && e.contains(want),
            "{e}"
        );
    }
    let nothing = TWO.replacen("state = \"down\"\n", "", 1);
    let e = load_str(&nothing, "t.toml", None, &[])
        .err()
        .expect("rejected")
        .to_string();
    assert!(e.contains("changes nothing"), "{e}");
}

/// A 100 kbit/s association path (cheap) beside a 10 Mbit/s link carrying `traffic`.
fn with_traffic(traffic: &str) -> String {
    format!(
        r#"
seed = 1
duration = "60s"
[[links]]
name = "assoc"
rate = "100kbps"
delay = "10ms"
[[links]]
name = "bg"
rate = "10Mbps"
delay = "10ms"
queue = 10000
[[paths]]
name = "p"
links = ["assoc"]
{traffic}
"#
    )
}

fn offered_ratios(text: &str, seeds: u64) -> Vec<f64> {
    (1..=seeds)
        .map(|seed| {
            let s = cmt_sim::run_str(text, &[format!("seed={seed}")]).unwrap();
            let offered: f64 = s.background.iter().map(|f| f.offered_mbps).sum();
            let target: f64 = s.background.iter().map(|f| f.target_mbps).sum();
            offered / target
        })
        .collect()
}

#[test]
fn cbr_offers_its_target_load_within_two_percent_in_60_s() {
    let text = with_traffic(
        "[[traffic]]\nname = \"c\"\nkind = \"cbr\"\nlinks = [\"bg\"]\nload = 0.3\nsize = 1000\n",
    );
    for r in offered_ratios(&text, 3) {
        assert!((r - 1.0).abs() < 0.02, "CBR offered {r} of its target");
    }
    let s = cmt_sim::run_str(&text, &[]).unwrap();
    assert!(
        (s.background[0].target_mbps - 3.0).abs() < 1e-9,
        "30 % of 10 Mbit/s"
    );
    assert_eq!(
        s.background[0].lost_packets, 0,
        "an uncongested link loses nothing"
    );
    assert!((s.background[0].delivered_mbps - s.background[0].offered_mbps).abs() < 0.01);
}

#[test]
fn pareto_on_off_offers_its_target_load_on_average() {
    // ns-2 Pareto on/off with shape 1.5 has infinite variance: one 60 s window of one
    // source is off by ±20 % (SD measured over 40 seeds: 0.19), ten sources by ±6 %.
    // The generator's expectation is what must be right: the mean over 20 windows of
    // ten sources is within 2 % of the target (measured 0.986 over 40 windows).
    let text = with_traffic(
        "[[traffic]]\nname = \"p\"\nkind = \"pareto\"\nlinks = [\"bg\"]\nload = 0.3\nsize = \"mix\"\ncount = 10\n",
    );
    let r = offered_ratios(&text, 20);
    let mean = r.iter().sum::<f64>() / r.len() as f64;
    assert!(
        (mean - 1.0).abs() < 0.02,
        "mean offered/target {mean} ({r:?})"
    );
    assert!(
        r.iter().any(|&x| (x - 1.0).abs() > 0.01),
        "no burstiness at all?"
    );
}

#[test]
fn a_load_range_is_drawn_once_per_run_from_the_seed() {
    let text = with_traffic(
        "[[traffic]]\nname = \"c\"\nkind = \"cbr\"\nlinks = [\"bg\"]\nload = \"0%..50%\"\n",
    );
    let targets: Vec<f64> = (1..=8)
        .map(|seed| {
            cmt_sim::run_str(&text, &[format!("seed={seed}"), "duration=\"1s\"".into()])
                .unwrap()
                .background[0]
                .target_mbps
        })
        .collect();
    assert!(
        targets.iter().all(|&t| (0.0..=5.0).contains(&t)),
        "{targets:?}"
    );
    assert!(
        targets.windows(2).any(|w| w[0] != w[1]),
        "not drawn per seed: {targets:?}"
    );
    let again = cmt_sim::run_str(&text, &["seed=3".into(), "duration=\"1s\"".into()]).unwrap();
    assert_eq!(again.background[0].target_mbps, targets[2]);
}

#[test]
fn bad_traffic_definitions_are_clear_errors() {
    let base = "[[traffic]]\nname = \"c\"\nkind = \"cbr\"\nlinks = [\"bg\"]\nload = 0.3\n";
    let cases = [
        (
            base.replace("\"cbr\"", "\"burst\""),
            "traffic[0].kind",
            "unknown traffic kind `burst`",
        ),
        (
            base.replace("[\"bg\"]", "[\"nope\"]"),
            "traffic[0].links[0]",
            "unknown link `nope`",
        ),
        (
            base.replace("load = 0.3", "load = 1.5"),
            "traffic[0].load",
            "between 0 and 1",
        ),
        (
            base.replace("load = 0.3", "rate = \"1Mbps\"\nload = 0.3"),
            "traffic[0].rate",
            "exactly one of",
        ),
        (
            base.replace("\"cbr\"", "\"pareto\"") + "shape = 1.0\n",
            "traffic[0].shape",
            "must be above 1",
        ),
        (
            base.to_string() + "size = 0\n",
            "traffic[0].size",
            "must be 1..65535",
        ),
        (
            base.to_string() + "colour = 1\n",
            "traffic[0].colour",
            "unknown field",
        ),
    ];
    for (traffic, field, want) in cases {
        let e = cmt_sim::load_str(&with_traffic(&traffic), "t.toml", None, &[])
            .err()
            .expect("rejected")
            .to_string();
        assert!(
            e.starts_with(&format!("t.toml: field `{field}`")) && e.contains(want),
            "{e}"
        );
    }
}

#[test]
fn a_trace_driven_link_delivers_exactly_the_traces_opportunities() {
    // 8 opportunities per 10 ms period (9.6 Mbit/s), saturated by 20 Mbit/s of
    // 1500-byte packets: in 1 s (100 periods) exactly 800 packets get through.
    let dir = std::env::temp_dir().join(format!("cmtlab-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.down"), "1\n1\n2\n5\n5\n5\n9\n10\n").unwrap();
    let text = r#"
seed = 1
duration = "1000500us"
[[links]]
name = "cell"
trace = "t.down"
rate = "1Mbps"
queue = 100000
[[links]]
name = "assoc"
rate = "10kbps"
[[paths]]
name = "p"
links = ["assoc"]
[[traffic]]
name = "flood"
kind = "cbr"
links = ["cell"]
rate = "20Mbps"
size = 1500
"#;
    let s = run_built(cmt_sim::load_str_in(text, "t", None, &[], Some(&dir)).unwrap()).unwrap();
    let delivered = s.background[0].delivered_mbps * 1e6 * 1.0005 / 8.0;
    assert!(
        (delivered / 1500.0 - 800.0).abs() < 0.01,
        "{} packets",
        delivered / 1500.0
    );
    // The trace also sets the link's capacity for the bound: 9.6 Mbit/s forward.
    let missing = cmt_sim::load_str_in(
        &text.replace("t.down", "none.down"),
        "t",
        None,
        &[],
        Some(&dir),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        missing.contains("links[0].trace") && missing.contains("cannot read"),
        "{missing}"
    );
}

#[test]
fn the_bound_over_a_trace_link_counts_the_capacity_of_the_runs_own_window() {
    // A 10 s trace that offers 40 opportunities per 10 ms in its first second (48
    // Mbit/s) and one per 10 ms after it (1.2 Mbit/s), 4901 in all with the one that
    // closes the period: 5.8812 Mbit/s on average. A 1 s run sees only the first second,
    // a 10 s or 20 s run whole periods; the bound must follow (a 60 s LTE run once
    // printed "40 % of the bound" against the trace's mean when its own minute offered
    // 7.9, not 12.4 Mbit/s).
    let dir = std::env::temp_dir().join(format!("cmtlab-bound-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut trace = String::new();
    for ms in (5..10_000).step_by(10) {
        let n = if ms < 1000 { 40 } else { 1 };
        for _ in 0..n {
            trace += &format!("{ms}\n");
        }
    }
    trace += "10000\n";
    std::fs::write(dir.join("burst.down"), trace).unwrap();
    let text = r#"
seed = 1
duration = "1s"
[receiver]
rbuf = "64MB"
[[links]]
name = "cell"
trace = "burst.down"
rate = "100Mbps"
[[paths]]
name = "p"
links = ["cell"]
"#;
    let bound = |duration: &str| {
        let set = [format!("duration=\"{duration}\"")];
        run_built(cmt_sim::load_str_in(text, "t", None, &set, Some(&dir)).unwrap())
            .unwrap()
            .bound_mbps
    };
    // Payload share of a 1500-byte packet: 1452/1500. The buffer is never the limit.
    let payload = 1452.0 / 1500.0;
    for (duration, mbps) in [("1s", 48.0), ("10s", 5.8812), ("20s", 5.8812)] {
        let b = bound(duration);
        assert!(
            (b - mbps * payload).abs() < 1e-6 * mbps,
            "{duration}: bound {b:.4} Mbit/s, want {:.4}",
            mbps * payload
        );
    }
}

#[test]
fn reno_background_flows_and_a_single_path_association_share_a_bottleneck_fairly() {
    // Four TCP-like flows (our own single-path associations, Reno) and the association
    // under study on one 10 Mbit/s bottleneck with equal RTTs. Measured Jain index
    // 0.99+; the issue asks for ≥ 0.9. Together they fill the link.
    let text = r#"
seed = 1
duration = "120s"
[receiver]
rbuf = "4MB"
[[links]]
name = "neck"
rate = "10Mbps"
delay = "20ms"
queue = 100
[[paths]]
name = "p"
links = ["neck"]
[[traffic]]
name = "reno"
kind = "tcp"
links = ["neck"]
count = 4
"#;
    for seed in 1..=3 {
        let s = cmt_sim::run_str(text, &[format!("seed={seed}")]).unwrap();
        let x: Vec<f64> = std::iter::once(s.goodput_mbps)
            .chain(s.background.iter().map(|f| f.delivered_mbps))
            .collect();
        assert_eq!(x.len(), 5);
        let sum: f64 = x.iter().sum();
        let jain = sum * sum / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>());
        assert!(jain >= 0.9, "seed {seed}: Jain {jain:.3} over {x:?}");
        assert!(
            sum > 0.95 * 10.0 * 1452.0 / 1500.0,
            "seed {seed}: total {sum:.3} Mbit/s"
        );
        assert!(s
            .background
            .iter()
            .all(|f| f.target_mbps == 0.0 && f.offered_mbps >= f.delivered_mbps));
    }
}

#[test]
fn a_tcp_flows_window_caps_it_at_window_per_round_trip() {
    // One TCP flow alone on a 10 Mbit/s, 40 ms link with ns-2's default Agent/TCP:
    // window_ 20 packets of 1000 B (1048 B on the wire with our headers), a sink that
    // acknowledges every packet. Window-limited, it delivers 20 · 1000 B per round trip:
    // 80 ms plus the serialisation of a packet and of its ack, ≈ 1.98 Mbit/s, whatever
    // the link's capacity.
    let text = r#"
seed = 1
duration = "60s"
[receiver]
rbuf = "4KB"
[[links]]
name = "neck"
rate = "10Mbps"
delay = "40ms"
queue = 100
[[paths]]
name = "p"
links = ["neck"]
[[traffic]]
name = "ns2"
kind = "tcp"
links = ["neck"]
window = 20
size = 1048
ack_every = 1
start = "1s"
"#;
    let s = cmt_sim::run_str(text, &[]).unwrap();
    let f = &s.background[0];
    assert!(f.tcp);
    let rtt = 0.080 + 1048.0 * 8.0 / 10e6 + 64.0 * 8.0 / 10e6;
    let want = 20.0 * 1000.0 * 8.0 / rtt / 1e6;
    assert!(
        (f.delivered_mbps / want - 1.0).abs() < 0.03,
        "delivered {:.3} vs window/RTT {want:.3}",
        f.delivered_mbps
    );
    for (good, bad, key) in [
        ("window = 20", "window = \"500B\"", "traffic[0].window"),
        ("ack_every = 1", "ack_every = 0", "traffic[0].ack_every"),
    ] {
        let e = cmt_sim::load_str(&text.replace(good, bad), "t.toml", None, &[])
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains(key), "{e}");
    }
}

#[test]
fn tcp_flows_reject_rate_load_and_stop() {
    let base = "[[traffic]]\nname = \"t\"\nkind = \"tcp\"\nlinks = [\"bg\"]\n";
    for extra in ["load = 0.3\n", "rate = \"1Mbps\"\n", "stop = \"5s\"\n"] {
        let e = cmt_sim::load_str(
            &with_traffic(&format!("{base}{extra}")),
            "t.toml",
            None,
            &[],
        )
        .err()
        .expect("rejected")
        .to_string();
        assert!(
            e.contains("traffic[0].kind") && e.contains("runs from its start to the end"),
            "{e}"
        );
    }
}

const SHARED_BOTTLENECK: &str = r#"
seed = 1
duration = "120s"
[receiver]
rbuf = "4MB"
[[links]]
name = "a"
rate = "100Mbps"
delay = "5ms"
[[links]]
name = "b"
rate = "100Mbps"
delay = "5ms"
[[links]]
name = "neck"
rate = "10Mbps"
delay = "20ms"
queue = 100
[[paths]]
name = "pa"
links = ["a", "neck"]
[[paths]]
name = "pb"
links = ["b", "neck"]
[[traffic]]
name = "reno"
kind = "tcp"
links = ["a", "neck"]
"#;

/// Our association's goodput over the competing Reno flow's.
fn share_of_one_reno(cc: &str, seed: u64, extra: &[&str]) -> f64 {
    let mut set = vec![format!("association.cc=\"{cc}\""), format!("seed={seed}")];
    set.extend(extra.iter().map(|s| s.to_string()));
    let s = cmt_sim::run_str(SHARED_BOTTLENECK, &set).unwrap();
    s.goodput_mbps / s.background[0].delivered_mbps
}

/// The threshold between "takes one Reno flow's share" and "takes two". The AIMD fluid
/// model (window W under per-packet loss rate p: W² = a/(b·p) for an increase of a
/// packets per RTT and a cut of b·W per loss) gives an uncoupled pair of Reno paths
/// (a = 2, b = 1/4 of the total per loss) twice one Reno flow (a = 1, b = 1/2), and
/// LIA's pair (a = 1/2 in total, b = 1/4) exactly one flow; OLIA and BALIA keep LIA's
/// goal of taking no more than one flow on a shared bottleneck (RFC 6356 §2). Measured
/// ratios are classified by the nearer of the two predictions: the midpoint, 1.5 flows,
/// and for the paired ratio coupled ÷ uncoupled (model 0.5 against 1.0) 0.75.
const ONE_OR_TWO_FLOWS: f64 = 1.5;
const COUPLED_OVER_UNCOUPLED: f64 = 0.75;

/// Asserts the uncoupled association takes two flows' share and each coupled
/// controller about one, on seeds 1 and 2 (the seeds are paired across controllers).
fn coupling_halves_the_share(extra: &[&str]) {
    for seed in [1, 2] {
        let uncoupled = share_of_one_reno("reno", seed, extra);
        assert!(
            uncoupled > ONE_OR_TWO_FLOWS,
            "seed {seed}: uncoupled only {uncoupled:.2}× one Reno flow"
        );
        for cc in ["lia", "olia", "balia"] {
            let r = share_of_one_reno(cc, seed, extra);
            assert!(
                r / uncoupled < COUPLED_OVER_UNCOUPLED,
                "seed {seed}: {cc} took {r:.2}× one Reno flow, uncoupled {uncoupled:.2}×"
            );
        }
    }
}

#[test]
fn coupled_controllers_take_about_one_reno_share_of_a_shared_bottleneck_uncoupled_takes_two() {
    // Both paths of the association cross the same 10 Mbit/s drop-tail bottleneck as
    // one Reno flow. Measured (seeds 1–6): uncoupled Reno 2.14–2.29× the Reno flow's
    // rate, LIA 1.18–1.42×, BALIA 1.35–1.43×, OLIA 1.05–1.12×; coupled over uncoupled
    // 0.46–0.66. A single-path association takes 0.91–1.04× (random-loss variant), so
    // the 10 % the uncoupled pair takes above two flows comes from multipath (a loss on
    // one path is resent on the other), not from the association being greedier than
    // the flow. LIA and BALIA stay 20–40 % above the one-flow prediction: an open
    // observation (docs/ns2.md), which the classification does not hide.
    coupling_halves_the_share(&[]);
}

#[test]
fn with_random_loss_at_the_bottleneck_every_coupled_controller_stays_near_one_reno_share() {
    // 0.5 % random loss and a queue that never overflows: losses are independent of
    // the window, the regime the fluid model describes. Measured (seeds 1–6):
    // uncoupled 2.17–2.29×, LIA 1.26–1.56×, OLIA 1.17–1.25×, BALIA 1.14–1.38×; coupled
    // over uncoupled 0.50–0.72.
    coupling_halves_the_share(&["links.neck.loss=0.005", "links.neck.queue=1000"]);
}

#[test]
fn loss_can_act_on_the_data_direction_only_or_on_the_acks_only() {
    // 5 % Bernoulli loss on one 10 Mbit/s link whose queue never overflows (64 KB
    // window, 1000-packet queue). "forward": DATA is lost at 5 % (binomial: over n ≥
    // 5000 packets the fraction stays within ±1 point at 99.99 %); "reverse": only
    // SACKs are lost, no DATA at all.
    const ONE: &str = r#"
seed = 2
duration = "60s"
[[links]]
name = "a"
rate = "10Mbps"
delay = "20ms"
queue = 1000
loss = 0.05
[[paths]]
name = "a"
links = ["a"]
"#;
    let run = |dir: &str| {
        let set = [format!("links.a.loss_direction=\"{dir}\"")];
        run_built(load_str(ONE, "t", None, &set).unwrap()).unwrap()
    };
    let fwd = run("forward");
    let p = &fwd.paths[0];
    assert!(p.sent_packets >= 5000, "{p:?}");
    let frac = p.lost_packets as f64 / p.sent_packets as f64;
    assert!(
        (frac - 0.05).abs() < 0.01,
        "forward: {frac:.4} of DATA lost"
    );
    let rev = run("reverse");
    assert_eq!(rev.paths[0].lost_packets, 0, "reverse: DATA lost");
    assert!(rev.paths[0].sent_packets > 0);
    let err = load_str(ONE, "t", None, &["links.a.loss_direction=\"up\"".into()])
        .err()
        .expect("rejected")
        .to_string();
    assert!(
        err.contains("links[0].loss_direction") && err.contains("forward, reverse"),
        "{err}"
    );
}

/// Where a link's loss acts: lost at its entry (ns-2.35's `lossmodel`), a packet takes
/// no link time, so a saturating flow through a 20 %-lossy 8 Mbit/s link keeps it
/// busy with the packets that get through, 8 Mbit/s of them; lost at its exit (the
/// default), the lost ones used their serialisation too, and what gets through is
/// 80 % of the rate. Under the ns-2 profile entry is the default.
#[test]
fn loss_at_the_entry_saves_the_link_time_loss_at_the_exit_spends() {
    let delivered = |association: &str, loss_at: &str| {
        let text = format!(
            "seed = 2\nduration = \"20s\"\n{association}\n\
             [[links]]\nname = \"a\"\nrate = \"1Mbps\"\n\
             [[links]]\nname = \"l\"\nrate = \"8Mbps\"\ndelay = \"5ms\"\nloss = 0.2\n\
             queue = 1000\n{loss_at}\n\
             [[paths]]\nname = \"p\"\nlinks = [\"a\"]\n\
             [[traffic]]\nname = \"cbr\"\nkind = \"cbr\"\nlinks = [\"l\"]\n\
             rate = \"10Mbps\"\nsize = 1500\n"
        );
        let s = cmt_sim::run_str(&text, &[]).expect("scenario runs");
        s.background[0].delivered_mbps / 8.0
    };
    let exit = delivered("", "");
    assert!((exit - 0.8).abs() < 0.02, "exit {exit}");
    assert_eq!(delivered("", "loss_at = \"exit\""), exit);
    let entry = delivered("", "loss_at = \"entry\"");
    assert!((entry - 1.0).abs() < 0.02, "entry {entry}");
    let ns2 = "[association]\ncompat = \"ns2\"";
    assert_eq!(delivered(ns2, ""), entry);
    assert_eq!(delivered(ns2, "loss_at = \"exit\""), exit);
}
