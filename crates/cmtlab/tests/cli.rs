//! The `cmtlab` binary: exit status 2 and one error line for bad input; a summary with
//! the documented keys for good input.

use std::process::Command;

fn cmtlab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cmtlab"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn repo(p: &str) -> String {
    format!("{}/../../{p}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn bad_scenarios_exit_2_with_one_line_and_no_panic() {
    let dir = std::env::temp_dir().join(format!("cmtlab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "seed = 1\nduration = \"1s\"\nlinks = []\npaths = []\n",
    )
    .unwrap();
    let missing = dir.join("missing.toml");
    let empty_key = dir.join("empty.key");
    std::fs::write(&empty_key, b"").unwrap();
    let huge_key = dir.join("huge.key");
    std::fs::write(&huge_key, vec![7u8; 4097]).unwrap();
    let demo = repo("scenarios/demo.toml");
    let sweep_with = |name: &str, body: &str| {
        let f = dir.join(name);
        std::fs::write(&f, format!("base = \"{demo}\"\n{body}")).unwrap();
        f.to_str().unwrap().to_string()
    };
    let twice = sweep_with(
        "twice.toml",
        "seeds = 2\n[[axes]]\nkey = \"receiver.rbuf\"\nvalues = [\"32KB\", \"64KB\", \"32KB\"]\n",
    );
    let many_seeds = sweep_with("seeds.toml", "seeds = 10000000000\n");
    let syntax = sweep_with("syntax.toml", "seeds = 2\n[[axes]\nkey = 1\n");
    let rbuf_sweep = repo("scenarios/studies/demo/rbuf.toml");
    let endless_base = dir.join("endless.toml");
    std::fs::write(&endless_base, "base = \"/dev/zero\"\nseeds = 2\n").unwrap();
    let escaping = sweep_with("escaping.toml", "name = \"../../x\"\nseeds = 2\n");
    let tiny_step = sweep_with(
        "tiny.toml",
        "seeds = 2\n[[axes]]\nkey = \"receiver.rbuf\"\nrange = { from = 1000, to = 2000, step = 5e-324 }\n",
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", bad.to_str().unwrap()], "at least one path"),
        (vec!["run", missing.to_str().unwrap()], "cannot read file"),
        (
            vec!["run", &demo, "--set", "association.scheduler=warp"],
            "unknown scheduler `warp`",
        ),
        (
            vec!["run", &demo, "--set", "receiver.rbuf=-3"],
            "receiver.rbuf",
        ),
        (vec!["run", &demo, "--set", "nonsense"], "not KEY=VALUE"),
        (vec!["sweep", missing.to_str().unwrap()], "cannot read file"),
        (
            vec!["sweep", bad.to_str().unwrap()],
            "unknown field `duration`",
        ),
        (vec!["sweep", &rbuf_sweep, "--shard", "3/3"], "--shard 3/3"),
        (
            vec!["merge", dir.to_str().unwrap(), "--out", "/tmp/x"],
            "plan.json",
        ),
        (
            vec!["plot", dir.to_str().unwrap()],
            "neither a sweep output",
        ),
        (vec!["reproduce", "no-such-study"], "no such study"),
        (
            vec![
                "send",
                &demo,
                "--local",
                "127.0.0.1:0",
                "--remote",
                "nowhere",
            ],
            "--remote: `nowhere` is not an address",
        ),
        (
            vec![
                "send",
                "/no/such/file",
                "--local",
                "127.0.0.1:0",
                "--remote",
                "127.0.0.1:9",
            ],
            "/no/such/file: cannot read",
        ),
        (
            vec!["recv", "--listen", "192.0.2.1:9899", "--out", "/tmp/x"],
            "cannot bind 192.0.2.1:9899",
        ),
        (
            vec![
                "recv",
                "--listen",
                "127.0.0.1:0",
                "--out",
                "/tmp/x",
                "--key",
                empty_key.to_str().unwrap(),
            ],
            "empty.key: the file is empty",
        ),
        (
            vec![
                "send",
                &demo,
                "--local",
                "127.0.0.1:0",
                "--remote",
                "127.0.0.1:9",
                "--key",
                huge_key.to_str().unwrap(),
            ],
            "4097 bytes; a key has at most 4096",
        ),
        (
            vec![
                "send",
                &demo,
                "--local",
                "127.0.0.1:0",
                "--remote",
                "127.0.0.1:9",
                "--key",
                missing.to_str().unwrap(),
            ],
            "--key",
        ),
        (
            vec!["run", &demo, "--set", "links.wifi-access.rate=\"1MB\""],
            "unknown unit `MB` (bits: bps",
        ),
        (
            vec!["run", &demo, "--set", "association.ip_header=4294967295"],
            "too small to carry a DATA chunk",
        ),
        (
            vec!["run", &demo, "--set", "metrics.bin=\"1ns\""],
            "more than 1000000 bins",
        ),
        (
            vec!["run", &demo, "--set", "duration=\"1e12s\""],
            "above the limit of 1000000 s",
        ),
        (
            vec![
                "run",
                &demo,
                "--set",
                "paths.path2-80216.name=\"path1-80211b\"",
            ],
            "duplicate path name `path1-80211b`",
        ),
        (vec!["sweep", &twice], "value \"32KB\" is listed twice"),
        (
            vec!["run", &demo, "--set", "file_size=\"1e30B\""],
            "\"1e30B\": must be positive and at most 1 TiB",
        ),
        (
            vec!["run", "/dev/zero"],
            "/dev/zero: cannot read file: larger than 4 MiB",
        ),
        (
            vec!["sweep", endless_base.to_str().unwrap()],
            "cannot read /dev/zero: larger than 4 MiB",
        ),
        (
            vec!["sweep", &escaping],
            "field `name`: `../../x` contains a path separator",
        ),
        (vec!["sweep", &tiny_step], "range has inf values"),
        (vec!["sweep", &many_seeds], "at most 100000"),
        (
            vec!["sweep", &syntax],
            "line 3, column 7: invalid table header",
        ),
        (
            vec!["sweep", &twice, "--jobs", "0"],
            "--jobs 0: give 1 to 256",
        ),
        (vec!["sweep", &twice, "--jobs", "100000"], "--jobs 100000"),
        (
            vec!["relay", "--path", "127.0.0.1:1>127.0.0.1:2,delay=soon"],
            "--path 127.0.0.1:1>127.0.0.1:2,delay=soon: `delay`",
        ),
        (
            vec![
                "send",
                "-",
                "--local",
                "127.0.0.1:0",
                "--remote",
                "127.0.0.1:9",
                "--resume",
            ],
            "--resume: a stream cannot be resumed",
        ),
        (
            vec![
                "send",
                "-",
                "--local",
                "127.0.0.1:0",
                "--remote",
                "127.0.0.1:9",
                "--recovery",
                "quic",
                "--prr",
            ],
            "--prr: not with --recovery quic",
        ),
        (
            vec![
                "send",
                dir.to_str().unwrap(),
                "--local",
                "127.0.0.1:0",
                "--remote",
                "127.0.0.1:9",
            ],
            "a directory (send a stream of it: tar c DIR | cmtlab send - …)",
        ),
        (
            vec![
                "send",
                "--measure",
                "0",
                "--local",
                "127.0.0.1:0",
                "--remote",
                "127.0.0.1:9",
            ],
            "--measure 0: give 0.1 to 3600 seconds",
        ),
        (
            vec!["recv", "--listen", "127.0.0.1:0", "--out", "-", "--json"],
            "--json prints the report on standard output, which --out - fills",
        ),
        (
            vec!["recv", "--listen", "127.0.0.1:0", "--out", "-", "--resume"],
            "--resume keeps what arrived in a file beside --out",
        ),
    ];
    for (args, want) in cases {
        let out = cmtlab(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(want),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn send_and_recv_take_a_receive_buffer_with_its_unit() {
    let help = String::from_utf8_lossy(&cmtlab(&["recv", "--help"]).stdout).to_string();
    assert!(help.contains("[default: 4MB]"), "{help}");
    let out = cmtlab(&[
        "recv",
        "--listen",
        "127.0.0.1:0",
        "--rbuf",
        "64kb",
        "--out",
        "/dev/null",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`kb` reads as bits"), "{err}");
}

#[test]
fn a_run_that_delivers_nothing_prints_dashes_not_zeros() {
    // Every packet of the demo's paths lost: no arrival, no delivery, a zero
    // congestion-control-aware bound. A mean over no samples is "–", not "0.0 ms", and
    // a share of a zero bound is "–", not "0 %".
    let demo = repo("scenarios/demo.toml");
    let mut args = vec![
        "run".to_string(),
        demo,
        "--set".into(),
        "duration=\"5s\"".into(),
    ];
    for link in ["wifi-access", "wimax-access", "wlan-access"] {
        args.push("--set".into());
        args.push(format!("links.{link}.loss=1.0"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = cmtlab(&args);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |key: &str| {
        table
            .lines()
            .find(|l| l.trim_start().starts_with(key))
            .unwrap_or_else(|| panic!("no {key} line in {table}"))
            .to_string()
    };
    assert!(line("goodput").contains("0.000 Mbit/s"), "{table}");
    assert!(
        line("cc-aware bound").contains("(goodput = – of it"),
        "{table}"
    );
    assert!(line("reordering latency").ends_with('–'), "{table}");
    assert!(line("one-way delay").ends_with('–'), "{table}");
}

#[test]
fn run_with_out_writes_a_summary_with_the_documented_keys_and_csvs() {
    let dir = std::env::temp_dir().join(format!("cmtlab-out-{}", std::process::id()));
    let demo = repo("scenarios/demo.toml");
    let out = cmtlab(&[
        "run",
        &demo,
        "--set",
        "duration=\"20s\"",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("goodput") && table.contains("path1-80211b"),
        "{table}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    for k in [
        "goodput_mbps",
        "throughput_mbps",
        "bound_mbps",
        "o3_tsn_peak",
        "rbuf_blocked_s",
        "jitter_ms",
        "fast_retransmits",
        "timeouts",
        "ftt_s",
        "events",
        "wall_s",
    ] {
        assert!(v.get(k).is_some(), "summary.json lacks {k}");
    }
    for k in ["mean", "p99", "max"] {
        assert!(v["reordering_latency_ms"][k].is_number());
    }
    assert!(
        v["delay_ms"]["mean"].as_f64().unwrap() > 60.0,
        "demo one-way delay is ≥ 60 ms"
    );
    assert!(v["ftt_s"].is_null(), "timed runs have no FTT");
    let paths = v["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 3);
    for k in [
        "name",
        "sent_packets",
        "lost_packets",
        "retransmissions",
        "goodput_mbps",
    ] {
        assert!(paths[0].get(k).is_some(), "paths[] lacks {k}");
    }
    let ts = std::fs::read_to_string(dir.join("timeseries.csv")).unwrap();
    assert_eq!(
        ts.lines().count(),
        1 + 40,
        "20 s in 0.5 s bins plus a header"
    );
    let ps = std::fs::read_to_string(dir.join("paths.csv")).unwrap();
    assert_eq!(ps.lines().count(), 1 + 40 * 3);
    // Every row has the header's columns; over the run, throughput (duplicates
    // included) is never below goodput, and cwnd is at least one MTU.
    let mut lines = ps.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header,
        [
            "t_s",
            "path",
            "goodput_mbps",
            "throughput_mbps",
            "cwnd_bytes"
        ]
    );
    let (mut good, mut thr) = (0.0, 0.0);
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), header.len(), "{line}");
        good += f[2].parse::<f64>().unwrap();
        thr += f[3].parse::<f64>().unwrap();
        assert!(f[4].parse::<u64>().unwrap() >= 1500, "{line}");
    }
    assert!(
        thr >= good * 0.99 && good > 0.0,
        "throughput {thr} vs goodput {good}"
    );
    let ts_header = ts.lines().next().unwrap().split(',').count();
    assert!(ts.lines().all(|l| l.split(',').count() == ts_header));
    // The time-series figures exist as SVG and PNG.
    for f in ["run_goodput", "run_cwnd", "run_o3tsn", "run_rbuf"] {
        for ext in ["svg", "png"] {
            let len = std::fs::metadata(dir.join(format!("{f}.{ext}")))
                .map(|m| m.len())
                .unwrap_or(0);
            assert!(len > 10_000, "{f}.{ext}: {len} bytes");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn reproduce_real_puts_real_socket_rows_next_to_the_simulated_claims() {
    // A two-path study whose claim holds in both worlds: goodput stays below what the
    // two paths (4 + 1 Mbit/s) can carry in payload, 5 · 1444/1528 = 4.72 Mbit/s (real
    // runs are rate-limited by the relays, simulated ones by the links).
    let d = std::env::temp_dir().join(format!("cmtlab-real-study-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let base = r#"
name = "base"
seed = 1
file_size = "200KB"
time_limit = "60s"
[association]
scheduler = "round-robin-strict"
[receiver]
rbuf = "1MB"
[[links]]
name = "fast"
rate = "4Mbps"
delay = "5ms"
queue = "unlimited"
[[links]]
name = "slow"
rate = "1Mbps"
delay = "20ms"
queue = "unlimited"
[[paths]]
name = "fast"
links = ["fast"]
[[paths]]
name = "slow"
links = ["slow"]
"#;
    let sweep = r#"
name = "sched"
base = "base.toml"
seeds = 3
metrics = ["goodput_mbps"]
[[axes]]
key = "association.scheduler"
values = ["round-robin-strict", "minrtt"]
"#;
    let study = r#"
title = "real test"
sweeps = ["sweep.toml"]
[real]
sweeps = ["sched"]
seeds = 3
only = { "association.scheduler" = ["round-robin-strict"] }
metrics = ["goodput_mbps", "ftt_s"]
capture = true
[[claims]]
text = "strict round-robin stays under the paths' capacity"
paper = "-"
sweep = "sched"
metric = "goodput_mbps"
left = { "association.scheduler" = "round-robin-strict" }
op = "<"
right_value = 4.72
"#;
    std::fs::write(d.join("base.toml"), base).unwrap();
    std::fs::write(d.join("sweep.toml"), sweep).unwrap();
    std::fs::write(d.join("study.toml"), study).unwrap();
    // `reproduce --real` of the study in `d` into `d/<out>`.
    let real_into = |out: &str| {
        cmtlab(&[
            "reproduce",
            d.to_str().unwrap(),
            "--real",
            "--out",
            d.join(out).to_str().unwrap(),
        ])
    };
    let out = d.join("out");
    let o = real_into("out");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| strict round-robin"))
        .collect();
    assert_eq!(rows.len(), 2, "{md}");
    assert!(
        rows[1].contains("real sockets") && rows[1].contains("n = 3"),
        "{}",
        rows[1]
    );
    // Far below the capacity in both worlds: the direction, with no paper value to size.
    // (Three real runs: with the scenario's own timers — RTO.Min 1 s, 200 ms delayed
    // SACKs — two transfers of 200 KB measured 1.59 and 2.05 Mbit/s, and a t interval
    // on one degree of freedom could not size that.)
    assert!(
        rows.iter().all(|r| r.ends_with("| same direction |")),
        "{rows:?}"
    );
    // A table per metric the [real] section names.
    assert!(
        md.contains("## Simulated and real")
            && md.contains("### `sched`: `goodput_mbps`")
            && md.contains("### `sched`: `ftt_s`"),
        "{md}"
    );
    // Three real runs, saved for resumption; minRTT was not selected.
    assert_eq!(
        std::fs::read_dir(out.join("real/sched/runs"))
            .unwrap()
            .count(),
        3
    );
    // Each real run's sender capture is kept: whole pcap records of raw IPv4, every one
    // sent or received by the sender (127.0.4.x; the receiver is 127.0.0.x), holding at
    // least every byte of the file.
    let caps: Vec<_> = std::fs::read_dir(out.join("real/sched/captures"))
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert_eq!(caps.len(), 3);
    for c in &caps {
        assert_eq!(c[..4], 0xa1b2c3d4u32.to_le_bytes(), "not a pcap file");
        assert_eq!(c[20..24], 101u32.to_le_bytes(), "not raw IP");
        let mut at = 24;
        while at < c.len() {
            let len = u32::from_le_bytes(c[at + 8..at + 12].try_into().unwrap()) as usize;
            let ip = &c[at + 16..at + 16 + len];
            let (src, dst) = (&ip[12..16], &ip[16..20]);
            assert!(
                src[..3] == [127, 0, 4] || dst[..3] == [127, 0, 4],
                "a packet between {src:?} and {dst:?} in the sender's capture"
            );
            at += 16 + len;
        }
        assert_eq!(at, c.len(), "a cut record");
        assert!(c.len() > 200 * 1024, "{} bytes", c.len());
    }
    // A metric a real run does not measure is refused by name before any real run.
    std::fs::write(
        d.join("study.toml"),
        study.replace("\"ftt_s\"]", "\"throughput_mbps\"]"),
    )
    .unwrap();
    let o = real_into("o3");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`throughput_mbps`") && err.contains("[real] metrics"),
        "{err}"
    );
    assert!(!d.join("o3/real/sched/runs").exists());
    // Without a [real] section, --real is an error naming the study file.
    std::fs::write(
        d.join("study.toml"),
        study.split("[real]").next().unwrap().to_string()
            + &study[study.find("[[claims]]").unwrap()..],
    )
    .unwrap();
    let o = real_into("o2");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("study.toml") && err.contains("[real]"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_closed_pipe_ends_the_program_quietly() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cmtlab"))
        .args([
            "run",
            &repo("scenarios/demo.toml"),
            "--set",
            "duration=\"5s\"",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // like `| head -0`
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn reproduce_finds_a_study_by_name_from_any_directory() {
    let dir = std::env::temp_dir().join(format!("cmtlab-anywhere-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cmtlab"))
        .current_dir(&dir)
        .args(["reproduce", "demo", "--quick", "--jobs", "2", "--out", "o"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.join("o/report.md").exists());
    let out = Command::new(env!("CARGO_BIN_EXE_cmtlab"))
        .current_dir(&dir)
        .args(["reproduce", "nope", "--studies", "/nonexistent"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("nope: no such study (looked in /nonexistent,"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reproduce_all_runs_every_study_of_the_folder_in_name_order() {
    let d = std::env::temp_dir().join(format!("cmtlab-all-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let base = "seed = 1\nduration = \"2s\"\n[[links]]\nname = \"l\"\nrate = \"2Mbps\"\n\
                delay = \"10ms\"\n[[paths]]\nname = \"p\"\nlinks = [\"l\"]\n";
    for name in ["b-study", "a-study"] {
        let s = d.join("studies").join(name);
        std::fs::create_dir_all(&s).unwrap();
        std::fs::write(s.join("base.toml"), base).unwrap();
        let sweep = format!("name = \"{name}-sweep\"\nbase = \"base.toml\"\nseeds = 2\n");
        std::fs::write(s.join("sweep.toml"), sweep).unwrap();
        let study = "title = \"t\"\nsweeps = [\"sweep.toml\"]\n[quick]\nseeds = 2\n";
        std::fs::write(s.join("study.toml"), study).unwrap();
    }
    std::fs::create_dir_all(d.join("studies/not-a-study")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cmtlab"))
        .current_dir(&d)
        .args([
            "reproduce",
            "--all",
            "--quick",
            "--studies",
            "studies",
            "--out",
            "o",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(d.join("o/a-study-quick/report.md").exists());
    assert!(d.join("o/b-study-quick/report.md").exists());
    let (a, b) = (
        text.find("study a-study").unwrap(),
        text.find("study b-study").unwrap(),
    );
    assert!(a < b, "name order: {text}");
    assert!(text.contains("2 studies of studies in"), "{text}");
    // A study and --all, or neither: refused by the parser.
    for args in [vec!["reproduce", "demo", "--all"], vec!["reproduce"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_cmtlab"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn help_lists_every_registered_algorithm() {
    for args in [
        vec!["--help"],
        vec!["send", "--help"],
        vec!["recv", "--help"],
    ] {
        let out = cmtlab(&args);
        let help = String::from_utf8_lossy(&out.stdout);
        let names = [
            cmt_core::sched::names(),
            cmt_core::rtx::names(),
            cmt_core::cc::names(),
        ];
        for name in names.iter().flatten() {
            assert!(help.contains(name), "{args:?}: `{name}` missing");
        }
    }
}

/// A scenario name with a terminal escape sequence is printed escaped, and a trace
/// that is a device is refused at the bound instead of read until memory runs out.
#[test]
fn names_cannot_drive_the_terminal_and_endless_traces_are_refused() {
    let dir = std::env::temp_dir().join(format!("cmtlab-esc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let demo = std::fs::read_to_string(repo("scenarios/demo.toml")).unwrap();
    let named = demo.replacen("name = ", "name = \"red\\u001b[31m\" # ", 1);
    let f = dir.join("esc.toml");
    std::fs::write(&f, named).unwrap();
    let out = cmtlab(&["run", f.to_str().unwrap(), "--set", "duration=\"2s\""]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains('\u{1b}'), "raw escape printed: {text:?}");
    assert!(text.contains("red\\u{1b}[31m"), "{text}");
    let out = cmtlab(&[
        "run",
        &repo("scenarios/demo.toml"),
        "--set",
        "links.wifi-access.trace=\"/dev/zero\"",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("larger than 256 MiB"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `cmtlab relay` runs until signalled, then says per path what it forwarded and
/// dropped, by cause, and how many senders it mapped; and exits 0.
#[test]
fn the_relay_reports_what_it_did_when_interrupted() {
    let target = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let spec = format!("127.0.2.9:19931>{},loss=100%", target.local_addr().unwrap());
    let mut relay = Command::new(env!("CARGO_BIN_EXE_cmtlab"))
        .args(["relay", "--path", &spec])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let me = std::net::UdpSocket::bind("127.0.1.9:0").unwrap();
    for _ in 0..3 {
        me.send_to(b"lost on the way", "127.0.2.9:19931").unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let killed = Command::new("kill")
        .args(["-INT", &relay.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let t = std::time::Instant::now();
    while relay.try_wait().unwrap().is_none() {
        assert!(t.elapsed().as_secs() < 10, "the relay ends on SIGINT");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = relay.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("to the target 0 forwarded, 3 dropped (queue 0, loss 3, down 0)"),
        "{err}"
    );
    assert!(err.contains("1 senders"), "{err}");
}
