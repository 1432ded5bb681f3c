//! The same protocol core in the simulator and on real sockets: a small two-path file
//! transfer delivers the same bytes in order in both, the first flight — decided by the
//! core alone, before anything comes back — puts the same TSNs on the same path, and
//! both confirm and then use the second path.

use std::net::SocketAddr;

use bytes::Bytes;
use cmt_core::Chunk;

/// (TSN offset, path) of every DATA chunk the sender sent, from a pcap file; the path
/// is read from the third octet of the sender's address (10.0.p+1.x in the simulator,
/// 127.0.1.p+1 / 127.0.p+1.x here).
fn data_sent(pcap: &[u8], path_of: impl Fn([u8; 4]) -> Option<usize>) -> Vec<(u64, usize)> {
    let (mut out, mut first) = (Vec::new(), None);
    for r in cmt_sim::pcap::read(pcap).unwrap() {
        let std::net::IpAddr::V4(src) = r.src.0 else {
            continue;
        };
        if let (Some(path), Ok(d)) = (path_of(src.octets()), cmt_core::wire::decode(&r.sctp)) {
            for c in d.packet.chunks {
                if let Chunk::Data(data) = c {
                    let f = *first.get_or_insert(data.tsn);
                    out.push((data.tsn.wrapping_sub(f) as u64, path));
                }
            }
        }
    }
    out
}

#[test]
fn simulator_and_loopback_deliver_the_same_bytes_and_start_with_the_same_flight() {
    let dir = std::env::temp_dir().join(format!("cmtlab-conf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let size = 300_000u32;

    // Simulator: two fast, clean paths; IPv4 + UDP headers as on the real run.
    let scenario = format!(
        r#"
seed = 1
file_size = {size}
[association]
ip_header = 28
confirm_paths = true
[receiver]
rbuf = "4MB"
[[links]]
name = "a"
rate = "1Gbps"
delay = "1ms"
[[links]]
name = "b"
rate = "1Gbps"
delay = "1ms"
[[paths]]
name = "a"
links = ["a"]
[[paths]]
name = "b"
links = ["b"]
"#
    );
    let sim_pcap = dir.join("sim.pcap");
    let mut sim =
        cmt_sim::Simulation::new(cmt_sim::load_str(&scenario, "t", None, &[]).unwrap()).unwrap();
    sim.capture_to(Box::new(std::fs::File::create(&sim_pcap).unwrap()))
        .unwrap();
    sim.run(&mut |_| {});
    sim.finish_capture().unwrap();
    let summary = cmt_sim::Summary::of(&sim, 0.0);
    assert_eq!(summary.delivered_bytes, size as u64);

    // Real sockets, same core, same algorithms (round-robin, RTX-CWND, Reno).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let real_pcap = dir.join("real.pcap");
    let out = dir.join("out.bin");
    let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    let report = rt.block_on(async {
        let a = |s: &str| -> SocketAddr { s.parse().unwrap() };
        let rx = cmt_net::io::Sockets::bind(&[a("127.0.0.1:0"), a("127.0.0.2:0")])
            .await
            .unwrap();
        let remotes = rx.local_addrs();
        let o = cmt_net::transfer::Options::default();
        let out2 = out.clone();
        let server =
            tokio::spawn(async move { cmt_net::transfer::receive_on(rx, &out2, &o).await });
        let o = cmt_net::transfer::Options {
            outputs: cmt_net::transfer::Outputs {
                pcap: Some(real_pcap.clone()),
                ..cmt_net::transfer::Outputs::default()
            },
            ..Default::default()
        };
        cmt_net::transfer::send(
            &[a("127.0.1.1:0"), a("127.0.1.2:0")],
            &remotes,
            Bytes::from(data.clone()),
            &o,
        )
        .await
        .unwrap();
        server.await.unwrap().unwrap()
    });
    assert_eq!(report.bytes, size as u64);
    assert_eq!(std::fs::read(&out).unwrap(), data, "same bytes, in order");

    let sim_sent = data_sent(&std::fs::read(&sim_pcap).unwrap(), |ip| {
        (ip[0] == 10 && ip[3] == 1).then(|| ip[2] as usize - 1)
    });
    let real_sent = data_sent(&std::fs::read(&real_pcap).unwrap(), |ip| {
        (ip[0] == 127 && ip[1] == 0 && ip[2] == 1).then(|| ip[3] as usize - 1)
    });
    // The first flight — path 0's initial window, sent before anything comes back (the
    // other path is still being confirmed) — is the core's decision alone.
    let flight = 3;
    assert_eq!(
        &sim_sent[..flight],
        &real_sent[..flight],
        "sim {sim_sent:?}"
    );
    assert!(sim_sent[..flight].iter().all(|s| s.1 == 0));
    // After confirmation both worlds use the second path too.
    assert!(sim_sent.iter().any(|s| s.1 == 1) && real_sent.iter().any(|s| s.1 == 1));
}
