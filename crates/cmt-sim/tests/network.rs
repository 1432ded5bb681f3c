//! The network model end to end: link events in the middle of a transfer.

use cmt_sim::{load_str, Simulation, Summary};

const TWO: &str = r#"
seed = 4
file_size = "60MB"
[association]
pf = true
[receiver]
rbuf = "256KB"
[[links]]
name = "a"
rate = "10Mbps"
delay = "20ms"
queue = 100
[[links]]
name = "b"
rate = "10Mbps"
delay = "20ms"
queue = 100
[[paths]]
name = "a"
links = ["a"]
[[paths]]
name = "b"
links = ["b"]
[[events]]
at = "5s"
link = "b"
state = "down"
[[events]]
at = "15s"
link = "b"
state = "up"
"#;

#[test]
fn a_path_down_for_ten_seconds_is_detected_the_transfer_completes_and_the_path_is_used_again() {
    let built = load_str(TWO, "two", None, &[]).unwrap();
    let bin = built.bin.as_secs_f64();
    let mut sim = Simulation::new(built).unwrap();
    sim.run(&mut |_| {});
    let s = Summary::of(&sim, 0.0);
    assert_eq!(s.ending, "FileDelivered");
    assert_eq!(s.delivered_bytes, 60 * 1024 * 1024);
    let b = &s.paths[1];
    assert!(b.failures >= 1, "path b never detected failed: {b:?}");
    assert!(b.recoveries >= 1, "path b never came back: {b:?}");
    assert_eq!(s.paths[0].failures, 0);
    let rec = sim.recorder();
    let carried = |from: f64, to: f64, p: usize| -> u64 {
        rec.bins
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                let t = (*i + 1) as f64 * bin;
                t > from && t <= to
            })
            .map(|(_, x)| x.delivered_per_path[p])
            .sum()
    };
    // During the outage path b delivers nothing and path a carries the transfer.
    assert_eq!(carried(6.0, 15.0, 1), 0);
    assert!(
        carried(6.0, 15.0, 0) > 8 * 1_000_000,
        "path a carried {} B",
        carried(6.0, 15.0, 0)
    );
    // After it is back (and a heartbeat found it), path b carries data again.
    assert!(
        carried(15.0, 1e9, 1) > 1_000_000,
        "path b after recovery: {} B",
        carried(15.0, 1e9, 1)
    );
    // Two paths carry 19.4 Mbit/s of goodput, one path 9.7: 60 MB take 26 s without an
    // outage, about 31 s with 10 s on one path; recovery costs a few seconds more.
    let ftt = s.ftt_s.unwrap();
    assert!(ftt > 30.0 && ftt < 40.0, "FTT {ftt}");
}

#[test]
fn bad_event_definitions_are_clear_errors() {
    let cases = [
        (
            "link = \"b\"\nstate = \"down\"",
            "link = \"c\"\nstate = \"down\"",
            "unknown link `c`",
        ),
        (
            "state = \"down\"",
            "state = \"sideways\"",
            "unknown state `sideways`",
        ),
        (
            "state = \"down\"",
            "direction = \"left\"",
            "unknown direction `left`",
        ),
        ("at = \"5s\"", "at = \"-5s\"", "must not be negative"),
    ];
    for (from, to, want) in cases {
        let text = TWO.replacen(from, to, 1);
        let e = load_str(&text, "t.toml", None, &[])
            .err()
            .expect("rejected")
            .to_string();
        assert!(
            e.starts_with("t.toml: field `events[0]") && e.contains(want),
            "{e}"
        );
    }
    let nothing = TWO.replacen("state = \"down\"\n", "", 1);
    let e = load_str(&nothing, "t.toml", None, &[])
        .err()
        .expect("rejected")
        .to_string();
    assert!(e.contains("changes nothing"), "{e}");
}
