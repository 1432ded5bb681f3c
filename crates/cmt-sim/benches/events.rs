//! Simulator speed: events per second on the demo scenario (release build).
//!
//! `cargo bench -p cmt-sim` — prints events/s and wall time per run.

use std::time::Instant;

/// 10 Pareto on/off sources (the CMT-Rev and MPTCP-rec papers' size mix) at 50 % of each access link.
const BACKGROUND: &str = r#"traffic=[
  {name="bg1", kind="pareto", links=["wifi-access", "core-1"], load=0.5, size="mix", count=10},
  {name="bg2", kind="pareto", links=["wimax-access", "core-2"], load=0.5, size="mix", count=10},
  {name="bg3", kind="pareto", links=["wlan-access", "core-3"], load=0.5, size="mix", count=10}]"#;

fn main() {
    bench("demo", &[]);
    bench(
        "demo + 50 % Pareto background",
        &[BACKGROUND.replace('\n', "")],
    );
}

fn bench(label: &str, extra: &[String]) {
    let demo = include_str!("../../../scenarios/demo.toml");
    let mut rates = Vec::new();
    for seed in 1..=5u64 {
        let mut set = vec![format!("seed={seed}")];
        set.extend(extra.iter().cloned());
        let built =
            cmt_sim::load_str(demo, "demo.toml", Some("demo"), &set).expect("demo scenario loads");
        let mut sim = cmt_sim::Simulation::new(built).expect("demo builds");
        let t = Instant::now();
        sim.run(&mut |_| {});
        let wall = t.elapsed().as_secs_f64();
        let s = cmt_sim::Summary::of(&sim, wall);
        let rate = s.events as f64 / wall;
        rates.push(rate);
        println!(
            "{label}, seed {seed}: {} events in {:.3} s = {:.2} M events/s (goodput {:.2} Mbit/s)",
            s.events,
            wall,
            rate / 1e6,
            s.goodput_mbps
        );
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "{label}: median {:.2} M events/s",
        rates[rates.len() / 2] / 1e6
    );
}
