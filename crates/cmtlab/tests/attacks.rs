//! Attacks on real transfers, `cmtlab send` and `cmtlab recv` as processes, in private
//! network namespaces: the receiver in a namespace of its own behind a veth pair shaped
//! with tbf (40 Mbit/s), the sender and an on-path party (the tap, `attacks/tap.rs`) in
//! this process's namespace. Each attack runs without and with `--key`:
//!
//! * a forged SHUTDOWN followed by a forged SHUTDOWN COMPLETE;
//! * (with the key) the same announcing the digest of exactly what was acknowledged;
//! * a forged ABORT to each end;
//! * a tamperer that changes user data and fixes the CRC;
//! * an injector that sends DATA from an address of its own and answers the probe;
//! * an unauthenticated ASCONF that adds the tap's address and deletes the sender's
//!   (RFC 5061 requires ASCONF authenticated: refused with and without the key).
//!
//! What passes: `--out` keeps its old contents unless the whole file arrived; no end
//! exits 0 unless both agree on length and SHA-256; with the key, the file arrives
//! intact and the forgeries are counted as unauthenticated (the ASCONF also without it). Also: a restarted receiver
//! tells the old sender at once (RFC 9260 §8.4) and removes the killed one's temporary
//! file; a flood from 10,000 spoofed sources leaves the receiver's memory bounded; a
//! flood of spoofed INITs gets no more INIT ACK bytes than the listener's budget; a
//! serving receiver idle past its tolerance, its slots held by stopped senders, serves
//! honest senders behind one address through a spoofed INIT flood (`attacks/serve.rs`).
//!
//! `harness = false` (a process enters its namespace before any thread starts). Without
//! root or user namespaces it says so and skips. `cargo test -p cmtlab --test attacks
//! [-- NAME_FILTER]`.

#[path = "attacks/floods.rs"]
mod floods;
#[path = "common/procs.rs"]
mod procs;
#[path = "attacks/serve.rs"]
mod serve;
#[path = "attacks/tap.rs"]
mod tap;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cmt_interop::harness::{self, check, Test};
use cmt_interop::netns::{self, NsThread};
use procs::{spawn, Proc};
use tap::Attack;

/// Longest a test may take before the watchdog fails the run.
const TEST_LIMIT: Duration = Duration::from_secs(120);
/// The file moved in each case.
const FILE_LEN: usize = 8 << 20;
/// The receiver's SCTP/UDP port.
const PORT: u16 = 9899;
/// Last bytes of the extra addresses of our end of veth pair 1 (10.77.1.x), the
/// sources of the spoofed INIT flood.
const SPOOFED: std::ops::Range<u8> = 10..210;

/// Where the two ends are.
pub(crate) struct Env {
    /// The receiver's namespace (processes spawned from it live there).
    peer: NsThread,
    /// Per veth pair: (our address, the receiver's). Pair 0 is shaped, pair 1 is not.
    paths: Vec<(Ipv4Addr, Ipv4Addr)>,
    bin: PathBuf,
    dir: PathBuf,
    rt: tokio::runtime::Runtime,
    data: PathBuf,
    key: PathBuf,
}

impl Env {
    fn theirs(&self, i: usize) -> SocketAddr {
        SocketAddr::from((self.paths[i].1, PORT))
    }
}

