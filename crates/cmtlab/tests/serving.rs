//! `cmtlab recv --dir`: a receiver that serves, as a user runs it — files and a stream
//! stored under the senders' names, a name collision refused with the reason on the
//! sender's side, one line per transfer on standard output and one JSON line in the
//! log, a summary and exit status 0 on SIGTERM; and its bad invocations.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cmtlab"))
}

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("cmtlab-serving-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn send(args: &[&str], stdin: Option<&[u8]>) -> std::process::Output {
    let mut c = bin()
        .arg("send")
        .args(args)
        .args(["--timeout", "20"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = c.stdin.take().unwrap();
    if let Some(b) = stdin {
        input.write_all(b).unwrap();
    }
    drop(input);
    c.wait_with_output().unwrap()
}

#[test]
fn a_serving_receiver_stores_files_and_streams_logs_each_and_ends_on_sigterm() {
    let d = scratch("run");
    let (store, log) = (d.join("store"), d.join("transfers.jsonl"));
    std::fs::create_dir(&store).unwrap();
    let file = d.join("report.bin");
    let body: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&file, &body).unwrap();
    let listen = "127.0.0.1:19951,127.0.0.2:19951";
    let server = bin()
        .args(["recv", "--listen", listen, "--dir"])
        .arg(&store)
        .arg("--log")
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let remote = ["--remote", listen];
    let f = file.to_str().unwrap();
    let a = send(
        &[
            f,
            "--local",
            "127.0.1.1:0,127.0.1.2:0",
            remote[0],
            remote[1],
        ],
        None,
    );
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let streamed = b"a stream from a pipe\n".repeat(1000);
    let b = send(
        &[
            "-",
            "--name",
            "piped.txt",
            "--local",
            "127.0.1.3:0",
            "--remote",
            "127.0.0.1:19951",
        ],
        Some(&streamed),
    );
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    // The same name again: refused, and the sender says why.
    let again = send(
        &[f, "--local", "127.0.1.4:0", "--remote", "127.0.0.1:19951"],
        None,
    );
    let err = String::from_utf8_lossy(&again.stderr);
    assert_ne!(again.status.code(), Some(0));
    assert!(
        err.contains("refused the transfer") && err.contains("--overwrite"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    let killed = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let t = Instant::now();
    let out = server.wait_with_output().unwrap();
    assert!(t.elapsed() < Duration::from_secs(10));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(std::fs::read(store.join("report.bin")).unwrap(), body);
    assert_eq!(std::fs::read(store.join("piped.txt")).unwrap(), streamed);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(lines[0].contains("stored") && lines[0].contains("report.bin"));
    assert!(lines[1].contains("stored") && lines[1].contains("piped.txt"));
    assert!(lines[2].contains("failed from 127.0.1.4:"), "{}", lines[2]);
    assert!(stderr.contains("served: 2 stored, 1 failed"), "{stderr}");
    // The log: one JSON object per transfer, with the summary's keys.
    let text = std::fs::read_to_string(&log).unwrap();
    let entries: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0]["delivered_bytes"], 3_000_000);
    assert_eq!(entries[0]["confirmed"], true);
    assert!(entries[0]["stored_as"]
        .as_str()
        .unwrap()
        .ends_with("report.bin"));
    assert!(entries[0]["error"].is_null());
    assert_eq!(entries[0]["paths"].as_array().unwrap().len(), 2);
    assert!(entries[2]["error"].as_str().unwrap().contains("exists"));
    assert!(entries
        .iter()
        .all(|e| e["time"].as_str().is_some_and(|t| t.ends_with('Z'))));
    std::fs::remove_dir_all(&d).unwrap();
}

/// Runs `c`, killed after 10 s (a mistake must fail at once, not wait for a peer).
fn bounded(c: &mut Command) -> std::process::Output {
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait_with_output().unwrap()
}

#[test]
fn bad_serving_invocations_get_one_line_and_a_non_zero_exit() {
    let d = scratch("bad");
    let missing = d.join("missing");
    let file = d.join("f");
    std::fs::write(&file, b"x").unwrap();
    let (missing, file, d_) = (missing.display(), file.display(), d.display());
    let cases = [
        (
            format!("recv --listen 127.0.0.1:0 --dir {missing}"),
            "--dir",
        ),
        (
            format!("recv --listen 127.0.0.1:0 --dir {file}"),
            "not a directory",
        ),
        (
            format!("recv --listen 127.0.0.1:0 --dir {d_} --max-associations 0"),
            "--max-associations 0",
        ),
        (
            format!("send {file} --name ../up --local 127.0.1.1:0 --remote 127.0.0.1:9"),
            "--name",
        ),
        // Serving's flags without --dir.
        (
            "recv --listen 127.0.0.1:0 --out x --overwrite".into(),
            "give --dir",
        ),
        (
            "recv --listen 127.0.0.1:0 --out x --log y".into(),
            "give --dir",
        ),
    ];
    for (args, want) in &cases {
        let out = bounded(bin().args(args.split(' ')));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args}");
        assert!(err.contains(want), "{args}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args}: {err}");
    }
    // One transfer's flags with --dir: refused by the parser.
    for args in [
        "recv --listen 127.0.0.1:0 --dir /tmp --out x",
        "recv --listen 127.0.0.1:0 --dir /tmp --resume",
        "recv --listen 127.0.0.1:0 --dir /tmp --summary s.json",
    ] {
        let out = bounded(bin().args(args.split(' ')));
        assert_eq!(out.status.code(), Some(2), "{args}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}
