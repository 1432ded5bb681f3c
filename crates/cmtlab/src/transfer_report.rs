//! The final report of a real transfer: lines of text for a person, the `--summary` /
//! `--json` object in the simulator's `summary.json` vocabulary for machines.

use cmt_net::transfer::Report;

use crate::output::Output;
use crate::transfer_args::AlgArgs;

/// The `--summary` JSON of a transfer; `backups` marks the paths `--backup` named.
pub(crate) fn summary_json(
    r: &Report,
    role: &str,
    a: &AlgArgs,
    backups: &[bool],
) -> serde_json::Value {
    let algs = a.algorithms();
    serde_json::json!({
        "scenario": format!("real {role}"),
        "scheduler": algs.scheduler,
        "rtx": algs.rtx,
        "cc": algs.cc,
        "recovery": algs.recovery.name(),
        "reinject": algs.reinject.name(),
        "send_buffer": algs.send_buffer.name(),
        "prr": algs.prr,
        "rbuf": a.rbuf,
        "goodput_mbps": r.goodput_mbps(),
        "delivered_bytes": r.bytes,
        "ftt_s": r.seconds,
        "sha256": r.sha256,
        "resumed_from": r.resumed_from,
        "rejected_packets": r.rejected,
        "unauthenticated_packets": r.io.unauthenticated,
        "receiver_rates": r.receiver_rates,
        "ecn": r.ecn,
        "confirmed": r.confirmed,
        "reordering_latency_ms": r.reordering.map(|o| serde_json::json!({
            "mean": o.mean_ms, "p99": o.p99_ms, "max": o.max_ms,
        })),
        "reordered_share": r.reordering.map(|o| o.reordered_share),
        "held_out_of_order_peak_bytes": r.reordering.map(|o| o.held_peak_bytes),
        "io": {
            "datagrams_sent": r.io.datagrams_sent,
            "send_calls": r.io.sends,
            "datagrams_received": r.io.datagrams_received,
            "receive_calls": r.io.receives,
        },
        "paths": r.paths.iter().enumerate().map(|(i, p)| serde_json::json!({
            "name": format!("path{i}"),
            "local": r.routes.get(i).map(|a| a.0.to_string()),
            "remote": r.routes.get(i).map(|a| a.1.to_string()),
            "backup": backups.get(i) == Some(&true),
            "sent_packets": p.sent_packets,
            "sent_bytes": p.sent_bytes,
            "retransmissions": p.retransmissions,
            "received_data_packets": p.received_data_packets,
            "received_bytes": p.received_bytes,
            "srtt_ms": p.srtt_ms,
            "min_rtt_ms": p.min_rtt_ms,
            "ecn_cuts": p.ecn_cuts,
            "ce_received": p.ce_received,
        })).collect::<Vec<_>>(),
    })
}

/// The summary file, opened before the transfer starts.
pub(crate) fn open_summary(a: &AlgArgs) -> Result<Option<Output>, String> {
    a.summary
        .as_deref()
        .map(|p| Output::open(p, "--summary"))
        .transpose()
}

pub(crate) fn write_summary(out: Option<Output>, v: &serde_json::Value) -> Result<(), String> {
    match out {
        Some(out) => {
            out.write(&(serde_json::to_string_pretty(v).map_err(|e| e.to_string())? + "\n"))
        }
        None => Ok(()),
    }
}

