//! A hand-made peer that associates with a receiver and then does not send a file:
//! the slowloris of a serving receiver. It completes the handshake with the core's
//! connector over a UDP socket of its own, then behaves as its [`Mode`] says until the
//! receiver aborts it or time runs out.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use cmt_core::setup::{Connector, SetupConfig};
use cmt_core::wire::{chunk_type, decode, encode};
use cmt_core::{Algorithms, AssocInit, Association, Chunk, Config, Packet, PathId, Payload, Time};
use cmt_net::resume::Header;
use tokio::net::UdpSocket;

/// How the peer behaves once associated.
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    /// Answers nothing at all.
    Silent,
    /// Runs an association that answers HEARTBEATs (and sends its own), no data.
    Heartbeats,
    /// Sends a stream header naming a file, then nothing but protocol answers.
    HeaderOnly,
}

/// What became of the peer.
#[derive(Debug)]
pub struct Outcome {
    /// The receiver aborted it, after this long (from the end of the handshake).
    pub aborted_after: Option<Duration>,
    /// The reason the receiver gave with its ABORT, if any.
    pub reason: Option<String>,
}

fn bytes_of(p: &Packet, ports: (u16, u16)) -> Vec<u8> {
    let mut out = Vec::new();
    encode(p, ports.0, ports.1, &mut out);
    out
}

fn reason_of(p: &Packet) -> Option<String> {
    p.chunks.iter().find_map(|c| match c {
        Chunk::Unknown {
            chunk_type: chunk_type::FILE_DIGEST,
            flags: 1,
            value,
        } => Some(String::from_utf8_lossy(value).into_owned()),
        _ => None,
    })
}

fn is_abort(p: &Packet) -> bool {
    p.chunks.iter().any(|c| matches!(c, Chunk::Abort { .. }))
}

/// Associates from `local` with `server` and behaves as `mode` for at most `limit`.
pub async fn run(local: &str, server: SocketAddr, mode: Mode, limit: Duration) -> Outcome {
    let sock = UdpSocket::bind(local).await.unwrap();
    let ports = (sock.local_addr().unwrap().port(), server.port());
    let base = Instant::now();
    let now = || Time::ZERO + cmt_core::Duration::from_nanos(base.elapsed().as_nanos() as u64);
    let cfg = SetupConfig {
        addresses: vec![sock.local_addr().unwrap().ip()],
        rbuf: 65536,
        extensions: vec![chunk_type::FILE_DIGEST],
        ..SetupConfig::default()
    };
    let mut conn = Connector::new(cfg, rand::random());
    let mut buf = vec![0u8; 65536];
    let est = loop {
        if let Some(p) = conn.poll_transmit(now()) {
            sock.send_to(&bytes_of(&p, ports), server).await.unwrap();
        }
        let wait = tokio::time::timeout(Duration::from_millis(200), sock.recv(&mut buf)).await;
        if let Ok(Ok(n)) = wait {
            if let Ok(d) = decode(&buf[..n]) {
                if let Ok(Some(est)) = conn.handle_packet(&d.packet) {
                    break est;
                }
            }
        }
        let _ = conn.handle_timeout(now());
        assert!(base.elapsed() < limit, "no handshake with {server}");
    };
    let mut assoc = association(est.init);
    if let Mode::HeaderOnly = mode {
        let h = Header {
            start: 0,
            total: 1 << 30,
            name: Some(format!("loris-{}", ports.0)),
        };
        assoc.write(Payload::Bytes(h.bytes()));
    }
    let associated = Instant::now();
    while associated.elapsed() < limit {
        if !matches!(mode, Mode::Silent) {
            while let Some(t) = assoc.poll_transmit(now()) {
                let _ = sock.send_to(&bytes_of(&t.packet, ports), server).await;
            }
        }
        let wake = assoc
            .poll_timeout()
            .map(|t| Duration::from_nanos(t.as_nanos().saturating_sub(now().as_nanos())))
            .unwrap_or(Duration::from_millis(200))
            .min(Duration::from_millis(200));
        match tokio::time::timeout(wake, sock.recv(&mut buf)).await {
            Ok(Ok(n)) => {
                let Ok(d) = decode(&buf[..n]) else { continue };
                if is_abort(&d.packet) {
                    return Outcome {
                        aborted_after: Some(associated.elapsed()),
                        reason: reason_of(&d.packet),
                    };
                }
                if !matches!(mode, Mode::Silent) {
                    assoc.handle_packet(now(), PathId(0), d.packet);
                    while assoc.read().is_some() {}
                }
            }
            _ => assoc.handle_timeout(now()),
        }
    }
    Outcome {
        aborted_after: None,
        reason: None,
    }
}

fn association(init: AssocInit) -> Association {
    let p = cmt_core::Params::default();
    let cc = cmt_core::cc::by_name("reno", &p).unwrap();
    let algs = Algorithms {
        scheduler: cmt_core::sched::by_name("round-robin", &p)
            .unwrap()
            .build(1),
        rtx: cmt_core::rtx::by_name("rtx-cwnd", &p).unwrap().build(),
        cc: cc.as_ref(),
    };
    let cfg = Config {
        rbuf: 65536,
        ..Config::default()
    };
    Association::new(cfg, 1, algs, init, ()).unwrap()
}
