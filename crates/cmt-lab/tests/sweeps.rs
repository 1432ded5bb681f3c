//! Sweeps end to end: determinism across --jobs, sharding + merge equal to one run,
//! resuming, validation errors, and a snapshot of a small sweep's aggregate table.

use std::path::{Path, PathBuf};

#[path = "common/sweep_dir.rs"]
mod sweep_dir;

use cmt_lab::sweep::{run_plan, Plan, RunOptions};
use sweep_dir::{outputs, run, BASE};

fn tmp(name: &str) -> PathBuf {
    sweep_dir::tmp("sweeps", name)
}

const SWEEP: &str = r#"
name = "small"
base = "base.toml"
seeds = 3
metrics = ["goodput_mbps", "rbuf_blocked_s"]
[set]
"links.slow.queue" = 20
[[axes]]
key = "receiver.rbuf"
values = ["16KB", "64KB"]
[[axes]]
key = "links.fast.loss"
range = { from = 0.0, to = 0.02, step = 0.01 }
[[comparisons]]
metric = "goodput_mbps"
axis = "receiver.rbuf"
baseline = "16KB"
kind = "advantage"
[[reports]]
name = "loss"
x = "links.fast.loss"
y = "goodput_mbps"
group = "receiver.rbuf"
"#;

fn write_sweep(dir: &Path, sweep: &str) -> PathBuf {
    std::fs::write(dir.join("base.toml"), BASE).unwrap();
    let p = dir.join("sweep.toml");
    std::fs::write(&p, sweep).unwrap();
    p
}

#[test]
fn jobs_1_and_jobs_2_give_byte_identical_outputs() {
    let d = tmp("jobs");
    let plan = Plan::load(&write_sweep(&d, SWEEP)).unwrap();
    assert_eq!(plan.runs.len(), 2 * 3 * 3);
    run(&plan, &d.join("j1"), 1, None);
    run(&plan, &d.join("j2"), 2, None);
    assert_eq!(outputs(&d.join("j1")), outputs(&d.join("j2")));
}

