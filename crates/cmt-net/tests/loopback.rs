//! Real transfers over loopback UDP: two addresses per side, two paths.

use std::net::SocketAddr;

use bytes::Bytes;
use cmt_net::io::Sockets;
use cmt_net::transfer::{receive_on, send, Options};

fn addrs(list: &[&str]) -> Vec<SocketAddr> {
    list.iter().map(|a| a.parse().unwrap()).collect()
}

#[tokio::test]
async fn a_file_crosses_two_loopback_paths_intact_and_both_ends_close() {
    let rx = Sockets::bind(&addrs(&["127.0.0.1:0", "127.0.0.2:0"]))
        .await
        .unwrap();
    let remotes = rx.local_addrs();
    let dir = std::env::temp_dir().join(format!("cmtlab-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("received.bin");
    let o = Options::default();
    let (out2, o2) = (out.clone(), o.clone());
    let server = tokio::spawn(async move { receive_on(rx, &out2, &o2).await });
    let data: Vec<u8> = (0..5_000_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let sent = send(
        &addrs(&["127.0.1.1:0", "127.0.1.2:0"]),
        &remotes,
        Bytes::from(data.clone()),
        &o,
    )
    .await
    .unwrap();
    let got = server.await.unwrap().unwrap();
    assert_eq!(sent.sha256, got.sha256);
    assert_eq!(std::fs::read(&out).unwrap(), data);
    assert_eq!(sent.paths.len(), 2);
    assert!(
        sent.paths.iter().all(|p| p.sent_packets > 100),
        "both paths carried data: {:?}",
        sent.paths
    );
}
