//! The counts the documentation states about the tree are the tree's: the golden
//! summaries the refactoring guard keeps, and the scenario variants the outcome tool
//! runs (`tools/speed/outcomes.py count`). When a golden case or a scenario is added,
//! this fails until the README, BENCHMARKS.md and the tool's own text say the new number.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The number written between `before` and `after` in `text` (whitespace, including a
/// line break, may stand for each space of the phrases).
fn number_between(text: &str, before: &str, after: &str) -> Option<u64> {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let start = flat.find(before)? + before.len();
    let rest = &flat[start..];
    let end = rest.find(after)?;
    rest[..end].trim().parse().ok()
}

/// Checks that each `(file, before, after)` place states `count`.
fn each_states(places: &[(&str, &str, &str)], count: u64) {
    for (file, before, after) in places {
        let n = number_between(&read(file), before, after)
            .unwrap_or_else(|| panic!("{file}: no number between {before:?} and {after:?}"));
        assert_eq!(
            n, count,
            "{file}: says {n} between {before:?} and {after:?}"
        );
    }
}

#[test]
fn the_golden_summaries_are_counted_where_they_are_described() {
    let golden = read("crates/cmt-lab/tests/golden/summaries.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count() as u64;
    let places = [
        ("README.md", "`tests/golden.rs` keeps", "summaries"),
        (
            "tools/speed/outcomes.py",
            "The golden test (crates/cmt-lab/tests/golden.rs) pins",
            "summaries",
        ),
        ("BENCHMARKS.md", "test's summaries (50 then,", "today)"),
    ];
    each_states(&places, golden);
}

#[test]
fn the_outcome_tools_variants_are_counted_where_they_are_described() {
    let out = Command::new("python3")
        .arg(root().join("tools/speed/outcomes.py"))
        .arg("count")
        .output()
        .expect("python3 runs tools/speed/outcomes.py (the README's test command needs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let variants: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let places = [
        (
            "README.md",
            "summaries and per-packet traces over",
            "scenario variants",
        ),
        ("BENCHMARKS.md", "2 seeds;", "variants today"),
    ];
    each_states(&places, variants);
}

#[test]
fn a_number_is_found_across_a_line_break_and_a_wrong_phrase_finds_none() {
    let text = "keeps\n  63 summaries that";
    assert_eq!(number_between(text, "keeps", "summaries"), Some(63));
    assert_eq!(number_between(text, "holds", "summaries"), None);
    assert_eq!(
        number_between("keeps many summaries", "keeps", "summaries"),
        None
    );
}
