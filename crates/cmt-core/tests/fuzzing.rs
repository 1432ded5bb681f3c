//! The fuzzing harnesses of `cmt_core::fuzzing`, run in every `cargo test` on a bounded
//! number of inputs: each seed of `fuzz/seeds/` (real captures, see
//! `crates/cmt-net/examples/fuzz_seeds.rs`) as it is, then generated inputs and seeds
//! with bytes changed. The same harnesses run under libFuzzer in `fuzz/` (`.ci/run`
//! runs each target for a minute when a nightly toolchain is at hand).

use std::path::PathBuf;

use cmt_core::fuzzing;
use proptest::prelude::*;

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&d)
        .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no seeds in {}", d.display());
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

/// A harness, returning what it got through (packets parsed, bytes delivered,
/// associations established).
type Harness = fn(&[u8]) -> usize;

const HARNESSES: [(&str, Harness); 3] = [
    ("decode", fuzzing::decode_one),
    ("association", fuzzing::association),
    ("listener", fuzzing::listener),
];

/// Every seed passes, and the seeds reach deep: every capture parses, the captured
/// conversation delivers data at the receiver, and echoed cookies establish (the
/// unkeyed listener's; the keyed one never establishes without an AUTH chunk).
#[test]
fn every_seed_passes_its_harness_and_reaches_the_state_machines() {
    for (target, h) in HARNESSES {
        let got: Vec<usize> = seeds(target).iter().map(|s| h(s)).collect();
        match target {
            "decode" => assert!(got.iter().all(|&n| n == 2), "{got:?}"),
            "association" => assert!(got.iter().all(|&n| n > 10_000), "{got:?}"),
            _ => assert!(got[0] > 0 && got[1] == 0, "{got:?}"),
        }
    }
}

/// A seed of `target` (chosen by `pick`) with `flips` bytes changed.
fn mutated(target: &str, pick: usize, flips: &[(usize, u8)]) -> Vec<u8> {
    let all = seeds(target);
    let mut s = all[pick % all.len()].clone();
    for &(at, x) in flips {
        if !s.is_empty() {
            let n = s.len();
            s[at % n] ^= x | 1;
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_inputs_keep_every_invariant(bytes in prop::collection::vec(any::<u8>(), 0..3000)) {
        for (_, h) in HARNESSES {
            h(&bytes);
        }
    }

    #[test]
    fn changed_seeds_keep_every_invariant(
        pick in any::<usize>(),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..12),
    ) {
        for (target, h) in HARNESSES {
            h(&mutated(target, pick, &flips));
        }
    }
}
