//! `cmtlab reproduce --real`: one scenario of a study over real sockets, with the real
//! runtime behind loopback relays (`cmt_net::replay`), on a runtime of its own.

use std::collections::BTreeMap;
use std::path::Path;

/// Runs `built` for real (the sender's capture to `capture`, when given) and returns its
/// values by the simulator's metric names.
pub fn run_scenario(
    built: &cmt_sim::Built,
    scratch: &Path,
    capture: Option<&Path>,
) -> Result<BTreeMap<String, f64>, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let r = rt.block_on(cmt_net::replay::replay_capturing(built, scratch, capture))?;
    Ok(r.metrics())
}
