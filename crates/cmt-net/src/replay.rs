//! A simulator scenario run for real: the same paths as relays on loopback (the
//! simulator's own link model, [`crate::relay`]), a receiver and a sender of the real
//! runtime, the scenario's algorithms and receive buffer. What the JAPS paper did with
//! its DelaySocket harness, and what lets one study be measured in both worlds.
//!
//! Supported: a file transfer (`file_size`) or a timed run (`duration`: the sender is
//! cut when the time is up and what the receiver stored by then is measured) over paths
//! of one or more links each — a relay per link, in series, none shared by two paths —
//! with the delays and loss rates a simulated run with the same seed draws from their
//! ranges, and scheduled link events that change both directions of a link (failures,
//! flapping, delay or rate changes: the relay's changes, timed from when the relays
//! start, just before the association); no background traffic (an open-loop source
//! set to no load is none) and no path address events (a scenario with them is refused
//! with a message saying which).
//! Both ends run the scenario's configuration and its algorithms with their parameters
//! ([`Exact`](crate::transfer::Exact)). Differences from the simulated run, stated:
//! the real runtime's paths are confirmed by HEARTBEAT before they carry data, its
//! packets carry a UDP header, its last chunk asks for an immediate SACK (RFC 7053; the
//! close waits for it), its relays draw loss and jitter events from their own random
//! streams (the same rates, other events: runs pair with simulated ones by their
//! parameters, not event by event), and its clock is the machine's.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use cmt_sim::scenario::Workload;
use cmt_sim::Built;
use rand::RngCore;
use tokio::sync::Notify;

use crate::io::Sockets;
use crate::relay::{run_path, RelaySpec};
use crate::resume::HEADER_LEN;
use crate::transfer::meter::Meter;
use crate::transfer::{receive_on, send, Ended, Options, Report, SendOptions, TransferError};

/// What a real run of a scenario measured.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// How the transfer ended.
    pub outcome: Outcome,
    /// The scenario's path names, in path order.
    pub path_names: Vec<String>,
}

/// How a real run's transfer ended: every byte delivered, or the association lost as
/// the protocol decides (the peer stopped answering, the outage tolerance or the
/// scenario's time limit passed) — a result to measure, as the simulator records an
/// unfinished transfer, not a failure of the run.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// The file arrived whole and was confirmed.
    Completed {
        /// The sender's report.
        sender: Box<Report>,
        /// The receiver's report.
        receiver: Box<Report>,
    },
    /// A timed run (`duration`): cut when its time was up.
    Timed {
        /// Bytes the receiver had stored in order by then.
        delivered: u64,
        /// The run's time, s.
        seconds: f64,
    },
    /// The association ended before the file did.
    Lost {
        /// Why, as the sender reports it.
        why: Ended,
        /// Bytes of the file the receiver had stored in order when it ended.
        delivered: u64,
        /// Seconds from the sender's start to the loss.
        seconds: f64,
    },
}

impl Replayed {
    /// The values a real run has, under the simulator's metric names: `goodput_mbps`,
    /// `delivered_bytes`, and for a completed transfer also `ftt_s` (association set up
    /// → every byte acknowledged) and per path `paths.<name>.sent_packets` and
    /// `paths.<name>.retransmissions`. A lost association, as in the simulator, has no
    /// `ftt_s` and its goodput is what was delivered over the time until the loss.
    pub fn metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        let (sender, receiver) = match &self.outcome {
            Outcome::Completed { sender, receiver } => (sender, receiver),
            Outcome::Lost {
                delivered, seconds, ..
            }
            | Outcome::Timed { delivered, seconds } => {
                m.insert("delivered_bytes".to_string(), *delivered as f64);
                let g = if *seconds > 0.0 {
                    *delivered as f64 * 8.0 / seconds / 1e6
                } else {
                    0.0
                };
                m.insert("goodput_mbps".to_string(), g);
                return m;
            }
        };
        m.insert("goodput_mbps".to_string(), sender.goodput_mbps());
        m.insert("ftt_s".to_string(), sender.seconds);
        m.insert("delivered_bytes".to_string(), receiver.bytes as f64);
        for (name, p) in self.path_names.iter().zip(&sender.paths) {
            m.insert(format!("paths.{name}.sent_packets"), p.sent_packets as f64);
            m.insert(
                format!("paths.{name}.retransmissions"),
                p.retransmissions as f64,
            );
        }
        m
    }
}

