//! CPU time of untraced ns-2.35 and of `cmtlab run` on the same cases, measured in the
//! same run: `cargo bench -p cmtlab --bench ns2_ratio` (needs `ns`, Debian's `ns2`;
//! without it the bench says so and stops).
//!
//! Each case is one ns-2 script run (`tools/ns2/case.tcl`: Agent/SCTP/CMT, duplex links
//! with drop-tail queues and Bernoulli loss on the data direction, no trace) and the
//! matching cmtlab scenario (`association.compat = "ns2"`, ns-2's queue limit N as
//! `queue = N − 1`: the model `tools/ns2/diff.py` validates). Both are whole processes,
//! start-up and output included. A figure is the user + system CPU time of the
//! children (`getrusage`) per run, the lowest of `REPEATS` batches of `BATCH` runs:
//! the machine is shared, and the least disturbed batch is the best estimate of the
//! cost. Cases stay below 65,536 delivered chunks, past which ns-2.35's ordered
//! delivery stops for good.
//!
//! Environment: `NS2_RATIO_REPEATS` (default 3), `NS2_RATIO_BATCH` (default 10).

mod common;

use std::path::{Path, PathBuf};

use common::{cpu_per_run, Bench};

/// One case: a label, simulated seconds, receive buffer, and its paths.
struct Case {
    label: &'static str,
    seconds: u32,
    rbuf: u32,
    /// Delayed SACKs (every second packet or 200 ms) or a SACK for every packet.
    delayed_sack: bool,
    /// (rate bit/s, one-way delay ms, loss on the data direction, ns-2 queue limit)
    paths: &'static [(u64, u32, f64, u32)],
}

/// Two loss-free 5 Mbit/s paths of 40 ms, 120 s: the small-window, SACK-heavy cases,
/// where both simulators pay their fixed cost per packet. At 40 ms the window binds
/// (about 34,000 chunks at 32 KB), so the case stays below ns-2.35's 65,536-chunk limit.
const TWO_SLOW: &[(u64, u32, f64, u32)] = &[(5_000_000, 40, 0.0, 50), (5_000_000, 40, 0.0, 50)];

/// Four 2 Mbit/s paths of 10–80 ms with `loss` on each.
const fn four_lossy(loss: f64) -> [(u64, u32, f64, u32); 4] {
    [
        (2_000_000, 10, loss, 50),
        (2_000_000, 20, loss, 50),
        (2_000_000, 40, loss, 50),
        (2_000_000, 80, loss, 50),
    ]
}

const CASES: &[Case] = &[
    Case {
        label: "1 path 5 Mbit/s, 64 KB, loss-free",
        seconds: 100,
        rbuf: 65_536,
        delayed_sack: true,
        paths: &[(5_000_000, 20, 0.0, 50)],
    },
    Case {
        label: "1 path 10 Mbit/s / 50 ms, 1 MB, 1 % loss",
        seconds: 300,
        rbuf: 1_048_576,
        delayed_sack: true,
        paths: &[(10_000_000, 50, 0.01, 100)],
    },
    Case {
        label: "2 paths 5 + 5 Mbit/s, 32 KB",
        seconds: 60,
        rbuf: 32_768,
        delayed_sack: true,
        paths: &[(5_000_000, 10, 0.0, 50), (5_000_000, 10, 0.0, 50)],
    },
    Case {
        label: "2 paths 10 + 1 Mbit/s, 1 MB",
        seconds: 60,
        rbuf: 1_048_576,
        delayed_sack: true,
        paths: &[(10_000_000, 10, 0.0, 50), (1_000_000, 100, 0.0, 50)],
    },
    Case {
        label: "2 paths 10 + 2 Mbit/s, 4 MB",
        seconds: 50,
        rbuf: 4_194_304,
        delayed_sack: true,
        paths: &[(10_000_000, 10, 0.0, 100), (2_000_000, 10, 0.0, 100)],
    },
    Case {
        label: "3 paths 5 + 3 + 1 Mbit/s, 256 KB, 0.5 % loss",
        seconds: 60,
        rbuf: 262_144,
        delayed_sack: true,
        paths: &[
            (5_000_000, 10, 0.005, 50),
            (3_000_000, 30, 0.005, 50),
            (1_000_000, 60, 0.005, 50),
        ],
    },
    Case {
        label: "4 paths 4 × 2 Mbit/s, 128 KB, 1 % loss",
        seconds: 60,
        rbuf: 131_072,
        delayed_sack: true,
        paths: &four_lossy(0.01),
    },
    Case {
        label: "4 paths 4 × 3 Mbit/s, 2 MB, loss-free",
        seconds: 50,
        rbuf: 2_097_152,
        delayed_sack: true,
        paths: &[
            (3_000_000, 10, 0.0, 100),
            (3_000_000, 20, 0.0, 100),
            (3_000_000, 30, 0.0, 100),
            (3_000_000, 40, 0.0, 100),
        ],
    },
    Case {
        label: "2 paths 5 + 5 Mbit/s / 40 ms, 32 KB, 120 s",
        seconds: 120,
        rbuf: 32_768,
        delayed_sack: true,
        paths: TWO_SLOW,
    },
    Case {
        label: "2 paths 5 + 5 Mbit/s / 40 ms, 32 KB, 120 s, SACK every packet",
        seconds: 120,
        rbuf: 32_768,
        delayed_sack: false,
        paths: TWO_SLOW,
    },
    Case {
        label: "2 paths 5 + 5 Mbit/s / 40 ms, 16 KB, 120 s",
        seconds: 120,
        rbuf: 16_384,
        delayed_sack: true,
        paths: TWO_SLOW,
    },
    Case {
        label: "2 paths 5 + 5 Mbit/s / 40 ms, 16 KB, 120 s, SACK every packet",
        seconds: 120,
        rbuf: 16_384,
        delayed_sack: false,
        paths: TWO_SLOW,
    },
    Case {
        label: "4 paths 4 × 2 Mbit/s, 64 KB, 2 % loss, SACK every packet",
        seconds: 60,
        rbuf: 65_536,
        delayed_sack: false,
        paths: &four_lossy(0.02),
    },
];

