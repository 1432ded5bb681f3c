//! Which build produced a result: the version, the git commit when built from a checkout,
//! and a hash of every source file of the workspace and of `Cargo.lock` (computed by
//! `build.rs`), so that results of different code are never taken for one another.

use cmt_core::registry::Global;
use serde::{Deserialize, Serialize};

/// The build of this binary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// The crate version.
    pub version: String,
    /// The git commit (12 hex digits), or `unknown` outside a checkout.
    pub commit: String,
    /// FNV-1a of the workspace's sources and `Cargo.lock` (16 hex digits): differs for
    /// any edit, committed or not. In a program that registered its own algorithms it
    /// also covers their names, the fingerprints they were registered with and the
    /// program's executable, whose sources cmtlab cannot see.
    pub source: String,
    /// The algorithms this program registered beyond the built-in ones
    /// (`scheduler:first-fit`, …); absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
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
    let extensions = extensions();
    let source = if extensions.is_empty() {
        env!("CMTLAB_SOURCE_HASH").to_string()
    } else {
        let mut h = FNV_START;
        fnv1a(&mut h, env!("CMTLAB_SOURCE_HASH").as_bytes());
        for e in extensions.iter().chain(&fingerprints()) {
            fnv1a(&mut h, b"\n");
            fnv1a(&mut h, e.as_bytes());
        }
        fnv1a(&mut h, executable_hash().as_bytes());
        format!("{h:016x}")
    };
    Build {
        version: env!("CARGO_PKG_VERSION").to_string(),
        commit: env!("CMTLAB_GIT_COMMIT").to_string(),
        source,
        extensions,
    }
}

/// Every algorithm registered at run time, as `kind:name`, in registration order.
fn extensions() -> Vec<String> {
    registered(false)
}

/// The fingerprints registrations gave (code the executable does not contain, such as
/// a Python class's source), as `kind:name@fingerprint`.
fn fingerprints() -> Vec<String> {
    registered(true)
}

/// The names (or `name@fingerprint`s) registered at every extension point, each tagged
/// with its kind.
fn registered(fingerprints: bool) -> Vec<String> {
    fn tagged<F: ?Sized>(kind: &str, g: &Global<F>, fingerprints: bool) -> Vec<String> {
        let rows = g.read(|t| match fingerprints {
            true => t.extension_fingerprints(),
            false => t.extensions(),
        });
        rows.into_iter().map(|n| format!("{kind}:{n}")).collect()
    }
    let mut out = tagged("scheduler", &cmt_core::sched::REGISTRY, fingerprints);
    out.extend(tagged("rtx", &cmt_core::rtx::REGISTRY, fingerprints));
    out.extend(tagged("cc", &cmt_core::cc::REGISTRY, fingerprints));
    out.extend(tagged(
        "loss_model",
        &crate::loss_model::REGISTRY,
        fingerprints,
    ));
    out
}

/// FNV-1a of the running executable's bytes (computed once), or `unreadable`.
fn executable_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| match std::env::current_exe().and_then(std::fs::read) {
        Ok(bytes) => {
            let mut h = FNV_START;
            fnv1a(&mut h, &bytes);
            format!("{h:016x}")
        }
        Err(_) => "unreadable".to_string(),
    })
}
