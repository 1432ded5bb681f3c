//! A path whose delay jumps tenfold mid-transfer (10 → 100 ms, as a WiFi link that
//! starts retrying, or traffic rerouted): its packets overtake nothing, its RTO is too
//! short for a while (spurious timeouts), and the stream must not stall for long — the
//! other path takes what times out.

use std::net::SocketAddr;

use bytes::Bytes;
use cmt_net::io::Sockets;
use cmt_net::relay::{parse_spec, run_path};
use cmt_net::transfer::{receive_on, send, Options, Outputs};

mod common;
use common::stall;

fn a(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// In-order stall bound: the first spurious timeout of the slowed path (RTO.Min 0.2 s,
/// the RTO being fitted to 20 ms round trips) plus the slowed packets' extra 180 ms of
/// round trip, twice (the second timeout, backed off, before the new RTT is learnt),
/// plus queueing: 1 s.
const BOUND: f64 = 1.0;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenfold_delay_jump_on_one_path_stalls_the_stream_briefly() {
    let dir = std::env::temp_dir().join(format!("cmtlab-jump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (out, trace) = (dir.join("out.bin"), dir.join("rx.csv"));
    let rx = Sockets::bind(&[a("127.0.0.1:0"), a("127.0.0.2:0")])
        .await
        .unwrap();
    let t = rx.local_addrs();
    let fronts = [a("127.0.2.81:19601"), a("127.0.2.82:19602")];
    let specs = [
        format!(
            "{}>{},rate=20Mbps,delay=10ms,change=1500ms/delay=100ms",
            fronts[0], t[0]
        ),
        format!("{}>{},rate=10Mbps,delay=10ms", fronts[1], t[1]),
    ];
    let relays: Vec<_> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| tokio::spawn(run_path(parse_spec(s).unwrap(), 40 + i as u64)))
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    let o = Options {
        outputs: Outputs {
            trace: Some(trace.clone()),
            ..Outputs::default()
        },
        ..Options::default()
    };
    let out2 = out.clone();
    let server = tokio::spawn(async move { receive_on(rx, &out2, &o).await });
    let payload: Vec<u8> = (0..12_000_000u32).map(|i| (i * 13 + 1) as u8).collect();
    let sent = send(
        &[a("127.0.1.81:0"), a("127.0.1.82:0")],
        &fronts,
        Bytes::from(payload.clone()),
        &Options::default(),
    )
    .await
    .unwrap();
    let got = server.await.unwrap().unwrap();
    for r in relays {
        r.abort();
    }
    assert!(sent.confirmed && got.confirmed);
    assert_eq!(std::fs::read(&out).unwrap(), payload);
    let s = stall(&trace);
    eprintln!("in-order stall across the delay jump: {s:.3} s");
    assert!(s < BOUND, "in-order stall {s:.3} s");
    let _ = std::fs::remove_dir_all(&dir);
}