/// The matching cmtlab scenario.
fn scenario(c: &Case) -> String {
    let mut s = format!(
        "seed = 1\nduration = \"{}s\"\n[association]\ncompat = \"ns2\"\nsack_freq = {}\n\
         [receiver]\nrbuf = {}\n",
        c.seconds,
        if c.delayed_sack { 2 } else { 1 },
        c.rbuf
    );
    for (i, &(rate, delay, loss, queue)) in c.paths.iter().enumerate() {
        s += &format!(
            "[[links]]\nname = \"p{i}\"\nrate = \"{rate}bps\"\ndelay = \"{delay}ms\"\n\
             queue = {}\nloss = {loss}\nloss_direction = \"forward\"\n",
            queue - 1
        );
    }
    for i in 0..c.paths.len() {
        s += &format!("[[paths]]\nname = \"p{i}\"\nlinks = [\"p{i}\"]\n");
    }
    s
}

/// The ns-2 command line of a case (a large seed: small ones lose the first INIT).
fn ns_args(c: &Case, tcl: &Path) -> Vec<String> {
    let mut a = vec![
        tcl.display().to_string(),
        "seed=1000003".into(),
        format!("stop={}", c.seconds),
        format!("rbuf={}", c.rbuf),
        "rtx=4".into(),
        format!("delack={}", u8::from(c.delayed_sack)),
        "trace=none".into(),
        "agent=none".into(),
    ];
    for &(rate, delay, loss, queue) in c.paths {
        a.push(format!("path={rate}:{delay}:{loss}:{queue}"));
    }
    a
}

fn main() {
    let cmtlab = PathBuf::from(env!("CARGO_BIN_EXE_cmtlab"));
    let Some(bench) = Bench::setup("ns2_ratio", 10, cmtlab) else {
        return;
    };
    let (ns, tcl, cmtlab, work) = (&*bench.ns, &*bench.tcl, &*bench.cmtlab, &*bench.work);
    let (plan, limit) = (bench.plan, bench.limit);
    println!(
        "CPU seconds per run (user + system; lowest of {} batches of {} runs)\n",
        plan.0, plan.1
    );
    println!("| case | simulated | ns-2.35 | cmtlab | ns-2 / cmtlab |");
    println!("|---|---|---|---|---|");
    let mut ratios = Vec::new();
    for c in CASES {
        let toml = work.join("case.toml");
        std::fs::write(&toml, scenario(c)).expect("write the scenario");
        let t_ns = cpu_per_run(ns, &ns_args(c, tcl), work, plan, limit);
        let run_args = vec!["run".to_string(), toml.display().to_string()];
        let t_cm = cpu_per_run(cmtlab, &run_args, work, plan, limit);
        let show = |t: Option<f64>| t.map_or("failed or hung".into(), |t| format!("{t:.4}"));
        let ratio = match (t_ns, t_cm) {
            (Some(a), Some(b)) if b > 0.0 => {
                ratios.push(a / b);
                format!("{:.1}×", a / b)
            }
            _ => "–".into(),
        };
        println!(
            "| {} | {} s | {} | {} | {ratio} |",
            c.label,
            c.seconds,
            show(t_ns),
            show(t_cm)
        );
    }
    if let Some(min) = ratios.iter().copied().reduce(f64::min) {
        println!("\nlowest ratio: {min:.1}× (goal: at least 5× on every case)");
    }
}
