//! pcap capture of a simulated run: every record is IPv4 + UDP (port 9899) + an SCTP
//! packet our own parser accepts with a valid checksum, in time order; tshark, when
//! installed, decodes it as SCTP with no malformed packets and good checksums.

use cmt_sim::{load_str, Simulation};

const TWO: &str = r#"
seed = 3
duration = "3s"
[[links]]
name = "a"
rate = "5Mbps"
delay = "10ms"
loss = "2%"
[[links]]
name = "b"
rate = "2Mbps"
delay = "40ms"
[[paths]]
name = "a"
links = ["a"]
[[paths]]
name = "b"
links = ["b"]
"#;

#[test]
fn a_capture_holds_every_packet_as_sctp_over_udp() {
    let dir = std::env::temp_dir().join(format!("cmtlab-capture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("run.pcap");
    let mut sim = Simulation::new(load_str(TWO, "t", None, &[]).unwrap()).unwrap();
    sim.capture_to(Box::new(std::fs::File::create(&file).unwrap()))
        .unwrap();
    sim.run(&mut |_| {});
    let n = sim.finish_capture().unwrap();
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(&bytes[..4], &[0xd4, 0xc3, 0xb2, 0xa1]);
    let (mut pos, mut records, mut data, mut sacks, mut last_ts) = (24, 0u64, 0, 0, 0u64);
    while pos < bytes.len() {
        let u32le = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        let ts = u32le(pos) as u64 * 1_000_000 + u32le(pos + 4) as u64;
        let len = u32le(pos + 8) as usize;
        assert!(ts >= last_ts, "records in time order");
        last_ts = ts;
        let ip = &bytes[pos + 16..pos + 16 + len];
        assert_eq!((ip[0], ip[9]), (0x45, 17), "IPv4 carrying UDP");
        assert_eq!(
            &ip[20..24],
            &[0x26, 0xAB, 0x26, 0xAB],
            "UDP port 9899 both ways"
        );
        let d = cmt_core::wire::decode(&ip[28..]).expect("our parser accepts it");
        for c in &d.packet.chunks {
            match c {
                cmt_core::Chunk::Data(_) => data += 1,
                cmt_core::Chunk::Sack(_) => sacks += 1,
                _ => {}
            }
        }
        records += 1;
        pos += 16 + len;
    }
    assert_eq!(records, n);
    assert!(data > 500 && sacks > 200, "{data} DATA, {sacks} SACK");

    let tshark = std::process::Command::new("tshark")
        .args(["-o", "sctp.checksum:CRC-32C", "-r"])
        .arg(&file)
        .args([
            "-T",
            "fields",
            "-e",
            "sctp.checksum.status",
            "-e",
            "_ws.malformed",
        ])
        .output();
    match tshark {
        Err(_) => eprintln!("tshark not installed: skipping the Wireshark decode check"),
        Ok(o) => {
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let text = String::from_utf8_lossy(&o.stdout);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len() as u64, n, "tshark sees every packet");
            // Checksum status 1 = good; no malformed-packet field.
            assert!(lines.iter().all(|l| l.trim_end() == "1"), "{text}");
        }
    }
}
