//! The example's algorithms work through the whole command line: `run` and `sweep`
//! name them in scenario files, `send` / `recv` take them as flags, `--help` and
//! `algorithms` list them, bad parameters are one-line errors, and results record them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_custom-scheduler"))
        .args(args)
        .output()
        .expect("the example binary runs")
}

fn scenario() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/split.toml")
        .display()
        .to_string()
}

/// A fresh directory of its own for each call: the tests run in parallel threads of one
/// process, so a directory named only by the process would be shared between them.
fn scratch(name: &str) -> PathBuf {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!(
        "custom-scheduler-{}-{name}-{n}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn summary(extra: &[&str]) -> serde_json::Value {
    let d = scratch("run");
    let json = d.join("s.json");
    let s = scenario();
    let mut args = vec!["run", &s, "--json", json.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = bin(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

fn path<'a>(s: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    s["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap()
}

fn new_chunks(p: &serde_json::Value) -> f64 {
    (p["sent_packets"].as_u64().unwrap() - p["retransmissions"].as_u64().unwrap()) as f64
}

#[test]
fn fixed_share_puts_three_of_four_new_chunks_on_the_first_path() {
    // The scheduler waits for the path whose turn it is, so new chunks split exactly
    // 3 : 1 (one round may be incomplete when the run ends).
    let s = summary(&[]);
    assert_eq!(s["scheduler"], "fixed-share");
    let (a, b) = (
        new_chunks(path(&s, "first")),
        new_chunks(path(&s, "second")),
    );
    assert!((a - 3.0 * b).abs() <= 3.0, "first {a}, second {b}");
    // Share 1.0: nothing new on the second path.
    let s = summary(&["--set", "association.scheduler_params.share=1.0"]);
    assert_eq!(new_chunks(path(&s, "second")), 0.0);
}

#[test]
fn outages_cost_the_second_path_a_timeout_each_and_nothing_without_them() {
    // Five 100 ms outages in 30 s (at 5, 10, … 25 s). Each drops a window's worth of
    // chunks on the second path; with its window full of lost chunks nothing new is
    // sent there to trigger fast retransmit, so only the T3 timer recovers: at least
    // one timeout per outage. With zero-length outages the path loses nothing (its
    // link has no other loss, and its queue of 100 is never full at a 25 % share).
    let s = summary(&[]);
    let second = path(&s, "second");
    assert!(second["timeouts"].as_u64().unwrap() >= 5, "{second}");
    assert!(second["lost_packets"].as_u64().unwrap() > 0);
    let s = summary(&["--set", "links.b.loss_model_params.length=0.0"]);
    let second = path(&s, "second");
    assert_eq!(second["lost_packets"], 0, "{second}");
    assert_eq!(second["timeouts"], 0, "{second}");
}

#[test]
fn results_name_the_registered_algorithms() {
    let s = summary(&[]);
    assert_eq!(
        s["build"]["extensions"],
        serde_json::json!(["scheduler:fixed-share", "loss_model:outage"])
    );
}

#[test]
fn help_and_algorithms_list_them() {
    let help = String::from_utf8(bin(&["--help"]).stdout).unwrap();
    assert!(
        help.contains("fixed-share") && help.contains("outage"),
        "{help}"
    );
    let list = String::from_utf8(bin(&["algorithms"]).stdout).unwrap();
    let line = list.lines().find(|l| l.contains("fixed-share")).unwrap();
    assert!(line.ends_with("[registered]"), "{line}");
    assert!(list
        .lines()
        .any(|l| l.trim_start().starts_with("round-robin")));
}

#[test]
fn a_bad_parameter_is_a_one_line_error_naming_the_field() {
    let s = scenario();
    let out = bin(&["run", &s, "--set", "association.scheduler_params.share=2"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("association.scheduler") && err.contains("`share`"),
        "{err}"
    );
    let out = bin(&["run", &s, "--set", "links.b.loss_model_params.every=0"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("links[1].loss_model"), "{err}");
}

#[test]
fn a_sweep_runs_them_over_an_axis() {
    let d = scratch("sweep");
    let sweep = d.join("shares.toml");
    std::fs::write(
        &sweep,
        format!(
            "name = \"shares\"\nbase = {:?}\nseeds = 2\nmetrics = [\"goodput_mbps\"]\n\
             [set]\nduration = \"5s\"\n\
             [[axes]]\nkey = \"association.scheduler_params.share\"\nvalues = [0.5, 0.9]\n",
            scenario()
        ),
    )
    .unwrap();
    let out_dir = d.join("out");
    let out = bin(&[
        "sweep",
        sweep.to_str().unwrap(),
        "--jobs",
        "2",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    let rows: Vec<Vec<&str>> = results.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 1 + 4, "{results}");
    let col = |name: &str| rows[0].iter().position(|c| *c == name).unwrap();
    let (share, sent) = (
        col("association.scheduler_params.share"),
        col("paths.second.sent_packets"),
    );
    let sent_at = |s: &str| -> u64 {
        let row = rows[1..].iter().find(|r| r[share] == s).unwrap();
        row[sent].parse().unwrap()
    };
    // A larger share for the first path leaves less for the second.
    assert!(sent_at("0.9") < sent_at("0.5"), "{results}");
}

#[test]
fn send_and_recv_move_a_file_with_the_registered_scheduler() {
    let d = scratch("net");
    let data: Vec<u8> = (0..300_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let src = d.join("in.bin");
    let dst = d.join("out.bin");
    std::fs::write(&src, &data).unwrap();
    // Ports from the process id, so parallel test runs do not collide.
    let port = 20_000 + (std::process::id() % 20_000) as u16;
    let listen = format!("127.0.0.1:{port},127.0.0.2:{port}");
    let mut recv = Command::new(env!("CARGO_BIN_EXE_custom-scheduler"))
        .args(["recv", "--listen", &listen, "--out", dst.to_str().unwrap()])
        .args(["--scheduler", "fixed-share", "--timeout", "60"])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let send = bin(&[
        "send",
        src.to_str().unwrap(),
        "--local",
        "127.0.1.1:0,127.0.1.2:0",
        "--remote",
        &listen,
        "--scheduler",
        "fixed-share",
        "--timeout",
        "60",
    ]);
    let status = recv.wait().unwrap();
    assert!(
        send.status.success(),
        "{}",
        String::from_utf8_lossy(&send.stderr)
    );
    assert!(status.success());
    assert_eq!(std::fs::read(&dst).unwrap(), data);
}
