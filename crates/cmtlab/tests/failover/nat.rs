//! A NAT rebinding between the namespaces: mid-transfer, path 0's packets from the
//! sender start to leave with another UDP source port (and the replies to that port are
//! mapped back), as a home router does after a reboot or an idle timeout; what is still
//! sent to the old port is dropped, as the old mapping is gone. nftables rewrites the
//! port statelessly in the sender's namespace, so nothing else changes.
//!
//! The receiver must probe the new source (a HEARTBEAT with a nonce) and then follow it:
//! the transfer completes intact, the stream stalls no longer than when a path stops
//! answering (the old port goes quiet), and path 0 carries data again within one probe
//! interval (1 s) plus a round trip and a retransmission timeout (RTO.Min 0.2 s) —
//! 1.5 s — of the rebinding. Skips with a message when `nft` is missing.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use cmt_interop::harness::check;

use super::{Env, ONE_PATH_STALL};

/// The sender's fixed source port, and the one the "NAT" gives path 0 instead.
pub(super) const SPORT: u16 = 9900;
const NATTED: u16 = 40000;
/// How long path 0 may stay silent after the rebinding (module doc).
const REBIND_SILENCE: f64 = 1.5;

/// Runs `nft -f -` with `rules` on stdin.
pub(super) fn nft(rules: &str) -> Result<(), String> {
    let mut child = Command::new("nft")
        .args(["-f", "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("nft: {e}"))?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(rules.as_bytes())
        .map_err(|e| format!("nft: {e}"))?;
    let out = child.wait_with_output().map_err(|e| format!("nft: {e}"))?;
    check(out.status.success(), || {
        format!("nft: {}", String::from_utf8_lossy(&out.stderr).trim())
    })
}

/// Packets the rewrite rules have rewritten so far (both directions).
fn rewritten() -> u64 {
    let out = Command::new("nft")
        .args(["list", "table", "ip", "rebind"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .unwrap_or_default();
    out.split("packets ")
        .skip(1)
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

pub(super) fn a_nat_rebinding(env: &Env) -> Result<String, String> {
    if Command::new("nft").arg("--version").output().is_err() {
        return Ok("SKIPPED: no nft (Debian: nftables)".into());
    }
    let ours = env.paths[0].0;
    let t = env.start_from("rebinding", 3, 24, SPORT);
    t.wait_stored(2)?;
    let rules = format!(
        "table ip rebind {{\n\
         chain out {{ type filter hook output priority raw; \
         ip saddr {ours} udp sport {SPORT} counter udp sport set {NATTED}; }}\n\
         chain pre {{ type filter hook prerouting priority raw; \
         ip daddr {ours} udp dport {SPORT} drop; \
         ip daddr {ours} udp dport {NATTED} counter udp dport set {SPORT}; }}\n}}\n"
    );
    nft(&rules)?;
    std::thread::sleep(Duration::from_secs(3));
    let count = rewritten();
    let trace = t.finish();
    let _ = nft("delete table ip rebind\n");
    let trace = trace?;
    check(count > 100, || {
        format!("the rewrite rules saw only {count} packets: no rebinding happened")
    })?;
    let (stall, silence) = (trace.stall(), trace.silence(0));
    check(stall <= ONE_PATH_STALL, || {
        format!("in-order stall {stall:.2} s")
    })?;
    check(silence <= REBIND_SILENCE, || {
        format!("path 0 silent {silence:.2} s after a new source port")
    })?;
    Ok(format!(
        "completed; {count} packets rewritten in 3 s; in-order stall {stall:.2} s; path 0 silent at most {silence:.2} s"
    ))
}
