//! How the CPU cost per data packet grows with the number of paths, in ns-2.35 and in
//! cmtlab, measured in the same run: `cargo bench -p cmtlab --bench ns2_paths` (needs
//! `ns`, Debian's `ns2`; without it the bench says so and stops).
//!
//! Cases: 2, 4, 8 and 16 loss-free paths of 1 Mbit/s with one-way delays of 20, 21, …
//! ms (the delays of `cargo bench -p cmt-sim --bench scaling`), drop-tail queues of
//! 100 packets, a 4 MB receive buffer, simulated for 600 / n seconds so that every case
//! carries about 50,000 data packets — below the 65,536 chunks past which ns-2.35's
//! ordered delivery stops. Each simulator's figure is its whole-process CPU time of the
//! case minus that of the same case simulated for 10 ms (start-up and set-up), divided
//! by the data packets it sent: its marginal cost per packet. The packets are counted
//! by each simulator itself (cmtlab's summary; ns-2's trace of a separate run, its
//! 1,500-byte packets). Timing as in `ns2_ratio`: lowest of `NS2_RATIO_REPEATS`
//! batches of `NS2_RATIO_BATCH` runs.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{cpu_per_run, Bench};

const COUNTS: [usize; 4] = [2, 4, 8, 16];

fn seconds(n: usize) -> f64 {
    600.0 / n as f64
}

fn delays(n: usize) -> impl Iterator<Item = usize> {
    (0..n).map(|i| 20 + i)
}

/// The cmtlab scenario of `n` paths simulated for `secs`.
fn scenario(n: usize, secs: f64) -> String {
    let mut s = format!(
        "seed = 1\nduration = \"{secs}s\"\n[association]\ncompat = \"ns2\"\n\
         [receiver]\nrbuf = 4194304\n"
    );
    for (i, d) in delays(n).enumerate() {
        s += &format!(
            "[[links]]\nname = \"p{i}\"\nrate = \"1Mbps\"\ndelay = \"{d}ms\"\nqueue = 99\n"
        );
    }
    for i in 0..n {
        s += &format!("[[paths]]\nname = \"p{i}\"\nlinks = [\"p{i}\"]\n");
    }
    s
}

/// The ns-2 command line of `n` paths for `secs`, its packet trace to `trace`.
fn ns_args(tcl: &Path, n: usize, secs: f64, trace: &str) -> Vec<String> {
    let mut a = vec![
        tcl.display().to_string(),
        "seed=1000003".into(),
        format!("stop={secs}"),
        "rbuf=4194304".into(),
        "rtx=4".into(),
        format!("trace={trace}"),
        "agent=none".into(),
    ];
    a.extend(delays(n).map(|d| format!("path=1000000:{d}:0:100")));
    a
}

/// Data packets sent in ns-2's run of `args`: its trace's receptions of full-size
/// (1,500-byte) packets on the data direction.
fn ns_packets(ns: &Path, args: &[String], dir: &Path) -> Option<u64> {
    let ok = Command::new(ns)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?
        .success();
    let text = std::fs::read_to_string(dir.join("trace.tr"))
        .ok()
        .filter(|_| ok)?;
    let data = text
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 5 && f[0] == "r" && f[4] == "sctp" && f[5] == "1500"
        })
        .count();
    Some(data as u64)
}

/// Data packets sent in cmtlab's run of `toml` (its summary's per-path counts).
fn cmtlab_packets(cmtlab: &Path, toml: &Path, dir: &Path) -> Option<u64> {
    let json = dir.join("summary.json");
    let ok = Command::new(cmtlab)
        .arg("run")
        .arg(toml)
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::null())
        .status()
        .ok()?
        .success();
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).ok()?).ok()?;
    let paths = s["paths"].as_array().filter(|_| ok)?;
    Some(
        paths
            .iter()
            .filter_map(|p| p["sent_packets"].as_u64())
            .sum(),
    )
}

/// One simulator's marginal CPU µs per data packet: (full − 10 ms run) / packets.
fn per_packet(full: Option<f64>, setup: Option<f64>, packets: Option<u64>) -> Option<f64> {
    let (full, setup, packets) = (full?, setup?, packets?);
    (packets > 0).then(|| (full - setup).max(0.0) / packets as f64 * 1e6)
}

fn main() {
    let cmtlab = PathBuf::from(env!("CARGO_BIN_EXE_cmtlab"));
    let Some(bench) = Bench::setup("ns2_paths", 5, cmtlab) else {
        return;
    };
    let (ns, tcl, cmtlab, work) = (&*bench.ns, &*bench.tcl, &*bench.cmtlab, &*bench.work);
    let (plan, limit) = (bench.plan, bench.limit);
    println!(
        "marginal CPU µs per data packet (lowest of {} batches of {} runs, minus a 10 ms run)\n",
        plan.0, plan.1
    );
    println!("| paths | simulated | ns-2 packets | ns-2.35 µs | cmtlab packets | cmtlab µs | ns-2 / cmtlab |");
    println!("|---|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    for n in COUNTS {
        let secs = seconds(n);
        let toml = work.join("full.toml");
        let short = work.join("short.toml");
        std::fs::write(&toml, scenario(n, secs)).expect("write the scenario");
        std::fs::write(&short, scenario(n, 0.01)).expect("write the scenario");
        let ns_full = cpu_per_run(ns, &ns_args(tcl, n, secs, "none"), work, plan, limit);
        let ns_setup = cpu_per_run(ns, &ns_args(tcl, n, 0.01, "none"), work, plan, limit);
        let ns_pkts = ns_packets(ns, &ns_args(tcl, n, secs, "trace.tr"), work);
        let run = |f: &Path| vec!["run".to_string(), f.display().to_string()];
        let cm_full = cpu_per_run(cmtlab, &run(&toml), work, plan, limit);
        let cm_setup = cpu_per_run(cmtlab, &run(&short), work, plan, limit);
        let cm_pkts = cmtlab_packets(cmtlab, &toml, work);
        let a = per_packet(ns_full, ns_setup, ns_pkts);
        let b = per_packet(cm_full, cm_setup, cm_pkts);
        let show = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.3}"));
        let count = |v: Option<u64>| v.map_or("–".into(), |v| v.to_string());
        let ratio = match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.1}×", a / b),
            _ => "–".into(),
        };
        println!(
            "| {n} | {secs} s | {} | {} | {} | {} | {ratio} |",
            count(ns_pkts),
            show(a),
            count(cm_pkts),
            show(b)
        );
        rows.push((a, b));
    }
    let (ns_col, cm_col): (Vec<_>, Vec<_>) = rows.into_iter().unzip();
    println!(
        "\nper-packet cost from 2 to 16 paths: ns-2.35 {}, cmtlab {}",
        growth(&ns_col),
        growth(&cm_col)
    );
}

/// Last over first of a column, as a factor.
fn growth(col: &[Option<f64>]) -> String {
    match (
        col.first().copied().flatten(),
        col.last().copied().flatten(),
    ) {
        (Some(lo), Some(hi)) if lo > 0.0 => format!("{:.2}×", hi / lo),
        _ => "–".into(),
    }
}
