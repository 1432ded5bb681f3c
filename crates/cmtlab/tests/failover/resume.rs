//! A 100 MB transfer over the three shaped paths, killed (SIGKILL) 20 times at random
//! points — ten times the sender, ten times the receiver, in a seeded random order —
//! and resumed each time with `--resume` on both ends. The end that survives a kill
//! gives up by itself (`--outage-tolerance 1`). Each round's receiver must offer all it
//! had written but at most one receive window (its checkpoint interval), and the last
//! round must deliver the file whole, confirmed both ways.

use std::path::Path;
use std::time::Duration;

use cmt_interop::harness::check;
use cmt_net::resume::journal;

use super::{parts, source, Env};

/// File size, MB.
const MB: usize = 100;
/// Kills of each end.
const KILLS: usize = 10;
/// The receive buffer, which is also the receiver's checkpoint interval.
const RBUF: u64 = 4 << 20;

/// Bytes the receiver has written to its partial file so far.
fn written(out: &Path) -> u64 {
    parts(out).iter().map(|(_, n)| *n).max().unwrap_or(0).max(
        std::fs::metadata(journal::paths(out).0)
            .map(|m| m.len())
            .unwrap_or(0),
    )
}

pub(super) fn killed_at_random_points_and_resumed(env: &Env) -> Result<String, String> {
    let out = env.dir.join("resume.bin");
    let data = env.dir.join("resume.src");
    source(&data, MB);
    let common = [
        "--resume",
        "--outage-tolerance",
        "1",
        "--rbuf",
        &RBUF.to_string(),
    ];
    // A small seeded generator: the kill order and the times.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut draw = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut order: Vec<bool> = (0..2 * KILLS).map(|i| i < KILLS).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, draw(i as u64 + 1) as usize);
    }
    let mut lost_most = 0u64;
    for (round, kill_sender) in order.iter().enumerate() {
        let rx = env.receiver(3, &out, &common);
        let tx = env.sender(3, 0, &data, &common);
        std::thread::sleep(Duration::from_millis(300 + draw(900)));
        let (mut victim, survivor) = if *kill_sender { (tx, rx) } else { (rx, tx) };
        let before = written(&out);
        victim.child.kill().map_err(|e| e.to_string())?;
        let _ = victim.finish(Duration::from_secs(5));
        let s = survivor.finish(Duration::from_secs(15));
        check(s.code.is_some_and(|c| c != 0), || {
            format!(
                "round {round}: the survivor ended {:?}: {}",
                s.code, s.output
            )
        })?;
        check(!out.exists(), || {
            format!("round {round}: --out committed early")
        })?;
        let offered = journal::read(&journal::paths(&out).1).map_or(0, |r| r.offset);
        lost_most = lost_most.max(before.saturating_sub(offered));
        check(offered + RBUF + (64 << 10) >= before, || {
            format!("round {round}: {before} bytes written, only {offered} kept")
        })?;
    }
    let rx = env.receiver(3, &out, &common);
    let tx = env.sender(3, 0, &data, &common);
    let (tx, rx) = (
        tx.finish(Duration::from_secs(100)),
        rx.finish(Duration::from_secs(100)),
    );
    check(tx.code == Some(0) && rx.code == Some(0), || {
        format!("the last round failed\n{}\n{}", tx.output, rx.output)
    })?;
    check(
        std::fs::read(&out).ok() == std::fs::read(&data).ok(),
        || "the file differs".into(),
    )?;
    check(tx.output.contains("confirmed"), || tx.output.clone())?;
    let _ = std::fs::remove_file(&data);
    Ok(format!(
        "{} kills, file whole; at most {:.1} MB of what the receiver had written lost to a kill",
        2 * KILLS,
        lost_most as f64 / 1e6
    ))
}
