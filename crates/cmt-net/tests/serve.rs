//! A receiver that serves a directory: several associations at once on the same
//! sockets (through one relay too), each stored under the name its sender gives;
//! names that would escape or replace are refused with the reason told to the sender;
//! the bound on associations at once refuses the one too many at once; stopping aborts
//! running transfers and leaves nothing half-written; a replayed COOKIE ECHO of an
//! ended association starts nothing.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use cmt_core::auth::AuthConfig;
use cmt_net::io::Sockets;
use cmt_net::relay::{parse_spec, run_path};
use cmt_net::transfer::serve::{serve_on, Finished, Serve, ServeStats};
use cmt_net::transfer::{send, send_source, Ended, Options, Report, SendOptions, TransferError};
use tokio::net::UdpSocket;
use tokio::sync::Notify;

mod common;
use common::fed::fed;

fn a(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn data(len: usize, seed: u8) -> Bytes {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect::<Vec<u8>>()
        .into()
}

/// An empty directory of its own.
fn fresh_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cmtlab-serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The names in `dir`, sorted (temporary files included: they start with a dot).
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Sender options: a name, short time limits.
fn sender(name: Option<&str>) -> Options {
    Options {
        timeout_s: 30.0,
        send: SendOptions {
            name: name.map(str::to_string),
            ..SendOptions::default()
        },
        ..Options::default()
    }
}

/// A server of `s` (holding `key`, if any) on fresh sockets of `ips`: their addresses,
/// the notify that stops it, and the server itself (run it alongside the senders; it
/// returns what it did).
async fn server(
    ips: &[&str],
    mut s: Serve,
    key: Option<AuthConfig>,
) -> (
    Vec<SocketAddr>,
    Arc<Notify>,
    impl std::future::Future<Output = (ServeStats, Vec<Finished>)>,
) {
    let addrs: Vec<SocketAddr> = ips.iter().map(|ip| a(&format!("{ip}:0"))).collect();
    let socks = Sockets::bind(&addrs).await.unwrap();
    let bound = socks.local_addrs();
    let stop = Arc::new(Notify::new());
    s.stop = Some(stop.clone());
    let o = Options {
        timeout_s: 30.0,
        auth: key,
        ..Options::default()
    };
    let run = async move {
        let mut finished = Vec::new();
        let stats = serve_on(socks, &s, &o, |f| finished.push(f)).await.unwrap();
        (stats, finished)
    };
    (bound, stop, run)
}

/// Sends `len` bytes of pattern `seed` from `local` to `to` with options `o`.
async fn put(
    local: &str,
    to: &[SocketAddr],
    (len, seed): (usize, u8),
    o: Options,
) -> Result<Report, TransferError> {
    send(&[a(local)], to, data(len, seed), &o).await
}

fn serve_dir(dir: &Path, overwrite: bool, max: usize) -> Serve {
    Serve {
        dir: dir.to_path_buf(),
        overwrite,
        max_associations: max,
        max_memory: cmt_net::transfer::serve::memory::DEFAULT_BUDGET,
        stop: None,
    }
}

#[tokio::test]
async fn two_senders_at_once_through_one_relay_are_both_stored_under_their_names() {
    let dir = fresh_dir("two");
    let (addrs, stop, run) =
        server(&["127.0.0.1", "127.0.0.2"], serve_dir(&dir, false, 8), None).await;
    // One relay per server address; both senders' two paths go through them.
    let fronts = ["127.0.2.1:19931", "127.0.2.2:19932"];
    for (i, f) in fronts.iter().enumerate() {
        let spec = parse_spec(&format!("{f}>{},rate=40Mbps,delay=5ms", addrs[i])).unwrap();
        tokio::spawn(run_path(spec, 7 + i as u64));
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (x, y) = (data(3_000_000, 1), data(2_000_000, 2));
    let remotes = [a(fronts[0]), a(fronts[1])];
    let senders = async {
        let (ox, oy) = (sender(Some("x.bin")), sender(Some("y.bin")));
        let (lx, ly) = (
            [a("127.0.1.1:0"), a("127.0.1.2:0")],
            [a("127.0.1.3:0"), a("127.0.1.4:0")],
        );
        // Each transfer with the instant it ended.
        let timed = |r| async { (r.await, std::time::Instant::now()) };
        let (rx, ry) = tokio::join!(
            timed(send(&lx, &remotes, x.clone(), &ox)),
            timed(send(&ly, &remotes, y.clone(), &oy)),
        );
        stop.notify_one();
        (rx, ry)
    };
    let ((stats, finished), ((rx, x_end), (ry, y_end))) = tokio::join!(run, senders);
    let (rx, ry) = (rx.unwrap(), ry.unwrap());
    assert!(rx.confirmed && ry.confirmed);
    // Both carried data at the same time: each transfer (its data phase, `seconds`
    // long, ending when its send returned) started before the other ended.
    let x_start = x_end - Duration::from_secs_f64(rx.seconds);
    let y_start = y_end - Duration::from_secs_f64(ry.seconds);
    assert!(x_start < y_end && y_start < x_end, "{rx:?} {ry:?}");
    assert_eq!(std::fs::read(dir.join("x.bin")).unwrap(), x);
    assert_eq!(std::fs::read(dir.join("y.bin")).unwrap(), y);
    assert_eq!(listing(&dir), ["x.bin", "y.bin"]);
    assert_eq!((stats.stored, stats.failed, stats.busy), (2, 0, 0));
    let mut stored: Vec<PathBuf> = finished
        .iter()
        .map(|f| f.result.as_ref().unwrap().stored_as.clone().unwrap())
        .collect();
    stored.sort();
    assert_eq!(stored, [dir.join("x.bin"), dir.join("y.bin")]);
    // Each used both paths.
    for f in &finished {
        let r = f.result.as_ref().unwrap();
        assert!(r.paths.iter().all(|p| p.received_data_packets > 0), "{r:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn names_that_escape_hide_or_replace_are_refused_and_the_sender_told_why() {
    let dir = fresh_dir("names");
    let inner = dir.join("in");
    std::fs::create_dir(&inner).unwrap();
    std::fs::write(inner.join("there.bin"), b"old").unwrap();
    let (addrs, stop, run) = server(&["127.0.0.3"], serve_dir(&inner, false, 8), None).await;
    let (too_long, header_too_long) = ("z".repeat(230), "h".repeat(1100));
    let senders = async {
        let mut results = Vec::new();
        for name in [
            Some("../escape"),
            Some(".hidden"),
            Some("there.bin"),
            None,
            Some("ok.bin"),
            Some(too_long.as_str()),
            Some("--help"),
            Some("\u{202E}gpj.exe"),
            Some(header_too_long.as_str()),
        ] {
            results.push(put("127.0.1.5:0", &addrs, (50_000, 3), sender(name)).await);
        }
        stop.notify_one();
        results
    };
    let ((stats, _), results) = tokio::join!(run, senders);
    let why = |r: &Result<_, TransferError>| match r {
        Err(TransferError::Refused(m)) => m.clone(),
        other => panic!("refused, not {other:?}"),
    };
    assert!(
        why(&results[0]).contains("path separator"),
        "{:?}",
        results[0]
    );
    assert!(why(&results[1]).contains("starts with a dot"));
    assert!(why(&results[2]).contains("--overwrite"));
    assert!(why(&results[3]).contains("no name"));
    assert!(results[4].as_ref().unwrap().confirmed);
    // Longer than the file system takes with the temporary file's suffix (which would
    // fail to be created: ENAMETOOLONG), one that reads as an option, one that shows
    // reversed on a terminal, one longer than a stream header carries: each refused
    // with its reason, not a bare error cause.
    assert!(
        why(&results[5]).contains("230 bytes long"),
        "{:?}",
        results[5]
    );
    assert!(why(&results[6]).contains("option"));
    assert!(why(&results[7]).contains("reordering"));
    assert!(
        why(&results[8]).contains("a name of 1100 bytes"),
        "{:?}",
        results[8]
    );
    // Nothing escaped, the existing file kept its bytes, no temporary file stayed.
    assert_eq!(listing(&dir), ["in"]);
    assert_eq!(listing(&inner), ["ok.bin", "there.bin"]);
    assert_eq!(std::fs::read(inner.join("there.bin")).unwrap(), b"old");
    assert_eq!((stats.stored, stats.failed), (1, 8));

    // Told it may, a server replaces the file.
    let (addrs, stop, run) = server(&["127.0.0.3"], serve_dir(&inner, true, 8), None).await;
    let senders = async {
        let r = put(
            "127.0.1.5:0",
            &addrs,
            (70_000, 4),
            sender(Some("there.bin")),
        )
        .await;
        stop.notify_one();
        r
    };
    let (_, r) = tokio::join!(run, senders);
    assert!(r.unwrap().confirmed);
    assert_eq!(
        std::fs::read(inner.join("there.bin")).unwrap(),
        data(70_000, 4)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn one_association_too_many_is_refused_at_once_and_its_slot_reused_later() {
    let dir = fresh_dir("bound");
    let (addrs, stop, run) = server(&["127.0.0.4"], serve_dir(&dir, false, 1), None).await;
    let (slow, feed) = fed();
    let senders = async {
        let first = async {
            let o = sender(Some("slow.bin"));
            send_source(&[a("127.0.1.6:0")], &addrs, slow, &o).await
        };
        let others = async {
            feed.send(vec![7; 100_000]).unwrap();
            // The first association holds the only slot until its stream ends.
            tokio::time::sleep(Duration::from_millis(500)).await;
            let t = std::time::Instant::now();
            let busy = put("127.0.1.7:0", &addrs, (10_000, 5), sender(Some("b"))).await;
            let refused_after = t.elapsed();
            feed.send(vec![8; 100_000]).unwrap();
            drop(feed);
            (busy, refused_after)
        };
        let (first, (busy, refused_after)) = tokio::join!(first, others);
        // The slot is free again once the first association ended (its SHUTDOWN
        // COMPLETE reached the server: a round trip after the sender returned).
        tokio::time::sleep(Duration::from_millis(200)).await;
        let later = put("127.0.1.7:0", &addrs, (10_000, 6), sender(Some("c"))).await;
        stop.notify_one();
        (first, busy, refused_after, later)
    };
    let ((stats, _), (first, busy, refused_after, later)) = tokio::join!(run, senders);
    match busy {
        Err(TransferError::Refused(m)) => assert!(m.contains("out of resource"), "{m}"),
        other => panic!("refused, not {other:?}"),
    }
    // Refused by the first answer, not after the 30 s setup time limit.
    assert!(refused_after < Duration::from_secs(5), "{refused_after:?}");
    assert_eq!(first.unwrap().bytes, 200_000);
    assert!(later.unwrap().confirmed);
    assert_eq!(listing(&dir), ["c", "slow.bin"]);
    assert_eq!((stats.stored, stats.busy), (2, 1));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn stopping_aborts_running_transfers_and_leaves_no_partial_file() {
    let dir = fresh_dir("stop");
    let (addrs, stop, run) = server(&["127.0.0.5"], serve_dir(&dir, false, 4), None).await;
    let (slow, feed) = fed();
    let senders = async {
        let first = async {
            let o = sender(Some("cut.bin"));
            send_source(&[a("127.0.1.8:0")], &addrs, slow, &o).await
        };
        let stopper = async {
            feed.send(vec![9; 300_000]).unwrap();
            tokio::time::sleep(Duration::from_millis(500)).await;
            stop.notify_one();
        };
        let (first, ()) = tokio::join!(first, stopper);
        drop(feed);
        first
    };
    let ((stats, finished), first) = tokio::join!(run, senders);
    // The sender was told at once (an ABORT), not left to time out.
    match first {
        Err(TransferError::Ended(Ended::PeerAborted(_))) => {}
        other => panic!("ended by the peer's ABORT, not {other:?}"),
    }
    assert_eq!((stats.stored, stats.failed), (0, 1));
    assert!(matches!(finished[0].result, Err(TransferError::Aborted)));
    assert!(listing(&dir).is_empty(), "{:?}", listing(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A UDP forwarder between a sender and the server that keeps the first COOKIE ECHO
/// it forwards (the first chunk's type, after the 12-byte common header, is 10).
async fn forwarder(front: SocketAddr, server: SocketAddr) -> Arc<std::sync::Mutex<Vec<u8>>> {
    let outer = UdpSocket::bind(front).await.unwrap();
    let inner = UdpSocket::bind("127.0.3.2:0").await.unwrap();
    let echo = Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = echo.clone();
    tokio::spawn(async move {
        let (mut b1, mut b2) = (vec![0u8; 65536], vec![0u8; 65536]);
        let mut client = None;
        loop {
            tokio::select! {
                Ok((n, from)) = outer.recv_from(&mut b1) => {
                    client = Some(from);
                    {
                        let mut e = kept.lock().unwrap();
                        if n > 12 && b1[12] == 10 && e.is_empty() {
                            e.extend_from_slice(&b1[..n]);
                        }
                    }
                    let _ = inner.send_to(&b1[..n], server).await;
                }
                Ok((n, _)) = inner.recv_from(&mut b2) => {
                    if let Some(c) = client {
                        let _ = outer.send_to(&b2[..n], c).await;
                    }
                }
            }
        }
    });
    echo
}

#[tokio::test]
async fn a_replayed_cookie_echo_of_an_ended_association_starts_nothing() {
    let dir = fresh_dir("replay");
    let (addrs, stop, run) = server(&["127.0.0.6"], serve_dir(&dir, false, 4), None).await;
    let front = a("127.0.3.1:19941");
    let echo = forwarder(front, addrs[0]).await;
    let senders = async {
        let r = put("127.0.1.9:0", &[front], (20_000, 7), sender(Some("r"))).await;
        // The association ended (its SHUTDOWN COMPLETE reached the server); its COOKIE
        // ECHO, still within the cookie's lifetime, comes again from another port.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let replay = echo.lock().unwrap().clone();
        assert!(!replay.is_empty(), "the forwarder saw the COOKIE ECHO");
        let attacker = UdpSocket::bind("127.0.3.3:0").await.unwrap();
        attacker.send_to(&replay, addrs[0]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        stop.notify_one();
        r
    };
    let ((stats, finished), r) = tokio::join!(run, senders);
    assert!(r.unwrap().confirmed);
    // Only the real transfer: the replay was refused, no association started.
    assert_eq!(finished.len(), 1, "{finished:?}");
    assert_eq!((stats.stored, stats.failed), (1, 0));
    assert!(stats.rejected >= 1, "{stats:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_keyed_server_stores_what_holders_of_the_key_send_and_nothing_else() {
    let dir = fresh_dir("key");
    let key = || Some(AuthConfig::with_key(b"serve secret".to_vec()));
    let (addrs, stop, run) = server(&["127.0.0.7"], serve_dir(&dir, false, 4), key()).await;
    let senders = async {
        let keyed = Options {
            auth: key(),
            ..sender(Some("keyed"))
        };
        let with = put("127.0.1.10:0", &addrs, (100_000, 8), keyed).await;
        let without = Options {
            timeout_s: 2.0,
            ..sender(Some("unkeyed"))
        };
        let without = put("127.0.1.11:0", &addrs, (100_000, 9), without).await;
        stop.notify_one();
        (with, without)
    };
    let ((stats, finished), (with, without)) = tokio::join!(run, senders);
    assert!(with.unwrap().confirmed);
    assert!(
        matches!(without, Err(TransferError::Setup(_))),
        "{without:?}"
    );
    assert_eq!(listing(&dir), ["keyed"]);
    assert_eq!((stats.stored, finished.len()), (1, 1));
    std::fs::remove_dir_all(&dir).unwrap();
}
