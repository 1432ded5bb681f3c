//! Bad scenario input gives one-line errors naming the source, the field and the
//! problem — never a panic.

use cmt_sim::{load_file, load_str};

const BASE: &str = r#"
seed = 1
duration = "10s"
[[links]]
name = "a"
rate = "10Mbps"
delay = "10ms"
[[paths]]
name = "p"
links = ["a"]
"#;

fn error(text: &str, set: &[&str]) -> String {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    match load_str(text, "test.toml", None, &set) {
        Ok(_) => panic!("accepted a bad scenario: {text} {set:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn each_kind_of_mistake_is_named_with_its_field() {
    // (scenario text, overrides, substrings the message must contain)
    let no_seed = BASE.replace("seed = 1", "");
    let both = BASE.replace(
        "duration = \"10s\"",
        "duration = \"10s\"\nfile_size = \"1MB\"",
    );
    let syntax = BASE.replace("rate = \"10Mbps\"", "rate = \"10Mbps");
    let cases: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
        (BASE, vec!["colour=\"red\""], vec!["unknown field `colour`"]),
        (
            BASE,
            vec!["association.schedular=\"rr\""],
            vec!["association", "unknown field `schedular`"],
        ),
        (
            BASE,
            vec!["association.scheduler=\"fancy\""],
            vec![
                "`association.scheduler`",
                "unknown scheduler `fancy`",
                "round-robin",
            ],
        ),
        (
            BASE,
            vec!["association.rtx=\"rtx-nope\""],
            vec!["`association.rtx`", "unknown retransmission policy"],
        ),
        (
            BASE,
            vec!["association.cc=\"cubic9\""],
            vec!["`association.cc`", "unknown congestion control"],
        ),
        (
            BASE,
            vec!["links.a.rate=\"-5Mbps\""],
            vec!["`links[0].rate`", "must be positive"],
        ),
        (
            BASE,
            vec!["links.a.loss=\"150%\""],
            vec!["`links[0].loss`", "between 0 and 1"],
        ),
        (
            BASE,
            vec!["links.a.delay=\"20ms..10ms\""],
            vec!["`links[0].delay`", "upper end below lower end"],
        ),
        (
            BASE,
            vec!["links.a.gilbert=\"markov9\""],
            vec!["`links[0].gilbert`", "unknown preset"],
        ),
        (
            BASE,
            vec!["links.a.queue=0"],
            vec!["`links[0].queue`", "at least 1"],
        ),
        (
            BASE,
            vec!["links.a.queue=\"infinite\""],
            vec!["`links[0].queue`", "\"unlimited\""],
        ),
        (
            BASE,
            vec!["paths.p.links=[\"b\"]"],
            vec!["`paths[0].links[0]`", "unknown link `b`"],
        ),
        (
            BASE,
            vec!["receiver.rbuf=\"1KB\""],
            vec!["`association`", "rbuf 1024 is smaller than one chunk"],
        ),
        (
            BASE,
            vec!["association.scheduler_params.x=1"],
            vec!["`association.scheduler`", "takes no parameters"],
        ),
        (
            BASE,
            vec!["duration=\"0s\""],
            vec!["`duration`", "positive"],
        ),
        (
            BASE,
            vec!["links.zz.rate=1"],
            vec!["--set", "no element named `zz`"],
        ),
        // Implausible values that used to pass silently.
        (
            BASE,
            vec!["links.a.delay=\"15\""],
            vec!["`links[0].delay`", "give a unit", "ms"],
        ),
        (
            BASE,
            vec!["links.a.delay=75"],
            vec!["`links[0].delay`", "bare number is seconds", "\"75s\""],
        ),
        (
            BASE,
            vec!["links.a.rate=5"],
            vec!["`links[0].rate`", "below 1 kbit/s", "\"5bps\""],
        ),
        (
            BASE,
            vec!["links.a.rate=\"5\""],
            vec!["`links[0].rate`", "give a unit"],
        ),
        (
            BASE,
            vec!["receiver.rbuf=\"64kb\""],
            vec!["`receiver.rbuf`", "reads as bits", "KiB"],
        ),
        (
            BASE,
            vec!["events=[{at=\"20s\",link=\"a\",state=\"down\"}]"],
            vec!["`events[0].at`", "after the end of the run (10 s)"],
        ),
        (&no_seed, vec![], vec!["missing field `seed`"]),
        (&both, vec![], vec!["`duration`", "not both"]),
        (&syntax, vec![], vec!["line 6"]),
    ];
    for (text, set, wants) in cases {
        let msg = error(text, &set);
        assert!(msg.starts_with("test.toml: "), "no source in {msg:?}");
        assert_eq!(msg.lines().count(), 1, "not one line: {msg:?}");
        for w in wants {
            assert!(msg.contains(w), "{set:?}: {msg:?} lacks {w:?}");
        }
    }
}

#[test]
fn an_unreadable_file_is_reported_with_its_path() {
    let e = load_file(std::path::Path::new("/nonexistent/dir/x.toml"), &[])
        .err()
        .expect("fails");
    let msg = e.to_string();
    assert!(
        msg.starts_with("/nonexistent/dir/x.toml: cannot read file"),
        "{msg}"
    );
}

#[test]
fn the_db_cmt_preset_sets_three_algorithms_and_explicit_names_win() {
    let b = load_str(BASE, "t", None, &["association.preset=\"db-cmt\"".into()]).unwrap();
    assert_eq!(
        (b.scheduler.name(), b.rtx.name(), b.cc.name()),
        ("db-cmt", "rtx-cl", "db-cmt")
    );
    let b = load_str(
        BASE,
        "t",
        None,
        &[
            "association.preset=\"db-cmt\"".into(),
            "association.rtx=\"rtx-cwnd\"".into(),
        ],
    )
    .unwrap();
    assert_eq!(b.rtx.name(), "rtx-cwnd");
    let e = error(BASE, &["association.preset=\"cmt-9\""]);
    assert!(
        e.contains("`association.preset`") && e.contains("unknown preset"),
        "{e}"
    );
}

#[test]
fn the_linux_mptcp_preset_is_upstreams_scheduler_subflow_retransmission_and_linux_cubic() {
    let ms = cmt_core::Duration::from_millis;
    let b = load_str(
        BASE,
        "t",
        None,
        &["association.preset=\"linux-mptcp\"".into()],
    )
    .unwrap();
    assert_eq!(
        (b.scheduler.name(), b.rtx.name(), b.cc.name()),
        ("linux-mptcp", "rtx-same", "linux-cubic")
    );
    // … with Linux's loss detection, PRR and timers (decisions D43, D52, D55) …
    let c = &b.config;
    assert_eq!((c.recovery, c.prr), (cmt_core::Recovery::RackTlp, true));
    assert_eq!(
        (
            c.rto_min,
            c.rto_initial,
            c.rto_max,
            c.initial_window,
            c.max_burst
        ),
        (ms(200), ms(1_000), ms(120_000), Some(10), 0)
    );
    assert_eq!((c.sack_delay, c.dac), (ms(40), true));
    assert!(
        c.ack_filled_holes,
        "a subflow acks a segment that fills a gap (D59)"
    );
    // … unless the scenario says otherwise.
    let own = load_str(
        BASE,
        "t",
        None,
        &[
            "association.preset=\"linux-mptcp\"".into(),
            "association.recovery=\"sctp\"".into(),
            "association.rto_min=\"1s\"".into(),
            "association.prr=false".into(),
            "association.ack_filled_holes=false".into(),
        ],
    )
    .unwrap();
    assert_eq!(own.config.recovery, cmt_core::Recovery::Sctp);
    assert_eq!(own.config.rto_min, ms(1_000));
    assert!(!own.config.prr);
    assert!(!own.config.ack_filled_holes);
    // `cubic` with Linux's flavour is the same controller, and says so.
    let b = load_str(
        BASE,
        "t",
        None,
        &[
            "association.cc=\"cubic\"".into(),
            "association.cc_params.flavour=\"linux\"".into(),
        ],
    )
    .unwrap();
    assert_eq!(b.cc.name(), "linux-cubic");
}

#[test]
fn the_picoquic_preset_is_its_path_selection_any_path_retransmission_reno_and_quic_recovery() {
    let ms = cmt_core::Duration::from_millis;
    let b = load_str(
        BASE,
        "t",
        None,
        &["association.preset=\"picoquic-rr\"".into()],
    )
    .unwrap();
    assert_eq!(
        (b.scheduler.name(), b.rtx.name(), b.cc.name()),
        ("picoquic-rr", "rtx-asap", "reno")
    );
    // … with QUIC's loss recovery and picoquic's timers (decisions D43, D54) …
    let c = &b.config;
    assert_eq!(c.recovery, cmt_core::Recovery::Quic);
    assert_eq!(
        (c.rto_min, c.rto_initial, c.initial_window, c.max_burst),
        (ms(25), ms(1_000), Some(10), 10)
    );
    assert_eq!(c.sack_delay, ms(25));
    assert_eq!((c.pf_enabled, c.pfmr), (true, 0));
    // … unless the scenario says otherwise.
    let own = load_str(
        BASE,
        "t",
        None,
        &[
            "association.preset=\"picoquic-rr\"".into(),
            "association.recovery=\"sctp\"".into(),
            "association.pf=false".into(),
        ],
    )
    .unwrap();
    assert_eq!(own.config.recovery, cmt_core::Recovery::Sctp);
    assert!(!own.config.pf_enabled);
    assert!(!b.config.prr, "QUIC cuts its window at once");
    // PRR spreads a cut that QUIC's recovery makes at once: refused, by name.
    let e = load_str(
        BASE,
        "t",
        None,
        &[
            "association.preset=\"picoquic-rr\"".into(),
            "association.prr=true".into(),
        ],
    )
    .err()
    .expect("prr with quic is refused")
    .to_string();
    assert!(e.contains("association") && e.contains("prr"), "{e}");
}

#[test]
fn the_a_cmt_preset_is_delay_aware_scheduling_rtx_cwnd_and_d_dsp_growth() {
    // A-CMT as the DB-CMT paper describes it: delay/bandwidth-aware scheduling (our
    // least-queued-data rule) with D-DSP growth and RFC 4960 halving.
    let b = load_str(BASE, "t", None, &["association.preset=\"a-cmt\"".into()]).unwrap();
    assert_eq!(
        (b.scheduler.name(), b.rtx.name(), b.cc.name()),
        ("db-cmt", "rtx-cwnd", "a-cmt")
    );
}

#[test]
fn overriding_file_size_replaces_the_duration_and_the_later_override_wins() {
    let b = load_str(BASE, "t", None, &["file_size=\"1MB\"".into()]).unwrap();
    assert!(
        matches!(
            b.workload,
            cmt_sim::scenario::Workload::File {
                bytes: 1_048_576,
                ..
            }
        ),
        "{:?}",
        b.workload
    );
    let file = BASE.replace("duration = \"10s\"", "file_size = \"1MB\"");
    let b = load_str(&file, "t", None, &["duration=\"5s\"".into()]).unwrap();
    assert!(
        matches!(b.workload, cmt_sim::scenario::Workload::Timed(d) if d.as_secs_f64() == 5.0),
        "{:?}",
        b.workload
    );
    // Both overridden: the later wins (a quick mode's duration, then a sweep's size).
    let b = load_str(
        BASE,
        "t",
        None,
        &["duration=\"5s\"".into(), "file_size=\"1MB\"".into()],
    )
    .unwrap();
    assert!(matches!(
        b.workload,
        cmt_sim::scenario::Workload::File { .. }
    ));
}

#[test]
fn an_unknown_loss_rate_source_is_named() {
    let e = error(BASE, &["association.loss_rate=\"psychic\""]);
    assert!(
        e.contains("`association.loss_rate`") && e.contains("estimated or oracle"),
        "{e}"
    );
}
