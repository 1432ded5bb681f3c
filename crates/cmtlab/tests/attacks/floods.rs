//! A restarted receiver, a flood of spoofed sources, a flood of spoofed INITs.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use bytes::Bytes;
use cmt_core::packet::{DataChunk, DataFlags, InitChunk};
use cmt_core::wire::encode;
use cmt_core::{Chunk, Packet, Payload};
use cmt_interop::harness::check;
use cmt_net::limit::{GLOBAL_BURST, GLOBAL_RATE};

use super::procs::{parts, wait_for};
use super::tap::{self, Attack};
use super::{receiver, sender, Env, PORT};

/// The receiver is killed mid-transfer and a new one starts on the same address: the
/// old sender's next packet is answered with an ABORT (T bit, RFC 9260 §8.4), so it
/// stops at once instead of retrying, and the new receiver removes the killed one's
/// temporary file. Bound: the sender's retransmission timer is at most RTO.Min (1 s)
/// doubled twice after the kill (1 + 2 + 4 s).
pub(crate) fn restarted_receiver(env: &Env) -> Result<String, String> {
    let out = env.dir.join("restart.bin");
    let first = receiver(env, &[env.theirs(0)], &out, false, &[]);
    let tx = sender(env, env.theirs(0), false);
    wait_for("a first stretch stored", Duration::from_secs(20), || {
        parts(&out).iter().any(|(_, n)| *n >= 256 << 10)
    })?;
    let mut first = first;
    first.child.kill().map_err(|e| e.to_string())?;
    let _ = first.finish(Duration::from_secs(5));
    let stale = parts(&out);
    check(stale.len() == 1, || format!("temporary files: {stale:?}"))?;
    let restarted = Instant::now();
    let second = receiver(env, &[env.theirs(0)], &out, false, &[]);
    let tx = tx.finish(Duration::from_secs(30));
    let took = restarted.elapsed();
    let second = second.finish(Duration::from_millis(10));
    check(
        tx.code.is_some_and(|c| c != 0) && tx.output.contains("peer aborted"),
        || format!("the old sender: {:?} {}", tx.code, tx.output),
    )?;
    check(took < Duration::from_secs(7), || {
        format!("the old sender took {took:?}")
    })?;
    check(!stale[0].0.exists(), || {
        format!(
            "the killed receiver's {} is still there; {}",
            stale[0].0.display(),
            second.output
        )
    })?;
    check(!out.exists(), || "--out was created".into())?;
    Ok(format!(
        "the old sender stopped {:.1} s after the restart: {}",
        took.as_secs_f64(),
        tx.output
            .lines()
            .find(|l| l.contains("abort"))
            .unwrap_or("")
    ))
}

