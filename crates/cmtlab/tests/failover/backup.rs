//! A backup path (`send --backup`, MPTCP's backup flag): path 1 is named backup, path 0
//! is the only regular path. While path 0 works not one DATA chunk may arrive over path
//! 1; when path 0's link goes down path 1 must take the transfer over within the bound
//! of a path that stops answering (two RTOs and the queues: 1.5 s), and once path 0 is
//! back and carries data again, path 1 must fall silent — what still arrives over it is
//! only what was already queued (tbf's 50 ms) and on its way: 0.3 s.

use std::time::Duration;

use super::{Env, ONE_PATH_STALL};
use cmt_interop::harness::check;

/// How long after path 0's return the backup may still deliver (module doc).
const DRAIN: f64 = 0.3;

pub(super) fn a_backup_path_takes_over(env: &Env) -> Result<String, String> {
    let backup = env.paths[1].1.to_string();
    let summary = env.dir.join("backup-summary.json");
    let summary_arg = summary.display().to_string();
    let t = env.start_with("backup", 2, 16, |data| {
        env.sender(
            2,
            0,
            data,
            &["--backup", &backup, "--summary", &summary_arg],
        )
    });
    t.wait_stored(3)?;
    env.link(0, false)?;
    std::thread::sleep(Duration::from_secs(4));
    env.link(0, true)?;
    let trace = t.finish()?;
    let (regular, standby) = (&trace.arrivals[0], &trace.arrivals[1]);
    // Path 0's outage: its longest gap between two arrivals.
    let (down, back) = regular
        .windows(2)
        .map(|w| (w[0], w[1]))
        .max_by(|a, b| (a.1 - a.0).total_cmp(&(b.1 - b.0)))
        .ok_or("path 0 carried nothing")?;
    let first = *standby.first().ok_or("the backup path never took over")?;
    check(first >= down, || {
        format!("the backup carried data at {first:.2} s, before path 0 failed at {down:.2} s")
    })?;
    let stall = trace.stall();
    check(stall <= ONE_PATH_STALL, || {
        format!("in-order stall {stall:.2} s")
    })?;
    // The sender's summary says which path is the backup and what each carried.
    let text = std::fs::read_to_string(&summary).map_err(|e| format!("summary: {e}"))?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let path = |i: usize, k: &str| json["paths"][i][k].clone();
    check(
        path(0, "backup") == false && path(1, "backup") == true,
        || format!("backup flags in the summary: {text}"),
    )?;
    let carried = path(1, "sent_bytes").as_u64().unwrap_or(0);
    check(carried > 0, || format!("the backup's sent_bytes: {text}"))?;
    let last = *standby.last().expect("not empty");
    check(last <= back + DRAIN, || {
        format!("the backup still carried data at {last:.2} s; path 0 was back at {back:.2} s")
    })?;
    Ok(format!(
        "completed; backup silent while path 0 worked, took over in a {stall:.2} s stall, \
         {} DATA packets over it, its last {:+.2} s from path 0's return",
        standby.len(),
        last - back
    ))
}