/// Why a scenario cannot run over real sockets, or `None`.
fn unsupported(b: &Built) -> Option<String> {
    // An open-loop source set to no load sends nothing (a study's "no background").
    let silent = |t: &cmt_sim::scenario::BuiltTraffic| {
        !t.tcp && matches!(t.rate_bps, cmt_sim::units::Spread::Fixed(r) if r == 0.0)
    };
    if b.traffic.iter().any(|t| !silent(t)) {
        return Some("background traffic has no real counterpart here".into());
    }
    for e in &b.events {
        if e.path.is_some() {
            return Some("path address events have no real counterpart here".into());
        }
        // The relay changes a path both ways at once.
        if let Some(&d) = e.links.iter().find(|&&d| !e.links.contains(&(d ^ 1))) {
            return Some(format!(
                "link `{}`: the event at {:.3} s changes one direction; a relay changes both",
                b.links[d / 2].name,
                e.at.as_secs_f64()
            ));
        }
    }
    let mut used = vec![false; b.links.len()];
    for &link in b.paths.iter().flat_map(|p| &p.links) {
        if std::mem::replace(&mut used[link], true) {
            return Some(format!(
                "link `{}` is shared by paths; a relay per path cannot share its queue",
                b.links[link].name
            ));
        }
    }
    None
}

/// The relay of `link` from `listen` to `target`, with the scenario's link model as a
/// run with the scenario's seed draws it (delay and loss ranges) and the link's
/// scheduled changes (its `[[events]]`: failures, flapping, delay jumps).
fn relay_spec(b: &Built, link: usize, listen: SocketAddr, target: SocketAddr) -> RelaySpec {
    let l = &b.links[link];
    let (delay_ns, loss) = cmt_sim::world::draw_link(l, b.seed);
    RelaySpec {
        listen,
        target,
        params: cmt_sim::link::LinkParams {
            rate_bps: l.rate_bps,
            delay: cmt_core::Duration::from_nanos(delay_ns),
            jitter: l.jitter,
            jitter_half: l.jitter_half,
            queue: l.queue,
            reorder: l.reorder,
            trace: l.trace.clone(),
            // A real link the relay emulates: a lost datagram used its link time.
            loss_at: l.loss_at.unwrap_or_default(),
            aqm: l.aqm,
        },
        loss,
        gilbert: l.gilbert,
        loss_direction: l.loss_direction,
        changes: b
            .events
            .iter()
            .filter(|e| e.links.iter().any(|&d| d / 2 == link))
            .map(|e| (e.at, e.change.clone()))
            .collect(),
        idle: crate::relay::DEFAULT_IDLE,
        senders: crate::relay::DEFAULT_SENDERS,
    }
}

/// Running relay tasks.
type Relays = Vec<tokio::task::JoinHandle<std::io::Result<()>>>;

/// The relays of every path, each path's links in series (the last in front of the
/// receiver's address in `targets`), on 127.0.3.(i+1); the running relays and each
/// path's first relay, where the sender sends.
fn start_relays(b: &Built, targets: &[SocketAddr]) -> Result<(Relays, Vec<SocketAddr>), String> {
    let mut relays = Vec::new();
    let mut fronts = Vec::new();
    for (i, p) in b.paths.iter().enumerate() {
        let mut target = targets[i];
        for (hop, &link) in p.links.iter().enumerate().rev() {
            let listen = free_port(&format!("127.0.3.{}", i + 1))?;
            let seed = b.seed.wrapping_mul(1000) + (100 * hop + i) as u64;
            let spec = relay_spec(b, link, listen, target);
            relays.push(tokio::spawn(run_path(spec, seed)));
            target = listen;
        }
        fronts.push(target);
    }
    Ok((relays, fronts))
}

/// A free UDP port on `ip` (bound and released; loopback only, so nobody takes it).
fn free_port(ip: &str) -> Result<SocketAddr, String> {
    let s = std::net::UdpSocket::bind(format!("{ip}:0")).map_err(|e| format!("{ip}: {e}"))?;
    s.local_addr().map_err(|e| e.to_string())
}

/// Both ends' options for a real run of `b`: its configuration and algorithms exactly,
/// with the runtime's MTU overhead and the scenario's time limit.
fn options(b: &Built, limit_s: f64) -> Options {
    Options {
        exact: Some(Box::new(crate::transfer::Exact {
            config: b.config.clone(),
            params: b.params.clone(),
        })),
        // The names the scenario gave, which its parameters belong to.
        scheduler: b.params.names[0].clone(),
        rtx: b.params.names[1].clone(),
        cc: b.params.names[2].clone(),
        rbuf: b.config.rbuf,
        // Both ends ask for receiver-driven rate control when the scenario runs it.
        receiver_rates: b.config.rev.is_some(),
        // The simulator's MTU counts a 20-byte IPv4 header; the runtime's, IPv4 + UDP.
        mtu: b.config.mtu + 8,
        timeout_s: limit_s,
        // The scenario's RTO.Min, not the runtime's default: one experiment, two worlds.
        rto_min_s: b.config.rto_min.as_secs_f64(),
        send: SendOptions {
            capacities: b
                .paths
                .iter()
                .map(|p| narrowest_bps(b, p).map(|r| r as f64 / 8.0))
                .collect(),
            backups: b.paths.iter().map(|p| p.backup).collect(),
            ..SendOptions::default()
        },
        ..Options::default()
    }
}

