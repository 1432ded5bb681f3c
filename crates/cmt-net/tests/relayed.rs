//! Real transfers through the impairment relay: three paths of different rate, delay
//! and loss; and one relay dying in the middle of a transfer.

use std::net::SocketAddr;

use bytes::Bytes;
use cmt_net::io::Sockets;
use cmt_net::relay::{parse_spec, run_path};
use cmt_net::transfer::{receive_on, send, Options};

fn a(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn data(n: u32) -> Vec<u8> {
    (0..n)
        .map(|i| (i.wrapping_mul(2654435761) >> 11) as u8)
        .collect()
}

/// Receiver on 127.0.0.1-3 (port 0), relays on 127.0.2.1-3:port, sender on 127.0.1.x.
async fn transfer(
    base_port: u16,
    links: [&str; 3],
    bytes: u32,
    kill_path_after: Option<(usize, std::time::Duration)>,
) -> (
    cmt_net::transfer::Report,
    cmt_net::transfer::Report,
    Vec<u8>,
) {
    let rx = Sockets::bind(&[a("127.0.0.1:0"), a("127.0.0.2:0"), a("127.0.0.3:0")])
        .await
        .unwrap();
    let targets = rx.local_addrs();
    let mut relays = Vec::new();
    let mut fronts = Vec::new();
    for (i, l) in links.iter().enumerate() {
        let front = a(&format!("127.0.2.{}:{}", i + 1, base_port));
        let spec = parse_spec(&format!("{front}>{},{l}", targets[i])).unwrap();
        relays.push(tokio::spawn(run_path(spec, 7 + i as u64)));
        fronts.push(front);
    }
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let dir = std::env::temp_dir().join(format!("cmtlab-relay-{}-{base_port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out.bin");
    let o = Options::default();
    let (out2, o2) = (out.clone(), o.clone());
    let server = tokio::spawn(async move { receive_on(rx, &out2, &o2).await });
    if let Some((i, after)) = kill_path_after {
        let h = relays.remove(i);
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            h.abort();
        });
    }
    let payload = data(bytes);
    let sent = send(
        &[a("127.0.1.1:0"), a("127.0.1.2:0"), a("127.0.1.3:0")],
        &fronts,
        Bytes::from(payload.clone()),
        &o,
    )
    .await
    .unwrap();
    let got = server.await.unwrap().unwrap();
    for r in relays {
        r.abort();
    }
    assert_eq!(std::fs::read(&out).unwrap(), payload);
    (sent, got, payload)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_megabytes_over_three_impaired_paths_arrive_identical() {
    let (sent, got, _) = transfer(
        19100,
        [
            "rate=40Mbps,delay=10ms,loss=0.5%",
            "rate=20Mbps,delay=30ms,loss=1%",
            "rate=8Mbps,delay=60ms,loss=2%,gilbert=markov1pct",
        ],
        20_000_000,
        None,
    )
    .await;
    assert_eq!(sent.sha256, got.sha256);
    assert!(
        sent.paths.iter().all(|p| p.sent_packets > 200),
        "{:?}",
        sent.paths
    );
    assert!(
        sent.paths.iter().map(|p| p.retransmissions).sum::<u64>() > 0,
        "losses were repaired"
    );
    // Reordering, where it happens: chunks of a TSN sent on the 10 ms path right after
    // one on the 60 ms path wait about the 50 ms difference of one-way delay for it
    // (less the little time between the two sends). The sender delivers nothing.
    assert_eq!(sent.reordering, None);
    let o = got.reordering.expect("the receiver measured reordering");
    assert!(o.chunks >= 20_000_000 / 1500, "{o:?}");
    assert!(o.reordered_share > 0.0 && o.max_ms >= 40.0, "{o:?}");
    assert!(o.p99_ms <= o.max_ms && o.mean_ms <= o.max_ms, "{o:?}");
    assert!(o.held_peak_bytes > 0, "{o:?}");
    // The receiver answers every path back through its own relay (the address its
    // packets come from), never straight to the sender's addresses.
    let back: std::collections::BTreeSet<_> = got.routes.iter().map(|r| r.1).collect();
    assert_eq!(back.len(), 3, "{:?}", got.routes);
    assert!(
        got.routes
            .iter()
            .all(|r| r.1.ip().to_string().starts_with("127.0.0.")),
        "{:?}",
        got.routes
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_that_dies_mid_transfer_leaves_the_other_paths_to_finish() {
    let (sent, got, _) = transfer(
        19200,
        [
            "rate=20Mbps,delay=10ms",
            "rate=20Mbps,delay=20ms",
            "rate=20Mbps,delay=15ms",
        ],
        10_000_000,
        Some((1, std::time::Duration::from_millis(700))),
    )
    .await;
    assert_eq!(sent.sha256, got.sha256);
    // 10 MB over the two live 20 Mbit/s paths take about 2 s. CMT-PF keeps new data off
    // the dead path after its second timeout; without it the chunks put on that path
    // wait for each backed-off RTO (1 + 2 + … + 32 s) before going elsewhere.
    assert!(got.seconds < 20.0, "took {:.1} s", got.seconds);
}
