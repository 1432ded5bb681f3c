//! Every scenario, sweep and study file in the repository loads: a renamed key or a
//! changed default cannot silently break a study.

use std::path::{Path, PathBuf};

fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            toml_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "toml") {
            out.push(p);
        }
    }
}

#[test]
fn every_scenario_sweep_and_study_file_in_the_repository_loads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files = Vec::new();
    toml_files(&root, &mut files);
    files.sort();
    assert!(files.len() >= 5, "found {files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let v: toml::Table =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        if f.file_name().is_some_and(|n| n == "study.toml") {
            let study: cmt_lab::study::StudyFile =
                toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            for s in &study.sweeps {
                assert!(
                    f.parent().unwrap().join(s).exists(),
                    "{}: sweep {s} missing",
                    f.display()
                );
            }
        } else if v.contains_key("base") {
            cmt_lab::sweep::Plan::load(f).unwrap_or_else(|e| panic!("{e}"));
        } else {
            cmt_sim::load_file(f, &[]).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}
