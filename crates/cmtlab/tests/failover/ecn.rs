//! Explicit congestion notification on real sockets (RFC 3168; SCTP's ECN of RFC 9260
//! Appendix A): nftables in the sender's namespace marks every 20th ECN-capable
//! datagram leaving on path 0 Congestion Experienced, as an AQM router would (this
//! kernel has no fq_codel). Both ends run `--ecn`, a two-path transfer of 12 MB:
//!
//! * ECN is agreed in the handshake, DATA leaves ECT(0) (the rule matches only ECT(0)
//!   datagrams, and it marks), the receiver reads the marks off its socket and echoes
//!   them, and the sender cuts path 0's window for them — at least one cut, and never
//!   more cuts than marks (at most one per window);
//! * a marked path loses nothing: one mark in 20 packets holds path 0's window near
//!   Mathis's `sqrt(3/(2p))` ≈ 5.5 packets (p = 1/20), far below its shaped queue
//!   (tbf's 50 ms at 20 Mbit/s: about 85 packets), so its queue never overflows and
//!   every DATA chunk sent over path 0 arrives over path 0 (the sender's trace counts
//!   what left, the receiver's what came, duplicates included);
//! * without `--ecn` nothing leaves ECN-capable: the same rule marks nothing, no mark
//!   is counted, and path 0's window runs into its queue (Reno's slow start alone
//!   overshoots 85 packets), so some of what it sends is lost.
//!
//! Why not count retransmissions: now and then the kernel hands a path-0 packet to
//! the receiver after later ones (measured in eight runs: 0 to 3 of about 5,600
//! packets, one of them 20 ms late; veth passes a packet on from the CPU that took
//! it out of `tbf`, which is the likely cause on a machine with several CPUs). Three
//! later packets then report it missing and it is fast-retransmitted although it
//! arrives. That resend answers the network's reordering, not a loss, and this test
//! does not judge it.
//!
//! Skips with a message when `nft` is missing.

use std::path::Path;
use std::process::Command;

use cmt_interop::harness::check;

use super::Env;

/// Marks every 20th ECT(0) datagram leaving on path 0's interface.
const RULES: &str = "table ip ecnmark {\n\
     chain out { type filter hook postrouting priority filter; \
     oifname \"cmt0\" ip ecn ect0 numgen inc mod 20 0 ip ecn set ce counter; }\n}\n";

/// A two-path transfer of 12 MB with `extra` flags on both ends: the two summaries and
/// how many DATA chunks sent over path 0 did not arrive over it (from both traces).
fn transfer(
    env: &Env,
    name: &str,
    extra: &[&str],
) -> Result<([serde_json::Value; 2], usize), String> {
    let dir = &env.dir;
    let sums = [0, 1].map(|i| dir.join(format!("{name}-{i}.json")));
    let tx_trace = dir.join(format!("{name}-tx.csv"));
    let arg = |p: &Path| p.display().to_string();
    let (rx_sum, tx_sum, tx_trace_arg) = (arg(&sums[1]), arg(&sums[0]), arg(&tx_trace));
    let mut rx_args = vec!["--summary", &rx_sum];
    rx_args.extend(extra);
    let mut tx_args = vec!["--summary", &tx_sum, "--trace", &tx_trace_arg];
    tx_args.extend(extra);
    env.start_both(name, (2, 12), &rx_args, |data| {
        env.sender(2, 0, data, &tx_args)
    })
    .finish()?;
    let read = |p: &Path| -> Result<serde_json::Value, String> {
        let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
        serde_json::from_str(&text).map_err(|e| e.to_string())
    };
    let text = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let (sent, arrived) = (
        data_over(&text(&tx_trace)?, "send"),
        data_over(&text(&dir.join(format!("{name}.csv")))?, "arrive"),
    );
    Ok((
        [read(&sums[0])?, read(&sums[1])?],
        sent.saturating_sub(arrived),
    ))
}

/// DATA chunks of `kind` (`send`, counting retransmissions too, or `arrive`, counting
/// duplicates too) over path 0, whose addresses are 10.77.0.x at both ends, from a trace
/// (`time_s,side,path,path_name,direction,kind,cause,tsn,…`).
fn data_over(trace: &str, kind: &str) -> usize {
    trace
        .lines()
        .skip(1)
        .map(|line| line.split(',').collect::<Vec<_>>())
        .filter(|f| f.len() > 5 && f[3].starts_with("10.77.0.") && f[4] == "data")
        .filter(|f| f[5] == kind || (kind == "send" && f[5] == "retransmit"))
        .count()
}

fn count(v: &serde_json::Value, path: usize, key: &str) -> u64 {
    v["paths"][path][key].as_u64().unwrap_or(0)
}

pub(super) fn a_marking_router_slows_a_path_without_a_loss(env: &Env) -> Result<String, String> {
    if Command::new("nft").arg("--version").output().is_err() {
        return Ok("SKIPPED: no nft (Debian: nftables)".into());
    }
    super::nat::nft(RULES)?;
    let runs =
        transfer(env, "ecn", &["--ecn"]).and_then(|with| Ok((with, transfer(env, "no-ecn", &[])?)));
    let _ = super::nat::nft("delete table ip ecnmark\n");
    let (([tx, rx], lost), ([tx0, rx0], lost0)) = runs?;
    check(tx["ecn"] == true && rx["ecn"] == true, || {
        format!(
            "ECN not agreed: sender {}, receiver {}",
            tx["ecn"], rx["ecn"]
        )
    })?;
    let (marks, cuts) = (count(&rx, 0, "ce_received"), count(&tx, 0, "ecn_cuts"));
    check(marks > 0, || {
        format!("no marked datagram read on path 0: {rx}")
    })?;
    check((1..=marks).contains(&cuts), || {
        format!("{cuts} ECN cuts for {marks} marks on path 0")
    })?;
    check(lost == 0, || {
        format!("{lost} DATA chunks sent over path 0 never arrived over it: a marked path should lose nothing")
    })?;
    check(tx0["ecn"] == false, || {
        "ECN agreed without --ecn".to_string()
    })?;
    let (marks0, cuts0) = (count(&rx0, 0, "ce_received"), count(&tx0, 0, "ecn_cuts"));
    check((marks0, cuts0) == (0, 0), || {
        format!("without ECN: {marks0} marks read, {cuts0} cuts")
    })?;
    check(lost0 > 0, || {
        "without ECN path 0 lost nothing: the comparison shows nothing".to_string()
    })?;
    let mbps = |v: &serde_json::Value| v["goodput_mbps"].as_f64().unwrap_or(0.0);
    Ok(format!(
        "with ECN: {marks} marks read on path 0, {cuts} cuts, every chunk sent over it \
         arrived, {:.1} Mbit/s; without: {:.1} Mbit/s, {lost0} chunks lost on path 0",
        mbps(&tx),
        mbps(&tx0),
    ))
}
