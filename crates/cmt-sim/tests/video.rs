//! Adaptive video flows (`kind = "video"`): the player's choices against their model.
//!
//! * On a 10 Mbit/s link the player may never choose an encoding above its safety
//!   share of what the link can deliver (0.85 × 10 Mbit/s), and with every segment
//!   arriving in less than its own duration it never stalls.
//! * On a 300 kbit/s link, below the lowest encoding (400 kbit/s), every 4 s segment
//!   (200,000 B of video in 138 packets of at most 1,452 B, each with 48 B of headers)
//!   takes 5.51 s to arrive: once the first has arrived playback stalls for the other
//!   1.51 s of each, so over `n` segments about (n − 1) × 1.51 s.

mod common;

use cmt_sim::{load_str, Summary};

/// The association on its own link; the video flow over link `v` of `rate`.
fn scenario(rate: &str) -> String {
    format!(
        r#"
seed = 2
duration = "120s"
[association]
cc = "reno"
[[links]]
name = "own"
rate = "1Mbps"
delay = "10ms"
[[links]]
name = "v"
rate = "{rate}"
delay = "10ms"
queue = 100
[[paths]]
name = "p"
links = ["own"]
[[traffic]]
name = "tv"
kind = "video"
links = ["v"]
"#
    )
}

fn run(text: &str) -> Summary {
    common::run(text, "video")
}

#[test]
fn a_fast_link_plays_without_stalls_below_the_safety_share() {
    let s = run(&scenario("10Mbps"));
    let tv = &s.background[0];
    let v = tv.video.as_ref().unwrap();
    let (n, fct) = (tv.objects.unwrap(), tv.fct_ms.as_ref().unwrap());
    assert!(fct.max < 4000.0, "a segment took {} ms", fct.max);
    assert_eq!(v.rebuffer_s, 0.0);
    assert!(
        v.mean_rate_mbps <= 0.85 * 10.0 && v.mean_rate_mbps > 0.4,
        "{v:?}"
    );
    // The player climbs off the lowest rung.
    assert!(v.switches >= 1 && n >= 25, "{n} segments, {v:?}");
}

#[test]
fn a_link_below_the_lowest_encoding_stalls_as_the_model_says() {
    let s = run(&scenario("300kbps"));
    let tv = &s.background[0];
    let v = tv.video.as_ref().unwrap();
    let n = tv.objects.unwrap() as f64;
    let per = (200_000.0 + 138.0 * 48.0) * 8.0 / 300e3;
    let model = (n - 1.0) * (per - 4.0);
    assert!(
        (v.rebuffer_s - model).abs() < 0.1 * model,
        "stalled {} s, model {model}",
        v.rebuffer_s
    );
    assert_eq!(v.switches, 0);
    assert!((v.mean_rate_mbps - 0.4).abs() < 1e-9);
}

/// The player's keys belong to video flows, and a ladder must ascend.
#[test]
fn bad_video_settings_name_their_key() {
    let base = scenario("10Mbps");
    let cases = [
        (
            "kind = \"video\"",
            "kind = \"video\"\nbitrates = [\"1Mbps\", \"500kbps\"]",
            "traffic[0].bitrates[1]",
        ),
        (
            "kind = \"video\"",
            "kind = \"video\"\nbuffer = \"1s\"",
            "traffic[0].buffer",
        ),
        (
            "kind = \"video\"",
            "kind = \"video\"\nsafety = 1.5",
            "traffic[0].safety",
        ),
        (
            "kind = \"video\"",
            "kind = \"tcp\"\nsegment = \"2s\"",
            "traffic[0].segment",
        ),
    ];
    for (from, to, key) in cases {
        let Err(e) = load_str(&base.replacen(from, to, 1), "video", None, &[]) else {
            panic!("{to}: accepted");
        };
        assert!(e.to_string().contains(key), "{to}: {e}");
    }
}
