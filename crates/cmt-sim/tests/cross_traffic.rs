//! Cross traffic as deployed: TCP-like flows with the congestion control a scenario
//! names (`traffic[].cc`).
//!
//! A CUBIC and a Reno flow share a 50 Mbit/s bottleneck with a 100 ms round trip
//! (drop-tail, one bandwidth-delay product of buffer). Their response functions (RFC 9438
//! §5.1: CUBIC's average window 1.054·(RTT/p)^0.75 packets with C = 0.4 and β = 0.7,
//! Reno's 1.22/√p) put the ratio of their rates, at equal loss rates, at
//! 0.86·RTT^0.75·p^−0.25: about 1.5 at p ≈ 10⁻⁴, and never below 1 (CUBIC's
//! Reno-friendly region keeps it at least Reno's). So CUBIC takes the larger share, by
//! more than a fifth. Measured (seed 11, 120 s): 39.7 against 8.4 Mbit/s — more than the
//! equal-loss model says, because the Reno flow also lost three times as often per
//! packet (2.5·10⁻³ against 7.5·10⁻⁴): CUBIC's window keeps the queue near full, where
//! Reno's slower growth meets it. Two Reno flows split the link within a fifth.

use cmt_sim::{load_str, Simulation, Summary};

fn shares(first: &str, second: &str) -> (f64, f64) {
    let text = format!(
        r#"
seed = 11
duration = "120s"
[receiver]
rbuf = "64KB"
[[links]]
name = "side"
rate = "10Mbps"
delay = "5ms"
[[links]]
name = "b"
rate = "50Mbps"
delay = "50ms"
queue = 420
[[paths]]
name = "side"
links = ["side"]
[[traffic]]
name = "one"
kind = "tcp"
cc = "{first}"
links = ["b"]
[[traffic]]
name = "two"
kind = "tcp"
cc = "{second}"
links = ["b"]
"#
    );
    let built = load_str(&text, "cross", None, &[]).unwrap();
    let mut sim = Simulation::new(built).unwrap();
    sim.run(&mut |_| {});
    let s = Summary::of(&sim, 0.0);
    (
        s.background[0].delivered_mbps,
        s.background[1].delivered_mbps,
    )
}

#[test]
fn a_cubic_flow_takes_more_of_a_long_fat_bottleneck_than_the_reno_flow_beside_it() {
    let (cubic, reno) = shares("cubic", "reno");
    assert!(
        cubic > 1.2 * reno,
        "cubic {cubic:.2}, reno {reno:.2} Mbit/s"
    );
    assert!(
        cubic + reno > 0.9 * 50.0,
        "together {:.2} of 50",
        cubic + reno
    );
    // Two Reno flows alike split it about evenly: the difference above is the CUBIC's.
    let (a, b) = shares("reno", "reno");
    assert!(
        (a / b - 1.0).abs() < 0.2,
        "reno {a:.2} and reno {b:.2} Mbit/s"
    );
}

#[test]
fn a_tcp_flows_congestion_control_is_checked() {
    for (cc, says) in [
        ("vegas", "unknown `vegas` (reno, cubic, linux-cubic, bbr)"),
        ("lia", "unknown `lia` (reno, cubic, linux-cubic, bbr)"),
    ] {
        let text = format!(
            "seed = 1\nduration = \"1s\"\n[[links]]\nname = \"a\"\nrate = \"1Mbps\"\n\
             [[paths]]\nname = \"a\"\nlinks = [\"a\"]\n\
             [[traffic]]\nname = \"t\"\nkind = \"tcp\"\ncc = \"{cc}\"\nlinks = [\"a\"]\n"
        );
        let e = match load_str(&text, "cc", None, &[]) {
            Ok(_) => panic!("{cc} accepted"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("traffic[0].cc") && e.contains(says), "{e}");
    }
}
