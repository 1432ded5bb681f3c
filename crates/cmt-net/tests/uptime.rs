//! Time passes before a sender comes: a receiver's idle time costs its associations
//! nothing. Every timer of an association runs from the association's own start, so a
//! serving receiver (and a one-shot one) left idle for longer than its outage tolerance
//! still takes the next sender, and the one after it.

use std::sync::Arc;
use std::time::Duration;

use cmt_net::io::Sockets;
use cmt_net::transfer::serve::{serve_on, Serve};
use cmt_net::transfer::{receive_on, send, Options, SendOptions};
use tokio::sync::Notify;

mod common;
use common::{addr as a, fresh_dir, pattern as data};

/// The shortest outage tolerance the runtime takes: 1 s.
fn short_tolerance() -> Options {
    Options {
        outage_tolerance_s: 1.0,
        timeout_s: 20.0,
        ..Options::default()
    }
}

fn named(name: &str) -> Options {
    Options {
        send: SendOptions {
            name: Some(name.into()),
            ..SendOptions::default()
        },
        ..short_tolerance()
    }
}

#[tokio::test]
async fn a_server_idle_past_its_outage_tolerance_still_stores_every_sender() {
    let dir = fresh_dir("uptime", "serve");
    let socks = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let to = socks.local_addrs();
    let stop = Arc::new(Notify::new());
    let o = short_tolerance();
    let s = Serve {
        dir: dir.clone(),
        overwrite: false,
        max_associations: 4,
        max_memory: cmt_net::transfer::serve::memory::DEFAULT_BUDGET,
        stop: Some(stop.clone()),
    };
    let server = async move {
        let mut finished = Vec::new();
        let stats = serve_on(socks, &s, &o, |f| finished.push(f)).await.unwrap();
        (stats, finished)
    };
    let senders = async {
        // Idle for 2.5 tolerances, a sender; idle again, another.
        for (i, name) in ["first", "second"].iter().enumerate() {
            tokio::time::sleep(Duration::from_millis(2500)).await;
            let r = send(
                &[a("127.0.0.1:0")],
                &to,
                data(200_000, i as u8),
                &named(name),
            )
            .await;
            assert!(
                r.is_ok(),
                "sender {name}, after an idle server: {:?}",
                r.err()
            );
            assert_eq!(
                std::fs::read(dir.join(name)).unwrap(),
                data(200_000, i as u8).to_vec()
            );
        }
        stop.notify_one();
    };
    let ((stats, finished), ()) = tokio::join!(server, senders);
    assert_eq!((stats.stored, stats.failed), (2, 0), "{finished:?}");
}

#[tokio::test]
async fn a_one_shot_receiver_idle_past_its_outage_tolerance_still_receives() {
    let dir = fresh_dir("uptime", "once");
    let out = dir.join("out");
    let socks = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let to = socks.local_addrs();
    let out2 = out.clone();
    let receiver = tokio::spawn(async move { receive_on(socks, &out2, &short_tolerance()).await });
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let sent = send(
        &[a("127.0.0.1:0")],
        &to,
        data(300_000, 9),
        &short_tolerance(),
    )
    .await;
    assert!(sent.is_ok(), "{:?}", sent.err());
    let got = receiver.await.unwrap();
    assert!(got.is_ok(), "{:?}", got.err());
    assert_eq!(std::fs::read(&out).unwrap(), data(300_000, 9).to_vec());
}
