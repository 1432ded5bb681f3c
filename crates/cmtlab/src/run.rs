//! `cmtlab run`: one simulation, a summary table, optional output files.

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use cmt_sim::{load_file, write_outputs, Simulation, Summary};
use indicatif::{ProgressBar, ProgressStyle};

/// What `cmtlab run` writes besides its table.
#[derive(Clone, Copy, Debug, Default)]
pub struct Outputs<'a> {
    /// `--out DIR`: summary.json, CSV files, figures.
    pub out: Option<&'a Path>,
    /// `--pcap FILE`.
    pub pcap: Option<&'a Path>,
    /// `--json FILE`: the summary alone.
    pub json: Option<&'a Path>,
    /// `--trace FILE`: the per-packet trace.
    pub trace: Option<&'a Path>,
}

pub fn run(file: &Path, set: &[String], o: Outputs<'_>) -> Result<(), String> {
    let Outputs {
        out,
        pcap,
        json,
        trace,
    } = o;
    let built = load_file(file, set).map_err(|e| e.to_string())?;
    let mut sim = Simulation::new(built).map_err(|e| format!("{}: {e}", file.display()))?;
    if let Some(p) = trace {
        sim.trace_to(p)?;
    }
    if let Some(p) = pcap {
        let f = std::fs::File::create(p)
            .map_err(|e| format!("{}: cannot create pcap file: {e}", p.display()))?;
        sim.capture_to(Box::new(std::io::BufWriter::new(f)))
            .map_err(|e| format!("{}: cannot write: {e}", p.display()))?;
    }
    let start = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let mut bar: Option<ProgressBar> = None;
    let ran = sim.try_run(&mut |frac| {
        if !tty {
            return;
        }
        if bar.is_none() && start.elapsed() > Duration::from_secs(2) {
            let b = ProgressBar::new(1000);
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} simulating [{bar:40}] {percent}% (ETA {eta})",
                )
                .expect("static template")
                .progress_chars("=> "),
            );
            bar = Some(b);
        }
        if let Some(b) = &bar {
            b.set_position((frac * 1000.0) as u64);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    ran.map_err(|why| format!("{}: {why}", file.display()))?;
    let summary = Summary::of(&sim, start.elapsed().as_secs_f64());
    say!("{}", table(&summary));
    if let Some(p) = pcap {
        let n = sim
            .finish_capture()
            .map_err(|e| format!("{}: cannot write: {e}", p.display()))?;
        sayln!("{n} packets captured to {}", p.display());
    }
    if let Some(p) = trace {
        let n = sim
            .finish_trace()
            .map_err(|e| format!("--trace {}: cannot write: {e}", p.display()))?;
        sayln!("{n} trace rows written to {}", p.display());
    }
    if let Some(p) = json {
        let text = serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?;
        cmt_lab::sweep::write_atomic(p, (text + "\n").as_bytes())
            .map_err(|e| format!("{}: cannot write summary: {e}", p.display()))?;
    }
    if let Some(dir) = out {
        write_outputs(&sim, &summary, dir)
            .map_err(|e| format!("{}: cannot write results: {e}", dir.display()))?;
        let figures = cmt_lab::plot::plot_run(dir, &summary.scenario).map_err(|e| e.to_string())?;
        sayln!(
            "results written to {}: summary.json, timeseries.csv, paths.csv, {}",
            dir.display(),
            figures.join(", ")
        );
    }
    Ok(())
}

/// `{share} % of it`, or "–" when there is no bound to take a share of.
fn share_of(bound: f64, share: f64) -> String {
    if bound > 0.0 && share.is_finite() {
        format!("{:.0} %", 100.0 * share)
    } else {
        "–".to_string()
    }
}

fn table(s: &Summary) -> String {
    let mut t = String::new();
    let ftt = s.ftt_s.map_or("-".to_string(), |f| format!("{f:.3} s"));
    // Latencies and delays are means over delivered / arrived chunks: with none there
    // is nothing to print, not a zero.
    let delivered = s.delivered_bytes > 0;
    let arrived = s.paths.iter().any(|p| p.sent_packets > p.lost_packets);
    let reordering = if delivered {
        format!(
            "mean {:.1} ms  p99 {:.1} ms  max {:.1} ms",
            s.reordering_latency_ms.mean, s.reordering_latency_ms.p99, s.reordering_latency_ms.max
        )
    } else {
        "–".to_string()
    };
    let delay = if arrived {
        format!(
            "mean {:.1} ms  jitter {:.2} ms",
            s.delay_ms.mean, s.jitter_ms
        )
    } else {
        "–".to_string()
    };
    t += &format!(
        "scenario {}  seed {}  scheduler {}  rtx {}  cc {}  rbuf {} B  ({})\n\n",
        s.scenario, s.seed, s.scheduler, s.rtx, s.cc, s.rbuf, s.ending
    );
    let rows: Vec<(&str, String)> = vec![
        ("goodput", format!("{:.3} Mbit/s", s.goodput_mbps)),
        ("throughput", format!("{:.3} Mbit/s", s.throughput_mbps)),
        (
            "rbuf bound",
            format!(
                "{:.3} Mbit/s  (goodput = {} of it)",
                s.bound_mbps,
                share_of(s.bound_mbps, s.goodput_of_bound)
            ),
        ),
        (
            "cc-aware bound",
            format!(
                "{:.3} Mbit/s  (goodput = {} of it; what Reno could sustain per path under its loss)",
                s.cc_bound_mbps,
                share_of(s.cc_bound_mbps, s.goodput_of_cc_bound)
            ),
        ),
        ("O3-TSN peak", s.o3_tsn_peak.to_string()),
        ("reordering latency", reordering),
        ("rbuf blocked", format!("{:.2} s", s.rbuf_blocked_s)),
        ("one-way delay", delay),
        (
            "fast rtx / T3 timeouts",
            format!("{} / {}", s.fast_retransmits, s.timeouts),
        ),
        ("file transfer time", ftt),
        (
            "simulator",
            format!(
                "{} events in {:.3} s wall ({:.2} M events/s)",
                s.events,
                s.wall_s,
                s.events as f64 / s.wall_s.max(1e-9) / 1e6
            ),
        ),
    ];
    for (k, v) in rows {
        t += &format!("  {k:<24}{v}\n");
    }
    t += &format!(
        "\n  {:<16}{:>10}{:>10}{:>10}{:>10}{:>10}{:>14}\n",
        "path", "sent", "MB sent", "lost", "loss %", "rtx", "goodput Mb/s"
    );
    for p in &s.paths {
        let loss = if p.sent_packets > 0 {
            format!(
                "{:.2}",
                100.0 * p.lost_packets as f64 / p.sent_packets as f64
            )
        } else {
            "–".to_string()
        };
        let name = if p.backup {
            format!("{} (backup)", p.name)
        } else {
            p.name.clone()
        };
        t += &format!(
            "  {:<16}{:>10}{:>10.2}{:>10}{:>10}{:>10}{:>14.3}\n",
            name,
            p.sent_packets,
            p.sent_bytes as f64 / 1e6,
            p.lost_packets,
            loss,
            p.retransmissions,
            p.goodput_mbps
        );
    }
    t + &ecn_cuts(s) + &cost_and_energy(s) + &sharing(s) + &web_objects(s)
}

