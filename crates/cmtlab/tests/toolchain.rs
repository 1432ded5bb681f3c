//! The workspace's `rust-version` is the toolchain floor the locked dependencies really
//! need: the highest `rust-version` any package in `Cargo.lock` declares (build and
//! test dependencies alike, since `cargo test --workspace` is the README's command).
//! Adding a dependency that needs a newer Rust fails here until the floor is raised.

use std::process::Command;

fn version(v: &str) -> Vec<u64> {
    v.split('.')
        .map(|x| x.parse().unwrap_or(0))
        .chain([0, 0])
        .take(3)
        .collect()
}

#[test]
fn rust_version_is_what_the_locked_dependencies_need() {
    // Offline first (the build has fetched what the host needs); online when crates of
    // other platforms are missing from the local cache.
    let metadata = |extra: &[&str]| {
        Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1", "--locked"])
            .args(extra)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo runs")
    };
    let mut out = metadata(&["--offline"]);
    if !out.status.success() {
        out = metadata(&[]);
    }
    if !out.status.success() {
        eprintln!(
            "skipped: cargo metadata needs the registry: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
        return;
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let ours = packages
        .iter()
        .find(|p| p["name"] == "cmtlab")
        .and_then(|p| p["rust_version"].as_str())
        .expect("cmtlab declares rust-version");
    let (needed, by) = packages
        .iter()
        .filter(|p| p["source"].is_string()) // dependencies, not our crates
        .filter_map(|p| Some((version(p["rust_version"].as_str()?), p["name"].to_string())))
        .max()
        .expect("dependencies declare rust-version");
    assert_eq!(
        version(ours),
        needed,
        "rust-version {ours}, but {by} needs {needed:?}"
    );
}