/// The receiver's resident memory (kB) and its peak, from /proc.
fn rss_kb(pid: u32) -> Option<(u64, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        s.lines()
            .find(|l| l.starts_with(name))?
            .split_whitespace()
            .nth(1)?
            .parse::<u64>()
            .ok()
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

fn forged_data(tag: u32, ports: (u16, u16), tsn: u32) -> Vec<u8> {
    let p = Packet {
        vtag: tag,
        chunks: vec![Chunk::Data(DataChunk {
            tsn,
            sid: 0,
            ssn: 0,
            ppid: 0,
            flags: DataFlags::WHOLE,
            payload: Payload::Bytes(Bytes::from(vec![0xEE; 200])),
        })],
    };
    let mut out = Vec::new();
    encode(&p, ports.0, ports.1, &mut out);
    out
}

/// 10,000 spoofed sources × 64 DATA packets with the right tag, mid-transfer, on an
/// unshaped second path: what the receiver holds for unconfirmed sources is bounded
/// (1 MiB and 64 sources), so its peak resident memory stays within 16 MB of what it
/// was before the flood, and the transfer completes intact.
pub(crate) fn spoofed_sources(env: &Env) -> Result<String, String> {
    let out = env.dir.join("flood.bin");
    let rx = receiver(env, &[env.theirs(0), env.theirs(1)], &out, false, &[]);
    let pid = rx.pid();
    let tap = env.rt.block_on(tap::start(
        env.paths[0].0.into(),
        env.theirs(0),
        Attack::None,
    ));
    let tx = sender(env, tap.front, false);
    wait_for("the first megabyte", Duration::from_secs(20), || {
        tap.seen.lock().unwrap().data_bytes >= tap::TRIGGER
    })?;
    let (idle, _) = rss_kb(pid).ok_or("no receiver to measure")?;
    let (tag, ports, top) = {
        let s = tap.seen.lock().unwrap();
        (s.rx_tag, s.ports, s.max_tsn.unwrap_or(0))
    };
    let t = Instant::now();
    let mut peak = 0;
    for i in 0..10_000u32 {
        let sock = UdpSocket::bind((env.paths[1].0, 0)).map_err(|e| e.to_string())?;
        for k in 0..64u32 {
            let p = forged_data(tag, ports, top.wrapping_add(100 + k));
            let _ = sock.send_to(&p, env.theirs(1));
        }
        if i % 500 == 0 {
            peak = peak.max(rss_kb(pid).map_or(0, |r| r.1));
        }
    }
    let flood = t.elapsed();
    std::thread::sleep(Duration::from_millis(300));
    peak = peak.max(rss_kb(pid).map_or(0, |r| r.1));
    let (tx, rx) = (
        tx.finish(Duration::from_secs(40)),
        rx.finish(Duration::from_secs(40)),
    );
    drop(tap);
    let intact = std::fs::read(&out).ok() == std::fs::read(&env.data).ok();
    check(tx.code == Some(0) && rx.code == Some(0) && intact, || {
        format!("the transfer did not survive: {}\n{}", tx.output, rx.output)
    })?;
    let grew = peak.saturating_sub(idle);
    check(grew <= 16 * 1024, || {
        format!("peak RSS {peak} kB, {grew} kB above the {idle} kB before the flood")
    })?;
    Ok(format!(
        "640,000 spoofed packets in {:.1} s; receiver RSS {idle} kB before, peak {peak} kB (+{grew} kB); file intact",
        flood.as_secs_f64()
    ))
}

pub(crate) fn init(tag: u32, port: u16) -> Vec<u8> {
    let p = Packet {
        vtag: 0,
        chunks: vec![Chunk::Init(InitChunk {
            initiate_tag: tag,
            a_rwnd: 65536,
            outbound_streams: 1,
            inbound_streams: 1,
            initial_tsn: tag,
            params: Vec::new(),
        })],
    };
    let mut out = Vec::new();
    encode(&p, 5000, port, &mut out);
    out
}

/// 200 spoofed source addresses send 40 INITs each within two seconds to a listener:
/// its INIT ACKs (several times an INIT's size each) total at most the reply budget —
/// the shared burst plus the shared rate over the time the flood lasted — although
/// each source alone stays within its own budget.
pub(crate) fn spoofed_inits(env: &Env) -> Result<String, String> {
    let listen = SocketAddr::from((env.paths[1].1, PORT + 1));
    let rx = receiver(env, &[listen], &env.dir.join("inits.bin"), false, &[]);
    let socks: Vec<UdpSocket> = super::SPOOFED
        .map(|i| UdpSocket::bind((std::net::Ipv4Addr::new(10, 77, 1, i), 0)))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let t = Instant::now();
    let (mut sent, mut got) = (0usize, 0usize);
    let mut buf = vec![0u8; 65536];
    let mut drain = |socks: &[UdpSocket], got: &mut usize| {
        for s in socks {
            s.set_nonblocking(true).expect("nonblocking");
            while let Ok(n) = s.recv(&mut buf) {
                *got += n;
            }
        }
    };
    for round in 0..40u32 {
        for (i, s) in socks.iter().enumerate() {
            let p = init(round * 1000 + i as u32 + 1, PORT + 1);
            sent += s.send_to(&p, listen).unwrap_or(0);
        }
        drain(&socks, &mut got);
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    drain(&socks, &mut got);
    let elapsed = t.elapsed().as_secs_f64();
    let _ = rx.finish(Duration::from_millis(10));
    let budget = GLOBAL_BURST + GLOBAL_RATE * elapsed;
    check(got > 0, || "the listener answered no INIT".into())?;
    check(got as f64 <= budget, || {
        format!("{got} bytes of answers to {sent} bytes of INITs: above the budget of {budget:.0}")
    })?;
    Ok(format!(
        "{sent} bytes of INITs in {elapsed:.1} s got {got} bytes of answers ({:.3}× ; budget {budget:.0})",
        got as f64 / sent as f64
    ))
}
