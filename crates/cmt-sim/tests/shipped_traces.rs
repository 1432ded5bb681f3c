//! The capacity traces shipped in `traces/mahimahi/` are the files their README
//! describes, and the scenario that uses one delivers what its trace offers.

use std::path::{Path, PathBuf};

use cmt_core::Duration;
use cmt_sim::trace::Trace;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

fn trace(name: &str) -> Trace {
    let path = repo(&format!("traces/mahimahi/{name}"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    Trace::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn each_shipped_trace_has_the_length_and_mean_capacity_its_readme_states() {
    // (file, period in ms, mean capacity in Mbit/s to two decimals), as in the table of
    // traces/mahimahi/README.md; a truncated or re-encoded copy changes one of them.
    let readme = std::fs::read_to_string(repo("traces/mahimahi/README.md")).unwrap();
    for (name, period_ms, mbps) in [
        ("Verizon-LTE-short.down", 140_000, "5.03"),
        ("ATT-LTE-driving-2016.down", 120_002, "4.56"),
        ("TMobile-UMTS-driving.down", 928_424, "2.02"),
    ] {
        let t = trace(name);
        let whole = Duration::from_millis(period_ms);
        assert_eq!(t.mean_rate_bps_over(whole), t.mean_rate_bps(), "{name}");
        let stated = format!("{:.2}", t.mean_rate_bps() / 1e6);
        assert_eq!(stated, mbps, "{name}: mean capacity");
        let row = readme
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}`")))
            .unwrap_or_else(|| panic!("{name} has no row in the README"));
        assert!(row.contains(&format!("{mbps} Mbit/s")), "{row}");
        assert!(
            row.contains(&format!("{:.1} s", period_ms as f64 / 1000.0)),
            "{row}"
        );
        assert!(
            readme.contains(&format!("  {name}\n")),
            "{name}: no SHA-256 line"
        );
    }
    assert!(repo("traces/mahimahi/COPYING").exists(), "licence text");
}

#[test]
fn the_wifi_lte_scenario_delivers_what_its_lte_trace_offers() {
    // The LTE path crosses the Verizon trace behind a 200-packet queue, deeper than the
    // path's bandwidth-delay product even at the trace's peak second (16.8 Mbit/s × 100 ms ≈
    // 140 packets), with a 2 MB receive buffer: after slow start Reno's window never falls
    // below what keeps that queue non-empty (buffer ≥ BDP), so opportunities are wasted
    // only while the window first grows and around timeouts. Hence at most the trace's
    // payload capacity over the run, and at least 90 % of it.
    let path = repo("scenarios/wifi-lte.toml");
    let built = cmt_sim::load_file(&path, &["duration=\"60s\"".into()]).unwrap();
    let s = cmt_sim::run_built(built).unwrap();
    let lte = s.paths.iter().find(|p| p.name == "lte").unwrap();
    let offered = trace("Verizon-LTE-short.down").mean_rate_bps_over(Duration::from_secs(60));
    let payload = offered * 1452.0 / 1500.0 / 1e6;
    assert!(
        lte.goodput_mbps <= payload * 1.0001,
        "LTE {} Mbit/s above the trace's {payload}",
        lte.goodput_mbps
    );
    assert!(
        lte.goodput_mbps >= 0.9 * payload,
        "LTE {} Mbit/s, under 90 % of the trace's {payload}",
        lte.goodput_mbps
    );
}