/// The final report's lines; `backups` marks the paths `--backup` named. Each end
/// reports its own side: the sender what it sent per path, the receiver what it
/// received.
pub(crate) fn report_lines(r: &Report, role: &str, backups: &[bool]) -> Vec<String> {
    let mut out = vec![format!(
        "{role}: {} bytes in {:.3} s = {:.3} Mbit/s, sha256 {}",
        r.bytes,
        r.seconds,
        r.goodput_mbps(),
        r.sha256
    )];
    for (i, p) in r.paths.iter().enumerate() {
        // A sender's spare socket for an interface that never appeared (`--local auto`).
        let idle = p.sent_packets == 0 && p.received_data_packets == 0 && p.srtt_ms.is_none();
        if role == "sent" && i >= backups.len() && idle {
            continue;
        }
        let route = r
            .routes
            .get(i)
            .map(|(l, r)| format!(" ({l} → {r})"))
            .unwrap_or_default();
        let route = if backups.get(i) == Some(&true) {
            format!("{route} [backup]")
        } else {
            route
        };
        let mut rtt = match (p.srtt_ms, p.min_rtt_ms) {
            (Some(s), Some(m)) => format!("; RTT {s:.1} ms (min {m:.1})"),
            _ => String::new(),
        };
        if r.ecn {
            rtt += &match role {
                "sent" => format!("; {} ECN cuts", p.ecn_cuts),
                _ => format!("; {} marked CE", p.ce_received),
            };
        }
        out.push(if role == "sent" {
            format!(
                "  path {i}{route}: sent {} DATA packets, {} bytes, {} retransmissions{rtt}",
                p.sent_packets, p.sent_bytes, p.retransmissions
            )
        } else {
            format!(
                "  path {i}{route}: received {} DATA packets, {} bytes{rtt}",
                p.received_data_packets, p.received_bytes
            )
        });
    }
    if r.resumed_from > 0 {
        out.push(format!(
            "  resumed at byte {} (the receiver held it already): {} bytes moved now",
            r.resumed_from,
            r.moved()
        ));
    }
    if let Some(o) = &r.reordering {
        out.push(format!(
            "  reordering: {:.1} % of {} chunks waited for an earlier one; wait mean {:.2} ms, \
             p99 {:.2} ms, max {:.2} ms; at most {} bytes held out of order",
            100.0 * o.reordered_share,
            o.chunks,
            o.mean_ms,
            o.p99_ms,
            o.max_ms,
            o.held_peak_bytes
        ));
    }
    if r.receiver_rates {
        out.push("  receiver-driven rate control: on (negotiated)".into());
    }
    if r.confirmed {
        out.push(format!(
            "  {}",
            if role == "sent" {
                "confirmed: the receiver stored every byte (its length and SHA-256 match)"
            } else {
                "stored durably and confirmed to the sender (length and SHA-256)"
            }
        ));
    }
    if r.rejected > 0 {
        out.push(format!(
            "  {} packets rejected (malformed, wrong tag, unauthenticated or from an unconfirmed source)",
            r.rejected
        ));
    }
    out.push(format!(
        "  socket IO: {} datagrams in {} send calls, {} in {} receive calls",
        r.io.datagrams_sent, r.io.sends, r.io.datagrams_received, r.io.receives
    ));
    out
}

/// Prints the final report: as text, or with `--json` as the summary object, on
/// standard output — or on standard error when standard output carries the data
/// (`recv --out -`).
pub(crate) fn print(lines: &[String], json: Option<&serde_json::Value>, to_stderr: bool) {
    crate::progress::clear();
    let text = match json {
        Some(v) => serde_json::to_string(v).unwrap_or_default() + "\n",
        None => lines.iter().map(|l| format!("{l}\n")).collect(),
    };
    if to_stderr {
        eprint!("{}", crate::printable(&text));
    } else {
        say!("{text}");
    }
}

/// Process CPU seconds (user + system) `s`, as a line for the report.
pub(crate) fn cpu_line(s: f64, bytes: u64) -> String {
    format!(
        "  CPU: {s:.3} s user+system ({:.3} s per GB moved)",
        s / (bytes.max(1) as f64 / 1e9)
    )
}

/// How a finished transfer is reported.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finish {
    /// The report on standard output.
    Plain,
    /// On standard error: standard output carries the data (`recv --out -`).
    ToStderr,
    /// A measurement (`send --measure`): its results and scenario follow the report.
    Measured,
}

/// Reports a finished transfer (text or `--json`, with its CPU time) and writes
/// `--summary`.
pub(crate) fn finish(
    r: &Report,
    (role, backups): (&str, &[bool]),
    a: &AlgArgs,
    summary: Option<Output>,
    cpu: cpu_time::ProcessTime,
    how: Finish,
) -> Result<(), String> {
    let mut v = summary_json(r, if role == "sent" { "send" } else { "recv" }, a, backups);
    let mut lines = report_lines(r, role, backups);
    let cpu_s = cpu.elapsed().as_secs_f64();
    lines.push(cpu_line(cpu_s, r.bytes));
    v["cpu_s"] = serde_json::json!(cpu_s);
    if how == Finish::Measured {
        let m = crate::measure::measure(r, &a.algorithms().scheduler, a.rbuf);
        lines.extend(m.lines);
        lines.extend(m.scenario.lines().map(str::to_string));
        v["scenario_toml"] = serde_json::json!(m.scenario);
    }
    print(&lines, a.json.then_some(&v), how == Finish::ToStderr);
    write_summary(summary, &v)
}
