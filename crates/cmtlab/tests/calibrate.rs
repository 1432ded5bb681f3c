//! `cmtlab calibrate` against a known truth: a simulated run over paths whose rate,
//! delay, queue and loss are given, traced, and fitted back. The simulator's trace has
//! the real runtime's columns, so what the fit recovers here it reads from real traces
//! the same way. Bounds come from the model: the rate and the delay are exact up to
//! the trace's nanoseconds, the queue up to one packet (two where it overflows only
//! now and then), a loss share must lie in its own 95 % interval.

use std::path::{Path, PathBuf};
use std::process::Command;

fn cmtlab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cmtlab"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cmtlab-cal-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Path 0: 10 Mbit/s, 20 ms, 40 packets, 1 % random loss of data (a Reno window that
/// never fills the queue). Path 1: 4 Mbit/s, 5 ms, 100 packets, no loss (always full).
/// Path 2: 6 Mbit/s, 10 ms, Gilbert–Elliott loss of 1 % in bursts of 3 on average.
const TRUTH: &str = r#"
name = "truth"
seed = 7
duration = "30s"
[receiver]
rbuf = "4MB"
[[links]]
name = "a"
rate = "10Mbps"
delay = "20ms"
queue = 40
loss = 0.01
loss_direction = "forward"
[[links]]
name = "b"
rate = "4Mbps"
delay = "5ms"
queue = 100
loss_direction = "forward"
[[links]]
name = "c"
rate = "6Mbps"
delay = "10ms"
queue = 60
gilbert = "markov1pct"
loss_direction = "forward"
[[paths]]
name = "a"
links = ["a"]
[[paths]]
name = "b"
links = ["b"]
[[paths]]
name = "c"
links = ["c"]
"#;

/// The value of `key = …` in the `[[links]]` table of `link` in a scenario's text.
fn link_value(scenario: &str, link: &str, key: &str) -> String {
    let start = scenario
        .find(&format!("name = \"{link}\""))
        .unwrap_or_else(|| panic!("no link {link} in\n{scenario}"));
    let rest = &scenario[start..];
    let end = rest[1..].find("[[").map_or(rest.len(), |e| e + 1);
    rest[..end]
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} for {link}"))
        .trim_matches('"')
        .to_string()
}

fn number(v: &str, unit: &str) -> f64 {
    v.strip_suffix(unit)
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("`{v}` is not a number of {unit}"))
}

