//! Crowds at a serving receiver's door. A sender pads its INIT so that the INIT ACK
//! answering it is no larger (RFC 4820 PAD, to 1200 bytes); such an answer amplifies
//! nothing, so the listener sends it whatever its budget for unproven sources holds.
//! Hence a spoofed INIT flood that spends that budget does not keep a real sender out,
//! and 200 senders behind one address (a NAT, a CI runner) are served at the speed of
//! their handshakes — where the per-source budget (4 KiB, 1 KiB/s) had served them in
//! waves and left some without an answer.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cmt_core::packet::InitChunk;
use cmt_core::wire::encode;
use cmt_core::{Chunk, Packet};
use cmt_net::transfer::serve::{Finished, ServeStats};
use cmt_net::transfer::{send, send_source, Options, SendOptions};
use tokio::sync::Notify;

mod common;
use cmt_net::transfer::serve::memory::DEFAULT_BUDGET;
use common::fed::fed;
use common::{addr as a, pattern};

/// A serving receiver of `max` slots with a 256 KiB window per association.
async fn server(
    name: &str,
    max: usize,
) -> (
    SocketAddr,
    Arc<Notify>,
    std::path::PathBuf,
    impl std::future::Future<Output = (ServeStats, Vec<Finished>)>,
) {
    let o = Options {
        rbuf: 256 << 10,
        timeout_s: 120.0,
        ..Options::default()
    };
    let r = common::server::start(("crowds", name), (max, DEFAULT_BUDGET), o).await;
    (r.to, r.stop, r.dir, r.run)
}

/// An INIT as a flood sends it: no padding, a fresh tag.
fn spoofed_init(tag: u32, to_port: u16) -> Vec<u8> {
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
    encode(&p, 5000, to_port, &mut out);
    out
}

/// Every one of 200 senders succeeded and its file, `{prefix}{i:03}` of `len` bytes of
/// pattern `i`, is in `dir` whole.
fn all_stored(
    results: &[Result<cmt_net::transfer::Report, cmt_net::transfer::TransferError>],
    dir: &std::path::Path,
    (prefix, len): (&str, usize),
) {
    let failed: Vec<String> = results
        .iter()
        .filter_map(|r| r.as_ref().err().map(|e| e.to_string()))
        .collect();
    assert!(
        failed.is_empty(),
        "{} failed, e.g. {:?}",
        failed.len(),
        failed.first()
    );
    for i in 0..200u32 {
        let got = std::fs::read(dir.join(format!("{prefix}{i:03}"))).unwrap();
        assert_eq!(got, pattern(len, i as u8).to_vec(), "{prefix}{i:03}");
    }
}

#[tokio::test]
async fn a_spoofed_init_flood_does_not_keep_a_real_sender_out() {
    let (to, stop, dir, run) = server("flood", 8).await;
    let flooding = Arc::new(std::sync::atomic::AtomicBool::new(true));
    // 200 sources taking turns, 2,000 INITs a second, evenly: the shared budget is
    // spent as fast as it refills.
    let f = flooding.clone();
    let flood = std::thread::spawn(move || {
        let socks: Vec<UdpSocket> = (0..200u8)
            .map(|i| UdpSocket::bind((std::net::Ipv4Addr::new(127, 0, 5, 1 + i), 0)))
            .collect::<Result<_, _>>()
            .unwrap();
        let start = Instant::now();
        let mut sent = 0u32;
        while f.load(std::sync::atomic::Ordering::Relaxed)
            && start.elapsed() < Duration::from_secs(30)
        {
            let s = &socks[sent as usize % socks.len()];
            let _ = s.send_to(&spoofed_init(sent + 1, to.port()), to);
            sent += 1;
            let due = start + Duration::from_micros(500 * u64::from(sent));
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
        }
        sent
    });
    let real = async {
        // Let the flood spend the shared budget first.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let t = Instant::now();
        let o = Options {
            timeout_s: 20.0,
            send: SendOptions {
                name: Some("real".into()),
                ..SendOptions::default()
            },
            ..Options::default()
        };
        let r = send(&[a("127.0.5.253:0")], &[to], pattern(200_000, 7), &o).await;
        let took = t.elapsed();
        flooding.store(false, std::sync::atomic::Ordering::Relaxed);
        stop.notify_one();
        (r, took)
    };
    let ((stats, _), (r, took)) = tokio::join!(run, real);
    let sent = flood.join().unwrap();
    assert!(r.is_ok(), "the real sender under a flood: {:?}", r.err());
    assert_eq!(
        std::fs::read(dir.join("real")).unwrap(),
        pattern(200_000, 7).to_vec()
    );
    assert!(
        took < Duration::from_secs(2),
        "the real sender took {took:?}"
    );
    assert!(sent >= 2000, "a flood of {sent} INITs");
    assert_eq!(stats.stored, 1);
}

