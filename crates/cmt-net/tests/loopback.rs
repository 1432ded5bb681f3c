//! Real transfers over loopback UDP: two addresses per side, two paths.

use std::net::SocketAddr;
use std::path::PathBuf;

use bytes::Bytes;
use cmt_core::setup::CAUSE_USER_INITIATED_ABORT;
use cmt_net::io::Sockets;
use cmt_net::transfer::{receive_on, send, Ended, Options, Outputs, TransferError};

fn addrs(list: &[&str]) -> Vec<SocketAddr> {
    list.iter().map(|a| a.parse().unwrap()).collect()
}

type Server = tokio::task::JoinHandle<Result<cmt_net::transfer::Report, TransferError>>;

/// A receiver on `listen` (port 0) writing to a fresh file: its addresses, the file and
/// the task that returns its report.
async fn receiver(listen: &[&str], name: &str) -> (Vec<SocketAddr>, std::path::PathBuf, Server) {
    receiver_with(listen, name, Options::default()).await
}

async fn receiver_with(
    listen: &[&str],
    name: &str,
    o: Options,
) -> (Vec<SocketAddr>, std::path::PathBuf, Server) {
    let rx = Sockets::bind(&addrs(listen)).await.unwrap();
    let remotes = rx.local_addrs();
    let dir = std::env::temp_dir().join(format!("cmtlab-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("received.bin");
    let out2 = out.clone();
    let server = tokio::spawn(async move { receive_on(rx, &out2, &o).await });
    (remotes, out, server)
}

#[tokio::test]
async fn a_file_crosses_two_loopback_paths_intact_and_both_ends_close() {
    let (remotes, out, server) = receiver(&["127.0.0.1:0", "127.0.0.2:0"], "net").await;
    let o = Options::default();
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

/// Two addresses of ours to a receiver with one (a phone's WiFi and LTE to a server):
/// the receiver makes a path to each of our addresses on its one socket, tells their
/// arrivals apart by source, and both carry data.
#[tokio::test]
async fn two_of_our_addresses_to_one_of_theirs_make_two_paths_on_both_sides() {
    let (remotes, out, server) = receiver(&["127.0.0.1:0"], "one-remote").await;
    let data: Vec<u8> = (0..4_000_000u32).map(|i| (i >> 5) as u8).collect();
    let sent = send(
        &addrs(&["127.0.1.1:0", "127.0.1.2:0"]),
        &[remotes[0], remotes[0]],
        Bytes::from(data.clone()),
        &Options::default(),
    )
    .await
    .unwrap();
    let got = server.await.unwrap().unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), data);
    let theirs: Vec<_> = got.routes.iter().map(|r| r.1.ip().to_string()).collect();
    assert_eq!(theirs, ["127.0.1.1", "127.0.1.2"], "the receiver's paths");
    let received: Vec<u64> = got.paths.iter().map(|p| p.received_data_packets).collect();
    assert!(
        received.len() == 2 && received.iter().all(|&n| n > 100),
        "DATA packets per receiver path: {received:?}"
    );
    assert!(
        sent.paths.iter().all(|p| p.sent_packets > 100),
        "{:?}",
        sent.paths
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_bad_datagrams_do_not_disturb_a_transfer_and_are_counted() {
    use cmt_core::wire::encode;
    use cmt_core::{Chunk, Packet};
    use rand::{Rng, SeedableRng};

    let (remotes, out, server) = receiver(&["127.0.0.1:0", "127.0.0.2:0"], "garbage").await;
    let o = Options::default();
    let targets = remotes.clone();
    let attacker = tokio::spawn(async move {
        let s = tokio::net::UdpSocket::bind("127.0.0.9:0").await.unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut buf = Vec::new();
        for i in 0..10_000u32 {
            let dgram: Vec<u8> = match i % 3 {
                // Random bytes.
                0 => (0..rng.gen_range(0..300)).map(|_| rng.gen()).collect(),
                // A valid packet cut short.
                1 => {
                    encode(
                        &Packet {
                            vtag: rng.gen(),
                            chunks: vec![Chunk::CookieAck],
                        },
                        9,
                        9,
                        &mut buf,
                    );
                    buf[..rng.gen_range(0..buf.len())].to_vec()
                }
                // A valid packet under a wrong verification tag.
                _ => {
                    let p = Packet {
                        vtag: rng.gen(),
                        chunks: vec![Chunk::Sack(Default::default())],
                    };
                    encode(&p, 9, 9, &mut buf);
                    buf.clone()
                }
            };
            s.send_to(&dgram, targets[i as usize % 2]).await.unwrap();
            if i % 500 == 0 {
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
        }
    });
    let data: Vec<u8> = (0..8_000_000u32)
        .map(|i| (i.wrapping_mul(40503) >> 7) as u8)
        .collect();
    let sent = send(
        &addrs(&["127.0.1.1:0", "127.0.1.2:0"]),
        &remotes,
        Bytes::from(data.clone()),
        &o,
    )
    .await
    .unwrap();
    attacker.await.unwrap();
    let got = server.await.unwrap().unwrap();
    assert_eq!(sent.sha256, got.sha256);
    assert_eq!(std::fs::read(&out).unwrap(), data);
    // The garbage that reached the receiver while it ran (the transfer may end before
    // the attack does): all it received but what the sender sent. Every one of them is
    // counted as rejected.
    let seen = got.io.datagrams_received - sent.io.datagrams_sent;
    assert!(seen >= 1_000, "the attack overlapped the transfer: {seen}");
    assert!(
        got.rejected >= seen,
        "counted {} of {seen} bad datagrams",
        got.rejected
    );
}

#[tokio::test]
async fn a_real_run_can_be_captured_and_tshark_reads_the_handshake_and_data() {
    // Receiver-driven mode on both ends: the INIT and INIT ACK then end with a
    // Supported Extensions parameter of odd length, whose padding the chunk length must
    // not count (RFC 9260 §3.2; tshark calls it malformed otherwise), and the extension
    // chunks go on the wire too.
    let rev = Options {
        receiver_rates: true,
        ..Options::default()
    };
    let (remotes, out, server) = receiver_with(&["127.0.0.1:0"], "pcap", rev.clone()).await;
    let cap = out.with_file_name("send.pcap");
    let o = Options {
        outputs: Outputs {
            pcap: Some(cap.clone()),
            ..Outputs::default()
        },
        ..rev
    };
    send(
        &addrs(&["127.0.1.1:0"]),
        &remotes,
        Bytes::from(vec![7u8; 300_000]),
        &o,
    )
    .await
    .unwrap();
    server.await.unwrap().unwrap();
    // Every record is IPv4/UDP carrying a packet our parser accepts; the first is the
    // INIT, and a SHUTDOWN COMPLETE ends the sender's side.
    let firsts: Vec<_> = cmt_sim::pcap::read(&std::fs::read(&cap).unwrap())
        .unwrap()
        .iter()
        .map(|r| {
            cmt_core::wire::decode(&r.sctp)
                .unwrap()
                .packet
                .chunks
                .into_iter()
                .next()
        })
        .collect();
    assert!(firsts.len() > 200);
    assert!(
        matches!(firsts[0], Some(cmt_core::Chunk::Init(_))),
        "INIT first"
    );
    assert!(firsts
        .iter()
        .any(|c| matches!(c, Some(cmt_core::Chunk::ShutdownComplete { .. }))));
    // The receiver's port is ephemeral here, not 9899: tell tshark it carries SCTP.
    let decode_as = format!("udp.port=={},sctp", remotes[0].port());
    match std::process::Command::new("tshark")
        .args(["-d", &decode_as, "-o", "sctp.checksum:CRC-32C", "-r"])
        .arg(&cap)
        .args([
            "-T",
            "fields",
            "-e",
            "sctp.chunk_type",
            "-e",
            "sctp.checksum.status",
            "-e",
            "_ws.malformed",
        ])
        .output()
    {
        Err(_) => eprintln!("tshark not installed: skipping the Wireshark decode check"),
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), firsts.len(), "tshark sees every packet");
            assert_eq!(lines[0].split('\t').next(), Some("1"), "INIT first");
            let fields = |l: &str| l.split('\t').map(str::to_owned).collect::<Vec<_>>();
            assert!(
                lines.iter().all(|l| fields(l)[1] == "1"),
                "every checksum good"
            );
            assert!(
                lines
                    .iter()
                    .all(|l| fields(l).get(2).is_none_or(|m| m.is_empty())),
                "no packet malformed: {text}"
            );
            assert!(
                lines.iter().any(|l| l.starts_with("14")),
                "SHUTDOWN COMPLETE seen"
            );
        }
    }
}

/// Receiver-driven mode needs both ends: each announces the round-info and rate-advert
/// chunk types only when asked, and the mode is on only when both announced them.
#[tokio::test]
async fn receiver_driven_mode_is_negotiated_and_falls_back_when_one_end_does_not_ask() {
    let data: Vec<u8> = (0..1_000_000u32).map(|i| ((i * 7) >> 5) as u8).collect();
    let rev = Options {
        scheduler: "cmt-rev".into(),
        cc: "receiver".into(),
        receiver_rates: true,
        ..Options::default()
    };
    for (receiver_asks, name) in [(true, "rev-both"), (false, "rev-one")] {
        let ro = Options {
            receiver_rates: receiver_asks,
            ..Options::default()
        };
        let (remotes, out, server) = receiver_with(&["127.0.0.1:0", "127.0.0.2:0"], name, ro).await;
        let locals = addrs(&["127.0.1.1:0", "127.0.1.2:0"]);
        let cap = out.with_file_name("send.pcap");
        let o = Options {
            outputs: Outputs {
                pcap: Some(cap.clone()),
                ..Outputs::default()
            },
            ..rev.clone()
        };
        let sent = send(&locals, &remotes, Bytes::from(data.clone()), &o)
            .await
            .unwrap();
        let got = server.await.unwrap().unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), data, "{name}");
        assert_eq!(sent.receiver_rates, receiver_asks, "{name}: sender's view");
        assert_eq!(got.receiver_rates, receiver_asks, "{name}: receiver's view");
        // On the wire: round-info chunks on DATA and rate adverts on SACKs exactly when
        // the mode was negotiated.
        let chunks: Vec<cmt_core::Chunk> = cmt_sim::pcap::read(&std::fs::read(&cap).unwrap())
            .unwrap()
            .iter()
            .flat_map(|r| cmt_core::wire::decode(&r.sctp).unwrap().packet.chunks)
            .collect();
        let has = |f: fn(&cmt_core::Chunk) -> bool| chunks.iter().any(f);
        assert_eq!(
            has(|c| matches!(c, cmt_core::Chunk::RoundInfo { .. })),
            receiver_asks,
            "{name}: round info"
        );
        assert_eq!(
            has(|c| matches!(c, cmt_core::Chunk::RateAdvert { .. })),
            receiver_asks,
            "{name}: rate adverts"
        );
    }
}

