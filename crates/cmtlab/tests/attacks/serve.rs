//! A serving receiver an operator left running: idle past its outage tolerance, its
//! slots held by senders that stopped answering, a spoofed INIT flood under way — and
//! honest senders behind one address.

use std::net::{SocketAddr, UdpSocket};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cmt_interop::harness::check;

use super::floods::init;
use super::procs::{spawn, Proc};
use super::{Env, PORT, SPOOFED};

/// The server's outage tolerance: it idles longer than this before anyone comes.
const TOLERANCE_S: u64 = 18;
/// Its slots, all taken by stopped senders when the honest ones arrive.
const SLOTS: usize = 4;
/// Honest senders, all from one address.
const HONEST: usize = 8;

/// `cmtlab send` of the test file under `name` from `local` to `to`.
fn named_sender(env: &Env, local: SocketAddr, to: SocketAddr, name: &str) -> Proc {
    let args: Vec<String> = [
        "send",
        "--local",
        &local.to_string(),
        "--remote",
        &to.to_string(),
        "--name",
        name,
        "--timeout",
        "60",
        &env.data.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    spawn(&env.bin, &args)
}

fn signal(p: &Proc, sig: &str) {
    let _ = Command::new("kill")
        .args([sig, &p.pid().to_string()])
        .status();
}

/// Spoofed INITs from the 200 extra addresses to `to`, every 10 ms each, until `stop`.
fn flood(to: SocketAddr, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let socks: Vec<UdpSocket> = SPOOFED
            .filter_map(|i| UdpSocket::bind((std::net::Ipv4Addr::new(10, 77, 1, i), 0)).ok())
            .collect();
        let mut sent = 0u64;
        let mut tag = 1u32;
        while !stop.load(Ordering::Relaxed) {
            for s in &socks {
                tag = tag.wrapping_add(1);
                sent += u64::from(s.send_to(&init(tag, to.port()), to).is_ok());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        sent
    })
}

/// The server (default options but the tolerance and the slots) idles 19 s, past its
/// outage tolerance: every association's timers run from its own start, so nothing
/// is lost. Four senders take its four slots and stop answering (SIGSTOP) 0.3 s in;
/// 13 s later — silent for less than the tolerance, but having moved nothing for a
/// whole rate window — eight honest senders arrive from one address at once, through a
/// flood of spoofed INITs from 200 other addresses. Every stopped sender's slot is shed
/// for them; every honest sender either has its file stored byte for byte (at least
/// the four freed slots' worth) or exits non-zero with the server's reason ("out of
/// resource", to try again later); none is left waiting.
pub(crate) fn a_server_left_idle_and_crowded_serves_honest_senders(
    env: &Env,
) -> Result<String, String> {
    let store = env.dir.join("served");
    std::fs::create_dir_all(&store).map_err(|e| e.to_string())?;
    // The stopped senders come over the shaped pair (40 Mbit/s: none can finish its file
    // before it stops), the honest ones over the other.
    let (shaped, listen) = (
        SocketAddr::from((env.paths[0].1, PORT + 2)),
        SocketAddr::from((env.paths[1].1, PORT + 2)),
    );
    let args: Vec<String> = [
        "recv",
        "--listen",
        &format!("{shaped},{listen}"),
        "--dir",
        &store.display().to_string(),
        "--outage-tolerance",
        &TOLERANCE_S.to_string(),
        "--max-associations",
        &SLOTS.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let bin = env.bin.clone();
    let server = env.peer.run(move || spawn(&bin, &args));
    std::thread::sleep(Duration::from_secs(TOLERANCE_S + 1));

    let ours = |i: usize| SocketAddr::from((env.paths[i].0, 0));
    let stalled: Vec<Proc> = (0..SLOTS)
        .map(|i| named_sender(env, ours(0), shaped, &format!("stalled-{i}.bin")))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    for p in &stalled {
        signal(p, "-STOP");
    }
    // The rate window is 10 s, judged from the server's once-a-second samples: the
    // oldest one in it may be 11 s old. 13 s, then, and still 5 s within the tolerance.
    std::thread::sleep(Duration::from_secs(13));

    let stop = Arc::new(AtomicBool::new(false));
    let flooding = flood(listen, stop.clone());
    let mut honest = Vec::new();
    for i in 0..HONEST {
        let name = format!("honest-{i}.bin");
        honest.push((name.clone(), named_sender(env, ours(1), listen, &name)));
    }
    let ended: Vec<(String, _)> = honest
        .into_iter()
        .map(|(n, p)| (n, p.finish(Duration::from_secs(60))))
        .collect();
    stop.store(true, Ordering::Relaxed);
    let spoofed = flooding.join().unwrap_or(0);
    for p in stalled {
        signal(&p, "-CONT");
        signal(&p, "-KILL");
        let _ = p.finish(Duration::from_secs(5));
    }
    signal(&server, "-TERM");
    let server = server.finish(Duration::from_secs(10));

    let data = std::fs::read(&env.data).map_err(|e| e.to_string())?;
    let (mut stored, mut refused) = (0, 0);
    for (name, e) in &ended {
        let file = std::fs::read(store.join(name)).ok();
        match e.code {
            Some(0) => {
                check(file.as_deref() == Some(&data[..]), || {
                    format!("{name}: exit 0 but the stored file differs or is missing")
                })?;
                stored += 1;
            }
            Some(_) => {
                check(file.is_none(), || format!("{name}: failed, yet stored"))?;
                check(e.output.contains("resource"), || {
                    format!("{name}: failed without the server's reason: {}", e.output)
                })?;
                refused += 1;
            }
            None => return Err(format!("{name}: still waiting after 60 s")),
        }
    }
    let summary = server
        .output
        .lines()
        .find(|l| l.starts_with("served:"))
        .unwrap_or("")
        .to_string();
    let shed: usize = summary
        .split('(')
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    check(server.code == Some(0), || {
        format!("the server ended with {:?}: {}", server.code, server.output)
    })?;
    check(shed == SLOTS, || {
        let said: Vec<&str> = ended.iter().map(|(_, e)| e.output.trim()).collect();
        format!("{shed} of the {SLOTS} stopped senders shed: {summary}; the honest said {said:?}")
    })?;
    check(stored >= SLOTS, || {
        format!("{stored} of {HONEST} stored, {refused} refused: {summary}")
    })?;
    Ok(format!(
        "after {}s idle: {stored} of {HONEST} honest senders (one address) stored whole, \
         {refused} refused with the reason, through {spoofed} spoofed INITs; server: {summary}",
        TOLERANCE_S + 1
    ))
}