#[tokio::test]
async fn two_hundred_senders_behind_one_address_are_all_stored_promptly() {
    let (to, stop, dir, run) = server("nat", 256).await;
    let senders = async {
        let t = Instant::now();
        let all: Vec<_> = (0..200u32)
            .map(|i| {
                let o = Options {
                    timeout_s: 60.0,
                    send: SendOptions {
                        name: Some(format!("f{i:03}")),
                        ..SendOptions::default()
                    },
                    ..Options::default()
                };
                async move { send(&[a("127.0.6.1:0")], &[to], pattern(20_000, i as u8), &o).await }
            })
            .collect();
        let results = futures_util::future::join_all(all).await;
        let took = t.elapsed();
        stop.notify_one();
        (results, took)
    };
    let ((stats, _), (results, took)) = tokio::join!(run, senders);
    all_stored(&results, &dir, ("f", 20_000));
    assert_eq!(stats.stored, 200);
    assert!(took < Duration::from_secs(20), "200 senders took {took:?}");
}

/// 200 transfers open at once under a 64 MiB budget (what 7 of them would take at the
/// default window): each stream sends a first piece, waits until all 200 files are open
/// at the server, then sends the rest. All are stored whole; the windows shrank so that
/// what the associations were charged together never exceeded the budget, although
/// 200 × the 4 MiB default window alone is 800 MiB.
#[tokio::test]
async fn two_hundred_transfers_open_at_once_stay_within_the_memory_budget() {
    let budget = 64u64 << 20;
    let o = Options {
        timeout_s: 120.0,
        ..Options::default()
    };
    let r = common::server::start(("crowds", "memory"), (256, budget), o).await;
    let (to, stop, dir) = (r.to, r.stop.clone(), r.dir.clone());
    let (sources, feeders): (Vec<_>, Vec<_>) = (0..200).map(|_| fed()).unzip();
    let senders = async {
        let all = sources.into_iter().enumerate().map(|(i, src)| async move {
            let o = Options {
                timeout_s: 120.0,
                send: SendOptions {
                    name: Some(format!("m{i:03}")),
                    ..SendOptions::default()
                },
                ..Options::default()
            };
            send_source(&[a("127.0.7.1:0")], &[to], src, &o).await
        });
        let feeding = async {
            for (i, f) in feeders.iter().enumerate() {
                f.send(pattern(30_000, i as u8)[..10_000].to_vec()).unwrap();
            }
            let t = Instant::now();
            loop {
                let open = std::fs::read_dir(&dir)
                    .unwrap()
                    .filter(|e| {
                        e.as_ref()
                            .unwrap()
                            .file_name()
                            .to_string_lossy()
                            .starts_with('.')
                    })
                    .count();
                if open == 200 {
                    break;
                }
                assert!(t.elapsed() < Duration::from_secs(60), "{open} of 200 open");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            for (i, f) in feeders.into_iter().enumerate() {
                f.send(pattern(30_000, i as u8)[10_000..].to_vec()).unwrap();
            }
        };
        let (results, ()) = tokio::join!(futures_util::future::join_all(all), feeding);
        stop.notify_one();
        results
    };
    let ((stats, _), results) = tokio::join!(r.run, senders);
    all_stored(&results, &r.dir, ("m", 30_000));
    assert_eq!(stats.stored, 200);
    assert!(
        stats.memory_peak <= budget && stats.memory_peak > budget / 2,
        "charged {} of {budget} at the peak",
        stats.memory_peak
    );
}
