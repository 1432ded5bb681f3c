//! Private network namespaces for multihomed interop tests, gone when the process exits.
//!
//! A multihomed SCTP peer needs real interface addresses (usrsctp lists the addresses of
//! its namespace's interfaces in its INIT, and lets the kernel choose the source address
//! of what it sends, so both ends cannot simply share one loopback). The test process
//! moves itself into a fresh namespace ([`isolate`]), starts a thread in a second one
//! ([`NsThread`]) and joins the two with veth pairs, one per path ([`veth_pairs`]).
//! Nothing is configured outside the process's own namespaces.

use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::mpsc;

fn os_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Runs `ip` with `args`; the error has the command and its message.
pub fn ip(args: &[&str]) -> Result<(), String> {
    iproute2("ip", args)
}

/// Runs `tc` (iproute2's traffic control) with `args`; the error has the command and
/// its message.
pub fn tc(args: &[&str]) -> Result<(), String> {
    iproute2("tc", args)
}

fn iproute2(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run `{program}` (iproute2): {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{program} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Shapes what leaves `dev` to `rate` (a tc rate such as `20mbit`) with a token bucket
/// (tbf: 32 kbit burst, 50 ms of queue); again on a shaped device, changes the rate.
/// This kernel has no netem: a rate of `8bit` is how a path is blackholed (packets
/// dropped silently, the link still up).
pub fn shape(dev: &str, rate: &str) -> Result<(), String> {
    let args = [
        "root", "tbf", "rate", rate, "burst", "32kbit", "latency", "50ms",
    ];
    let mut cmd = vec!["qdisc", "replace", "dev", dev];
    cmd.extend(args);
    tc(&cmd)
}

/// Moves the calling thread into a new network namespace with loopback up. Call it
/// first in `main`, before any thread starts: threads created later share the
/// namespace. As root this needs nothing more; otherwise it first enters a new user
/// namespace mapped to root (where the kernel allows unprivileged ones).
pub fn isolate() -> Result<(), String> {
    // SAFETY: unshare only changes this thread's namespaces.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        // SAFETY: as above; fails (EINVAL) if the process has other threads already.
        if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) } != 0 {
            return Err(os_error(
                "cannot create a network namespace (not root, and no user namespace)",
            ));
        }
        let write =
            |f: &str, s: String| std::fs::write(f, s).map_err(|e| format!("cannot write {f}: {e}"));
        write("/proc/self/setgroups", "deny".into())?;
        write("/proc/self/uid_map", format!("0 {uid} 1"))?;
        write("/proc/self/gid_map", format!("0 {gid} 1"))?;
    }
    ip(&["link", "set", "lo", "up"])
}

type Job = Box<dyn FnOnce() + Send>;

/// A thread in a network namespace of its own, running the jobs given to [`run`]:
/// sockets it opens, threads it starts and commands it spawns live in that namespace.
///
/// [`run`]: NsThread::run
pub struct NsThread {
    jobs: mpsc::Sender<Job>,
    tid: i32,
}

impl NsThread {
    /// Starts the thread in a new network namespace with loopback up.
    pub fn spawn() -> Result<NsThread, String> {
        let (jobs, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready) = mpsc::channel();
        std::thread::spawn(move || {
            // SAFETY: only this thread changes namespace.
            let r = if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                Err(os_error("cannot create the peer's network namespace"))
            } else {
                // SAFETY: a plain getter.
                ip(&["link", "set", "lo", "up"]).map(|()| unsafe { libc::gettid() })
            };
            let ok = r.is_ok();
            let _ = ready_tx.send(r);
            if ok {
                for job in rx {
                    job();
                }
            }
        });
        let tid = ready
            .recv()
            .map_err(|_| "the namespace thread died".to_string())??;
        Ok(NsThread { jobs, tid })
    }

    /// The thread's id: `ip link … netns TID` moves a device into its namespace.
    pub fn tid(&self) -> i32 {
        self.tid
    }

    /// Runs `f` on the thread (in its namespace) and returns its result.
    pub fn run<R: Send + 'static>(&self, f: impl FnOnce() -> R + Send + 'static) -> R {
        let (tx, rx) = mpsc::channel();
        self.jobs
            .send(Box::new(move || {
                let _ = tx.send(f());
            }))
            .expect("the namespace thread is running");
        rx.recv().expect("the job finished")
    }
}

/// Joins the caller's namespace and `peer`'s with `n` veth pairs, up, with addresses:
/// pair i is `10.77.i.1/24` here and `10.77.i.2/24` in `peer`'s namespace. Returns
/// (ours, theirs) per pair.
pub fn veth_pairs(peer: &NsThread, n: u8) -> Result<Vec<(Ipv4Addr, Ipv4Addr)>, String> {
    let mut out = Vec::new();
    for i in 0..n {
        let (ours, theirs) = (Ipv4Addr::new(10, 77, i, 1), Ipv4Addr::new(10, 77, i, 2));
        let (here, there) = (format!("cmt{i}"), format!("peer{i}"));
        ip(&[
            "link",
            "add",
            &here,
            "type",
            "veth",
            "peer",
            "name",
            &there,
            "netns",
            &peer.tid.to_string(),
        ])?;
        ip(&["addr", "add", &format!("{ours}/24"), "dev", &here])?;
        ip(&["link", "set", &here, "up"])?;
        peer.run(move || -> Result<(), String> {
            ip(&["addr", "add", &format!("{theirs}/24"), "dev", &there])?;
            ip(&["link", "set", &there, "up"])
        })?;
        out.push((ours, theirs));
    }
    Ok(out)
}