/// The rate of a path's narrowest link, bit/s.
fn narrowest_bps(b: &Built, p: &cmt_sim::scenario::BuiltPath) -> Option<u64> {
    p.links.iter().map(|&l| b.links[l].rate_bps).min()
}

/// Whether a sender's error is the protocol losing the association (measured like the
/// simulator's unfinished transfer), not a failure of the run.
fn lost(e: &TransferError) -> Option<Ended> {
    match e {
        TransferError::Ended(
            why @ (Ended::PeerStopped | Ended::PeerSilent(_) | Ended::TimedOut(_)),
        ) => Some(why.clone()),
        _ => None,
    }
}

/// Bytes a timed run sends from: a quarter more than its paths' narrowest links carry
/// in its time, and at least 1 MiB, so the sender is never short of data.
fn backlog(b: &Built, d: cmt_core::Duration) -> u64 {
    let bps: u64 = b.paths.iter().filter_map(|p| narrowest_bps(b, p)).sum();
    (bps as f64 / 8.0 * d.as_secs_f64() * 1.25) as u64 + (1 << 20)
}

/// How long a receiver is given to stop once told to, after its sender lost the
/// association (it sends an ABORT and returns at once; this only bounds the wait).
const RECEIVER_STOP: std::time::Duration = std::time::Duration::from_secs(10);

/// Tells the receiver to stop and waits for it (at most [`RECEIVER_STOP`]); its own
/// result is its ABORT's, and what counts is what it stored.
async fn stop_receiver<T>(stop: &Notify, server: &mut tokio::task::JoinHandle<T>) {
    stop.notify_one();
    let _ = tokio::time::timeout(RECEIVER_STOP, server).await;
}

/// Runs `b` over real sockets on loopback: receiver on 127.0.0.(i+1), relays on
/// 127.0.3.(i+1), sender on 127.0.4.(i+1); the received file goes to `dir` and is
/// compared with what was sent. When the protocol loses the association (a scenario
/// whose paths all fail for longer than its failure handling allows), the receiver is
/// stopped and what it had stored in order is the run's result ([`Outcome::Lost`]).
/// Bounded by the scenario's time limit (plus 30 s).
pub async fn replay(b: &Built, dir: &Path) -> Result<Replayed, String> {
    replay_capturing(b, dir, None).await
}

