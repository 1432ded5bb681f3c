//! Streams through `cmtlab send -` and `cmtlab recv --out -` over loopback paths: what
//! goes into the sender's standard input comes out of the receiver's standard output
//! byte for byte, with the report on standard error; a stream cut short ends in a
//! non-zero exit; `--json` prints the report as one JSON object.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_cmtlab"))
}

/// A UDP port free on 127.0.0.1 and 127.0.0.2 a moment ago.
fn free_port() -> u16 {
    loop {
        let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = a.local_addr().unwrap().port();
        if std::net::UdpSocket::bind(("127.0.0.2", port)).is_ok() {
            return port;
        }
    }
}

/// Pseudo-random bytes.
fn data(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e3779b97f4a7c15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// `cmtlab recv --out -` on two loopback addresses at `port`, with `extra` options.
fn receiver(port: u16, extra: &[&str]) -> std::process::Child {
    Command::new(bin())
        .args(["recv", "--listen"])
        .arg(format!("127.0.0.1:{port},127.0.0.2:{port}"))
        .args(["--out", "-", "--timeout", "60"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cmtlab starts")
}

/// `cmtlab send -` from two loopback addresses to `port`, its standard input piped.
fn sender(port: u16, extra: &[&str]) -> std::process::Child {
    Command::new(bin())
        .args([
            "send",
            "-",
            "--local",
            "127.0.1.1:0,127.0.1.2:0",
            "--remote",
        ])
        .arg(format!("127.0.0.1:{port},127.0.0.2:{port}"))
        .args(["--timeout", "60"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cmtlab starts")
}

/// A running process whose outputs are read as it goes (a pipeline's next program).
struct Running {
    child: std::process::Child,
    out: std::thread::JoinHandle<Vec<u8>>,
    err: std::thread::JoinHandle<String>,
}

fn running(child: std::process::Child) -> Running {
    reading(child, Duration::ZERO, usize::MAX)
}

/// As [`running`], its standard output read in 64 KB blocks with `pause` after each,
/// and closed after `stop_after` bytes (a consumer that goes away).
fn reading(mut child: std::process::Child, pause: Duration, stop_after: usize) -> Running {
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    Running {
        child,
        out: std::thread::spawn(move || {
            let mut v = Vec::new();
            let mut block = vec![0u8; 64 << 10];
            while v.len() < stop_after {
                match out.read(&mut block) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => v.extend_from_slice(&block[..n]),
                }
                std::thread::sleep(pause);
            }
            v
        }),
        err: std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        }),
    }
}

/// Waits for `r` at most `limit` (then kills it); its exit code and both outputs.
fn finish(mut r: Running, limit: Duration) -> (Option<i32>, Vec<u8>, String) {
    let t = Instant::now();
    let code = loop {
        match r.child.try_wait().unwrap() {
            Some(s) => break s.code(),
            None if t.elapsed() < limit => std::thread::sleep(Duration::from_millis(20)),
            None => {
                let _ = r.child.kill();
                let _ = r.child.wait();
                break None;
            }
        }
    };
    (code, r.out.join().unwrap(), r.err.join().unwrap())
}

#[test]
fn a_stream_on_stdin_comes_out_of_the_receivers_stdout_whole_and_confirmed() {
    let port = free_port();
    let rx = running(receiver(port, &[]));
    std::thread::sleep(Duration::from_millis(300));
    let mut tx = sender(port, &["--json"]);
    let bytes = data(3_000_000);
    let mut input = tx.stdin.take().unwrap();
    let feed = {
        let bytes = bytes.clone();
        // The producer pauses now and then, as a pipeline's first program does.
        std::thread::spawn(move || {
            for (i, piece) in bytes.chunks(200_000).enumerate() {
                input.write_all(piece).unwrap();
                if i % 4 == 0 {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        })
    };
    let (tx_code, tx_out, tx_err) = finish(running(tx), Duration::from_secs(60));
    feed.join().unwrap();
    let (rx_code, rx_out, rx_err) = finish(rx, Duration::from_secs(10));
    assert_eq!(tx_code, Some(0), "sender: {tx_err}");
    assert_eq!(rx_code, Some(0), "receiver: {rx_err}");
    assert!(
        rx_out == bytes,
        "standard output holds exactly the stream ({} bytes of {})",
        rx_out.len(),
        bytes.len()
    );
    assert!(rx_err.contains("received: 3000000 bytes"), "{rx_err}");
    assert!(
        rx_err.contains("received") && rx_err.contains("DATA packets"),
        "{rx_err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&tx_out).expect("one JSON object");
    assert_eq!(v["delivered_bytes"], 3_000_000);
    assert_eq!(v["confirmed"], true);
    let sent: u64 = v["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["sent_packets"].as_u64().unwrap())
        .sum();
    assert!(sent >= 3_000_000 / 1452, "{v}");
}

#[test]
fn a_stream_cut_short_by_a_killed_sender_ends_the_receiver_with_an_error() {
    let port = free_port();
    let rx = running(receiver(port, &["--outage-tolerance", "2"]));
    std::thread::sleep(Duration::from_millis(300));
    let mut tx = sender(port, &[]);
    let mut input = tx.stdin.take().unwrap();
    input.write_all(&data(500_000)).unwrap();
    // The producer has more to say but the sender dies mid-stream.
    std::thread::sleep(Duration::from_millis(800));
    tx.kill().unwrap();
    let _ = tx.wait();
    drop(input);
    let (code, out, err) = finish(rx, Duration::from_secs(30));
    assert!(matches!(code, Some(c) if c != 0), "exit {code:?}: {err}");
    assert!(err.contains("nothing came from the peer"), "{err}");
    assert!(out.len() <= 500_000, "no more than was sent: {}", out.len());
}

/// Feeds `bytes` into the sender's standard input from a thread, then closes it.
fn feed(tx: &mut std::process::Child, bytes: &[u8]) -> std::thread::JoinHandle<()> {
    let mut input = tx.stdin.take().unwrap();
    let bytes = bytes.to_vec();
    std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    })
}

/// A consumer slower than the paths: the receiver's buffer for standard output fills
/// (4 MB), the association's window closes and reopens as the consumer reads, and the
/// stream still arrives whole — at the consumer's pace, not failed or stalled.
#[test]
fn a_slow_consumer_slows_the_sender_down_and_the_stream_arrives_whole() {
    let port = free_port();
    let rbuf = ["--rbuf", "256KB"];
    // 64 KB every 10 ms: at most 6.4 MB/s, far below the loopback paths.
    let rx = reading(receiver(port, &rbuf), Duration::from_millis(10), usize::MAX);
    std::thread::sleep(Duration::from_millis(300));
    let mut tx = sender(port, &rbuf);
    let bytes = data(8_000_000);
    let fed = feed(&mut tx, &bytes);
    let t = Instant::now();
    let (tx_code, _, tx_err) = finish(running(tx), Duration::from_secs(90));
    let took = t.elapsed();
    fed.join().unwrap();
    let (rx_code, rx_out, rx_err) = finish(rx, Duration::from_secs(10));
    assert_eq!(tx_code, Some(0), "sender: {tx_err}");
    assert_eq!(rx_code, Some(0), "receiver: {rx_err}");
    assert!(
        rx_out == bytes,
        "{} of {} bytes, in order",
        rx_out.len(),
        bytes.len()
    );
    // The sender could finish only as the consumer made room: at least the part of
    // the stream beyond the receiver's buffers, at the consumer's rate.
    let held = 4_000_000 + 256 * 1024 + 64 * 1024;
    let floor = Duration::from_secs_f64((8_000_000 - held) as f64 / 6.6e6);
    assert!(
        took >= floor,
        "done in {took:?}, faster than the consumer reads"
    );
}

/// A consumer that goes away mid-stream: the receiver cannot write, aborts with
/// "out of resource", and both ends exit non-zero saying why.
#[test]
fn a_consumer_that_goes_away_fails_both_ends() {
    let port = free_port();
    let rx = reading(receiver(port, &[]), Duration::ZERO, 200_000);
    std::thread::sleep(Duration::from_millis(300));
    let mut tx = sender(port, &[]);
    let fed = feed(&mut tx, &data(20_000_000));
    let (tx_code, _, tx_err) = finish(running(tx), Duration::from_secs(60));
    let (rx_code, _, rx_err) = finish(rx, Duration::from_secs(10));
    drop(fed);
    assert!(
        matches!(rx_code, Some(c) if c != 0),
        "receiver exit {rx_code:?}: {rx_err}"
    );
    assert!(rx_err.contains("standard output: cannot write"), "{rx_err}");
    assert!(
        matches!(tx_code, Some(c) if c != 0),
        "sender exit {tx_code:?}: {tx_err}"
    );
    assert!(tx_err.contains("out of resource"), "{tx_err}");
}

/// `send --measure 1`: generated data for about a second, then per path what it
/// carried, and a scenario of the same paths that `cmtlab run` accepts and simulates.
#[test]
fn a_measurement_runs_for_its_time_and_prints_a_scenario_the_simulator_runs() {
    let port = free_port();
    let rx = Command::new(bin())
        .args(["recv", "--listen"])
        .arg(format!("127.0.0.1:{port},127.0.0.2:{port}"))
        .args(["--out", "/dev/null", "--timeout", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = running(rx);
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    let tx = Command::new(bin())
        .args([
            "send",
            "--measure",
            "1",
            "--local",
            "127.0.1.1:0,127.0.1.2:0",
        ])
        .arg("--remote")
        .arg(format!("127.0.0.1:{port},127.0.0.2:{port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (code, out, err) = finish(running(tx), Duration::from_secs(60));
    let took = t.elapsed();
    let (rx_code, rx_out, rx_err) = finish(rx, Duration::from_secs(10));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(rx_code, Some(0), "{rx_err}");
    assert!(
        took >= Duration::from_secs(1),
        "sent for its second: {took:?}"
    );
    assert!(took < Duration::from_secs(10), "and then stopped: {took:?}");
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("measured for"), "{out}");
    assert!(out.contains("  path 0: carried"), "{out}");
    // Reordering is the receiver's to measure: its report says how long chunks waited.
    let rx_out = String::from_utf8(rx_out).unwrap();
    assert!(rx_out.contains("  reordering: "), "{rx_out}");
    assert!(
        rx_out.contains("chunks waited for an earlier one"),
        "{rx_out}"
    );
    let toml: String = out
        .lines()
        .skip_while(|l| !l.starts_with("# the same paths in the simulator"))
        .skip(1)
        .map(|l| format!("{l}\n"))
        .collect();
    let dir = std::env::temp_dir().join(format!("cmtlab-measure-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("measured.toml");
    std::fs::write(&f, &toml).unwrap();
    let sim = Command::new(bin()).arg("run").arg(&f).output().unwrap();
    let sim_out = String::from_utf8_lossy(&sim.stdout);
    assert!(
        sim.status.success(),
        "{toml}\n{}",
        String::from_utf8_lossy(&sim.stderr)
    );
    assert!(sim_out.contains("scenario measured"), "{sim_out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A 1 MB stream sent with `--preset NAME`, arrived whole; the sender's JSON report.
fn preset_transfer(name: &str) -> serde_json::Value {
    let port = free_port();
    let rx = running(receiver(port, &[]));
    std::thread::sleep(Duration::from_millis(300));
    let mut tx = sender(port, &["--json", "--preset", name]);
    let bytes = data(1_000_000);
    let mut input = tx.stdin.take().unwrap();
    let feed = {
        let bytes = bytes.clone();
        std::thread::spawn(move || input.write_all(&bytes).unwrap())
    };
    let (tx_code, tx_out, tx_err) = finish(running(tx), Duration::from_secs(60));
    feed.join().unwrap();
    let (rx_code, rx_out, rx_err) = finish(rx, Duration::from_secs(10));
    assert_eq!((tx_code, rx_code), (Some(0), Some(0)), "{tx_err}\n{rx_err}");
    assert!(rx_out == bytes, "the stream arrives whole");
    serde_json::from_slice(&tx_out).expect("one JSON object")
}

#[test]
fn the_linux_mptcp_preset_sends_with_its_scheduler_cubic_rack_tlp_prr_and_reinjection() {
    let v = preset_transfer("linux-mptcp");
    assert_eq!(v["prr"], serde_json::json!(true), "{v}");
    let algs = ["scheduler", "rtx", "cc", "recovery", "reinject"].map(|k| &v[k]);
    let want = [
        "linux-mptcp",
        "rtx-same",
        "linux-cubic",
        "rack-tlp",
        "linux",
    ];
    assert_eq!(algs, want.map(|w| serde_json::json!(w)).each_ref(), "{v}");
    // A preset and an algorithm flag of its own do not mix.
    let out = Command::new(bin())
        .args([
            "send",
            "-",
            "--remote",
            "127.0.0.1:9",
            "--preset",
            "linux-mptcp",
        ])
        .args(["--cc", "reno"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--preset") && err.contains("--cc"), "{err}");
}

#[test]
fn the_picoquic_preset_sends_with_its_path_selection_reno_and_quic_recovery() {
    let v = preset_transfer("picoquic-rr");
    let algs = ["scheduler", "rtx", "cc", "recovery", "reinject"].map(|k| &v[k]);
    let want = ["picoquic-rr", "rtx-asap", "reno", "quic", "off"];
    assert_eq!(algs, want.map(|w| serde_json::json!(w)).each_ref(), "{v}");
    assert_eq!(v["prr"], serde_json::json!(false), "{v}");
}
