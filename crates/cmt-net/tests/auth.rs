//! RFC 4895 authentication with a pre-shared key, end to end over loopback: every DATA
//! and SACK is signed, an on-path party that changes bytes gets none of them into the
//! file (while without the key it would), different keys deliver nothing, and an end
//! that requires authentication refuses a peer that lacks it.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use cmt_core::auth::{AuthConfig, AUTH_CHUNK};
use cmt_core::wire::{checksum, decode};
use cmt_core::Chunk;
use cmt_net::io::Sockets;
use cmt_net::transfer::{receive_on, send, Options, Outputs, Report, TransferError};
use tokio::net::UdpSocket;

fn a(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn keyed(key: &[u8]) -> Options {
    Options {
        auth: Some(AuthConfig::with_key(key.to_vec())),
        ..Options::default()
    }
}

fn data(n: u32) -> Vec<u8> {
    (0..n)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect()
}

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("cmtlab-auth-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

type Server = tokio::task::JoinHandle<Result<Report, TransferError>>;

async fn receiver(listen: &[&str], out: &std::path::Path, o: Options) -> (Vec<SocketAddr>, Server) {
    let addrs: Vec<SocketAddr> = listen.iter().map(|s| a(s)).collect();
    let rx = Sockets::bind(&addrs).await.unwrap();
    let remotes = rx.local_addrs();
    let out = out.to_path_buf();
    (
        remotes,
        tokio::spawn(async move { receive_on(rx, &out, &o).await }),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_one_key_a_file_crosses_two_paths_and_every_data_and_sack_is_signed() {
    let d = dir("same");
    let (out, cap) = (d.join("out.bin"), d.join("sender.pcap"));
    let (remotes, server) = receiver(
        &["127.0.0.1:0", "127.0.0.2:0"],
        &out,
        keyed(b"correct horse"),
    )
    .await;
    let payload = data(3_000_000);
    let o = Options {
        outputs: Outputs {
            pcap: Some(cap.clone()),
            ..Outputs::default()
        },
        ..keyed(b"correct horse")
    };
    let sent = send(
        &[a("127.0.3.1:0"), a("127.0.3.2:0")],
        &remotes,
        Bytes::from(payload.clone()),
        &o,
    )
    .await
    .unwrap();
    let got = server.await.unwrap().unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), payload);
    assert!(sent.confirmed && sent.sha256 == got.sha256);
    // Both directions, from the capture: the AUTH chunk comes before any DATA or SACK.
    let records = cmt_sim::pcap::read(&std::fs::read(&cap).unwrap()).unwrap();
    let (mut signed, mut largest) = (0, 0);
    for r in &records {
        largest = largest.max(r.sctp.len() + 28);
        let chunks = decode(&r.sctp).unwrap().packet.chunks;
        let auth = chunks.iter().position(|c| {
            matches!(
                c,
                Chunk::Unknown {
                    chunk_type: AUTH_CHUNK,
                    ..
                }
            )
        });
        let first = chunks
            .iter()
            .position(|c| matches!(c, Chunk::Data(_) | Chunk::Sack(_)));
        if let Some(f) = first {
            assert!(auth.is_some_and(|x| x < f), "unsigned: {chunks:?}");
            signed += 1;
        }
    }
    assert!(signed > 2_000, "{signed} signed packets");
    assert!(largest <= 1500, "a {largest}-byte datagram at MTU 1500");
    let _ = std::fs::remove_dir_all(&d);
}

/// A UDP hop that flips one byte of user data in every fourth DATA packet it passes
/// towards `target`, `n` times in all (fixing the CRC32c, as any on-path party can).
/// Spread out so that fast retransmission repairs the loss, not timeouts.
async fn tampering_hop(target: SocketAddr, n: u64) -> (SocketAddr, Arc<AtomicU64>) {
    let front = UdpSocket::bind("127.0.4.1:0").await.unwrap();
    let back = UdpSocket::bind("127.0.4.2:0").await.unwrap();
    let at = front.local_addr().unwrap();
    let changed = Arc::new(AtomicU64::new(0));
    let count = changed.clone();
    tokio::spawn(async move {
        let (mut f, mut b) = (vec![0u8; 65536], vec![0u8; 65536]);
        let (mut peer, mut seen) = (None, 0u64);
        loop {
            tokio::select! {
                Ok((len, from)) = front.recv_from(&mut f) => {
                    peer = Some(from);
                    let is_data = decode(&f[..len])
                        .is_ok_and(|d| d.packet.chunks.iter().any(|c| matches!(c, Chunk::Data(_))));
                    seen += u64::from(is_data);
                    if is_data && seen % 4 == 0 && count.load(Ordering::Relaxed) < n {
                        f[len - 5] ^= 0x5A; // inside the last chunk's user data
                        let crc = checksum(&f[..len]);
                        f[8..12].copy_from_slice(&crc.to_le_bytes());
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                    let _ = back.send_to(&f[..len], target).await;
                }
                Ok((len, _)) = back.recv_from(&mut b) => {
                    if let Some(p) = peer {
                        let _ = front.send_to(&b[..len], p).await;
                    }
                }
            }
        }
    });
    (at, changed)
}

async fn through_tampering_hop(
    name: &str,
    o: Options,
) -> (
    Result<Report, TransferError>,
    Result<Report, TransferError>,
    Option<Vec<u8>>,
    u64,
) {
    let d = dir(name);
    let out = d.join("out.bin");
    let (remotes, server) = receiver(&["127.0.0.1:0"], &out, o.clone()).await;
    let (hop, changed) = tampering_hop(remotes[0], 30).await;
    let sent = send(
        &[a("127.0.3.9:0")],
        &[hop],
        Bytes::from(data(1_000_000)),
        &o,
    )
    .await;
    let got = server.await.unwrap();
    let stored = std::fs::read(&out).ok();
    let _ = std::fs::remove_dir_all(&d);
    (sent, got, stored, changed.load(Ordering::Relaxed))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_changed_on_the_path_never_reach_the_file_when_authenticated() {
    // Without the key the changed bytes arrive, but the receiver's digest differs from
    // the one the sender announced: nothing is stored, and both ends say why.
    let (sent, got, stored, changed) = through_tampering_hop("plain", Options::default()).await;
    assert_eq!(changed, 30);
    assert_eq!(stored, None, "nothing committed");
    let e = got.unwrap_err();
    assert!(
        e.to_string().contains("the sender announced 1000000 bytes"),
        "{e}"
    );
    let e = sent.unwrap_err();
    assert!(
        matches!(&e, TransferError::Unconfirmed(m) if m.contains("stored nothing")),
        "{e}"
    );
    // With the key: every changed packet is discarded and resent; the file is intact.
    let (sent, got, stored, changed) = through_tampering_hop("keyed", keyed(b"k")).await;
    let got = got.unwrap();
    assert_eq!(changed, 30);
    assert_eq!(stored, Some(data(1_000_000)));
    assert!(sent.unwrap().confirmed);
    assert!(got.io.unauthenticated >= 30, "{:?}", got.io);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn different_keys_deliver_nothing_and_both_ends_fail_within_their_timeouts() {
    let d = dir("wrong");
    let out = d.join("out.bin");
    let short = |key: &[u8]| Options {
        timeout_s: 3.0,
        ..keyed(key)
    };
    let (remotes, server) = receiver(&["127.0.0.1:0"], &out, short(b"theirs")).await;
    let t = std::time::Instant::now();
    let sent = send(
        &[a("127.0.3.10:0")],
        &remotes,
        Bytes::from(data(200_000)),
        &short(b"ours"),
    )
    .await;
    let got = server.await.unwrap();
    assert!(sent.is_err() && got.is_err(), "{sent:?} / {got:?}");
    assert!(t.elapsed().as_secs_f64() < 4.5, "took {:?}", t.elapsed());
    assert!(!out.exists(), "nothing stored");
    let _ = std::fs::remove_dir_all(&d);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_end_that_requires_authentication_refuses_a_peer_without_it() {
    let d = dir("one-sided");
    let short = |o: Options| Options {
        timeout_s: 3.0,
        ..o
    };
    // The sender has the key, the receiver does not.
    let (remotes, server) = receiver(
        &["127.0.0.1:0"],
        &d.join("a.bin"),
        short(Options::default()),
    )
    .await;
    let e = send(
        &[a("127.0.3.11:0")],
        &remotes,
        Bytes::from(data(1000)),
        &short(keyed(b"k")),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&e, TransferError::Setup(m) if m.contains("does not support SCTP authentication")),
        "{e}"
    );
    server.abort();
    // The receiver has the key, the sender does not: the INIT is refused.
    let (remotes, server) = receiver(&["127.0.0.1:0"], &d.join("b.bin"), short(keyed(b"k"))).await;
    let e = send(
        &[a("127.0.3.12:0")],
        &remotes,
        Bytes::from(data(1000)),
        &short(Options::default()),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&e, TransferError::Setup(m) if m.contains("refused the association (cause 13)")),
        "{e}"
    );
    server.abort();
    let _ = std::fs::remove_dir_all(&d);
}
