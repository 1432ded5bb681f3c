//! Bytes by kind, the price of a metered path and the device's radio energy, as whole
//! simulations report them (docs/metrics.md "Cost and energy").

use cmt_sim::{load_str, run_str, Summary};

/// WiFi and a metered LTE path to a phone (the receiver), 10 MB.
const PHONE: &str = r#"
seed = 1
file_size = "10MB"
[[links]]
name = "wifi"
rate = "20Mbps"
delay = "10ms"
[[links]]
name = "lte"
rate = "10Mbps"
delay = "30ms"
[[paths]]
name = "wifi"
links = ["wifi"]
radio = "wifi"
[[paths]]
name = "lte"
links = ["lte"]
radio = "lte"
price_per_mb = 0.01
"#;

fn run(text: &str, set: &[&str]) -> Summary {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    run_str(text, &set).expect("scenario runs")
}

#[test]
fn the_metered_path_costs_its_price_per_byte_sent_and_redundancy_shows_in_copy_bytes() {
    for sched in ["minrtt", "redundant"] {
        let s = run(PHONE, &[&format!("association.scheduler=\"{sched}\"")]);
        let lte = &s.paths[1];
        assert_eq!(
            lte.cost,
            Some(0.01 * lte.sent_bytes as f64 / 1e6),
            "{sched}"
        );
        assert_eq!(s.cost, lte.cost, "only the LTE path is priced");
        assert_eq!(s.paths[0].cost, None);
        // Every byte sent is a first transmission, a retransmission or a copy, and each
        // of the file's bytes is first sent exactly once.
        let first: u64 = s
            .paths
            .iter()
            .map(|p| p.sent_bytes - p.retransmitted_bytes - p.copy_bytes)
            .sum();
        assert_eq!(first, s.delivered_bytes, "{sched}");
        let copies: u64 = s.paths.iter().map(|p| p.copy_bytes).sum();
        if sched == "redundant" {
            // Every chunk goes on both paths: the copies are nearly the whole file.
            assert!(copies * 10 > s.delivered_bytes * 9, "{sched}: {copies}");
        } else {
            assert_eq!(copies, 0);
        }
    }
}

#[test]
fn an_lte_transfer_spends_promotion_base_power_bits_and_one_tail() {
    // One loss-free LTE path: the radio is promoted once, transfers without a gap of
    // 100 ms (slow start's round trips are 60 ms), and keeps a whole tail after the
    // last packet. Huang et al. 2012's LTE model gives, with T from the first packet to
    // the last one at the phone (one way after the start to the last arrival):
    // promotion + β·T + α_d·(down Mbit) + α_u·(up Mbit) + tail.
    let text = PHONE
        .replace("links = [\"wifi\"]\nradio = \"wifi\"", "links = [\"wifi\"]")
        .replace("[[paths]]\nname = \"wifi\"\nlinks = [\"wifi\"]\n", "");
    let s = run(&text, &[]);
    assert_eq!(s.paths.len(), 1);
    let p = &s.paths[0];
    let t = s.ftt_s.expect("delivered") - 0.030;
    let down_mbit = (p.sent_bytes + 48 * p.sent_packets) as f64 * 8.0 / 1e6;
    let tail = 1288.04 * 0.1 + 1060.0 * (11.576 - 0.1);
    let fixed = 0.2601 * 1210.7 + 1288.04 * t + 51.97 * down_mbit + tail;
    // The SACKs go up: between none and one 64-byte SACK per data packet.
    let sack_mbit = p.sent_packets as f64 * 64.0 * 8.0 / 1e6;
    let (lo, hi) = (fixed / 1e3, (fixed + 438.39 * sack_mbit) / 1e3);
    let e = p.energy_j.expect("a radio");
    assert!(
        (0.99 * lo..=1.01 * hi).contains(&e),
        "{e:.3} J, expected {lo:.3}–{hi:.3} J"
    );
    assert_eq!(s.energy_j, Some(e));
    let per_mb = s.energy_j_per_mb.unwrap();
    assert!((per_mb - e / (s.delivered_bytes as f64 / 1e6)).abs() < 1e-9);
}

#[test]
fn a_backup_lte_path_without_data_still_spends_a_tail_per_heartbeat() {
    // The LTE path is a backup and WiFi never fails: no data goes over LTE, but its
    // heartbeats (every 30 s + RTO) wake the radio, each for a promotion and an 11.6 s
    // tail (about 12.6 J).
    let text = PHONE
        .replace("file_size = \"10MB\"", "duration = \"120s\"")
        .replace("radio = \"lte\"", "radio = \"lte\"\nbackup = true");
    let s = run(&text, &[]);
    let lte = &s.paths[1];
    assert_eq!(lte.sent_bytes, 0);
    let e = lte.energy_j.unwrap();
    assert!((2.0 * 12.6..6.0 * 12.6).contains(&e), "{e:.2} J");
    // A sender-side device meters its own radios instead: the same paths, other
    // packets; with no radios given, no energy at all.
    let sender = run(&text, &["metrics.device=\"sender\""]);
    assert!(sender.energy_j.unwrap() > 0.0);
    let none = text
        .replace("radio = \"wifi\"\n", "")
        .replace("radio = \"lte\"\n", "");
    let s = run(&none, &[]);
    assert_eq!((s.energy_j, s.paths[1].energy_j), (None, None));
}

#[test]
fn bad_radio_and_price_settings_are_named() {
    let cases: &[(&str, &str)] = &[
        (
            "paths.lte.radio=\"5g\"",
            "`paths[1].radio`: unknown radio `5g`",
        ),
        (
            "paths.lte.price_per_mb=-1",
            "`paths[1].price_per_mb`: -1: a price ≥ 0",
        ),
        (
            "paths.lte.radio_params.tial_s=1",
            "radio_params.tial_s: unknown",
        ),
        (
            "metrics.device=\"phone\"",
            "`metrics.device`: unknown `phone`",
        ),
    ];
    for (set, want) in cases {
        let e = load_str(PHONE, "t.toml", None, &[set.to_string()])
            .err()
            .unwrap_or_else(|| panic!("{set} accepted"))
            .to_string();
        assert!(e.contains(want), "{set}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}
