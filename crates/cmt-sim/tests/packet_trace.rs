//! The per-packet trace agrees with the run it records: per path its sends,
//! retransmissions, network drops and timeouts are the summary's counters (counted by
//! other code from the same events); every chunk is delivered exactly once, in TSN
//! order; no transmission is accounted twice (arrivals + drops never exceed
//! transmissions, per TSN); drops name their cause and link; time never goes backwards;
//! the same seed writes the same bytes; the Parquet and qlog forms hold what the CSV
//! form holds (qlog read back by serde_json's reader, and by Python's `json` where
//! `python3` is installed).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use cmt_sim::packet_trace::COLUMNS;
use cmt_sim::{load_str, Simulation, Summary};

/// A 2 MB transfer over a lossy fast path and a slow path with a short queue: random
/// loss, queue overflow and (at 4 %) timeouts all happen. Chunks are full-size, so each
/// DATA packet carries one chunk and packet counters equal chunk rows.
const SCENARIO: &str = r#"
name = "trace"
seed = 7
file_size = "2MB"

[receiver]
rbuf = "256KB"

[[links]]
name = "fast"
rate = "10Mbps"
delay = "15ms"
loss = 0.04

[[links]]
name = "slow"
rate = "2Mbps"
delay = "40ms"
queue = 8

[[paths]]
name = "p-fast"
links = ["fast"]

[[paths]]
name = "p-slow"
links = ["slow"]
"#;

/// Runs the scenario with its trace written to `file` (in the test's directory).
fn trace_file(file: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(file);
    let mut sim = Simulation::new(load_str(SCENARIO, "trace", None, &[]).unwrap()).unwrap();
    sim.trace_to(&path).unwrap();
    sim.run(&mut |_| {});
    sim.finish_trace().unwrap();
    path
}

fn traced(name: &str) -> (Summary, String) {
    let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.csv"));
    let built = load_str(SCENARIO, "trace", None, &[]).unwrap();
    let mut sim = Simulation::new(built).unwrap();
    sim.trace_to(&file).unwrap();
    sim.run(&mut |_| {});
    let rows = sim.finish_trace().unwrap();
    let summary = Summary::of(&sim, 0.0);
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count() as u64, rows + 1);
    (summary, text)
}

struct Row {
    time_ns: u64,
    side: String,
    path: usize,
    path_name: String,
    direction: String,
    kind: String,
    cause: String,
    tsn: Option<u64>,
    bytes: Option<u32>,
    cwnd: Option<u64>,
    link: String,
}

fn parse(text: &str) -> Vec<Row> {
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), COLUMNS.join(","));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), COLUMNS.len(), "{l}");
            let (s, ns) = f[0].split_once('.').unwrap();
            assert_eq!(ns.len(), 9, "nanosecond digits: {l}");
            Row {
                time_ns: s.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap(),
                side: f[1].into(),
                path: f[2].parse().unwrap(),
                path_name: f[3].into(),
                direction: f[4].into(),
                kind: f[5].into(),
                cause: f[6].into(),
                tsn: f[7].parse().ok(),
                bytes: f[8].parse().ok(),
                cwnd: f[9].parse().ok(),
                link: f[10].into(),
            }
        })
        .collect()
}

fn count(rows: &[Row], path: usize, f: impl Fn(&Row) -> bool) -> u64 {
    rows.iter().filter(|r| r.path == path && f(r)).count() as u64
}

#[test]
fn the_trace_matches_the_summary_path_by_path() {
    let (s, text) = traced("summary");
    let rows = parse(&text);
    for (i, p) in s.paths.iter().enumerate() {
        let sent = count(&rows, i, |r| {
            r.side == "sender"
                && r.direction == "data"
                && (r.kind == "send" || r.kind == "retransmit")
        });
        let rtx = count(&rows, i, |r| r.side == "sender" && r.kind == "retransmit");
        let lost = count(&rows, i, |r| {
            r.side == "network" && r.direction == "data" && r.kind == "drop"
        });
        let timeouts = count(&rows, i, |r| r.kind == "timeout");
        assert_eq!(sent, p.sent_packets, "{}: sends", p.name);
        assert_eq!(rtx, p.retransmissions, "{}: retransmissions", p.name);
        assert_eq!(lost, p.lost_packets, "{}: network drops", p.name);
        assert_eq!(timeouts, p.timeouts, "{}: timeouts", p.name);
        assert!(rows
            .iter()
            .filter(|r| r.path == i)
            .all(|r| r.path_name == p.name));
    }
    // The scenario exercises what it should: losses on the lossy link, overflow on
    // the short queue, retransmissions of both kinds.
    let causes = |link: &str| -> Vec<&str> {
        let mut c: Vec<&str> = rows
            .iter()
            .filter(|r| r.kind == "drop" && r.link == link)
            .map(|r| r.cause.as_str())
            .collect();
        c.sort();
        c.dedup();
        c
    };
    assert_eq!(causes("fast/fwd"), ["loss"]);
    assert_eq!(causes("fast/rev"), ["loss"]);
    assert_eq!(causes("slow/fwd"), ["queue"]);
    assert!(rows.iter().any(|r| r.cause == "fast") && rows.iter().any(|r| r.cause == "timeout"));
}