/// Waits (at most 30 s) until some file in `dir` — the receiver's file in the making —
/// holds `bytes`.
async fn mid_transfer(dir: &std::path::Path, bytes: u64) {
    for _ in 0..15_000 {
        let stored = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .max()
            .unwrap_or(0);
        if stored >= bytes {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    panic!("{}: the transfer did not start within 30 s", dir.display());
}

/// Either end can abort mid-transfer: the other stops at once and says the peer
/// aborted (not a timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_mid_transfer_stops_the_peer_at_once_with_a_clear_error() {
    let data = Bytes::from(vec![3u8; 50_000_000]);
    for (sender_aborts, name) in [(true, "abort-tx"), (false, "abort-rx")] {
        let n = std::sync::Arc::new(tokio::sync::Notify::new());
        let with_abort = Options {
            abort: Some(n.clone()),
            ..Options::default()
        };
        let (ro, so) = if sender_aborts {
            (Options::default(), with_abort)
        } else {
            (with_abort, Options::default())
        };
        let (remotes, out, server) = receiver_with(&["127.0.0.1:0"], name, ro).await;
        let client = tokio::spawn({
            let data = data.clone();
            async move { send(&addrs(&["127.0.1.1:0"]), &remotes, data, &so).await }
        });
        // Mid-transfer: the receiver has stored a first megabyte of the 50 (a fixed
        // delay is not enough on a loaded machine, where the handshake can take longer).
        mid_transfer(out.parent().unwrap(), 1 << 20).await;
        let started = std::time::Instant::now();
        n.notify_one();
        let (tx, rx) = (client.await.unwrap(), server.await.unwrap());
        let (ours, theirs) = if sender_aborts {
            (tx.map(|_| ()), rx.map(|_| ()))
        } else {
            (rx.map(|_| ()), tx.map(|_| ()))
        };
        assert_eq!(ours.unwrap_err(), TransferError::Aborted, "{name}");
        assert_eq!(
            theirs.unwrap_err(),
            TransferError::Ended(Ended::PeerAborted(Some(CAUSE_USER_INITIATED_ABORT))),
            "{name}"
        );
        assert!(
            started.elapsed().as_secs() < 3,
            "{name}: both ends stop within 3 s of the abort (no timeout involved)"
        );
        assert!(!out.exists(), "{name}: no partial file written");
    }
}

/// A two-path transfer of `data` whose ends both write a per-packet trace, as `ext`
/// files (`csv`, `qlog`) in a fresh directory named after `name`: the sender's report
/// and the sender's and receiver's trace files.
async fn traced_transfer(
    name: &str,
    ext: &str,
    data: Bytes,
) -> (cmt_net::transfer::Report, PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("cmtlab-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (tx_trace, rx_trace) = (
        dir.join(format!("send.{ext}")),
        dir.join(format!("recv.{ext}")),
    );
    let traced = |file: &PathBuf| Options {
        outputs: Outputs {
            trace: Some(file.clone()),
            ..Outputs::default()
        },
        ..Options::default()
    };
    let (remotes, _out, server) =
        receiver_with(&["127.0.0.1:0", "127.0.0.2:0"], name, traced(&rx_trace)).await;
    let local = addrs(&["127.0.1.1:0", "127.0.1.2:0"]);
    let sent = send(&local, &remotes, data, &traced(&tx_trace))
        .await
        .unwrap();
    server.await.unwrap().unwrap();
    (sent, tx_trace, rx_trace)
}

#[tokio::test]
async fn both_ends_write_a_per_packet_trace_that_matches_their_reports() {
    let data: Vec<u8> = (0..1_000_000u32).map(|i| (i * 7) as u8).collect();
    let (sent, tx_trace, rx_trace) = traced_transfer("trace", "csv", data.clone().into()).await;
    let rows = |f: &std::path::Path| -> Vec<Vec<String>> {
        let text = std::fs::read_to_string(f).unwrap();
        let mut lines = text.lines();
        assert!(lines
            .next()
            .unwrap()
            .starts_with("time_s,side,path,path_name,direction"));
        lines
            .map(|l| l.split(',').map(String::from).collect())
            .collect()
    };
    let (tx, rx) = (rows(&tx_trace), rows(&rx_trace));
    // Sender: sends and retransmissions per path are the report's counters.
    for (i, p) in sent.paths.iter().enumerate() {
        let n = tx
            .iter()
            .filter(|r| r[2] == i.to_string() && (r[5] == "send" || r[5] == "retransmit"))
            .filter(|r| r[4] == "data")
            .count() as u64;
        assert_eq!(n, p.sent_packets, "path {i}");
    }
    assert!(tx.iter().all(|r| r[1] == "sender"));
    assert!(
        tx.iter().any(|r| r[4] == "ack" && r[5] == "arrive"),
        "SACK arrivals"
    );
    // Receiver: every byte delivered once, in TSN order, and SACKs sent. The stream
    // carries the file behind its 24-byte header (where it starts, its length).
    let delivered: Vec<&Vec<String>> = rx.iter().filter(|r| r[5] == "deliver").collect();
    let bytes: u64 = delivered.iter().map(|r| r[8].parse::<u64>().unwrap()).sum();
    assert_eq!(
        bytes,
        data.len() as u64 + cmt_net::resume::HEADER_LEN as u64
    );
    let tsns: Vec<u64> = delivered.iter().map(|r| r[7].parse().unwrap()).collect();
    assert!(tsns.windows(2).all(|w| w[1] == w[0] + 1));
    assert!(rx.iter().any(|r| r[4] == "ack" && r[5] == "send"));
    // Paths are named by their addresses.
    assert!(tx[0][3].contains('>'), "{:?}", tx[0]);
}

#[tokio::test]
async fn a_qlog_trace_of_a_real_transfer_holds_each_delivery_on_its_path() {
    let data = Bytes::from(vec![7u8; 600_000]);
    let (sent, tx_trace, rx_trace) = traced_transfer("qlog", "qlog", data).await;
    // JSON-SEQ: RS, a JSON text, LF per record; the first is qlog's header.
    let events = |f: &std::path::Path| -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(text.starts_with('\u{1e}'));
        let mut v: Vec<serde_json::Value> = text
            .split('\u{1e}')
            .skip(1)
            .map(|r| serde_json::from_str(r).unwrap())
            .collect();
        assert_eq!(v.remove(0)["qlog_format"], "JSON-SEQ");
        v
    };
    let (tx, rx) = (events(&tx_trace), events(&rx_trace));
    let named = |v: &[serde_json::Value], n: &str| -> Vec<serde_json::Value> {
        v.iter().filter(|e| e["name"] == n).cloned().collect()
    };
    // Sender: DATA packets sent per path are the report's counters.
    for (i, p) in sent.paths.iter().enumerate() {
        let n = named(&tx, "transport:packet_sent")
            .iter()
            .filter(|e| e["data"]["path_id"] == i && e["data"]["header"]["packet_number"].is_u64())
            .count() as u64;
        assert_eq!(n, p.sent_packets, "path {i}");
    }
    // Receiver: the stream (file and 24-byte header) delivered once, TSNs consecutive,
    // over both paths.
    let moved = named(&rx, "transport:data_moved");
    let bytes: u64 = moved
        .iter()
        .map(|e| e["data"]["length"].as_u64().unwrap())
        .sum();
    assert_eq!(bytes, 600_000 + cmt_net::resume::HEADER_LEN as u64);
    let tsns: Vec<u64> = moved
        .iter()
        .map(|e| e["data"]["cmtlab"]["tsn"].as_u64().unwrap())
        .collect();
    assert!(tsns.windows(2).all(|w| w[1] == w[0] + 1));
    for path in 0..2 {
        assert!(
            moved.iter().any(|e| e["data"]["path_id"] == path),
            "deliveries from path {path}"
        );
    }
}
