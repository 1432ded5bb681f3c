//! Paths that follow their interfaces: the sender names its local addresses by
//! interface (`--local cmt0,cmt1`); mid-transfer path 0's interface loses its address,
//! and 3 s later gets another one (10.77.0.1 → 10.77.0.11, as a phone joining another
//! network on the same radio). The sender must notice at once (netlink), move path 0's
//! data to path 1 without a timeout — in-order stall at most one round trip of path 1
//! (tbf queues of 50 ms each way) plus 200 ms: 0.3 s — and, once the new address is
//! there, bind it, verify it with a HEARTBEAT and carry data on it again within 1 s;
//! the receiver follows the new source after its own probe.

use std::time::Duration;

use super::procs::spawn;
use super::{Env, PORT};
use cmt_interop::harness::check;
use cmt_interop::netns;

/// In-order stall bound across the removal (module doc).
const REMOVAL_STALL: f64 = 0.3;
/// How long after the new address path 0 may stay silent (module doc).
const NEW_ADDRESS_SILENCE: f64 = 1.0;
/// How long path 0 has no address.
const GAP: f64 = 3.0;

pub(super) fn an_interface_loses_and_gets_an_address(env: &Env) -> Result<String, String> {
    let (old, new) = ("10.77.0.1/24", "10.77.0.11/24");
    let remotes = env.list(2, false, PORT);
    let t = env.start_with("iface", 2, 24, |data| {
        let args = [
            "send",
            "--local",
            "cmt0,cmt1",
            "--remote",
            &remotes,
            "--timeout",
            "90",
            &data.display().to_string(),
        ];
        spawn(&env.bin, &args.map(String::from))
    });
    let changed = (|| {
        t.wait_stored(3)?;
        netns::ip(&["addr", "del", old, "dev", "cmt0"])?;
        std::thread::sleep(Duration::from_secs_f64(GAP));
        netns::ip(&["addr", "add", new, "dev", "cmt0"])
    })();
    let trace = t.finish();
    // Put the namespace back for the tests after this one, whatever happened.
    let _ = netns::ip(&["addr", "del", new, "dev", "cmt0"]);
    let _ = netns::ip(&["addr", "add", old, "dev", "cmt0"]);
    changed?;
    let trace = trace?;
    let (stall, silence) = (trace.stall(), trace.silence(0));
    check(stall <= REMOVAL_STALL, || {
        format!("in-order stall {stall:.2} s when path 0 lost its address")
    })?;
    check(silence <= GAP + NEW_ADDRESS_SILENCE, || {
        format!("path 0 silent {silence:.2} s for a {GAP} s gap")
    })?;
    Ok(format!(
        "completed; in-order stall {stall:.2} s at the removal; path 0 silent {silence:.2} s \
         across the {GAP} s without an address"
    ))
}