#[test]
fn every_chunk_is_delivered_once_in_order_and_no_transmission_counts_twice() {
    let (s, text) = traced("deliver");
    let rows = parse(&text);
    let delivered: Vec<u64> = rows
        .iter()
        .filter(|r| r.kind == "deliver")
        .map(|r| r.tsn.unwrap())
        .collect();
    let chunks = (2u64 << 20).div_ceil(1452); // 2MB = 2 MiB
    assert_eq!(delivered.len() as u64, chunks);
    assert!(
        delivered.windows(2).all(|w| w[1] == w[0] + 1),
        "in TSN order, no gaps"
    );
    let bytes: u64 = rows
        .iter()
        .filter(|r| r.kind == "deliver")
        .map(|r| r.bytes.unwrap() as u64)
        .sum();
    assert_eq!(bytes, s.delivered_bytes);
    // Per TSN: transmissions ≥ network drops + arrivals at the receiver.
    let mut balance: BTreeMap<u64, i64> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.direction == "data") {
        let d = match (r.side.as_str(), r.kind.as_str()) {
            ("sender", "send" | "retransmit") => 1,
            ("network", "drop") | ("receiver", "arrive") => -1,
            _ => 0,
        };
        *balance.entry(r.tsn.unwrap_or(0)).or_default() += d;
    }
    balance.remove(&0);
    assert!(
        balance.values().all(|&b| b >= 0),
        "a transmission accounted twice"
    );
    // The run stops when the last chunk is delivered, so every TSN arrived at least
    // once: what is still travelling can only be a second (or later) transmission of
    // some TSN, so it is at most the number of retransmissions (and scheduler copies).
    let travelling: i64 = balance.values().sum();
    let retransmissions = rows
        .iter()
        .filter(|r| r.kind == "retransmit" || r.cause == "copy")
        .count() as i64;
    assert!(
        travelling <= retransmissions,
        "{travelling} transmissions unaccounted, {retransmissions} retransmissions"
    );
    // Time never goes backwards; sender rows of a path carry its cwnd.
    assert!(rows.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
    assert!(rows
        .iter()
        .filter(|r| r.side == "sender")
        .all(|r| r.cwnd.is_some_and(|c| c >= 1452)));
    // Every SACK that reached the sender was sent by the receiver.
    let acks = |side: &str, kind: &str| {
        rows.iter()
            .filter(|r| r.direction == "ack" && r.side == side && r.kind == kind)
            .count()
    };
    let dropped_acks = acks("network", "drop");
    assert!(dropped_acks > 0, "the lossy link also loses SACKs");
    assert!(acks("sender", "arrive") + dropped_acks <= acks("receiver", "send"));
}

#[test]
fn the_same_seed_writes_the_same_trace() {
    assert_eq!(traced("a").1, traced("b").1);
}

#[cfg(feature = "parquet")]
#[test]
fn a_parquet_trace_holds_the_csv_rows() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    let (_, csv) = traced("pq-csv");
    let csv = parse(&csv);
    let file = trace_file("trace.parquet");
    let reader = SerializedFileReader::new(std::fs::File::open(&file).unwrap()).unwrap();
    let names: Vec<String> = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    assert_eq!(names, COLUMNS);
    let rows: Vec<_> = reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(rows.len(), csv.len());
    for (p, c) in rows.iter().zip(&csv) {
        let f: Vec<&Field> = p.get_column_iter().map(|(_, f)| f).collect();
        assert!(matches!(f[0], Field::Double(t) if (t * 1e9 - c.time_ns as f64).abs() < 1e3));
        assert!(matches!(f[5], Field::Str(k) if *k == c.kind));
        match c.tsn {
            Some(t) => assert!(matches!(f[7], Field::Long(v) if *v as u64 == t)),
            None => assert!(matches!(f[7], Field::Null)),
        }
        match c.link.as_str() {
            "" => assert!(matches!(f[10], Field::Null)),
            l => assert!(matches!(f[10], Field::Str(v) if v == l)),
        }
    }
}

