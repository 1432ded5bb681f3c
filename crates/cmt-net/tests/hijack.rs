//! An on-path party that learns the verification tag and a TSN from the traffic and
//! sends DATA from an address of its own gets no byte into the received file: a new
//! source is held until it answers a HEARTBEAT probe, which it never sees answered.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use cmt_core::packet::{DataChunk, DataFlags};
use cmt_core::wire::{decode, encode};
use cmt_core::{Chunk, Packet, Payload};
use cmt_net::io::Sockets;
use cmt_net::relay::{parse_spec, run_path};
use cmt_net::transfer::{receive_on, send, Options};
use tokio::net::UdpSocket;

fn a(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// What the tap saw going to the receiver: ports, tag and the highest TSN.
#[derive(Default, Clone, Copy)]
struct Seen {
    ports: (u16, u16),
    vtag: u32,
    tsn: Option<u32>,
}

/// A transparent UDP forwarder between the relay and the receiver that reads the
/// traffic, as an on-path observer would.
async fn tap(listen: SocketAddr, target: SocketAddr, seen: Arc<Mutex<Seen>>) {
    let front = UdpSocket::bind(listen).await.unwrap();
    let back = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let mut peer = None;
    let (mut f, mut b) = (vec![0u8; 65536], vec![0u8; 65536]);
    loop {
        tokio::select! {
            Ok((n, from)) = front.recv_from(&mut f) => {
                peer = Some(from);
                if let Ok(d) = decode(&f[..n]) {
                    let mut s = seen.lock().unwrap();
                    if d.packet.vtag != 0 {
                        s.vtag = d.packet.vtag;
                        s.ports = (d.src_port, d.dst_port);
                    }
                    for c in &d.packet.chunks {
                        if let Chunk::Data(dc) = c {
                            s.tsn = Some(s.tsn.map_or(dc.tsn, |t: u32| t.max(dc.tsn)));
                        }
                    }
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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_data_from_a_new_address_with_the_right_tag_never_reaches_the_file() {
    let dir = std::env::temp_dir().join(format!("cmtlab-hijack-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out.bin");
    let rx = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let target = rx.local_addrs()[0];
    let seen = Arc::new(Mutex::new(Seen::default()));
    let tap_addr = a("127.0.2.30:19431");
    tokio::spawn(tap(tap_addr, target, seen.clone()));
    let front = a("127.0.2.31:19432");
    let relay = tokio::spawn(run_path(
        parse_spec(&format!(
            "{front}>{tap_addr},rate=8Mbps,delay=5ms,queue=unlimited"
        ))
        .unwrap(),
        3,
    ));
    tokio::time::sleep(Duration::from_millis(30)).await;
    let out2 = out.clone();
    let server = tokio::spawn(async move { receive_on(rx, &out2, &Options::default()).await });
    // The attacker: waits for the tag and a TSN, then sprays DATA ahead of the sender
    // (TSNs it will send later) from its own address, with the right tag and ports.
    let attacker = tokio::spawn({
        let seen = seen.clone();
        async move {
            let sock = UdpSocket::bind("127.0.9.9:0").await.unwrap();
            let mut sent = 0u32;
            for _ in 0..200 {
                tokio::time::sleep(Duration::from_millis(5)).await;
                let s = *seen.lock().unwrap();
                let Some(tsn) = s.tsn else { continue };
                for k in 1..=20u32 {
                    let p = Packet {
                        vtag: s.vtag,
                        chunks: vec![Chunk::Data(DataChunk {
                            tsn: tsn.wrapping_add(20 + k),
                            sid: 0,
                            ssn: 0,
                            ppid: 0,
                            flags: DataFlags {
                                beginning: true,
                                ending: true,
                                ..DataFlags::default()
                            },
                            payload: Payload::Bytes(Bytes::from(vec![0xEE; 1000])),
                        })],
                    };
                    let mut buf = Vec::new();
                    encode(&p, s.ports.0, s.ports.1, &mut buf);
                    let _ = sock.send_to(&buf, target).await;
                    sent += 1;
                }
            }
            sent
        }
    });
    let payload: Vec<u8> = (0..2_000_000u32).map(|i| (i * 31 + 7) as u8).collect();
    let sent = send(
        &[a("127.0.1.31:0")],
        &[front],
        Bytes::from(payload.clone()),
        &Options::default(),
    )
    .await
    .unwrap();
    let got = server.await.unwrap().unwrap();
    let forged = attacker.await.unwrap();
    relay.abort();
    assert!(forged > 100, "the attack ran ({forged} forged packets)");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        payload,
        "no foreign byte in the file"
    );
    assert!(sent.confirmed && got.confirmed && sent.sha256 == got.sha256);
    assert!(
        got.rejected >= forged as u64 / 2,
        "rejected {} of {forged}",
        got.rejected
    );
    let _ = std::fs::remove_dir_all(&dir);
}
