//! Golden results: refactors and speed work never change an outcome.
//!
//! Each case is a scenario and a seed — the demo paths under every built-in scheduler,
//! retransmission policy and congestion controller, the ns-2.35 compatibility mode, and
//! one grid point of every study sweep (its quick settings, one seed) — and its
//! summary.json must stay byte-identical to the stored one in `golden/summaries.jsonl`.
//! Left out of the comparison: `wall_s` (the host's speed), `events` (the simulator's
//! cost, which speed work may lower without changing an outcome), `build` and `inputs`
//! (provenance, which changes with every edit).
//!
//! When an outcome changes on purpose, regenerate with
//! `CMTLAB_BLESS_GOLDEN=1 cargo test -p cmt-lab --test golden` and say why in the commit.

use std::path::{Path, PathBuf};

mod common;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One golden case: a name and the scenario it runs.
struct Case {
    name: String,
    built: cmt_sim::Built,
}

/// The demo paths for 10 simulated seconds under each built-in algorithm.
fn demo_cases() -> Vec<Case> {
    let demo = root().join("scenarios/demo.toml");
    let mut sets: Vec<(String, Vec<String>)> = Vec::new();
    for s in cmt_core::sched::builtin().names() {
        let set = match s.as_str() {
            "cmt-rev" | "mptcp-rec" => format!("association.preset={s}"),
            _ => format!("association.scheduler={s}"),
        };
        sets.push((format!("demo/sched={s}"), vec![set]));
    }
    for r in cmt_core::rtx::builtin().names() {
        sets.push((
            format!("demo/rtx={r}"),
            vec![format!("association.rtx={r}")],
        ));
    }
    for c in cmt_core::cc::builtin().names() {
        let set = match c.as_str() {
            "receiver" => vec!["association.preset=mptcp-rec".into()],
            _ => vec![format!("association.cc={c}")],
        };
        sets.push((format!("demo/cc={c}"), set));
    }
    sets.push((
        "demo/compat=ns2".into(),
        vec!["association.compat=ns2".into()],
    ));
    sets.push((
        "demo/pf=false,rbuf=32KB".into(),
        vec!["association.pf=false".into(), "receiver.rbuf=32KB".into()],
    ));
    // Jitter that reorders (packets overtake each other in propagation) and jitter
    // that keeps FIFO order.
    sets.push((
        "demo/jitter,reorder".into(),
        vec![
            "links.core-1.jitter=5ms".into(),
            "links.core-1.reorder=true".into(),
            "links.wifi-access.jitter=2ms".into(),
            "links.wifi-access.reorder=true".into(),
            "links.core-2.jitter=3ms".into(),
        ],
    ));
    sets.into_iter()
        .map(|(name, mut set)| {
            set.push("duration=10s".into());
            let built = cmt_sim::load_file(&demo, &set).unwrap_or_else(|e| panic!("{name}: {e}"));
            Case { name, built }
        })
        .collect()
}

/// The middle run of every study sweep, under the study's quick settings.
fn study_cases() -> Vec<Case> {
    common::quick_study_plans(1)
        .into_iter()
        .map(|plan| {
            let run = &plan.runs[plan.runs.len() / 2];
            Case {
                name: format!("{}/{}", plan.name, plan.point_label(&run.point)),
                built: plan.scenario(run).unwrap(),
            }
        })
        .collect()
}

/// The summary as JSON without the fields that are not outcomes.
fn outcome(built: cmt_sim::Built) -> String {
    let summary = cmt_sim::run_built(built).unwrap();
    let mut v = serde_json::to_value(&summary).unwrap();
    let map = v.as_object_mut().unwrap();
    for k in ["wall_s", "events", "build", "inputs"] {
        map.remove(k);
    }
    serde_json::to_string(&v).unwrap()
}

#[test]
fn every_golden_case_gives_the_stored_summary() {
    let cases: Vec<Case> = demo_cases().into_iter().chain(study_cases()).collect();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    let lines: Vec<String> = std::thread::scope(|s| {
        let chunks: Vec<Vec<Case>> = {
            let mut chunks: Vec<Vec<Case>> = (0..4).map(|_| Vec::new()).collect();
            for (i, c) in cases.into_iter().enumerate() {
                chunks[i % 4].push(c);
            }
            chunks
        };
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .into_iter()
                        .map(|c| (c.name, outcome(c.built)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<(String, String)> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort();
        all.into_iter()
            .map(|(name, json)| format!("{{\"case\":{name:?},\"summary\":{json}}}"))
            .collect()
    });
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/summaries.jsonl");
    if std::env::var_os("CMTLAB_BLESS_GOLDEN").is_some() {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        return;
    }
    let stored = std::fs::read_to_string(&file).expect("golden/summaries.jsonl exists");
    let stored: Vec<&str> = stored.lines().collect();
    let case_of = |l: &str| l.split(",\"summary\"").next().unwrap_or("").to_string();
    let mut changed = Vec::new();
    for line in &lines {
        match stored.iter().find(|s| case_of(s) == case_of(line)) {
            Some(s) if *s == line => {}
            Some(_) => changed.push(format!("changed: {}", case_of(line))),
            None => changed.push(format!("new: {}", case_of(line))),
        }
    }
    for s in &stored {
        if !lines.iter().any(|l| case_of(l) == case_of(s)) {
            changed.push(format!("gone: {}", case_of(s)));
        }
    }
    assert!(
        changed.is_empty(),
        "{} of {} golden summaries differ:\n{}",
        changed.len(),
        lines.len(),
        changed.join("\n")
    );
}
