//! Several associations in one scenario: a multipath `cmt` flow beside a single-path
//! Reno association, both paths of the flow through the same link, and RFC 6356's goal 2
//! ("do no harm") measured as `fairness.shares[].vs_tcp_on_shared`.
//!
//! Model. The shared link is fast (100 Mbit/s) and loses 1 % of packets at random, so
//! every window is set by loss, not by the link: each Reno window follows Mathis et al.
//! (`√(3/2p)` packets a round trip, independent of the others). Two uncoupled Reno
//! subflows therefore send twice what the single-path association sends through the
//! link (ratio 2). RFC 6356's coupled increase is built so that, at the same loss rate,
//! the subflows together send what one Reno flow sends (ratio 1); a round-by-round model
//! of the same rules (halving per loss round, α = max wᵢ / Σw for equal round trips)
//! gives 1.07.
//!
//! Measured (three seeds): uncoupled 2.08–2.23; LIA 1.35–1.49, OLIA 1.33–1.44, BALIA
//! 1.40–1.44. The coupled controls take clearly less than uncoupled Reno, but more than
//! the model's one flow: the disagreement is recorded in docs/algorithms.md (decision
//! D47) and not resolved. What the test holds: uncoupled within 12 % of 2 (the mean
//! over three seeds; a few hundred loss events per run), and each coupled control's
//! excess over one flow at most half of uncoupled Reno's (the model: none against one
//! flow's worth).

mod common;

use cmt_sim::{load_str, Summary};

/// The association (Reno, one path `a0`→`b`) and the two-path flow `mp` (paths
/// `a1`→`b` and `a2`→`b`, congestion control `cc`); every access link adds 5 ms, so
/// all paths have the same round trip (30 ms).
fn scenario(cc: &str, seed: u64) -> String {
    let access = |name: &str| {
        format!("[[links]]\nname = \"{name}\"\nrate = \"1Gbps\"\ndelay = \"5ms\"\nqueue = 1000\n")
    };
    format!(
        r#"
seed = {seed}
duration = "60s"
[association]
cc = "reno"
[receiver]
rbuf = "16MB"
[[links]]
name = "b"
rate = "100Mbps"
delay = "10ms"
loss = 0.01
queue = 1000
{}{}{}
[[paths]]
name = "p0"
links = ["a0", "b"]
[[traffic]]
name = "mp"
kind = "cmt"
paths = [["a1", "b"], ["a2", "b"]]
cc = "{cc}"
"#,
        access("a0"),
        access("a1"),
        access("a2")
    )
}

fn run(text: &str) -> Summary {
    common::run(text, "coupled")
}

/// The multipath flow's goal-2 ratio, mean over seeds 1–3.
fn vs_tcp(cc: &str) -> f64 {
    let ratios: Vec<f64> = (1..=3)
        .map(|seed| {
            let s = run(&scenario(cc, seed));
            let f = s.fairness.expect("a closed-loop flow: fairness reported");
            assert_eq!(f.shares.len(), 2);
            assert_eq!((f.shares[1].name.as_str(), f.shares[1].paths), ("mp", 2));
            // Both subflows carried data.
            assert!(s.background[0].path_mbps.iter().all(|&x| x > 1.0));
            f.shares[1]
                .vs_tcp_on_shared
                .expect("paths shared with a TCP-like flow")
        })
        .collect();
    ratios.iter().sum::<f64>() / ratios.len() as f64
}

#[test]
fn coupled_controls_take_less_than_uncoupled_subflows_on_a_shared_link() {
    let uncoupled = vs_tcp("reno");
    assert!(
        (uncoupled - 2.0).abs() < 0.24,
        "uncoupled: {uncoupled:.2}× one flow"
    );
    for cc in ["lia", "olia", "balia"] {
        let coupled = vs_tcp(cc);
        assert!(
            coupled - 1.0 <= (uncoupled - 1.0) / 2.0,
            "{cc}: {coupled:.2}× one flow, uncoupled {uncoupled:.2}×"
        );
    }
}

/// Jain's index is 1 for equal goodputs and falls towards 1/2 as one of two takes all;
/// the shares add up to 1.
#[test]
fn jain_and_shares_follow_the_goodputs() {
    let s = run(&scenario("reno", 1));
    let f = s.fairness.unwrap();
    let (a, b) = (f.shares[0].goodput_mbps, f.shares[1].goodput_mbps);
    let jain = (a + b).powi(2) / (2.0 * (a * a + b * b));
    assert!((f.jain - jain).abs() < 1e-12);
    assert!((f.shares[0].share + f.shares[1].share - 1.0).abs() < 1e-12);
    // Two uncoupled subflows against one: about a third for the association.
    assert!(
        (f.shares[0].share - 1.0 / 3.0).abs() < 0.05,
        "{}",
        f.shares[0].share
    );
}

/// A `cmt` flow's settings are checked with the key that is wrong.
#[test]
fn a_bad_cmt_flow_is_refused_with_its_key() {
    let base = scenario("lia", 1);
    let cases = [
        ("cc = \"lia\"", "cc = \"receiver\"", "traffic[0].cc"),
        ("cc = \"lia\"", "cc = \"nope\"", "traffic[0].cc"),
        (
            "cc = \"lia\"",
            "scheduler = \"cmt-rev\"",
            "traffic[0].scheduler",
        ),
        (
            "paths = [[\"a1\", \"b\"], [\"a2\", \"b\"]]",
            "paths = [[\"a1\", \"b\"], []]",
            "traffic[0].paths[1]",
        ),
        (
            "paths = [[\"a1\", \"b\"], [\"a2\", \"b\"]]",
            "paths = [[\"a1\", \"x\"]]",
            "traffic[0].paths[0][1]",
        ),
        (
            "paths = [[\"a1\", \"b\"], [\"a2\", \"b\"]]",
            "links = [\"b\"]",
            "traffic[0].links",
        ),
        (
            "kind = \"cmt\"",
            "kind = \"tcp\"\nlinks = [\"b\"]",
            "traffic[0].paths",
        ),
    ];
    for (from, to, key) in cases {
        let text = base.replacen(from, to, 1);
        let Err(err) = load_str(&text, "coupled", None, &[]) else {
            panic!("{to}: accepted");
        };
        let err = err.to_string();
        assert!(err.contains(key), "{to}: {err}");
    }
}