/// `cmtlab recv` in the receiver's namespace, listening on `listen`.
pub(crate) fn receiver(
    env: &Env,
    listen: &[SocketAddr],
    out: &Path,
    key: bool,
    extra: &[&str],
) -> Proc {
    let mut args: Vec<String> = vec!["recv".into(), "--listen".into()];
    args.push(
        listen
            .iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join(","),
    );
    args.extend(["--out".into(), out.display().to_string()]);
    args.extend(["--timeout".into(), "20".into()]);
    if key {
        args.extend(["--key".into(), env.key.display().to_string()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let bin = env.bin.clone();
    let p = env.peer.run(move || spawn(&bin, &args));
    // Listening before anyone sends.
    std::thread::sleep(Duration::from_millis(150));
    p
}

/// `cmtlab send` of the test file in this namespace, to `remote` (a tap on loopback,
/// or the receiver over the veth pair).
pub(crate) fn sender(env: &Env, remote: SocketAddr, key: bool) -> Proc {
    let local = if remote.ip().is_loopback() {
        "127.0.0.1:0".to_string()
    } else {
        format!("{}:0", env.paths[0].0)
    };
    let mut args: Vec<String> = vec![
        "send".into(),
        "--local".into(),
        local,
        "--remote".into(),
        remote.to_string(),
        "--timeout".into(),
        "20".into(),
        env.data.display().to_string(),
    ];
    if key {
        args.extend(["--key".into(), env.key.display().to_string()]);
    }
    spawn(&env.bin, &args)
}

const OLD: &[u8] = b"the old contents of --out";

/// One attack through the tap, without or with the key; the checks of the module doc.
fn attack(env: &Env, attack: Attack, key: bool) -> Result<String, String> {
    let name = format!("{attack:?}-{key}");
    let out = env.dir.join(format!("{name}.bin"));
    let summary = env.dir.join(format!("{name}.json"));
    std::fs::write(&out, OLD).map_err(|e| e.to_string())?;
    let s = summary.display().to_string();
    let rx = receiver(env, &[env.theirs(0)], &out, key, &["--summary", &s]);
    let tap = env
        .rt
        .block_on(tap::start(env.paths[0].0.into(), env.theirs(0), attack));
    let tx = sender(env, tap.front, key);
    let (tx, rx) = (
        tx.finish(Duration::from_secs(40)),
        rx.finish(Duration::from_secs(40)),
    );
    let (forged, answered) = {
        let s = tap.seen.lock().unwrap();
        (s.forged, s.probes_answered)
    };
    drop(tap);
    let stored = std::fs::read(&out).map_err(|e| e.to_string())?;
    let whole = stored == std::fs::read(&env.data).map_err(|e| e.to_string())?;
    let codes = (tx.code, rx.code);
    let said = || {
        format!(
            "sender {:?}: {}\nreceiver {:?}: {}",
            tx.code, tx.output, rx.code, rx.output
        )
    };
    check(attack == Attack::None || forged > 0, || {
        format!("the attack did not run\n{}", said())
    })?;
    check(stored == OLD || whole, || {
        format!("--out holds neither: {} bytes\n{}", stored.len(), said())
    })?;
    check(
        !(codes.0 == Some(0) || codes.1 == Some(0)) || (codes == (Some(0), Some(0)) && whole),
        || format!("an end exited 0 without the whole file on both\n{}", said()),
    )?;
    // Address reconfiguration is authenticated with or without a key (an empty one).
    if key || matches!(attack, Attack::None | Attack::Reconfigure) {
        check(codes == (Some(0), Some(0)) && whole, || {
            format!("the keyed transfer did not survive the forgery\n{}", said())
        })?;
        let json = std::fs::read_to_string(&summary).map_err(|e| e.to_string())?;
        let v: serde_json::Value = serde_json::from_str(&json).map_err(|e| e.to_string())?;
        let refused = v["unauthenticated_packets"].as_u64().unwrap_or(0);
        // The SHUTDOWN COMPLETE cannot be authenticated: it is ignored instead.
        let want = match attack {
            Attack::Shutdown | Attack::ShutdownWithDigest | Attack::Abort => 1,
            _ => forged / 2,
        };
        check(refused >= want, || {
            format!("{refused} unauthenticated of {forged} forged")
        })?;
        check(answered == 0, || "a probe reached the injector".into())?;
        return Ok(format!(
            "file intact; {forged} forged, {refused} refused as unauthenticated"
        ));
    }
    check(
        stored == OLD && codes.0 != Some(0) && codes.1 != Some(0),
        || {
            format!(
                "without the key the forgery must stop the transfer\n{}",
                said()
            )
        },
    )?;
    let why = |o: &str| {
        o.lines()
            .find(|l| l.contains("error"))
            .unwrap_or("")
            .to_string()
    };
    Ok(format!(
        "--out untouched; sender exit {:?} \"{}\", receiver exit {:?} \"{}\"",
        tx.code,
        why(&tx.output),
        rx.code,
        why(&rx.output)
    ))
}

macro_rules! case {
    ($name:ident, $attack:expr, $key:expr) => {
        fn $name(env: &Env) -> Result<String, String> {
            attack(env, $attack, $key)
        }
    };
}

case!(a_relay_alone_delivers, Attack::None, false);
case!(forged_shutdown_without_key, Attack::Shutdown, false);
case!(forged_shutdown_with_key, Attack::Shutdown, true);
case!(
    forged_shutdown_and_digest_with_key,
    Attack::ShutdownWithDigest,
    true
);
case!(forged_abort_without_key, Attack::Abort, false);
case!(forged_abort_with_key, Attack::Abort, true);
case!(crc_fixing_tamperer_without_key, Attack::Tamper, false);
case!(crc_fixing_tamperer_with_key, Attack::Tamper, true);
case!(probe_answering_injector_without_key, Attack::Inject, false);
case!(probe_answering_injector_with_key, Attack::Inject, true);
case!(forged_asconf_without_key, Attack::Reconfigure, false);
case!(forged_asconf_with_key, Attack::Reconfigure, true);

const TESTS: &[Test<Env>] = &[
    ("a_relay_alone_delivers", a_relay_alone_delivers),
    ("forged_shutdown_without_key", forged_shutdown_without_key),
    ("forged_shutdown_with_key", forged_shutdown_with_key),
    (
        "forged_shutdown_and_digest_with_key",
        forged_shutdown_and_digest_with_key,
    ),
    ("forged_abort_without_key", forged_abort_without_key),
    ("forged_abort_with_key", forged_abort_with_key),
    (
        "crc_fixing_tamperer_without_key",
        crc_fixing_tamperer_without_key,
    ),
    ("crc_fixing_tamperer_with_key", crc_fixing_tamperer_with_key),
    (
        "probe_answering_injector_without_key",
        probe_answering_injector_without_key,
    ),
    (
        "probe_answering_injector_with_key",
        probe_answering_injector_with_key,
    ),
    ("forged_asconf_without_key", forged_asconf_without_key),
    ("forged_asconf_with_key", forged_asconf_with_key),
    (
        "a_restarted_receiver_tells_the_old_sender",
        floods::restarted_receiver,
    ),
    (
        "spoofed_sources_leave_memory_bounded",
        floods::spoofed_sources,
    ),
    (
        "spoofed_inits_get_at_most_the_reply_budget",
        floods::spoofed_inits,
    ),
    (
        "a_server_left_idle_and_crowded_serves_honest_senders",
        serve::a_server_left_idle_and_crowded_serves_honest_senders,
    ),
];

/// Namespaces (first: no thread may exist yet), the veth pairs, the shaping, the files.
fn setup() -> Result<Env, String> {
    if std::env::var_os("CMTLAB_NO_NETNS").is_some() {
        return Err("CMTLAB_NO_NETNS is set".into());
    }
    netns::isolate()?;
    let peer = NsThread::spawn()?;
    let paths = netns::veth_pairs(&peer, 2)?;
    let tc = |args: &[&str]| -> Result<(), String> {
        let ok = Command::new("tc")
            .args(args)
            .status()
            .map_err(|e| format!("tc: {e}"))?;
        check(ok.success(), || format!("tc {} failed", args.join(" ")))
    };
    tc(&[
        "qdisc", "add", "dev", "cmt0", "root", "tbf", "rate", "40mbit", "burst", "32kbit",
        "latency", "50ms",
    ])?;
    for i in SPOOFED {
        netns::ip(&["addr", "add", &format!("10.77.1.{i}/24"), "dev", "cmt1"])?;
    }
    let dir = std::env::temp_dir().join(format!("cmtlab-attacks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let data = dir.join("file.bin");
    let bytes: Vec<u8> = (0..FILE_LEN as u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&data, bytes).map_err(|e| e.to_string())?;
    let key = dir.join("key");
    std::fs::write(&key, b"a secret both ends were given").map_err(|e| e.to_string())?;
    Ok(Env {
        peer,
        paths,
        bin: PathBuf::from(env!("CARGO_BIN_EXE_cmtlab")),
        dir,
        rt: tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?,
        data,
        key,
    })
}

fn main() {
    let env = match setup() {
        Ok(env) => env,
        Err(e) => {
            println!("\nruntime attack tests SKIPPED: {e} (they need root or user namespaces, and iproute2's ip and tc)\n");
            return;
        }
    };
    let code = harness::run("runtime attack", &env, TESTS, TEST_LIMIT);
    if std::env::var_os("CMTLAB_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&env.dir);
    }
    std::process::exit(code);
}