fn traced(d: &Path) -> PathBuf {
    let truth = d.join("truth.toml");
    std::fs::write(&truth, TRUTH).unwrap();
    let trace = d.join("trace.csv");
    let o = cmtlab(&[
        "run",
        truth.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    trace
}

#[test]
fn a_fitted_scenario_recovers_the_paths_a_simulated_run_went_over() {
    let d = dir("truth");
    let trace = traced(&d);
    let out = d.join("fitted.toml");
    // A simulated run counts a 20-byte IPv4 header per packet, no UDP.
    let o = cmtlab(&[
        "calibrate",
        trace.to_str().unwrap(),
        "--ip-header",
        "20",
        "--out",
        out.to_str().unwrap(),
        "--mahimahi",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = String::from_utf8_lossy(&o.stdout).to_string();
    let s = std::fs::read_to_string(&out).unwrap();
    for (link, rate, delay) in [
        ("path0", 10e6, 20.0),
        ("path1", 4e6, 5.0),
        ("path2", 6e6, 10.0),
    ] {
        let r = number(&link_value(&s, link, "rate"), "bps");
        assert!((r / rate - 1.0).abs() < 0.002, "{link}: rate {r}\n{report}");
        let dl = number(&link_value(&s, link, "delay"), "ms");
        assert!((dl - delay).abs() < 0.05, "{link}: delay {dl} ms\n{report}");
    }
    // The always-full queue: 100 waiting, up to one packet's rounding; the queue that
    // overflows now and then: 60, from what its drops met.
    let q: f64 = link_value(&s, "path1", "queue").parse().unwrap();
    assert!((q - 100.0).abs() <= 1.0, "queue {q}\n{report}");
    let q: f64 = link_value(&s, "path2", "queue").parse().unwrap();
    assert!((q - 60.0).abs() <= 2.0, "queue {q}\n{report}");
    // The lossy path's queue never filled: said so, and not set below what it held.
    let line0 = report.lines().find(|l| l.starts_with("path 0")).unwrap();
    assert!(line0.contains("never seen full"), "{line0}");
    // Bernoulli 1 % inside the fit's interval, and no loss invented on the clean path.
    let interval = |line: &str| -> (f64, f64) {
        let i = line.find("% [").unwrap() + 3;
        let j = line[i..].find(']').unwrap() + i;
        let (lo, hi) = line[i..j].split_once(", ").unwrap();
        (lo.parse().unwrap(), hi.parse().unwrap())
    };
    let (lo, hi) = interval(line0);
    assert!(lo <= 1.0 && 1.0 <= hi, "{line0}");
    let line1 = report.lines().find(|l| l.starts_with("path 1")).unwrap();
    assert_eq!(interval(line1).0, 0.0, "{line1}");
    // Loss in bursts of 3 is fitted as Gilbert–Elliott, its bursts near 3 packets.
    let g = link_value(&s, "path2", "gilbert");
    let r: f64 = g
        .split("r = ")
        .nth(1)
        .unwrap()
        .trim_end_matches(" }")
        .parse()
        .unwrap();
    assert!(
        (0.2..=0.5).contains(&r),
        "Gilbert r {r} for bursts of 3: {g}"
    );
    // Each capacity trace averages the fitted rate: (lines × 1500 bytes) over its span.
    let t = std::fs::read_to_string(d.join("fitted.path1.trace")).unwrap();
    let ms: Vec<u64> = t.lines().map(|l| l.parse().unwrap()).collect();
    let rate = ms.len() as f64 * 1500.0 * 8.0 / (*ms.last().unwrap() as f64 / 1000.0);
    assert!((rate / 4e6 - 1.0).abs() < 0.01, "trace rate {rate}");
    // The scenario runs.
    let o = cmtlab(&["run", out.to_str().unwrap(), "--set", "duration=\"2s\""]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn traces_that_cannot_be_fitted_are_refused_with_one_line() {
    let d = dir("bad");
    let not_trace = d.join("x.csv");
    std::fs::write(&not_trace, "a,b,c\n1,2,3\n").unwrap();
    let o = cmtlab(&["calibrate", not_trace.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("x.csv") && err.contains("not a cmtlab packet trace"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // A sender's rows alone: the receiver's trace is named as what is missing.
    let trace = traced(&d);
    let text = std::fs::read_to_string(&trace).unwrap();
    let sender: String = text
        .lines()
        .filter(|l| !l.contains(",receiver,"))
        .map(|l| format!("{l}\n"))
        .collect();
    let only = d.join("sender.csv");
    std::fs::write(&only, sender).unwrap();
    let o = cmtlab(&["calibrate", only.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("receiver's trace"), "{err}");
    let bad_row = d.join("bad_row.csv");
    let mut lines: Vec<&str> = text.lines().take(50).collect();
    lines[10] = "zero,sender,0,a,data,send,new,1,1444,,";
    std::fs::write(&bad_row, lines.join("\n")).unwrap();
    let o = cmtlab(&["calibrate", bad_row.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad_row.csv:11") && err.contains("`zero`"),
        "{err}"
    );
}

/// The number after `key` in the fit's report line for path `i` (`path 0 (…): …`).
fn reported(stdout: &str, i: usize, key: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("path {i} (")))
        .unwrap_or_else(|| panic!("no fit of path {i} in\n{stdout}"));
    let rest = &line[line
        .find(key)
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        + key.len()..];
    let num: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    num.parse().unwrap_or_else(|_| panic!("{key}: `{rest}`"))
}

/// Per path, the queue drops a relay counted, from the report it prints when
/// interrupted (`…: to the target N forwarded, D dropped (queue Q, …`).
fn relay_queue_drops(stderr: &str) -> Vec<f64> {
    stderr
        .lines()
        .filter_map(|l| l.split("dropped (queue ").nth(1))
        .map(|r| r.split(',').next().unwrap().parse().unwrap())
        .collect()
}

/// The one command a user with a remote receiver runs: `send --measure --calibrate`
/// fits the paths from the sending end alone, with the arrival times the receiver
/// returns with its SACKs. Through two relays (8 Mbit/s, 10 ms, 40 packets; 4 Mbit/s,
/// 25 ms, 40 packets; no random loss) that change the addresses on the way as a NAT
/// would, so the receiver's paths are matched to the sender's by the TSNs they
/// carried. Bounds: the relay's link model is exact, but it releases packets by the
/// runtime's timers, late by up to a millisecond — so the rate within 3 % (a busy
/// period averages the lateness out over many packets), the one-way delay within 1
/// ms, the queue within two packets; the queue's drops are the relay's own count
/// within 10 %, and at most two losses are taken for random ones.
#[test]
fn a_measurement_calibrates_the_paths_from_the_sending_end_alone() {
    use std::process::Stdio;
    let d = dir("one-command");
    let relay = Command::new(env!("CARGO_BIN_EXE_cmtlab"))
        .args([
            "relay",
            "--path",
            "127.0.2.1:19611>127.0.0.1:19613,rate=8Mbps,delay=10ms,queue=40",
            "--path",
            "127.0.2.2:19612>127.0.0.2:19614,rate=4Mbps,delay=25ms,queue=40",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let recv = Command::new(env!("CARGO_BIN_EXE_cmtlab"))
        .args(["recv", "--listen", "127.0.0.1:19613,127.0.0.2:19614"])
        .args(["--out", "/dev/null", "--timeout", "60"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    let scenario = d.join("paths.toml");
    let sent = cmtlab(&[
        "send",
        "--measure",
        "3",
        "--local",
        "127.0.1.1:0,127.0.1.2:0",
        "--remote",
        "127.0.2.1:19611,127.0.2.2:19612",
        "--timeout",
        "60",
        "--calibrate",
        scenario.to_str().unwrap(),
        "--predict",
        "2MB",
    ]);
    let recv = recv.wait_with_output().unwrap();
    let pid = nix::unistd::Pid::from_raw(relay.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let relay = relay.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&sent.stdout);
    let err = String::from_utf8_lossy(&sent.stderr);
    assert!(sent.status.success(), "{out}\n{err}");
    assert!(
        recv.status.success(),
        "{}",
        String::from_utf8_lossy(&recv.stderr)
    );
    assert!(d.join("paths.tx.csv").exists() && d.join("paths.rx.csv").exists());
    let text = std::fs::read_to_string(&scenario).unwrap();
    let drops = relay_queue_drops(&String::from_utf8_lossy(&relay.stderr));
    assert_eq!(drops.len(), 2, "{}", String::from_utf8_lossy(&relay.stderr));
    for (i, (rate, delay)) in [(8e6, 10.0), (4e6, 25.0)].into_iter().enumerate() {
        let link = format!("path{i}");
        let r = number(&link_value(&text, &link, "rate"), "bps");
        assert!((r / rate - 1.0).abs() < 0.03, "path {i}: rate {r}");
        let dl = number(&link_value(&text, &link, "delay"), "ms");
        assert!((dl - delay).abs() <= 1.0, "path {i}: delay {dl} ms");
        let q: f64 = link_value(&text, &link, "queue").parse().unwrap();
        assert!((q - 40.0).abs() <= 2.0, "path {i}: queue {q}");
        let fitted = reported(&out, i, "queue drops");
        assert!(
            (fitted - drops[i]).abs() <= 0.1 * drops[i],
            "path {i}: {fitted} vs {drops:?}"
        );
        assert!(
            reported(&out, i, "] (") <= 2.0,
            "path {i}: random losses\n{out}"
        );
    }
    // The prediction follows, one line per scheduler.
    assert!(out.contains("predicted goodput moving 2MB"), "{out}");
    assert!(out.contains("linux-mptcp preset"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

/// What would only fail after a measurement is refused before it, in one line: a
/// scenario in a directory that does not exist, a prediction size that is not one, a
/// trace the fit cannot read, and `--json` (the fit prints text).
#[test]
fn a_calibrating_measurement_refuses_what_would_fail_after_it() {
    let d = dir("refused");
    let toml = d.join("paths.toml");
    let toml = toml.to_str().unwrap();
    let base = [
        "send",
        "--measure",
        "1",
        "--local",
        "127.0.1.1:0",
        "--remote",
        "127.0.0.1:9",
    ];
    for (extra, want) in [
        (
            vec!["--calibrate", "/nonexistent/dir/paths.toml"],
            "--calibrate",
        ),
        (
            vec!["--calibrate", toml, "--predict", "lots"],
            "--predict lots",
        ),
        (vec!["--calibrate", toml, "--trace", "t.parquet"], "CSV"),
        (vec!["--calibrate", toml, "--json"], "--json"),
    ] {
        let args: Vec<&str> = base.iter().copied().chain(extra).collect();
        let o = cmtlab(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert!(
        !d.join("paths.tx.csv").exists(),
        "nothing written before the refusal"
    );
    let _ = std::fs::remove_dir_all(&d);
}
