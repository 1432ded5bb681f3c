//! Build provenance for results: a hash of every source file of the workspace's crates
//! and of `Cargo.lock` (so that uncommitted edits count too), and the git commit when
//! built from a checkout. Both go into summaries and run ids (`src/build.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// 64-bit FNV-1a (a stable, dependency-free fingerprint; not a security hash).
fn fnv1a(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs" || x == "toml") {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest.join("../..");
    let mut inputs = vec![root.join("Cargo.lock"), root.join("Cargo.toml")];
    let crates = root.join("crates");
    let mut sources = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&crates) {
        for e in entries.flatten() {
            let c = e.path();
            inputs.push(c.join("Cargo.toml"));
            println!("cargo:rerun-if-changed={}", c.join("src").display());
            println!("cargo:rerun-if-changed={}", c.join("Cargo.toml").display());
            files(&c.join("src"), &mut sources);
        }
    }
    sources.extend(inputs.iter().filter(|p| p.exists()).cloned());
    // Relative paths, sorted: the hash does not depend on where the checkout lives.
    let mut rel: Vec<(String, PathBuf)> = sources
        .into_iter()
        .map(|p| {
            let r = p
                .strip_prefix(&root)
                .unwrap_or(&p)
                .to_string_lossy()
                .into_owned();
            (r, p)
        })
        .collect();
    rel.sort();
    rel.dedup_by(|a, b| a.0 == b.0);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, path) in &rel {
        fnv1a(&mut h, name.as_bytes());
        fnv1a(&mut h, &[0]);
        fnv1a(&mut h, &std::fs::read(path).unwrap_or_default());
        fnv1a(&mut h, &[0]);
    }
    println!(
        "cargo:rerun-if-changed={}",
        root.join("Cargo.lock").display()
    );
    println!("cargo:rustc-env=CMTLAB_SOURCE_HASH={h:016x}");

    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    for f in [".git/HEAD", ".git/refs/heads", ".git/packed-refs"] {
        if root.join(f).exists() {
            println!("cargo:rerun-if-changed={}", root.join(f).display());
        }
    }
    println!("cargo:rustc-env=CMTLAB_GIT_COMMIT={commit}");
}