/// The qlog event name a CSV row becomes (the sink's documented mapping).
fn event_of(kind: &str) -> &'static str {
    match kind {
        "send" | "retransmit" => "transport:packet_sent",
        "arrive" => "transport:packet_received",
        "drop" => "transport:packet_dropped",
        "deliver" => "transport:data_moved",
        "timeout" => "recovery:loss_timer_updated",
        k => panic!("unknown kind {k}"),
    }
}

#[test]
fn the_qlog_trace_holds_the_csv_traces_events_path_by_path() {
    let (_, csv) = traced("ql-csv");
    let qlog_path = trace_file("trace.qlog");
    let qlog = std::fs::read(&qlog_path).unwrap();

    // CSV: (event name, path) → count, and the DATA send TSNs in order.
    let mut want: BTreeMap<(String, u64), u64> = BTreeMap::new();
    let mut sent_tsns = Vec::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (path, direction, kind) = (f[2].parse::<u64>().unwrap(), f[4], f[5]);
        *want.entry((event_of(kind).into(), path)).or_default() += 1;
        if kind == "send" && direction == "data" {
            sent_tsns.push(f[7].parse::<u64>().unwrap());
        }
    }
    assert!(want.len() >= 8, "a varied run: {want:?}");

    // JSON-SEQ (RFC 7464): every record is RS, one JSON text, LF.
    assert_eq!(qlog.first(), Some(&0x1e));
    let text = std::str::from_utf8(&qlog).unwrap();
    let records: Vec<&str> = text.split('\u{1e}').skip(1).collect();
    assert!(records.iter().all(|r| r.ends_with('\n')));
    let values: Vec<serde_json::Value> = records
        .iter()
        .map(|r| serde_json::from_str(r).expect("a JSON text"))
        .collect();
    let header = &values[0];
    assert_eq!(header["qlog_format"], "JSON-SEQ");
    assert_eq!(header["qlog_version"], "0.3");
    assert_eq!(header["trace"]["common_fields"]["time_format"], "relative");

    let mut got: BTreeMap<(String, u64), u64> = BTreeMap::new();
    let mut got_tsns = Vec::new();
    let mut last_time = 0.0f64;
    let mut cwnd_updates = 0;
    for e in &values[1..] {
        let name = e["name"].as_str().unwrap().to_string();
        let time = e["time"].as_f64().unwrap();
        assert!(time >= last_time, "time runs forward");
        last_time = time;
        let path = e["data"]["path_id"]
            .as_u64()
            .expect("every event names its path");
        if name == "recovery:metrics_updated" {
            assert!(e["data"]["congestion_window"].as_u64().unwrap() > 0);
            cwnd_updates += 1;
            continue;
        }
        let own = &e["data"]["cmtlab"];
        if name == "transport:packet_sent" && own["cause"] == "new" {
            got_tsns.push(e["data"]["header"]["packet_number"].as_u64().unwrap());
        }
        *got.entry((name, path)).or_default() += 1;
    }
    assert_eq!(got, want, "qlog events per (name, path) = CSV rows");
    assert_eq!(
        got_tsns, sent_tsns,
        "DATA packets numbered by TSN, in order"
    );
    assert!(
        cwnd_updates > 10,
        "{cwnd_updates} congestion-window updates"
    );

    // An independent reader: Python's json, where there is one.
    let script = "import json,sys\n\
        d=open(sys.argv[1],'rb').read().split(b'\\x1e')[1:]\n\
        ev=[json.loads(r) for r in d]\n\
        print(sum(1 for e in ev[1:] if e['name']!='recovery:metrics_updated'))";
    if let Ok(out) = Command::new("python3")
        .args(["-c", script])
        .arg(&qlog_path)
        .output()
    {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let n: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert_eq!(n, want.values().sum::<u64>());
    }
}
