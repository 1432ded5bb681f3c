//! Batched socket IO (GSO on send, `recvmmsg` + GRO on receive): every datagram queued
//! arrives as it was queued, in order, whatever batches carried it; and where the
//! kernel offers segmentation offload (Linux), a run of equal datagrams for one
//! destination costs one send call, not one per datagram.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use cmt_core::packet::{DataChunk, DataFlags};
use cmt_core::{Chunk, Packet, Payload};
use cmt_net::io::Sockets;

fn a(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// A packet with one DATA chunk of `len` bytes, numbered `tsn`.
fn data(tsn: u32, len: usize) -> Packet {
    Packet {
        vtag: 7,
        chunks: vec![Chunk::Data(DataChunk {
            tsn,
            sid: 0,
            ssn: tsn as u16,
            ppid: 0,
            flags: DataFlags {
                beginning: true,
                ending: true,
                ..DataFlags::default()
            },
            payload: Payload::Bytes(Bytes::from(vec![tsn as u8; len])),
        })],
    }
}

#[tokio::test]
async fn queued_datagrams_arrive_whole_and_in_order_through_gso_and_gro() {
    let mut tx = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let mut rx = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let to = rx.local_addrs()[0];
    // Runs of full-size packets broken by short ones (a batch's last segment may be
    // shorter; the next must start a new batch), in three flushes.
    let sizes: Vec<usize> = (0..300)
        .map(|i| match i % 50 {
            49 => 300,
            17 => 1000,
            _ => 1400,
        })
        .collect();
    let sent: Vec<Packet> = sizes
        .iter()
        .enumerate()
        .map(|(i, &len)| data(i as u32, len))
        .collect();
    for part in sent.chunks(100) {
        for p in part {
            tx.queue(0, to, 5000, p);
        }
        tx.send_queued().await.unwrap();
    }
    let mut got = Vec::new();
    while got.len() < sent.len() {
        let arrival = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("every datagram arrives over loopback");
        assert_eq!(arrival.local, 0);
        got.push(arrival.packet.expect("each datagram parses on its own"));
    }
    assert_eq!(got, sent, "same packets, same order");
    let (t, r) = (tx.counts(), rx.counts());
    assert_eq!((t.datagrams_sent, r.datagrams_received), (300, 300));
    if cfg!(target_os = "linux") {
        // Each 50 datagrams are two runs, each ended by a shorter datagram (the 1000
        // and the 300 bytes): 18 and 32 datagrams, under 64 segments and 65,000 bytes.
        // So GSO (Linux ≥ 4.18) sends the 300 in 12 calls; without it, 300.
        assert_eq!(t.sends, 12, "{t:?}");
        // recvmmsg takes up to 32 messages (GRO coalesces more) per call.
        assert!(r.receives < 300, "{r:?}");
    }
}

/// Replies to datagrams of one receive batch may wait for the rest of the batch (they
/// then leave together): only while datagrams of the batch remain, only while what is
/// queued can leave in GSO batches, and never past one batch's worth.
#[tokio::test]
async fn replies_wait_for_the_rest_of_a_receive_batch_only_while_they_can_be_batched() {
    if !cfg!(target_os = "linux") {
        return; // GSO and GRO are Linux's
    }
    let mut tx = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let mut rx = Sockets::bind(&[a("127.0.0.1:0")]).await.unwrap();
    let (to_rx, to_tx) = (rx.local_addrs()[0], tx.local_addrs()[0]);
    for i in 0..20 {
        tx.queue(0, to_rx, 5000, &data(i, 1200));
    }
    tx.send_queued().await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut handled = 0;
    let mut deferred = 0;
    while handled < 20 {
        let _ = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("every datagram arrives over loopback");
        handled += 1;
        rx.queue(0, to_tx, 5000, &data(1000 + handled, 40));
        if rx.can_defer_sends() {
            deferred += 1;
        } else {
            rx.send_queued().await.unwrap();
        }
    }
    assert!(
        !rx.can_defer_sends(),
        "nothing left of the batch: nothing waits"
    );
    assert!(deferred > 0, "replies waited for the rest of the batch");
    assert!(
        rx.counts().sends < 20,
        "20 replies in fewer sends: {:?}",
        rx.counts()
    );
    // Without GSO towards the peer nothing waits: one send per reply.
    for i in 0..5 {
        tx.queue(0, to_rx, 5000, &data(i, 1200));
    }
    tx.send_queued().await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    rx.set_gso(cmt_net::io::Gso::Off);
    let _ = rx.recv().await;
    rx.queue(0, to_tx, 5000, &data(2000, 40));
    assert!(
        !rx.can_defer_sends(),
        "a reply that cannot be batched leaves at once"
    );
}
