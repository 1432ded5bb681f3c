//! A transfer that reports success has delivered every byte durably; one that fails
//! leaves the destination as it was and no temporary file behind.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use cmt_core::setup::CAUSE_OUT_OF_RESOURCE;
use cmt_net::io::Sockets;
use cmt_net::relay::{parse_spec, run_path};
use cmt_net::transfer::{receive_on, send, Ended, Options, TransferError};

fn a(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cmtlab-durable-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn data(n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect()
}

#[tokio::test]
async fn a_receiver_whose_directory_is_missing_fails_before_anyone_connects() {
    let socks = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let d = dir("missing");
    let e = receive_on(socks, &d.join("gone/out.bin"), &Options::default())
        .await
        .unwrap_err();
    assert!(matches!(&e, TransferError::Invalid(_)), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("gone") && e.contains("cannot create"), "{e}");
}

/// Receiver on 127.0.0.x, one relay at `rate`, sender on 127.0.1.x; returns both results.
async fn transfer_through_relay(
    port: u16,
    out: PathBuf,
    payload: Vec<u8>,
    rate: &str,
    sender: Options,
    during: impl FnOnce() + Send + 'static,
) -> (
    Result<cmt_net::transfer::Report, TransferError>,
    Result<cmt_net::transfer::Report, TransferError>,
) {
    let rx = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let target = rx.local_addrs()[0];
    let front = a(&format!("127.0.2.9:{port}"));
    let relay = tokio::spawn(run_path(
        parse_spec(&format!("{front}>{target},rate={rate},delay=5ms")).unwrap(),
        5,
    ));
    tokio::time::sleep(Duration::from_millis(30)).await;
    let rx_opts = Options {
        timeout_s: 20.0,
        ..Options::default()
    };
    let server = tokio::spawn(async move { receive_on(rx, &out, &rx_opts).await });
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        during();
    });
    let sent = send(&[a("127.0.1.9:0")], &[front], Bytes::from(payload), &sender).await;
    let got = server.await.unwrap();
    relay.abort();
    (sent, got)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_cannot_store_the_file_makes_the_sender_fail() {
    // The destination turns into a non-empty directory mid-transfer, so the final
    // rename fails: the receiver must ABORT ("out of resource") instead of answering the
    // SHUTDOWN, and the sender must not report success.
    let d = dir("store");
    let out = d.join("out.bin");
    let blocker = out.clone();
    let (sent, got) = transfer_through_relay(
        19411,
        out.clone(),
        data(1_500_000),
        "10Mbps",
        Options::default(),
        move || {
            std::fs::create_dir_all(blocker.join("inside")).unwrap();
        },
    )
    .await;
    let e = sent.unwrap_err();
    assert!(
        e == TransferError::Ended(Ended::PeerAborted(Some(CAUSE_OUT_OF_RESOURCE))),
        "sender: {e}"
    );
    let e = got.unwrap_err();
    assert!(
        matches!(&e, TransferError::Io(m) if m.contains("cannot store")),
        "receiver: {e}"
    );
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        vec![std::ffi::OsString::from("out.bin")],
        "no temporary file left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_transfer_leaves_the_old_file_intact() {
    let d = dir("abort");
    let out = d.join("out.bin");
    std::fs::write(&out, b"the previous version").unwrap();
    let stop = std::sync::Arc::new(tokio::sync::Notify::new());
    let stop2 = stop.clone();
    let sender = Options {
        abort: Some(stop),
        ..Options::default()
    };
    let (sent, got) = transfer_through_relay(
        19412,
        out.clone(),
        data(1_500_000),
        // Nothing dropped, so the one ABORT (never retransmitted) reaches the receiver.
        "10Mbps,queue=unlimited",
        sender,
        move || stop2.notify_one(),
    )
    .await;
    assert_eq!(sent.unwrap_err(), TransferError::Aborted);
    let e = got.unwrap_err();
    assert!(
        matches!(&e, TransferError::Ended(Ended::PeerAborted(_))),
        "receiver: {e}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"the previous version");
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        1,
        "no temporary file left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completed_transfer_replaces_the_old_file_with_every_byte() {
    let d = dir("ok");
    let out = d.join("out.bin");
    std::fs::write(&out, b"the previous version").unwrap();
    let payload = data(700_001);
    let (sent, got) = transfer_through_relay(
        19413,
        out.clone(),
        payload.clone(),
        "50Mbps",
        Options::default(),
        || {},
    )
    .await;
    let (sent, got) = (sent.unwrap(), got.unwrap());
    assert_eq!(sent.sha256, got.sha256);
    // The receiver's FILE-DIGEST (length and SHA-256 with its SHUTDOWN ACK) matched.
    assert!(sent.confirmed && got.confirmed);
    assert_eq!(std::fs::read(&out).unwrap(), payload);
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_whose_sender_vanished_gives_up_after_the_outage_tolerance() {
    // The sender is killed mid-transfer (no ABORT, as a crashed host): the receiver
    // stops after `outage_tolerance_s` without a packet and the old file stays.
    let d = dir("vanish");
    let out = d.join("out.bin");
    std::fs::write(&out, b"kept").unwrap();
    let rx = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let target = rx.local_addrs()[0];
    let front = a("127.0.2.9:19414");
    let relay = tokio::spawn(run_path(
        parse_spec(&format!("{front}>{target},rate=10Mbps,delay=5ms")).unwrap(),
        5,
    ));
    tokio::time::sleep(Duration::from_millis(30)).await;
    let o = Options {
        outage_tolerance_s: 1.0,
        ..Options::default()
    };
    let out2 = out.clone();
    let server = tokio::spawn(async move { receive_on(rx, &out2, &o).await });
    let sender = tokio::spawn(async move {
        send(
            &[a("127.0.1.9:0")],
            &[front],
            Bytes::from(data(3_000_000)),
            &Options::default(),
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    sender.abort();
    let killed = std::time::Instant::now();
    let e = server.await.unwrap().unwrap_err();
    let took = killed.elapsed();
    relay.abort();
    assert!(
        e == TransferError::Ended(Ended::PeerSilent(Duration::from_secs(1))),
        "{e}"
    );
    assert!(took < Duration::from_millis(2500), "{took:?}");
    assert_eq!(std::fs::read(&out).unwrap(), b"kept");
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
}

/// A 512 KB tmpfs at a fresh directory, or `None` (with a message) where mounting is not
/// allowed (not root, no tmpfs).
fn small_fs(name: &str) -> Option<PathBuf> {
    let d = dir(name);
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=512k", "tmpfs"])
        .arg(&d)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!(
            "skipped: cannot mount a tmpfs at {} (needs root)",
            d.display()
        );
        return None;
    }
    Some(d)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_file_system_fails_the_sender_and_keeps_the_old_file() {
    let Some(fs) = small_fs("full") else { return };
    let out = fs.join("out.bin");
    std::fs::write(&out, b"the previous version").unwrap();
    // 2 MB into 512 KB: the receiver's writes fail with "no space" mid-transfer.
    let (sent, got) = transfer_through_relay(
        19415,
        out.clone(),
        data(2_000_000),
        "50Mbps",
        Options::default(),
        || {},
    )
    .await;
    let left: Vec<_> = std::fs::read_dir(&fs)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let old = std::fs::read(&out).unwrap();
    let _ = std::process::Command::new("umount").arg(&fs).status();
    let e = sent.unwrap_err();
    assert!(
        e == TransferError::Ended(Ended::PeerAborted(Some(CAUSE_OUT_OF_RESOURCE))),
        "sender: {e}"
    );
    let e = got.unwrap_err();
    assert!(
        matches!(&e, TransferError::Io(m) if m.contains("cannot write")),
        "receiver: {e}"
    );
    assert_eq!(old, b"the previous version");
    assert_eq!(
        left,
        vec![std::ffi::OsString::from("out.bin")],
        "no temporary file left"
    );
}