#[test]
fn three_shards_merged_equal_the_unsharded_sweep_and_missing_runs_are_listed() {
    let d = tmp("shards");
    let plan = Plan::load(&write_sweep(&d, SWEEP)).unwrap();
    run(&plan, &d.join("all"), 2, None);
    let shards: Vec<PathBuf> = (0..3).map(|i| d.join(format!("s{i}"))).collect();
    for (i, s) in shards.iter().enumerate() {
        let o = run(&plan, s, 1, Some((i, 3)));
        assert_eq!(o.ran, 6, "shard {i} runs every third run");
        assert!(!o.complete);
    }
    // Two shards only: the third's runs are reported missing.
    let two: Vec<&Path> = shards[..2].iter().map(PathBuf::as_path).collect();
    let err = cmt_lab::merge::merge(&two, &d.join("bad"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("6 of 18 runs missing") && err.contains("#2 "),
        "{err}"
    );
    let all: Vec<&Path> = shards.iter().map(PathBuf::as_path).collect();
    cmt_lab::merge::merge(&all, &d.join("merged")).unwrap();
    assert_eq!(outputs(&d.join("merged")), outputs(&d.join("all")));
}

#[test]
fn a_rerun_skips_finished_runs() {
    let d = tmp("resume");
    let plan = Plan::load(&write_sweep(&d, SWEEP)).unwrap();
    let out = d.join("o");
    assert_eq!(run(&plan, &out, 2, Some((0, 2))).ran, 9);
    let o = run(&plan, &out, 2, None);
    assert_eq!((o.ran, o.skipped, o.complete), (9, 9, true));
    // A different sweep may not write into the same directory.
    let other = Plan::load(&write_sweep(&d, &SWEEP.replace("seeds = 3", "seeds = 2"))).unwrap();
    let err = run_plan(
        &other,
        &RunOptions {
            jobs: 1,
            shard: None,
            out: out.clone(),
        },
        &|_, _| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains("different sweep"), "{err}");
    // The same sweep planned by another build (an edited extension, say) runs all its
    // runs anew in the same directory: other build, other run ids, nothing reused.
    let mut rebuilt = plan.clone();
    rebuilt.build.source = "0123456789abcdef".into();
    for r in &mut rebuilt.runs {
        r.id = format!("{}x", r.id);
    }
    let o = run(&rebuilt, &out, 2, None);
    assert_eq!((o.ran, o.skipped, o.complete), (18, 0, true));
    let written = std::fs::read(out.join("plan.json")).unwrap();
    assert_eq!(written, serde_json::to_vec_pretty(&rebuilt).unwrap());
}

#[test]
fn a_cancelled_sweep_starts_no_run_and_says_so() {
    let d = tmp("cancel");
    let plan = Plan::load(&write_sweep(&d, SWEEP)).unwrap();
    let out = d.join("o");
    let opts = RunOptions {
        jobs: 2,
        shard: None,
        out: out.clone(),
    };
    let cancel = std::sync::atomic::AtomicBool::new(true);
    let err = cmt_lab::sweep::run_plan_until(&plan, &opts, &|_, _| {}, &cancel).unwrap_err();
    assert!(err.to_string().contains("interrupted"), "{err}");
    assert_eq!(std::fs::read_dir(out.join("runs")).unwrap().count(), 0);
    // Not cancelled, the same call runs everything.
    cancel.store(false, std::sync::atomic::Ordering::Relaxed);
    let o = cmt_lab::sweep::run_plan_until(&plan, &opts, &|_, _| {}, &cancel).unwrap();
    assert_eq!((o.ran, o.complete), (18, true));
}

#[test]
fn bad_sweep_files_name_the_problem() {
    let cases = [
        (SWEEP.replace("seeds = 3", "seeds = 0"), "seeds"),
        (
            SWEEP.replace("\"receiver.rbuf\"\nvalues", "\"receiver.rbuff\"\nvalues"),
            "unknown field `rbuff`",
        ),
        (
            SWEEP.replace("\"16KB\"", "\"-16KB\""),
            "grid point [receiver.rbuf=\"-16KB\"",
        ),
        (
            SWEEP.replace("\"rbuf_blocked_s\"", "\"speed\""),
            "unknown metric `speed`",
        ),
        (
            SWEEP.replace("baseline = \"16KB\"", "baseline = \"8KB\""),
            "baseline \"8KB\" is not one of its values",
        ),
        (SWEEP.replace("step = 0.01", "step = 0"), "step > 0"),
        (
            SWEEP.replace("group = \"receiver.rbuf\"", "group = \"x.y\""),
            "`x.y` is not an axis",
        ),
        (
            SWEEP.replace("name = \"small\"", "name = \"small\"\ncolour = 1"),
            "unknown field `colour`",
        ),
        (
            SWEEP.replace(
                "group = \"receiver.rbuf\"",
                "group = \"receiver.rbuf\"\npaper = { label = \"p\", points = [[0.5, 1.0]] }",
            ),
            "paper value at links.fast.loss = 0.5, which is not one of its values",
        ),
        (
            SWEEP.replace(
                "group = \"receiver.rbuf\"",
                "group = \"receiver.rbuf\"\npaper = [{ label = \"p\", series = \"9KB\", points = [[0.0, 1.0]] }]",
            ),
            "paper series `9KB` is not a value of its group axis",
        ),
        (
            SWEEP.replace(
                "group = \"receiver.rbuf\"",
                "group = \"receiver.rbuf\"\nlabels = { \"9KB\" = \"nine\" }",
            ),
            "labels name `9KB`, which is not a value of its group axis",
        ),
        (
            SWEEP.replace(
                "group = \"receiver.rbuf\"",
                "group = \"receiver.rbuf\"\nlabels = { \"16KB\" = 16 }",
            ),
            "label for `16KB` must be text, not 16",
        ),
        (
            SWEEP.replace(
                "group = \"receiver.rbuf\"",
                "group = \"receiver.rbuf\"\nrelative_to = \"9KB\"",
            ),
            "relative_to `9KB` is not a value of its group axis",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let d = tmp(&format!("bad{i}"));
        let err = Plan::load(&write_sweep(&d, text)).unwrap_err().to_string();
        assert!(
            err.contains("sweep.toml: ") && err.contains(want),
            "case {i}: {err}"
        );
        assert_eq!(err.lines().count(), 1);
    }
}

#[test]
fn snapshot_of_a_small_sweeps_aggregate_table() {
    // The science, pinned: a deliberate change to the protocol or simulator shows up
    // here. Re-generate with CMTLAB_BLESS=1 after checking the new numbers.
    let d = tmp("snap");
    let plan = Plan::load(&write_sweep(&d, SWEEP)).unwrap();
    run(&plan, &d.join("o"), 2, None);
    let got = std::fs::read_to_string(d.join("o/aggregate.csv")).unwrap();
    let snap = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/small_aggregate.csv");
    if std::env::var("CMTLAB_BLESS").is_ok() {
        std::fs::create_dir_all(snap.parent().unwrap()).unwrap();
        std::fs::write(&snap, &got).unwrap();
    }
    let want = std::fs::read_to_string(&snap).expect("snapshot exists (CMTLAB_BLESS=1 to create)");
    assert_eq!(got, want);
    // And it has the expected shape: 2 × 3 grid points × 2 metrics (the comparison and
    // the report reuse goodput_mbps), each over 3 seeds; the rbuf axis ("16KB", …) has a
    // numeric column in bytes beside it.
    assert_eq!(got.lines().count(), 1 + 6 * 2);
    assert!(got
        .lines()
        .next()
        .unwrap()
        .starts_with("receiver.rbuf,links.fast.loss,receiver.rbuf_value,metric,n,"));
    assert!(got
        .lines()
        .skip(1)
        .all(|l| l.split(',').nth(4) == Some("3")));
    assert!(got.lines().nth(1).unwrap().starts_with("16KB,0.0,16384,"));
}

#[test]
fn report_figures_are_valid_svg_and_png_and_the_report_links_them() {
    let d = tmp("plots");
    let plan = Plan::load(&write_sweep(
        &d,
        &SWEEP.replace(
            "group = \"receiver.rbuf\"",
            "group = \"receiver.rbuf\"\ntitle = \"Goodput under loss\"\nlabels = { \"64KB\" = \"a large buffer\" }\n\
             [[reports]]\nname = \"relative\"\nx = \"links.fast.loss\"\ny = \"goodput_mbps\"\n\
             group = \"receiver.rbuf\"\nrelative_to = \"16KB\"",
        ),
    ))
    .unwrap();
    let out = d.join("o");
    run(&plan, &out, 2, None);
    let png = std::fs::read(out.join("loss.png")).unwrap();
    // A report relative to a baseline says so on its y axis and leaves the baseline out.
    let rel = std::fs::read_to_string(out.join("relative.svg")).unwrap();
    assert!(
        rel.contains("change in goodput against 16KB (%)"),
        "relative y label"
    );
    assert!(!rel.contains(">16KB<"), "the baseline drawn as a series");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(png.len() > 20_000, "PNG of {} bytes", png.len());
    let svg = std::fs::read_to_string(out.join("loss.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    // Labels in words with units, loss in percent, the legend naming each series by its
    // value and saying what the error bars are.
    for text in [
        "Goodput under loss",
        "loss rate of link fast (%)",
        "goodput (Mbit/s)",
        "16KB",
        "a large buffer",
        "95 % CI (Student-t)",
    ] {
        assert!(svg.contains(text), "SVG lacks {text:?}");
    }
    assert!(!svg.contains("receiver.rbuf=16KB"), "raw key in the legend");
    assert!(!svg.contains(">64KB<"), "a labelled value in its raw form");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("![loss.png](loss.png)"));
}

#[test]
fn a_variant_axis_sets_several_keys_per_value_and_equals_the_same_runs_set_by_hand() {
    // "lossy" sets loss on both links at once; its runs must be exactly the runs a
    // sweep with those two keys in `[set]` makes (same ids, same results).
    let variants = r#"
name = "v"
base = "base.toml"
seeds = 2
[[axes]]
key = "case"
variants = [
  { name = "clean", set = { "links.fast.loss" = 0.0, "links.slow.loss" = 0.0 } },
  { name = "lossy", set = { "links.fast.loss" = 0.03, "links.slow.loss" = 0.05 } },
]
"#;
    let by_hand = r#"
name = "h"
base = "base.toml"
seeds = 2
[set]
"links.fast.loss" = 0.03
"links.slow.loss" = 0.05
"#;
    let d = tmp("variants");
    let plan = Plan::load(&write_sweep(&d, variants)).unwrap();
    assert_eq!(plan.axes[0].values, vec!["\"clean\"", "\"lossy\""]);
    assert_eq!(plan.point_label(&[1]), "case=lossy");
    let h = tmp("variants-hand");
    let hand = Plan::load(&write_sweep(&h, by_hand)).unwrap();
    let lossy: Vec<&str> = plan.runs[2..].iter().map(|r| r.id.as_str()).collect();
    let want: Vec<&str> = hand.runs.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(lossy, want);
    run(&plan, &d.join("o"), 2, None);
    let rows = std::fs::read_to_string(d.join("o/aggregate.csv")).unwrap();
    let goodput = |case: &str| -> f64 {
        let l = rows
            .lines()
            .find(|l| l.starts_with(case) && l.contains("goodput_mbps"))
            .unwrap_or_else(|| panic!("{case} in {rows}"));
        l.split(',').nth(3).unwrap().parse().unwrap()
    };
    assert!(goodput("clean") > goodput("lossy"), "{rows}");

    let dup = variants.replace("name = \"lossy\"", "name = \"clean\"");
    let err = Plan::load(&write_sweep(&d, &dup)).unwrap_err().to_string();
    assert!(err.contains("duplicate variant \"clean\""), "{err}");
    let both = variants.replace("key = \"case\"", "key = \"case\"\nvalues = [1]");
    let err = Plan::load(&write_sweep(&d, &both)).unwrap_err().to_string();
    assert!(err.contains("give exactly one of"), "{err}");
}

#[test]
fn a_report_at_one_slice_draws_and_fits_only_that_slice() {
    let sweep = SWEEP.replace(
        "group = \"receiver.rbuf\"",
        "at = { \"receiver.rbuf\" = \"64KB\" }",
    );
    let d = tmp("at");
    let plan = Plan::load(&write_sweep(&d, &sweep)).unwrap();
    run(&plan, &d.join("o"), 2, None);
    let report = std::fs::read_to_string(d.join("o/report.md")).unwrap();
    // One regression line (the 64 KB slice), labelled without the fixed axis.
    let fit_rows: Vec<&str> = report.lines().filter(|l| l.starts_with("| loss")).collect();
    assert_eq!(fit_rows.len(), 1, "{report}");
    assert!(fit_rows[0].contains("| all |"), "{report}");

    let bad = SWEEP.replace(
        "group = \"receiver.rbuf\"",
        "at = { \"receiver.rbuf\" = \"8KB\" }",
    );
    let err = Plan::load(&write_sweep(&d, &bad)).unwrap_err().to_string();
    assert!(
        err.contains("at receiver.rbuf = \"8KB\" is not one of its values"),
        "{err}"
    );
    let own_x = SWEEP.replace(
        "group = \"receiver.rbuf\"",
        "at = { \"links.fast.loss\" = 0.01 }",
    );
    let err = Plan::load(&write_sweep(&d, &own_x))
        .unwrap_err()
        .to_string();
    assert!(err.contains("fixes its own x axis"), "{err}");
}

#[test]
fn results_carry_their_build_and_inputs_and_an_edited_trace_gets_new_run_ids() {
    let d = tmp("provenance");
    let base = "seed = 1\nduration = \"2s\"\n[[links]]\nname = \"cell\"\ntrace = \"cell.trace\"\n\
                rate = \"5Mbps\"\ndelay = \"20ms\"\n[[paths]]\nname = \"p\"\nlinks = [\"cell\"]\n";
    std::fs::write(d.join("base.toml"), base).unwrap();
    std::fs::write(d.join("cell.trace"), "1\n2\n4\n8\n").unwrap();
    let sweep = d.join("sweep.toml");
    std::fs::write(&sweep, "base = \"base.toml\"\nseeds = 2\n").unwrap();
    let plan = Plan::load(&sweep).unwrap();
    assert_eq!(plan.build, cmt_sim::build());
    assert_eq!(plan.build.source.len(), 16);
    run(&plan, &d.join("o"), 1, None);
    let rec = cmt_lab::results::read_run(&d.join("o"), &plan.runs[0].id).unwrap();
    assert_eq!(rec.summary.build, cmt_sim::build());
    let header = std::fs::read_to_string(d.join("o/results.csv")).unwrap();
    assert!(header
        .lines()
        .next()
        .unwrap()
        .ends_with("cmtlab_version,git_commit,build_source,inputs"));
    // Same path, other contents: other run ids, so a resumed sweep does not reuse them.
    std::fs::write(d.join("cell.trace"), "1\n3\n4\n8\n").unwrap();
    let again = Plan::load(&sweep).unwrap();
    for (a, b) in plan.runs.iter().zip(&again.runs) {
        assert_ne!(a.id, b.id);
    }
}

#[test]
fn merge_refuses_shards_run_by_another_build() {
    let d = tmp("builds");
    let plan = Plan::load(&write_sweep(&d, SWEEP)).unwrap();
    let (a, b) = (d.join("s0"), d.join("s1"));
    run(&plan, &a, 1, Some((0, 2)));
    run(&plan, &b, 1, Some((1, 2)));
    // Shard 1 as if run by another build of the same sweep.
    let file = b.join("plan.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let edited = text.replace(&plan.build.source, "0123456789abcdef");
    assert_ne!(text, edited, "plan.json records the build");
    std::fs::write(&file, edited).unwrap();
    let err = cmt_lab::merge::merge(&[a.as_path(), b.as_path()], &d.join("m"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("was run by another build (source 0123456789abcdef"),
        "{err}"
    );
}

/// A scenario with a further multipath flow: its per-flow metrics are accepted by name,
/// land in `results.csv` with a value, and a flow the scenario lacks is refused.
#[test]
fn per_flow_metrics_name_the_scenarios_flows() {
    let d = tmp("flows");
    let base = format!(
        "{BASE}[[traffic]]\nname = \"mp\"\nkind = \"cmt\"\npaths = [[\"fast\"], [\"slow\"]]\ncc = \"lia\"\n"
    );
    let sweep = r#"
name = "flows"
base = "base.toml"
seeds = 1
metrics = ["fairness.jain", "flows.mp.share", "flows.association.goodput_mbps"]
[[axes]]
key = "receiver.rbuf"
values = ["64KB"]
"#;
    std::fs::write(d.join("base.toml"), &base).unwrap();
    let p = d.join("sweep.toml");
    std::fs::write(&p, sweep).unwrap();
    let plan = Plan::load(&p).unwrap();
    assert_eq!(plan.flow_names, ["association", "mp"]);
    let o = run(&plan, &d.join("o"), 1, None);
    assert!(o.complete);
    let csv = std::fs::read_to_string(d.join("o/results.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cell = |name: &str| {
        let i = header.iter().position(|h| *h == name).unwrap();
        row[i].parse::<f64>().unwrap()
    };
    let (a, m) = (cell("flows.association.share"), cell("flows.mp.share"));
    assert!((a + m - 1.0).abs() < 1e-9 && m > 0.0, "{a} + {m}");
    assert!(cell("fairness.jain") > 0.5 && cell("fairness.jain") <= 1.0);
    std::fs::write(&p, sweep.replace("flows.mp.share", "flows.nope.share")).unwrap();
    let err = Plan::load(&p).unwrap_err().to_string();
    assert!(err.contains("unknown metric `flows.nope.share`"), "{err}");
}
