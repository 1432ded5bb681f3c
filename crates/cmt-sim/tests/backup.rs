//! Backup paths (`paths[].backup`): no data while a regular path works, the transfer
//! moved to the backup when the regular path fails, and back when it returns.

mod bins;

use bins::{arrived, first_arrival};
use cmt_sim::{Simulation, Summary};

const WIFI_LTE: &str = r#"
seed = 3
duration = "40s"
[association]
pf = true
[receiver]
rbuf = "1MB"
[metrics]
bin = "0.1s"
[[links]]
name = "wifi"
rate = "10Mbps"
delay = "20ms"
queue = 100
[[links]]
name = "lte"
rate = "10Mbps"
delay = "40ms"
queue = 100
[[paths]]
name = "wifi"
links = ["wifi"]
[[paths]]
name = "lte"
links = ["lte"]
backup = true
[[events]]
at = "10s"
link = "wifi"
state = "down"
[[events]]
at = "25s"
link = "wifi"
state = "up"
"#;

fn run(overrides: &[&str]) -> (Simulation, f64) {
    bins::run(WIFI_LTE, overrides)
}

#[test]
fn a_backup_path_carries_nothing_while_the_regular_path_works_and_takes_over_when_it_fails() {
    let (sim, bin) = run(&["events.1.at=\"20s\""]);
    let s = Summary::of(&sim, 0.0);
    let (wifi, lte) = (0, 1);
    assert!(s.paths[lte].backup && !s.paths[wifi].backup);
    // While WiFi works, not one DATA chunk arrives over LTE.
    assert_eq!(arrived(&sim, bin, lte, 0.0, 10.0), 0);
    // WiFi fails at 10 s. Its T3 timer, restarted by the last ack before the failure,
    // expires at most RTO later (RTO.min = 1 s: SRTT is about 0.2 s here), which makes
    // it potentially failed; the marked chunks then go over LTE at once and arrive one
    // LTE delay (40 ms) later: within 1.04 s and a bin of the failure.
    let first = first_arrival(&sim, bin, lte, 10.0).expect("LTE never took over");
    assert!(
        first <= 10.0 + 1.0 + 0.04 + bin + 1e-9,
        "LTE took over at {first} s"
    );
    // From then on LTE carries the transfer at its capacity (10 Mbit/s, 1452 of every
    // 1500 bytes payload) once slow start is over: at least 90 % of it in 12–20 s.
    let capacity = 10e6 / 8.0 * 1452.0 / 1500.0 * 8.0;
    let carried = arrived(&sim, bin, lte, 12.0, 20.0) as f64;
    assert!(
        carried >= 0.9 * capacity,
        "LTE carried {carried} B in 12–20 s"
    );
    // WiFi returns at 20 s and is found by its next probe; once data arrives over it
    // again, LTE is back in reserve: what it still delivers is only what was in its
    // queue and on its wire (100 packets at 10 Mbit/s = 0.12 s, plus 40 ms), so nothing
    // arrives over it 0.16 s and a bin after WiFi's first arrival.
    let back = first_arrival(&sim, bin, wifi, 20.0).expect("WiFi never used again");
    assert!(back < 40.0);
    let after = arrived(&sim, bin, lte, back + 0.16 + bin, 40.0);
    assert_eq!(
        after, 0,
        "LTE still carried {after} B after WiFi came back at {back} s"
    );
    // What each path carried is in the summary: LTE's bytes are the outage's.
    assert!(s.paths[lte].sent_bytes as f64 >= carried);
}

#[test]
fn without_the_backup_flag_the_same_path_carries_data_from_the_start() {
    // The control of the test above: the flag, not the topology, keeps LTE idle.
    let (sim, bin) = run(&["paths.lte.backup=false"]);
    assert!(arrived(&sim, bin, 1, 0.0, 10.0) > 1_000_000);
    assert!(!Summary::of(&sim, 0.0).paths[1].backup);
}