/// [`replay`], with the sender's capture of every datagram it sent and received written
/// to `pcap` when given (SCTP over UDP, for Wireshark or tshark: the heartbeats, timeouts
/// and retransmissions of a real run, to compare with the simulator's `--pcap`).
pub async fn replay_capturing(
    b: &Built,
    dir: &Path,
    pcap: Option<&Path>,
) -> Result<Replayed, String> {
    if let Some(why) = unsupported(b) {
        return Err(format!("scenario `{}` cannot run for real: {why}", b.name));
    }
    // A timed run sends from more than its paths can carry in its time, and is cut then.
    let (bytes, limit_s, timed) = match b.workload {
        Workload::File { bytes, limit } => (bytes, limit.as_secs_f64(), None),
        Workload::Timed(d) => (backlog(b, d), d.as_secs_f64() + 30.0, Some(d)),
    };
    let n = b.paths.len();
    let rx_addrs: Vec<SocketAddr> = (0..n)
        .map(|i| format!("127.0.0.{}:0", i + 1).parse().expect("literal"))
        .collect();
    let rx = Sockets::bind(&rx_addrs).await.map_err(|e| e.to_string())?;
    let (relays, fronts) = start_relays(b, &rx.local_addrs())?;
    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    let mut o = options(b, limit_s);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let out = dir.join("received.bin");
    let mut data = vec![0u8; bytes as usize];
    if timed.is_none() {
        cmt_sim::rng::stream(b.seed, "real-file").fill_bytes(&mut data);
    }
    // The receiver counts what it stores, and stops when told.
    let meter = Arc::new(Meter::default());
    let stop = Arc::new(Notify::new());
    let o2 = Options {
        meter: Some(meter.clone()),
        abort: Some(stop.clone()),
        ..o.clone()
    };
    // The capture is the sender's alone; so is the cut of a timed run.
    o.outputs.pcap = pcap.map(Path::to_path_buf);
    let cut = Arc::new(Notify::new());
    o.abort = Some(cut.clone());
    let out2 = out.clone();
    let mut server = tokio::spawn(async move { receive_on(rx, &out2, &o2).await });
    let locals: Vec<SocketAddr> = (0..n)
        .map(|i| format!("127.0.4.{}:0", i + 1).parse().expect("literal"))
        .collect();
    let bound = std::time::Duration::from_secs_f64(limit_s + 30.0);
    let began = std::time::Instant::now();
    let delivered = || meter.bytes().saturating_sub(HEADER_LEN as u64).min(bytes);
    let outcome = tokio::time::timeout(bound, async {
        let sending = send(&locals, &fronts, Bytes::from(data), &o);
        tokio::pin!(sending);
        let sent = match timed {
            None => sending.await,
            Some(d) => tokio::select! {
                r = &mut sending => r,
                _ = tokio::time::sleep(std::time::Duration::from_nanos(d.as_nanos())) => {
                    let got = delivered();
                    cut.notify_one();
                    let _ = sending.await;
                    stop_receiver(&stop, &mut server).await;
                    return Ok(Outcome::Timed { delivered: got, seconds: d.as_secs_f64() });
                }
            },
        };
        match sent {
            Ok(sent) => {
                let got = (&mut server)
                    .await
                    .map_err(|e| format!("receiver task: {e}"))??;
                Ok::<_, String>(Outcome::Completed {
                    sender: Box::new(sent),
                    receiver: Box::new(got),
                })
            }
            Err(e) => {
                let why = lost(&e).ok_or_else(|| e.to_string())?;
                let seconds = began.elapsed().as_secs_f64();
                stop_receiver(&stop, &mut server).await;
                Ok(Outcome::Lost {
                    why,
                    delivered: delivered(),
                    seconds,
                })
            }
        }
    })
    .await;
    server.abort();
    for r in relays {
        r.abort();
    }
    let outcome = outcome.map_err(|_| format!("no result within {bound:?}"))??;
    let _ = std::fs::remove_file(&out);
    if let Outcome::Completed { sender, receiver } = &outcome {
        if sender.sha256 != receiver.sha256 || receiver.bytes != bytes {
            return Err(format!(
                "the receiver got {} bytes with sha256 {}, {} were sent with {}",
                receiver.bytes, receiver.sha256, bytes, sender.sha256
            ));
        }
    }
    Ok(Replayed {
        outcome,
        path_names: b.paths.iter().map(|p| p.name.clone()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RANGED: &str = r#"
name = "ranged"
seed = 7
file_size = "10KB"
[[links]]
name = "l"
rate = "1Mbps"
delay = "10ms..200ms"
loss = "1%..5%"
[[paths]]
name = "p"
links = ["l"]
"#;

    /// Background a study switches off (an open-loop source at no load) is no
    /// background; any load is refused.
    #[test]
    fn a_source_at_no_load_is_no_background() {
        for (load, refused) in [("0%", false), ("10%", true)] {
            let text = format!(
                "{RANGED}[[traffic]]\nname = \"vbr\"\nkind = \"pareto\"\nlinks = [\"l\"]\n\
                 load = \"{load}\"\n"
            );
            let b = cmt_sim::load_str(&text, "t", None, &[]).unwrap();
            let why = unsupported(&b);
            assert_eq!(why.is_some(), refused, "{load}: {why:?}");
        }
    }

    /// A relay builds the delay and loss a simulated run with the same seed draws from
    /// the ranges — not the range's low end — and another seed draws other values.
    #[test]
    fn a_relay_gets_the_values_the_simulated_run_draws() {
        let any: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let mut seen = Vec::new();
        for seed in [7, 8] {
            let b = cmt_sim::load_str(RANGED, "t", None, &[format!("seed={seed}")]).unwrap();
            let spec = relay_spec(&b, 0, any, any);
            let (delay_ns, loss) = cmt_sim::world::draw_link(&b.links[0], seed);
            assert_eq!(spec.params.delay.as_nanos(), delay_ns);
            assert_eq!(spec.loss, loss);
            assert!(
                delay_ns > 10_000_000 && delay_ns < 200_000_000,
                "{delay_ns}"
            );
            assert!(loss > 0.01 && loss < 0.05, "{loss}");
            seen.push(delay_ns);
        }
        assert_ne!(seen[0], seen[1]);
    }
}