/// With ECN: each path's and each ECN-capable flow's window cuts for marks (nothing
/// without ECN).
fn ecn_cuts(s: &Summary) -> String {
    let paths = s.paths.iter().filter_map(|p| Some((&p.name, p.ecn_cuts?)));
    let flows = s
        .background
        .iter()
        .filter_map(|f| Some((&f.name, f.ecn_cuts?)));
    let all: Vec<String> = paths
        .chain(flows)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    match all.is_empty() {
        true => String::new(),
        false => format!("  ECN cuts (marks, no loss): {}\n", all.join(", ")),
    }
}

/// Each web or video flow's objects and their completion times, and what a video
/// player fetched (nothing without such flows).
fn web_objects(s: &Summary) -> String {
    let mut t = String::new();
    for f in &s.background {
        if let (Some(n), Some(fct)) = (f.objects, &f.fct_ms) {
            t += &format!(
                "  {:<24}{n} objects, completion mean {:.1} ms  p99 {:.1} ms  max {:.1} ms\n",
                f.name, fct.mean, fct.p99, fct.max
            );
        }
        if let Some(v) = &f.video {
            t += &format!(
                "  {:<24}mean rate {:.2} Mbit/s, {} switches, stalled {:.2} s\n",
                "", v.mean_rate_mbps, v.switches, v.rebuffer_s
            );
        }
    }
    if t.is_empty() {
        t
    } else {
        "\n".to_string() + &t
    }
}

/// How the association and the closed-loop background flows shared the network
/// (nothing without such flows): goodput, share and RFC 6356's goals 1 and 2.
fn sharing(s: &Summary) -> String {
    let Some(f) = &s.fairness else {
        return String::new();
    };
    let mut t = format!(
        "
  {:<16}{:>6}{:>14}{:>8}{:>10}{:>10}
",
        "flow", "paths", "goodput Mb/s", "share", "goal 1", "goal 2"
    );
    let goal = |g: Option<f64>| g.map_or("–".to_string(), |x| format!("{x:.2}"));
    for x in &f.shares {
        t += &format!(
            "  {:<16}{:>6}{:>14.3}{:>7.1}%{:>10}{:>10}\n",
            x.name,
            x.paths,
            x.goodput_mbps,
            100.0 * x.share,
            goal(x.vs_best_tcp),
            goal(x.vs_tcp_on_shared)
        );
    }
    t + &format!(
        "  Jain's index {:.3}\n  \
         goal 1 (RFC 6356): goodput over the best TCP-like flow on its links; ≥ 1 meets it\n  \
         goal 2: what it sends through a shared link over one TCP-like flow; ≤ 1 meets it\n",
        f.jain
    )
}

/// The priced paths' cost and the radios' energy, per path and in total (nothing when
/// the scenario gives neither).
fn cost_and_energy(s: &Summary) -> String {
    if s.cost.is_none() && s.energy_j.is_none() {
        return String::new();
    }
    let mut t = format!(
        "\n  {:<16}{:>10}{:>12}{:>10}{:>15}\n",
        "path", "radio", "energy J", "cost", "redundant MB"
    );
    let opt = |x: Option<f64>, d: usize| x.map_or("–".to_string(), |v| format!("{v:.d$}"));
    for p in &s.paths {
        t += &format!(
            "  {:<16}{:>10}{:>12}{:>10}{:>15.2}\n",
            p.name,
            p.radio.as_deref().unwrap_or("–"),
            opt(p.energy_j, 2),
            opt(p.cost, 3),
            p.copy_bytes as f64 / 1e6
        );
    }
    if let Some(e) = s.energy_j {
        let per_mb = opt(s.energy_j_per_mb, 3);
        t += &format!("  radio energy {e:.2} J ({per_mb} J per MB delivered)\n");
    }
    if let Some(c) = s.cost {
        t += &format!("  cost of metered traffic {c:.3}\n");
    }
    t
}
