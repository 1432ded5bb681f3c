//! `cmtlab send` / `cmtlab recv`: real transfers over UDP paths.

use std::net::SocketAddr;
use std::path::Path;

use cmt_net::transfer::{self, Options, Report};

/// Algorithm and buffer flags shared by `send` and `recv`.
#[derive(clap::Args, Clone, Debug)]
pub struct AlgArgs {
    /// Scheduler (as in scenario files).
    #[arg(long, default_value = "round-robin")]
    scheduler: String,
    /// Retransmission policy.
    #[arg(long, default_value = "rtx-cwnd")]
    rtx: String,
    /// Congestion control.
    #[arg(long, default_value = "reno")]
    cc: String,
    /// Receive buffer in bytes.
    #[arg(long, default_value_t = 4 << 20)]
    rbuf: u32,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 600.0)]
    timeout: f64,
    /// Path MTU in bytes, IPv4 and UDP headers included (loopback allows 65535).
    #[arg(long, default_value_t = 1500)]
    mtu: u32,
    /// Write every datagram sent and received to this pcap file (SCTP over UDP).
    #[arg(long, value_name = "FILE")]
    pcap: Option<std::path::PathBuf>,
}

fn options(a: &AlgArgs) -> Options {
    Options {
        scheduler: a.scheduler.clone(),
        rtx: a.rtx.clone(),
        cc: a.cc.clone(),
        rbuf: a.rbuf,
        timeout_s: a.timeout,
        mtu: a.mtu,
        pcap: a.pcap.clone(),
    }
}

fn parse(list: &[String], flag: &str) -> Result<Vec<SocketAddr>, String> {
    list.iter()
        .map(|a| {
            a.trim()
                .parse()
                .map_err(|_| format!("--{flag}: `{a}` is not an address like 127.0.0.1:9899"))
        })
        .collect()
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

fn print(r: &Report, role: &str) {
    println!(
        "{role}: {} bytes in {:.3} s = {:.3} Mbit/s, sha256 {}",
        r.bytes,
        r.seconds,
        r.goodput_mbps(),
        r.sha256
    );
    for (i, p) in r.paths.iter().enumerate() {
        println!(
            "  path {i}: {} DATA packets, {} bytes, {} retransmissions",
            p.sent_packets, p.sent_bytes, p.retransmissions
        );
    }
    if r.rejected > 0 {
        println!("  {} packets rejected (malformed or wrong tag)", r.rejected);
    }
}

pub fn send(file: &Path, local: &[String], remote: &[String], a: &AlgArgs) -> Result<(), String> {
    let (local, remote) = (parse(local, "local")?, parse(remote, "remote")?);
    let data = std::fs::read(file).map_err(|e| format!("{}: cannot read: {e}", file.display()))?;
    let r = runtime()?.block_on(transfer::send(&local, &remote, data.into(), &options(a)))?;
    print(&r, "sent");
    Ok(())
}

pub fn recv(listen: &[String], out: &Path, a: &AlgArgs) -> Result<(), String> {
    let listen = parse(listen, "listen")?;
    let r = runtime()?.block_on(transfer::receive(&listen, out, &options(a)))?;
    print(&r, "received");
    Ok(())
}

pub fn relay(paths: &[String], seed: u64) -> Result<(), String> {
    let specs = paths
        .iter()
        .map(|p| cmt_net::relay::parse_spec(p).map_err(|e| format!("--path {p}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    runtime()?.block_on(async move {
        let mut tasks = Vec::new();
        for (i, s) in specs.into_iter().enumerate() {
            println!("relaying {} → {}", s.listen, s.target);
            tasks.push(tokio::spawn(cmt_net::relay::run_path(s, seed + i as u64)));
        }
        for t in tasks {
            match t.await {
                Ok(Err(e)) => return Err(e.to_string()),
                Err(e) => return Err(e.to_string()),
                Ok(Ok(())) => {}
            }
        }
        Ok(())
    })
}
