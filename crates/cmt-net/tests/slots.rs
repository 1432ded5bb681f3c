//! A serving receiver's slots are earned (`transfer::serve::police`): hand-made peers
//! that associate and then send no file — silent, answering only HEARTBEATs, or a
//! stream header and then nothing (slowloris) — hold every slot of a server with three;
//! a real sender that comes then is stored all the same, because the loris that moved
//! the least is shed for it, told why; a loris alone is shed when its header does not
//! come within the deadline; a busy customer is never shed for a newcomer, who is
//! refused at once instead.

use std::sync::Arc;
use std::time::Duration;

use cmt_net::transfer::serve::{police, Finished, ServeStats};
use cmt_net::transfer::{send, Options, SendOptions};
use tokio::sync::Notify;

mod common;
use cmt_net::transfer::serve::memory::DEFAULT_BUDGET;
use common::loris::{self, Mode};
use common::{addr as a, pattern};

/// A server of `max` slots: (address, stop, directory, server).
async fn server(
    name: &str,
    max: usize,
) -> (
    std::net::SocketAddr,
    Arc<Notify>,
    std::path::PathBuf,
    impl std::future::Future<Output = (ServeStats, Vec<Finished>)>,
) {
    let o = Options {
        timeout_s: 60.0,
        ..Options::default()
    };
    let r = common::server::start(("slots", name), (max, DEFAULT_BUDGET), o).await;
    (r.to, r.stop, r.dir, r.run)
}

fn sender(name: &str) -> Options {
    Options {
        timeout_s: 30.0,
        send: SendOptions {
            name: Some(name.into()),
            ..SendOptions::default()
        },
        ..Options::default()
    }
}

/// Sends `len` bytes of pattern `seed` from `local` to `to`, stored as `name`.
async fn put(
    local: &str,
    to: std::net::SocketAddr,
    (len, seed): (usize, u8),
    name: &str,
) -> Result<cmt_net::transfer::Report, cmt_net::transfer::TransferError> {
    send(&[a(local)], &[to], pattern(len, seed), &sender(name)).await
}

#[tokio::test]
async fn three_loris_hold_every_slot_and_a_real_sender_is_stored_all_the_same() {
    let (to, stop, dir, run) = server("loris", 3).await;
    let peers = async {
        let limit = Duration::from_secs(20);
        let l0 = loris::run("127.0.3.1:0", to, Mode::Silent, limit);
        let l1 = loris::run("127.0.3.2:0", to, Mode::Heartbeats, limit);
        let l2 = loris::run("127.0.3.3:0", to, Mode::HeaderOnly, limit);
        let real = async {
            // Every slot taken, and each loris past the age a newcomer may shed.
            let age = Duration::from_nanos(police::SHED_AGE.as_nanos());
            tokio::time::sleep(age + Duration::from_millis(800)).await;
            let r = put("127.0.3.9:0", to, (300_000, 3), "real").await;
            stop.notify_one();
            r
        };
        let (l0, l1, l2, real) = tokio::join!(l0, l1, l2, real);
        ([l0, l1, l2], real)
    };
    let ((stats, finished), (lorises, real)) = tokio::join!(run, peers);
    assert!(real.is_ok(), "the real sender: {:?}", real.err());
    assert_eq!(
        std::fs::read(dir.join("real")).unwrap(),
        pattern(300_000, 3).to_vec()
    );
    let shed: Vec<&str> = lorises
        .iter()
        .filter_map(|o| o.reason.as_deref())
        .filter(|why| why.contains("shed for a new sender"))
        .collect();
    assert_eq!(shed.len(), 1, "one loris makes room: {lorises:?}");
    assert!(
        stats.shed >= 1 && stats.stored == 1,
        "{stats:?} {finished:?}"
    );
}

#[tokio::test]
async fn a_loris_alone_is_shed_when_its_header_does_not_come_in_time() {
    let (to, stop, _dir, run) = server("header", 3).await;
    let peer = async {
        let o = loris::run(
            "127.0.3.11:0",
            to,
            Mode::Heartbeats,
            Duration::from_secs(20),
        )
        .await;
        stop.notify_one();
        o
    };
    let ((stats, _), o) = tokio::join!(run, peer);
    let after = o.aborted_after.expect("shed");
    let deadline = Duration::from_nanos(police::HEADER_DEADLINE.as_nanos());
    assert!(
        after >= deadline && after <= deadline + Duration::from_millis(1500),
        "shed after {after:?}"
    );
    assert!(o.reason.unwrap_or_default().contains("no stream header"));
    assert_eq!(stats.shed, 1);
}

#[tokio::test]
async fn a_busy_customer_is_not_shed_and_the_newcomer_is_refused_at_once() {
    let (to, stop, dir, run) = server("busy", 1).await;
    // 8 Mbit/s through a relay: the first transfer, 4 MB, takes about 4 s.
    let front = a("127.0.3.21:19941");
    let spec = cmt_net::relay::parse_spec(&format!("{front}>{to},rate=8Mbps,delay=2ms")).unwrap();
    tokio::spawn(cmt_net::relay::run_path(spec, 5));
    let senders = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let first = put("127.0.3.22:0", front, (4 << 20, 1), "busy");
        let second = async {
            tokio::time::sleep(Duration::from_millis(2500)).await;
            let t = std::time::Instant::now();
            let r = put("127.0.3.23:0", to, (1000, 2), "late").await;
            (r, t.elapsed())
        };
        let (first, second) = tokio::join!(first, second);
        stop.notify_one();
        (first, second)
    };
    let ((stats, _), (first, (second, took))) = tokio::join!(run, senders);
    assert!(first.is_ok(), "the busy customer: {:?}", first.err());
    assert_eq!(
        std::fs::read(dir.join("busy")).unwrap(),
        pattern(4 << 20, 1).to_vec()
    );
    let e = second.expect_err("refused");
    assert!(e.to_string().contains("out of resource"), "{e}");
    assert!(took < Duration::from_secs(2), "refused after {took:?}");
    assert_eq!((stats.shed, stats.busy), (0, 1), "{stats:?}");
}
