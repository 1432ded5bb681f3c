//! NAT rebinding: a NAT between the ends gives the sender's flow a new source port in
//! the middle of a transfer (as home routers do after an idle timeout or a reboot).
//! The receiver holds the packets from the new port until that port answers a probe,
//! then follows it: the transfer completes intact and the stream stalls for about a
//! round trip and a retransmission timer at most. (A source that never answers the
//! probe gets nothing in: `hijack.rs`.)

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use cmt_net::io::Sockets;
use cmt_net::transfer::{receive_on, send, Options, Outputs};
use tokio::net::UdpSocket;

mod common;
use common::stall;

fn a(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// A NAT-like forwarder: the sender talks to `front`; what it sends leaves towards
/// `target` from a back socket, which is replaced by a new one (a new source port)
/// once `rebind_after` DATA-sized datagrams have passed. Replies to the old port are
/// lost, as a NAT drops them once the mapping is gone. Returns the front address and
/// the count of datagrams forwarded after the rebinding.
async fn nat(target: SocketAddr, rebind_after: u64) -> (SocketAddr, Arc<AtomicU64>) {
    let front = UdpSocket::bind("127.0.6.1:0").await.unwrap();
    let at = front.local_addr().unwrap();
    let after = Arc::new(AtomicU64::new(0));
    let count = after.clone();
    tokio::spawn(async move {
        let mut back = UdpSocket::bind("127.0.6.2:0").await.unwrap();
        let (mut f, mut b) = (vec![0u8; 65536], vec![0u8; 65536]);
        let (mut peer, mut big, mut rebound) = (None, 0u64, false);
        loop {
            tokio::select! {
                Ok((n, from)) = front.recv_from(&mut f) => {
                    peer = Some(from);
                    big += u64::from(n > 1000);
                    if !rebound && big >= rebind_after {
                        back = UdpSocket::bind("127.0.6.2:0").await.unwrap();
                        rebound = true;
                    }
                    if rebound {
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                    let _ = back.send_to(&f[..n], target).await;
                }
                Ok((n, _)) = back.recv_from(&mut b) => {
                    if let Some(p) = peer {
                        let _ = front.send_to(&b[..n], p).await;
                    }
                }
            }
        }
    });
    (at, after)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_source_port_mid_transfer_is_followed_after_its_probe() {
    let dir = std::env::temp_dir().join(format!("cmtlab-nat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (out, trace) = (dir.join("out.bin"), dir.join("rx.csv"));
    let rx = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let target = rx.local_addrs()[0];
    let (front, after) = nat(target, 1000).await;
    let o = Options {
        outputs: Outputs {
            trace: Some(trace.clone()),
            ..Outputs::default()
        },
        ..Options::default()
    };
    let out2 = out.clone();
    let server = tokio::spawn(async move { receive_on(rx, &out2, &o).await });
    let payload: Vec<u8> = (0..8_000_000u32).map(|i| (i * 7 + 3) as u8).collect();
    let sent = send(
        &[a("127.0.1.61:0")],
        &[front],
        Bytes::from(payload.clone()),
        &Options::default(),
    )
    .await
    .unwrap();
    let got = server.await.unwrap().unwrap();
    assert!(
        after.load(Ordering::Relaxed) > 1000,
        "the NAT rebound mid-transfer"
    );
    assert_eq!(std::fs::read(&out).unwrap(), payload);
    assert!(sent.confirmed && got.confirmed);
    // Held for one probe round trip (sub-millisecond here); what the hold drops (beyond
    // 64 packets per source) and the replies lost meanwhile can cost the sender one
    // retransmission timeout: RTO.Min 0.2 s, up to 0.5 s if the round trip varies.
    let s = stall(&trace);
    eprintln!("in-order stall across the rebinding: {s:.3} s");
    assert!(s < 0.5, "in-order stall {s:.3} s");
    let _ = std::fs::remove_dir_all(&dir);
}
