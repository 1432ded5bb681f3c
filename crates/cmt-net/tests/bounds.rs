//! Every wait of a real transfer ends: options are checked before any packet goes out,
//! a receiver gives up when no sender comes, a sender when nobody answers its INIT.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use cmt_net::io::Sockets;
use cmt_net::transfer::{receive_on, send, Options, ReceiveOptions, TransferError};

fn a(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn out(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("cmtlab-bounds-{}-{name}", std::process::id()))
}

#[tokio::test]
async fn a_receiver_without_a_sender_gives_up_at_its_timeout() {
    let socks = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let o = Options {
        timeout_s: 1.0,
        ..Options::default()
    };
    let t = Instant::now();
    let e = receive_on(socks, &out("lonely"), &o).await.unwrap_err();
    assert!(
        matches!(&e, TransferError::Setup(m) if m.contains("no sender associated within 1 s")),
        "{e}"
    );
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(950) && took < Duration::from_secs(2),
        "{took:?}"
    );
}

#[tokio::test]
async fn a_sender_without_a_receiver_gives_up_at_its_timeout_not_at_the_next_init() {
    // Nobody listens on the remote; T1 is 3 s, so the limit must cut the wait itself.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let o = Options {
        timeout_s: 1.5,
        ..Options::default()
    };
    let t = Instant::now();
    let e = send(
        &[a("127.0.1.1:0")],
        &[silent.local_addr().unwrap()],
        Bytes::from_static(b"hello"),
        &o,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&e, TransferError::Setup(m) if m.contains("no answer to INIT within 1.5 s")),
        "{e}"
    );
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(1450) && took < Duration::from_millis(2500),
        "{took:?}"
    );
}

#[tokio::test]
async fn bad_options_are_refused_before_any_packet_is_sent() {
    // A listening socket that must see nothing.
    let watch = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let remote = watch.local_addr().unwrap();
    for (o, want) in [
        (
            Options {
                scheduler: "nope".into(),
                ..Options::default()
            },
            "unknown scheduler `nope`",
        ),
        (
            Options {
                timeout_s: f64::NAN,
                ..Options::default()
            },
            "timeout NaN",
        ),
        (
            Options {
                timeout_s: -1.0,
                ..Options::default()
            },
            "timeout -1",
        ),
        (
            Options {
                mtu: 0,
                ..Options::default()
            },
            "mtu 0 is too small",
        ),
        (
            Options {
                mtu: 70_000,
                ..Options::default()
            },
            "mtu 70000 is larger",
        ),
    ] {
        let e = send(&[a("127.0.1.2:0")], &[remote], Bytes::from_static(b"x"), &o)
            .await
            .unwrap_err();
        assert!(
            matches!(&e, TransferError::Invalid(m) if m.contains(want)),
            "{want}: {e}"
        );
    }
    let e = send(
        &[a("127.0.1.2:0"), a("127.0.1.3:0")],
        &[remote],
        Bytes::from_static(b"x"),
        &Options::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&e, TransferError::Invalid(m) if m.contains("2 local and 1 remote")),
        "{e}"
    );
    let mut buf = [0u8; 2048];
    let got = tokio::time::timeout(Duration::from_millis(200), watch.recv_from(&mut buf)).await;
    assert!(got.is_err(), "a packet was sent despite bad options");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_restricted_to_its_peers_does_not_answer_anyone_else() {
    let socks = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let listen = socks.local_addrs()[0];
    let rx = Options {
        timeout_s: 1.5,
        receive: ReceiveOptions {
            peers: vec!["127.0.0.99".parse().unwrap()],
        },
        ..Options::default()
    };
    let server = tokio::spawn(async move { receive_on(socks, &out("peers"), &rx).await });
    let tx = Options {
        timeout_s: 1.0,
        ..Options::default()
    };
    let e = send(
        &[a("127.0.1.7:0")],
        &[listen],
        Bytes::from_static(b"hi"),
        &tx,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&e, TransferError::Setup(m) if m.contains("no answer to INIT")),
        "sender: {e}"
    );
    let e = server.await.unwrap().unwrap_err();
    assert!(
        matches!(&e, TransferError::Setup(m) if m.contains("no sender associated")),
        "receiver: {e}"
    );
}
