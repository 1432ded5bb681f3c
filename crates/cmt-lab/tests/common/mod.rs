//! Shared by the tests that run every study: the study sweeps of the repository, planned
//! with each study's quick settings.

use std::path::{Path, PathBuf};

use cmt_lab::study::StudyFile;
use cmt_lab::sweep::{Plan, Seeds};

/// Every sweep of every study under `scenarios/studies`, in name order, planned with
/// its study's quick settings and at most `max_seeds` seeds.
pub fn quick_study_plans(max_seeds: u64) -> Vec<Plan> {
    let studies = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/studies");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(studies)
        .expect("scenarios/studies exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("study.toml").exists())
        .collect();
    dirs.sort();
    let mut plans = Vec::new();
    for dir in dirs {
        let study: StudyFile =
            toml::from_str(&std::fs::read_to_string(dir.join("study.toml")).unwrap()).unwrap();
        let quick = study.quick.expect("every study has [quick] settings");
        for sweep in &study.sweeps {
            let plan = Plan::load_with(&dir.join(sweep), |f| {
                f.seeds = Seeds::Count(quick.seeds.min(max_seeds));
                f.set.extend(quick.set.clone());
            })
            .unwrap();
            plans.push(plan);
        }
    }
    plans
}
