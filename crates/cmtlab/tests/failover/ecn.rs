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
//!   not one DATA chunk first sent on it is retransmitted (the sender's trace says
//!   which; path 1, unmarked, loses at its full queue, and its losses may be resent
//!   over path 0);
//! * without `--ecn` nothing leaves ECN-capable: the same rule marks nothing, no mark
//!   is counted, and path 0's window runs into its queue (Reno's slow start alone
//!   overshoots 85 packets), so some of its chunks are resent.
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
/// how many chunks first sent on path 0 were retransmitted (from the sender's trace).
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
    let trace = std::fs::read_to_string(&tx_trace).map_err(|e| e.to_string())?;
    Ok((
        [read(&sums[0])?, read(&sums[1])?],
        resent_from_path0(&trace),
    ))
}

/// Chunks first sent on path 0 that were retransmitted (on any path), from a sender's
/// trace (`time_s,side,path,path_name,direction,kind,cause,tsn,…`).
fn resent_from_path0(trace: &str) -> usize {
    let mut first_path = std::collections::BTreeMap::new();
    let mut resent = std::collections::BTreeSet::new();
    for line in trace.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        match (f.get(2), f.get(5), f.get(7)) {
            (Some(&path), Some(&"send"), Some(&tsn)) => {
                first_path.entry(tsn.to_string()).or_insert(path == "0");
            }
            (_, Some(&"retransmit"), Some(&tsn)) => {
                resent.insert(tsn.to_string());
            }
            _ => {}
        }
    }
    resent
        .iter()
        .filter(|t| first_path.get(*t) == Some(&true))
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
        format!("{lost} chunks first sent on path 0 were resent: a marked path should lose nothing")
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
        "with ECN: {marks} marks read on path 0, {cuts} cuts, none of its chunks resent, \
         {:.1} Mbit/s; without: {:.1} Mbit/s, {lost0} of path 0's chunks resent",
        mbps(&tx),
        mbps(&tx0),
    ))
}
