//! Which build produced a result: the version, the git commit when built from a checkout,
//! and a hash of every source file of the workspace and of `Cargo.lock` (computed by
//! `build.rs`), so that results of different code are never taken for one another.

use serde::{Deserialize, Serialize};

/// The build of this binary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// The crate version.
    pub version: String,
    /// The git commit (12 hex digits), or `unknown` outside a checkout.
    pub commit: String,
    /// FNV-1a of the workspace's sources and `Cargo.lock` (16 hex digits): differs for
    /// any edit, committed or not.
    pub source: String,
}

/// FNV-1a's offset basis: the starting value for [`fnv1a`].
pub(crate) const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// Folds `bytes` into the 64-bit FNV-1a hash `h` (a stable fingerprint, not a security
/// hash).
pub(crate) fn fnv1a(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

/// This binary's build.
pub fn build() -> Build {
    Build {
        version: env!("CARGO_PKG_VERSION").to_string(),
        commit: env!("CMTLAB_GIT_COMMIT").to_string(),
        source: env!("CMTLAB_SOURCE_HASH").to_string(),
    }
}
