//! A transfer over IPv6: the file arrives and no datagram, with its 40-byte IPv6 and
//! 8-byte UDP headers, exceeds the MTU.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use cmt_net::io::Sockets;
use cmt_net::transfer::{receive_on, send, Options, Outputs};
use tokio::net::UdpSocket;

fn a(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_crosses_ipv6_loopback_in_datagrams_that_fit_the_mtu() {
    let Ok(rx) = Sockets::bind(&[a("[::1]:0")]).await else {
        eprintln!("skipped: no IPv6 loopback here");
        return;
    };
    let target = rx.local_addrs()[0];
    // A forwarder in front of the receiver records the largest UDP payload it carries.
    let largest = Arc::new(AtomicUsize::new(0));
    let fwd = UdpSocket::bind("[::1]:0").await.unwrap();
    let front = fwd.local_addr().unwrap();
    let back = UdpSocket::bind("[::1]:0").await.unwrap();
    let l2 = largest.clone();
    let relay = tokio::spawn(async move {
        let (mut f, mut b) = (vec![0u8; 65536], vec![0u8; 65536]);
        let mut peer = None;
        loop {
            tokio::select! {
                Ok((n, from)) = fwd.recv_from(&mut f) => {
                    peer = Some(from);
                    l2.fetch_max(n, Ordering::Relaxed);
                    let _ = back.send_to(&f[..n], target).await;
                }
                Ok((n, _)) = back.recv_from(&mut b) => {
                    if let Some(p) = peer { let _ = fwd.send_to(&b[..n], p).await; }
                }
            }
        }
    });
    let dir = std::env::temp_dir().join(format!("cmtlab-v6-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out.bin");
    let out2 = out.clone();
    let server = tokio::spawn(async move { receive_on(rx, &out2, &Options::default()).await });
    let payload: Vec<u8> = (0..400_000u32).map(|i| (i ^ (i >> 7)) as u8).collect();
    let cap = dir.join("send.pcap");
    let tx = Options {
        outputs: Outputs {
            pcap: Some(cap.clone()),
            ..Outputs::default()
        },
        ..Options::default()
    };
    let sent = send(&[a("[::1]:0")], &[front], Bytes::from(payload.clone()), &tx)
        .await
        .unwrap();
    // The capture holds IPv6 records that decode as SCTP, DATA included.
    let records = cmt_sim::pcap::read(&std::fs::read(&cap).unwrap()).unwrap();
    assert!(records.iter().all(|r| r.src.0.is_ipv6()));
    let data = records
        .iter()
        .filter_map(|r| cmt_core::wire::decode(&r.sctp).ok())
        .filter(|d| {
            d.packet
                .chunks
                .iter()
                .any(|c| matches!(c, cmt_core::Chunk::Data(_)))
        })
        .count();
    assert!(data > 250, "{data} DATA packets in the capture");
    let got = server.await.unwrap().unwrap();
    relay.abort();
    assert_eq!(std::fs::read(&out).unwrap(), payload);
    assert!(sent.confirmed && got.confirmed);
    let max = largest.load(Ordering::Relaxed);
    // MTU 1500: 40 (IPv6) + 8 (UDP) + at most 1452 of SCTP; full chunks fill it exactly.
    assert!(max <= 1500 - 48 && max > 1400, "largest UDP payload {max}");
    let _ = std::fs::remove_dir_all(&dir);
}
