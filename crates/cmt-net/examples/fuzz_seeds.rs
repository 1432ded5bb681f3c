//! Writes the fuzzing seed corpus (`fuzz/seeds/`) from real captures: a transfer over
//! loopback without and with a key, `--pcap` on both ends. Every packet kind seen (by
//! direction and chunk types) becomes a `decode` seed. An `association` program moves
//! the harness's own file with the captured packets injected along the way (under a
//! wrong tag; the last few under the right one); a `listener` program feeds it the
//! captured packets with cookie echoes in between (`cmt_core::fuzzing` reads them).
//!
//! `cargo run -p cmt-net --example fuzz_seeds` (rewrites the folder).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use cmt_core::auth::AuthConfig;
use cmt_core::wire::decode;
use cmt_net::io::Sockets;
use cmt_net::transfer::{receive_on, send, Options, Outputs};

fn seeds() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds")
}

/// One capture of a 300 kB transfer (the sender's, which holds both directions).
async fn capture(dir: &Path, key: bool) -> Vec<Vec<u8>> {
    let o = Options {
        auth: key.then(|| AuthConfig::with_key(b"seed".to_vec())),
        rbuf: 65_536,
        ..Options::default()
    };
    let rx = Sockets::bind(&["127.0.0.1:0".parse::<SocketAddr>().unwrap()])
        .await
        .expect("bind");
    let remote = rx.local_addrs();
    let out = dir.join(format!("out-{key}.bin"));
    let ro = o.clone();
    let server = tokio::spawn(async move { receive_on(rx, &out, &ro).await });
    let pcap = dir.join(format!("tx-{key}.pcap"));
    let so = Options {
        outputs: Outputs {
            pcap: Some(pcap.clone()),
            ..Outputs::default()
        },
        ..o
    };
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 13) as u8).collect();
    send(
        &["127.0.1.9:0".parse().unwrap()],
        &remote,
        Bytes::from(data),
        &so,
    )
    .await
    .expect("the transfer");
    server.await.expect("joined").expect("received");
    let records = cmt_sim::pcap::read(&std::fs::read(&pcap).expect("capture")).expect("pcap");
    records.into_iter().map(|r| r.sctp).collect()
}

fn write(target: &str, name: &str, bytes: &[u8]) {
    let d = seeds().join(target);
    std::fs::create_dir_all(&d).expect("seed folder");
    std::fs::write(d.join(name), bytes).expect("seed");
}

/// An operation carrying a datagram: the operation's bytes, a 16-bit length, the bytes.
fn datagram_op(op: &[u8], raw: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(op);
    out.extend_from_slice(&(raw.len() as u16).to_le_bytes());
    out.extend_from_slice(raw);
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let tmp = std::env::temp_dir().join(format!("cmtlab-seeds-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp");
    let _ = std::fs::remove_dir_all(seeds());
    let mut kinds = BTreeSet::new();
    let mut n = 0;
    for key in [false, true] {
        let packets = capture(&tmp, key).await;
        let mut program = vec![7u8];
        let mut listen = vec![u8::from(key), 3];
        let last = packets.len().saturating_sub(4);
        for (i, raw) in packets.iter().enumerate() {
            let Ok(d) = decode(raw) else { continue };
            let types: Vec<u8> = d.packet.chunks.iter().map(|c| c.chunk_type()).collect();
            if kinds.insert((key, d.src_port, types)) {
                write("decode", &format!("{n:03}.bin"), raw);
                n += 1;
            }
            // The harness's own exchange and a little time, and now and then a
            // captured packet to the receiver (b) or the sender (a).
            program.extend_from_slice(&[1, 0, 0, 5]);
            if i % 8 == 0 || i >= last {
                let to_b = d.packet.has_data();
                let right_tag = u8::from(i >= last);
                datagram_op(&[if to_b { 2 } else { 3 }, right_tag], raw, &mut program);
            }
            if listen.len() < 4_000 {
                datagram_op(&[1], raw, &mut listen);
                // An INIT, then an issued cookie echoed as it was and with a bit
                // changed.
                listen.extend_from_slice(&[2, 1, 2, 3, 3, 0, 255, 0, 3, 0, 9, 4]);
            }
        }
        write("association", &format!("capture-{key}.bin"), &program);
        write("listener", &format!("capture-{key}.bin"), &listen);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    println!(
        "{n} decode seeds and 2 programs each for association and listener in {}",
        seeds().display()
    );
}
