//! Resuming an interrupted transfer over loopback: what the receiver held is not sent
//! again, the file arrives whole and confirmed both ways, a sender whose file changed
//! meanwhile is refused, and a sender that does not resume makes the receiver start
//! over. (Killed processes at random points: `crates/cmtlab/tests/failover.rs`.)

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use cmt_net::io::Sockets;
use cmt_net::relay::{parse_spec, run_path};
use cmt_net::resume::journal;
use cmt_net::transfer::{receive_on, send, Options, Report, TransferError};

mod common;

fn a(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn data(n: u32) -> Vec<u8> {
    (0..n)
        .map(|i| (i.wrapping_mul(2654435761) >> 7) as u8)
        .collect()
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cmtlab-resume-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn resuming() -> Options {
    Options {
        resume: true,
        rbuf: 1 << 20,
        ..Options::default()
    }
}

/// One transfer of `payload` through a 40 Mbit/s relay at `port`; the receiver is told
/// to abort after `abort_after` (if given).
async fn transfer(
    out: &Path,
    payload: &[u8],
    port: u16,
    (rx_opts, tx_opts): (Options, Options),
    abort_after: Option<Duration>,
) -> (Result<Report, TransferError>, Result<Report, TransferError>) {
    let rx = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let target = rx.local_addrs()[0];
    let front = a(&format!("127.0.2.70:{port}"));
    let spec = parse_spec(&format!(
        "{front}>{target},rate=40Mbps,delay=2ms,queue=unlimited"
    ));
    let relay = tokio::spawn(run_path(spec.unwrap(), 3));
    tokio::time::sleep(Duration::from_millis(30)).await;
    let stop = Arc::new(tokio::sync::Notify::new());
    let ro = Options {
        abort: Some(stop.clone()),
        ..rx_opts
    };
    let out = out.to_path_buf();
    let server = tokio::spawn(async move { receive_on(rx, &out, &ro).await });
    if let Some(after) = abort_after {
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            stop.notify_one();
        });
    }
    let sent = send(
        &[a("127.0.1.70:0")],
        &[front],
        Bytes::from(payload.to_vec()),
        &tx_opts,
    )
    .await;
    let got = server.await.unwrap();
    relay.abort();
    (sent, got)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_transfer_continues_where_the_receiver_stopped() {
    let d = dir("continue");
    let out = d.join("out.bin");
    let payload = data(12_000_000);
    let (sent, got) = transfer(
        &out,
        &payload,
        19501,
        (resuming(), resuming()),
        Some(Duration::from_millis(800)),
    )
    .await;
    assert!(
        sent.is_err() && got.is_err(),
        "interrupted: {sent:?} {got:?}"
    );
    assert!(!out.exists(), "nothing committed yet");
    let (part, jfile) = journal::paths(&out);
    let held = journal::read(&jfile).expect("a journal").offset;
    assert!(held > 0 && held < payload.len() as u64, "held {held}");
    assert_eq!(std::fs::metadata(&part).unwrap().len(), held);
    let (sent, got) = transfer(&out, &payload, 19502, (resuming(), resuming()), None).await;
    let (sent, got) = (sent.unwrap(), got.unwrap());
    assert_eq!(std::fs::read(&out).unwrap(), payload);
    assert!(sent.confirmed && got.confirmed && sent.sha256 == got.sha256);
    // Only what was missing crossed again.
    assert_eq!((sent.resumed_from, got.resumed_from), (held, held));
    let moved: u64 = sent.paths.iter().map(|p| p.sent_bytes).sum();
    let missing = payload.len() as u64 - held;
    assert!(
        moved >= missing && moved < missing + (1 << 20),
        "moved {moved}, missing {missing}"
    );
    assert!(
        !part.exists() && !jfile.exists(),
        "committed: no partial file left"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_source_is_refused_and_a_sender_without_resume_starts_over() {
    let d = dir("changed");
    let out = d.join("out.bin");
    let payload = data(12_000_000);
    let (sent, _) = transfer(
        &out,
        &payload,
        19511,
        (resuming(), resuming()),
        Some(Duration::from_millis(800)),
    )
    .await;
    assert!(sent.is_err());
    let held = journal::read(&journal::paths(&out).1)
        .expect("a journal")
        .offset;
    // The source changed in the part the receiver holds: refused, nothing stored.
    let mut changed = payload.clone();
    changed[10] ^= 1;
    let (sent, got) = transfer(&out, &changed, 19512, (resuming(), resuming()), None).await;
    let e = sent.unwrap_err().to_string();
    assert!(e.contains("the source changed"), "{e}");
    assert!(got.is_err() && !out.exists());
    assert_eq!(
        journal::read(&journal::paths(&out).1).map(|r| r.offset),
        Some(held)
    );
    // Another length: refused too.
    let (sent, _) = transfer(
        &out,
        &payload[..11_000_000],
        19513,
        (resuming(), resuming()),
        None,
    )
    .await;
    assert!(sent
        .unwrap_err()
        .to_string()
        .contains("this one has 11000000"));
    // A sender that does not ask to resume: the receiver starts over.
    let (sent, got) = transfer(
        &out,
        &changed,
        19514,
        (resuming(), Options::default()),
        None,
    )
    .await;
    let (sent, got) = (sent.unwrap(), got.unwrap());
    assert_eq!((sent.resumed_from, got.resumed_from), (0, 0));
    assert_eq!(std::fs::read(&out).unwrap(), changed);
    let _ = std::fs::remove_dir_all(&d);
}

/// The sender is killed mid-transfer (its task dropped: no ABORT, it simply goes quiet)
/// and started again at once, while the receiver still runs: the new sender is told the
/// receiver is busy, tries again, and once the old association has been silent for 2 s
/// it replaces it — offered what the receiver holds, it sends only the rest. The file
/// arrives whole, confirmed both ways, in seconds (before the door, the receiver
/// ignored the new sender until the old association's outage tolerance, 300 s, ran out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_sender_resumes_against_the_receiver_still_running() {
    let d = dir("live");
    let out = d.join("out.bin");
    let payload = data(12_000_000);
    let rx = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let target = rx.local_addrs()[0];
    let front = a("127.0.2.71:19521");
    let spec = parse_spec(&format!(
        "{front}>{target},rate=40Mbps,delay=2ms,queue=unlimited"
    ));
    let relay = tokio::spawn(run_path(spec.unwrap(), 4));
    tokio::time::sleep(Duration::from_millis(30)).await;
    let out2 = out.clone();
    let receiver = tokio::spawn(async move { receive_on(rx, &out2, &resuming()).await });
    let first = {
        let p = Bytes::from(payload.clone());
        tokio::spawn(async move { send(&[a("127.0.1.71:0")], &[front], p, &resuming()).await })
    };
    tokio::time::sleep(Duration::from_millis(800)).await;
    first.abort();
    let killed = std::time::Instant::now();
    let again = send(
        &[a("127.0.1.72:0")],
        &[front],
        Bytes::from(payload.clone()),
        &resuming(),
    )
    .await;
    let took = killed.elapsed();
    let got = receiver.await.unwrap();
    relay.abort();
    let (sent, got) = (again.expect("the new sender"), got.expect("the receiver"));
    assert_eq!(std::fs::read(&out).unwrap(), payload);
    assert!(sent.confirmed && got.confirmed && sent.sha256 == got.sha256);
    assert!(
        sent.resumed_from > 1 << 20,
        "resumed from {}",
        sent.resumed_from
    );
    assert_eq!(got.resumed_from, sent.resumed_from);
    assert!(
        took < Duration::from_secs(8),
        "the new sender took {took:?}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A second sender while a transfer runs and its sender is heard from is refused with
/// the reason, after trying for a few seconds — never met with silence; the running
/// transfer is not disturbed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_sender_to_a_busy_receiver_is_told_why() {
    let d = dir("busy");
    let out = d.join("out.bin");
    let rx = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let target = rx.local_addrs()[0];
    let out2 = out.clone();
    let receiver = tokio::spawn(async move { receive_on(rx, &out2, &Options::default()).await });
    // The first sender trickles a stream: alive, never stale.
    let (src, feed) = common::fed::fed();
    let first = tokio::spawn(async move {
        cmt_net::transfer::send_source(&[a("127.0.1.73:0")], &[target], src, &Options::default())
            .await
    });
    let trickle = std::thread::spawn(move || {
        for _ in 0..50 {
            if feed.send(vec![9; 1000]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let t = std::time::Instant::now();
    let second = send(
        &[a("127.0.1.74:0")],
        &[target],
        Bytes::from(data(1000)),
        &Options::default(),
    )
    .await;
    let took = t.elapsed();
    match second {
        Err(TransferError::Refused(why)) => {
            assert!(why.contains("busy with another transfer"), "{why}")
        }
        other => panic!("refused, not {other:?}"),
    }
    assert!(took < Duration::from_secs(8), "told after {took:?}");
    trickle.join().unwrap();
    let (first, got) = (first.await.unwrap(), receiver.await.unwrap());
    assert_eq!(first.expect("the first sender").bytes, 50_000);
    assert_eq!(std::fs::read(&out).unwrap(), vec![9; 50_000]);
    assert!(got.is_ok());
    let _ = std::fs::remove_dir_all(&d);
}
